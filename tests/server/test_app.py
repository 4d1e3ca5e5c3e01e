"""Running the server: options, the twistd plugin, startup and clean shutdown."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_twisted
from passlib.hash import argon2
from twisted.application.service import IServiceMaker
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol
from twisted.logger import globalLogPublisher
from twisted.plugin import getPlugins
from twisted.python.failure import Failure

from fibsd.__main__ import Options, main
from fibsd.app import FibsService
from fibsd.server.dbthread import DatabaseStopped
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import REPO, make_settings

PLUGIN = REPO / "fibsd" / "twistd_plugins" / "fibsd_plugin.py"


def test_options_select_settings(tmp_path: Path) -> None:
    options = Options()
    options.parseOptions(["--port", "4999", "--database", str(tmp_path / "x.sqlite")])
    settings = options.settings()
    assert settings.port == 4999
    assert settings.database == tmp_path / "x.sqlite"
    assert settings.motd == REPO / "config" / "motd.txt"


def test_a_bad_option_value_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--port", "70000"]) == 2
    assert "configuration error: port: must be at least 0 and at most 65535" in (
        capsys.readouterr().err)


def test_the_plugin_is_found_by_twisted(tmp_path: Path) -> None:
    """Twisted scans plugin directories; this one holds nothing but our module."""
    assert sorted(p.name for p in PLUGIN.parent.iterdir() if p.suffix == ".py") == [
        "fibsd_plugin.py"]
    assert not (PLUGIN.parent / "__init__.py").exists()
    probe = tmp_path / "fibsd_plugin_probe"
    probe.mkdir()
    (probe / "__init__.py").write_text("")
    shutil.copy(PLUGIN, probe / PLUGIN.name)
    sys.path.insert(0, str(tmp_path))
    try:
        package = importlib.import_module(probe.name)
        makers = [m for m in getPlugins(IServiceMaker, package) if m.tapname == "fibsd"]
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith(probe.name)]:
            del sys.modules[name]
    assert len(makers) == 1
    assert makers[0].options is Options


class _Recorder(Protocol):
    def __init__(self) -> None:
        self.data = b""
        self.lost: Deferred[None] = Deferred()
        self.waiting: tuple[bytes, Deferred[None]] | None = None

    def dataReceived(self, data: bytes) -> None:
        self.data += data
        if self.waiting is not None and self.waiting[0] in self.data:
            waiting, self.waiting = self.waiting, None
            waiting[1].callback(None)

    def expect(self, text: bytes) -> Deferred[None]:
        d: Deferred[None] = Deferred()
        if text in self.data:
            d.callback(None)
        else:
            self.waiting = (text, d)
        return d.addTimeout(10, reactor)

    def connectionLost(self, reason: Failure = Failure(ConnectionError())) -> None:
        self.lost.callback(None)


@pytest_twisted.ensureDeferred
async def test_stopping_says_goodbye_and_records_logouts(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    store.create_user("alice", argon2.using(memory_cost=64, time_cost=1).hash("secret"), 1)
    store.close()
    settings = make_settings(port=0, interface="127.0.0.1", database=str(database))
    events: list[str] = []

    def observe(event: dict[str, object]) -> None:
        if event.get("log_namespace") == "fibsd.app":
            events.append(str(event.get("log_format", "")).format(**event))

    globalLogPublisher.addObserver(observe)
    service = FibsService(settings, reactor)
    try:
        service.startService()
        port = (await service.listening).getHost().port
        client = _Recorder()
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), client)
        await client.expect(b"login: ")
        assert client.transport is not None
        client.transport.write(b"login test 1008 alice secret\r\n")
        await client.expect(b"\r\n6\r\n")
        await service.stopService()
        await client.lost
    finally:
        globalLogPublisher.removeObserver(observe)
    assert client.data.endswith(b"\r\n** System administrator causes shutdown. FIBS is terminating.\r\n"
                                b"** All running games will be saved.\r\n"
                                b"** It will be back when the computer is rebooted.\r\n"
                                b"                             Goodbye.\r\n"
                                b"Thanks for playing backgammon here. Come back soon!\r\n")
    assert events == [
        f"fibsd listening on 127.0.0.1 port {port}, database {database}",
        "fibsd stopped; database closed",
    ]
    with pytest.raises(DatabaseStopped):
        await service.db.get_user("alice")
    reopened = SQLiteStore(database)
    record = reopened.get_user("alice")
    reopened.close()
    assert record is not None and record.last_logout is not None
    assert record.last_login is not None and record.last_host == "127.0.0.1"


def _read_until(stream: "subprocess.IO[str]", pattern: str) -> re.Match[str]:
    for line in stream:
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"the server never printed {pattern!r}")


@contextlib.contextmanager
def _sigint_not_ignored() -> Iterator[None]:
    """A process started meanwhile meets SIGINT as one started from a terminal does.
    Otherwise it inherits this process's disposition, and pytest run in the background
    of a non-interactive shell (``pytest &``, nohup, some CI runners) ignores SIGINT:
    the server then rightly leaves it ignored (Python and Twisted install no handler
    over an ignored SIGINT), and Ctrl-C would not stop it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_console_script_runs_and_stops_cleanly(tmp_path: Path, stop: int) -> None:
    database = tmp_path / "data" / "fibsd.sqlite"
    with _sigint_not_ignored():
        server = subprocess.Popen(
            [sys.executable, "-m", "fibsd", "--port", "0", "--web-port", "0",
             "--interface", "127.0.0.1",
             "--database", str(database)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=tmp_path)
    try:
        assert server.stdout is not None
        found = _read_until(server.stdout, r"fibsd listening on 127\.0\.0\.1 port ([0-9]+), "
                                           r"database (.*)$")
        assert found.group(2) == str(database)
        with socket.create_connection(("127.0.0.1", int(found.group(1))), timeout=10) as conn:
            received = b""
            while not received.endswith(b"login: "):
                received += conn.recv(4096)
            server.send_signal(stop)
            while chunk := conn.recv(4096):
                received += chunk
        assert received.endswith(b"                             Goodbye.\r\n"
                                 b"Thanks for playing backgammon here. Come back soon!\r\n")
        _read_until(server.stdout, r"fibsd stopped; database closed")
        assert server.wait(timeout=10) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert database.exists()


def test_under_twistd_a_port_in_use_stops_the_server(tmp_path: Path) -> None:
    """twistd starts services before its reactor runs: the server must still stop."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            _twistd_command(tmp_path, ["--port", str(port), "--web-port", "0",
                                       "--interface", "127.0.0.1",
                                       "--database", str(tmp_path / "fibsd.sqlite")]),
            capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert f"fibsd cannot start: Couldn't listen on 127.0.0.1:{port}" in result.stdout
    assert "Server Shut Down." in result.stdout
    assert "Unhandled error" not in result.stdout + result.stderr


@pytest.mark.parametrize("make_unusable", ["directory", "garbage"])
def test_an_unusable_database_is_a_clear_error(tmp_path: Path, make_unusable: str) -> None:
    if make_unusable == "directory":
        (tmp_path / "file").write_text("")
        database = tmp_path / "file" / "fibsd.sqlite"  # its directory cannot be made
    else:
        database = tmp_path / "fibsd.sqlite"
        database.write_bytes(b"not a database at all" * 100)
    result = subprocess.run(
        [sys.executable, "-m", "fibsd", "--port", "0", "--web-port", "0",
         "--database", str(database)],
        capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"fibsd: cannot open the database {database}: ")
    assert "Traceback" not in result.stdout + result.stderr


def test_a_port_in_use_stops_the_server_with_one_clear_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "fibsd", "--port", str(port), "--web-port", "0",
             "--interface", "127.0.0.1",
             "--database", str(tmp_path / "fibsd.sqlite")],
            capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert result.returncode == 1
    assert f"fibsd cannot start: Couldn't listen on 127.0.0.1:{port}" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert "Unhandled error" not in result.stdout + result.stderr


def _twistd_command(tmp_path: Path, options: list[str]) -> list[str]:
    """``twistd -n`` running fibsd's makeService from a .tac file, which needs no
    installed plugin."""
    tac = tmp_path / "fibsd.tac"
    tac.write_text(
        "from twisted.application.service import Application\n"
        "from fibsd.__main__ import Options, makeService\n"
        "options = Options()\n"
        f"options.parseOptions({options!r})\n"
        "application = Application('fibsd')\n"
        "makeService(options).setServiceParent(application)\n")
    return [sys.executable, "-c", "from twisted.scripts.twistd import run; run()",
            "-n", "--pidfile=", "-y", str(tac)]


@pytest.mark.parametrize("runner", ["fibsd", "twistd"])
def test_a_second_stop_signal_during_shutdown_is_harmless(tmp_path: Path, runner: str) -> None:
    """A client that reads nothing keeps the shutdown waiting for its grace period; an
    impatient second SIGTERM meanwhile must not log a traceback."""
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    store.create_user("alice", argon2.using(memory_cost=64, time_cost=1).hash("secret"), 1)
    store.close()
    options = ["--port", "0", "--web-port", "0", "--interface", "127.0.0.1",
               "--database", str(database)]
    server = subprocess.Popen(
        [sys.executable, "-m", "fibsd", *options] if runner == "fibsd"
        else _twistd_command(tmp_path, options),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=tmp_path)
    try:
        assert server.stdout is not None
        port = int(_read_until(server.stdout, r"fibsd listening on .* port ([0-9]+)").group(1))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            conn.sendall(b"login test 1008 alice secret\r\n")
            received = b""
            while not received.endswith(b"\r\n6\r\n"):
                received += conn.recv(4096)
            conn.sendall(b"who\r\n" * 20_000)  # far more replies than buffers hold
            server.send_signal(signal.SIGTERM)
            _read_until(server.stdout, r"Received SIGTERM, shutting down")
            server.send_signal(signal.SIGTERM)
            rest = server.stdout.read()
        # twistd ends itself with the signal that stopped it, as daemons should.
        assert server.wait(timeout=10) == (0 if runner == "fibsd" else -signal.SIGTERM)
        assert "Traceback" not in rest
        assert "fibsd stopped; database closed" in rest
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


@pytest_twisted.ensureDeferred
async def test_a_flooding_client_that_never_reads_is_paused(tmp_path: Path) -> None:
    """1 MB of `who` from a client that reads nothing: the server stops reading it once
    the send buffer is full, instead of buffering some 15 MB of replies."""
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    store.create_user("alice", argon2.using(memory_cost=64, time_cost=1).hash("secret"), 1)
    store.close()
    service = FibsService(make_settings(port=0, interface="127.0.0.1", database=str(database)),
                          reactor)
    service.startService()
    try:
        port = (await service.listening).getHost().port
        client = _Recorder()
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), client)
        assert client.transport is not None
        client.transport.write(b"login test 1008 alice secret\r\n")
        await client.expect(b"\r\n6\r\n")
        (server_side,) = service.factory.connections
        paused: Deferred[None] = Deferred()
        pause = server_side.pauseProducing

        def pause_and_tell() -> None:
            pause()
            if not paused.called:
                paused.callback(None)

        server_side.pauseProducing = pause_and_tell  # type: ignore[method-assign]
        client.transport.pauseProducing()  # type: ignore[attr-defined]  # stop reading
        client.transport.write(b"who\r\n" * 200_000)
        await paused.addTimeout(20, reactor)
        transport = server_side.transport
        buffered = len(transport.dataBuffer) + transport._tempDataLen  # type: ignore[union-attr]
        assert buffered < 70_000
        assert len(server_side._pending) < 20_000  # the rest of one read, at most
        client.transport.resumeProducing()  # type: ignore[attr-defined]
    finally:
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_connections_send_without_nagle_delay_and_the_backlog_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without TCP_NODELAY a second write waits for the client's delayed ACK (~40 ms)."""
    backlogs: list[int] = []
    listen = type(reactor).listenTCP

    def recording_listen(self: object, port: int, factory: object, backlog: int = 50,
                         interface: str = "") -> object:
        backlogs.append(backlog)
        return listen(self, port, factory, backlog, interface)

    monkeypatch.setattr(type(reactor), "listenTCP", recording_listen)
    service = FibsService(make_settings(port=0, interface="127.0.0.1",
                                        database=str(tmp_path / "fibsd.sqlite"),
                                        **{"limits.listen_backlog": 77}), reactor)
    service.startService()
    try:
        port = (await service.listening).getHost().port
        client = _Recorder()
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), client)
        await client.expect(b"login:")
        (server_side,) = service.factory.connections
        handle = server_side.transport.getHandle()  # type: ignore[union-attr]
        assert handle.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        assert backlogs == [77]
        assert client.transport is not None
        client.transport.loseConnection()
    finally:
        await service.stopService()
