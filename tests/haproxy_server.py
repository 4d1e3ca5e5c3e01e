"""A throwaway HAProxy for the tests of the load balancer docs/cluster.md recommends:
Debian's ``haproxy`` in the foreground (``-db``) on a free loopback port, with an admin
socket in a temporary directory to read its servers' states, stopped when the test ends.

The caller gives the configuration, as a function of the frontend's port; a ``global``
section with the socket comes first.  ``.ci/run`` installs the package, so CI never
skips these tests.
"""

from __future__ import annotations

import csv
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.redis_server import _free_port


class NoHAProxy(Exception):
    """No HAProxy can be started here; the message says why."""


@dataclass
class HAProxyServer:
    """A running private HAProxy; clients connect to 127.0.0.1:``port``."""

    process: subprocess.Popen[bytes]
    port: int
    directory: Path

    @property
    def socket_path(self) -> Path:
        return self.directory / "admin.sock"

    @classmethod
    def start(cls, config: Callable[[int], str]) -> HAProxyServer:
        """HAProxy with ``config(port)`` after its ``global`` section; returns once it
        listens (its admin socket answers once every listener is bound)."""
        binary = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
        if binary is None:
            raise NoHAProxy("no haproxy binary: apt-get install haproxy")
        directory = Path(tempfile.mkdtemp(prefix="fibsd-haproxy-"))
        for _attempt in range(5):  # another process may take the free port first
            port = _free_port()
            (directory / "haproxy.cfg").write_text(
                f"global\n    stats socket {directory / 'admin.sock'} level admin\n\n"
                + config(port), encoding="ascii")
            with open(directory / "stderr.txt", "wb") as errors:
                process = subprocess.Popen(
                    [binary, "-f", str(directory / "haproxy.cfg"), "-db"],
                    stdin=subprocess.DEVNULL, stdout=errors, stderr=errors)
            server = cls(process, port, directory)
            if server._answers():
                return server
            process.kill()
            process.wait()
        output = server.output()
        shutil.rmtree(directory, ignore_errors=True)
        raise NoHAProxy(f"haproxy did not start on a free loopback port: {output}")

    def _answers(self) -> bool:
        """Whether the admin socket answers within ten seconds (False once it exited)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if "Pid:" in self.command("show info"):
                    return True
            except OSError:
                time.sleep(0.02)
        return False

    def command(self, text: str) -> str:
        """One command on the admin socket (``show stat``, ``show servers state``, ...)."""
        with socket.socket(socket.AF_UNIX) as connection:
            connection.settimeout(5)
            connection.connect(str(self.socket_path))
            connection.sendall(text.encode("ascii") + b"\n")
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        return answer.decode("ascii")

    def servers(self, backend: str) -> dict[str, dict[str, str]]:
        """Each server of ``backend``: its ``show stat`` fields by name (``status``,
        ``check_status``, ``chkfail``, ``stot``, ...)."""
        text = self.command("show stat").removeprefix("# ")
        rows = csv.DictReader(line for line in text.splitlines() if line)
        return {row["svname"]: row for row in rows
                if row["pxname"] == backend and row["svname"] not in ("FRONTEND", "BACKEND")}

    def output(self) -> str:
        """What HAProxy wrote (warnings, alerts, servers going up or down)."""
        try:
            return (self.directory / "stderr.txt").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)
