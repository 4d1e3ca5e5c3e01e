"""The issue's drill against a real server process with few open files: 1,100 idle and
slowloris connections to the web port from other addresses leave a game login and a
web request from elsewhere working (before, the process ran out of files: ``EMFILE``
for every newcomer on both ports)."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.task import deferLater
from twisted.web.client import Agent, readBody

from tests.cluster_nodes import REPO, create_accounts, listening, log_in
from tests.helpers import Waits
from tests.server.test_app import _Recorder as Stream
from tests.server.test_kill_drill import Server

OPEN_FILES = 256  # the server's RLIMIT_NOFILE: web cap 48, game cap 144 (fd_reserve 64)
FLOOD = 1100


def free_port() -> int:
    with socket.socket() as probe:  # a port free a moment ago
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_limited(waits: Waits, config: Path) -> Server:
    """``python -m fibsd`` with its soft open-file limit lowered to ``OPEN_FILES``."""
    server = Server(waits)
    start = ("import resource, runpy, sys; "
             "resource.setrlimit(resource.RLIMIT_NOFILE, "
             f"({OPEN_FILES}, resource.getrlimit(resource.RLIMIT_NOFILE)[1])); "
             "sys.argv[0] = 'fibsd'; runpy.run_module('fibsd', run_name='__main__')")
    reactor.spawnProcess(server, sys.executable,  # type: ignore[attr-defined]
                         [sys.executable, "-c", start, "--config", str(config),
                          "--port", "0", "--interface", "127.0.0.1"],
                         env={**os.environ, "PYTHONUNBUFFERED": "1"}, path=str(REPO))
    return server


async def flood_connection(port: int, source: str, slow: bool) -> Stream:
    stream = Stream()
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", port, bindAddress=(source, 0))
    await connectProtocol(endpoint, stream)
    if slow and stream.transport is not None:  # a request begun, never finished
        stream.transport.write(b"GET /ratings HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n")
    return stream


@pytest_twisted.ensureDeferred
async def test_a_flood_of_the_web_port_leaves_logins_and_the_web_to_others(
        tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    create_accounts(str(database), ["alice"])
    web_port = free_port()
    config = tmp_path / "flood.toml"
    config.write_text(f'database = "{database}"\nmotd = "{REPO / "config" / "motd.txt"}"\n'
                      f"web_port = {web_port}\n"
                      "[passwords]\ntime_cost = 1\nmemory_kib = 64\n")
    waits = Waits(60)
    server = start_limited(waits, config)
    flood: list[Stream] = []
    try:
        port = await listening(waits, server)
        assert server.transport is not None
        # Three attacking addresses, idle and slowloris connections in turn.
        sources = ("127.0.0.1", "127.0.0.3", "127.0.0.4")
        results = await DeferredList(
            [Deferred.fromCoroutine(flood_connection(web_port, sources[n % 3], slow=n % 2 == 1))
             for n in range(FLOOD)],
            consumeErrors=True)
        flood = [stream for ok, stream in results if ok]
        assert len(flood) == FLOOD  # the kernel took each; the server decides
        for _ in range(6000):  # the refusals arrive within a few reactor turns each
            if sum(s.lost.called for s in flood) >= FLOOD - 48:
                break
            await deferLater(reactor, 0.01)
        refused = [s for s in flood if s.lost.called]
        assert len(refused) >= FLOOD - 48  # the web port's cap: 48 at 256 files
        assert all(s.data.startswith(b"HTTP/1.1 503 ") or s.data == b"" for s in refused)
        # The web, from an address of its own, and a game login, from an attacker's.
        agent = Agent(reactor, bindAddress=("127.0.0.2", 0))
        response = await agent.request(b"GET", f"http://127.0.0.1:{web_port}/ratings".encode())
        assert response.code == 200
        await readBody(response)
        alice = await log_in(waits, port, "alice")
        assert any(line.startswith("1 alice ") for line in alice.received)
        files = len(os.listdir(f"/proc/{server.transport.pid}/fd"))
        assert files < OPEN_FILES - 64 + 16  # the caps, not the kernel, held the line
        assert b"Too many open files" not in server.output
        assert b"EMFILE" not in server.output, server.output.decode()[-3000:]
        assert alice.transport is not None
        alice.transport.loseConnection()
    finally:
        for stream in flood:
            if stream.transport is not None:
                stream.transport.loseConnection()
        if not server.ended:
            server.signal(15)
        await waits.until(lambda: server.ended, lambda: "the server to stop")
    assert server.exit_code == 0
