"""A throwaway Redis server for the cluster tests: Debian's ``redis-server`` on a free
loopback port, with nothing written to disk, stopped when the test ends.

Pub/sub channels are not separated by Redis's database numbers, so each test that
needs a broker gets a server of its own (it starts in a few milliseconds).
``.ci/run`` installs the package, so CI never skips these tests.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


class NoRedis(Exception):
    """No Redis server can be started here; the message says why."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RedisServer:
    """A running private server; ``url`` is what ``fibsd --cluster`` takes."""

    process: subprocess.Popen[bytes]
    port: int
    directory: Path
    extra: Sequence[str] = field(default=())  # more redis-server options (a password...)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @classmethod
    def start(cls, extra: Sequence[str] = ()) -> RedisServer:
        binary = shutil.which("redis-server")
        if binary is None:
            raise NoRedis("no redis-server binary: apt-get install redis-server")
        directory = Path(tempfile.mkdtemp(prefix="fibsd-redis-"))
        for _attempt in range(5):  # another process may take the free port first
            port = _free_port()
            process = _spawn(binary, port, directory, extra)
            if _answers(port, process):
                return cls(process, port, directory, extra)
            process.kill()
            process.wait()
        shutil.rmtree(directory, ignore_errors=True)
        raise NoRedis("redis-server did not start on a free loopback port")

    def kill(self) -> None:
        """The broker dies (SIGKILL); ``start_again`` brings one back on the same port."""
        self.process.kill()
        self.process.wait()

    def start_again(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        self.process = _spawn(binary, self.port, self.directory, self.extra)
        if not _answers(self.port, self.process):
            raise NoRedis(f"redis-server did not start again on port {self.port}")

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def _spawn(binary: str, port: int, directory: Path,
           extra: Sequence[str] = ()) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(directory), "--daemonize", "no",
         "--loglevel", "warning", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _answers(port: int, process: subprocess.Popen[bytes]) -> bool:
    """Whether the server answers PING within ten seconds (False once it exited); a
    server with a password answers that it wants one, which will do."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                if connection.recv(64).startswith((b"+PONG", b"-NOAUTH")):
                    return True
        except OSError:
            time.sleep(0.02)
    return False
