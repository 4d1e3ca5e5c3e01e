"""A burst of connections at the game port of a real server process with few open files
(issue 19): the plain and the TLS listener, with and without the PROXY protocol.

Before, 1,200 connections at once from 40 addresses took the process's last files
faster than the refusals gave them back: Twisted hit ``EMFILE`` and logged a line for
every socket it closed to recover.  Now the game's sockets are capped in the accept
itself (fibsd/server/ports.py): no ``EMFILE``, a log of one event per address at
most, and afterwards a game login (on the listener attacked) and a web page work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor, ssl
from twisted.internet.address import IPv4Address
from twisted.internet.error import ConnectionDone
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.logger import globalLogPublisher
from twisted.python.failure import Failure
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.task import deferLater
from twisted.web.client import Agent, readBody

from fibsd.server.access import RefusalLog
from fibsd.server.ports import BUSY_AT_ONCE, GameSockets
from tests.cluster_nodes import REPO, create_accounts, listening
from tests.helpers import Waits
from tests.server.test_app import _Recorder as Stream
from tests.server.test_tls import self_signed
from tests.web.test_web_flood import free_port, start_limited

BURST = 1200
ADDRESSES = 40  # 30 connections each: past the cap per address (20) as well as in all
GAME_CAP = 144  # at 256 files: 256 - fd_reserve 64, less the web port's quarter (48)
REFUSALS = (b"** Sorry, the server is full. Please try again later.\r\n",
            b"** Too many connections from your address. Please try again later.\r\n")


def header(claimed: str) -> bytes:
    return f"PROXY TCP4 {claimed} 10.0.0.1 56324 4321\r\n".encode()


async def attacker(port: int, n: int, proxied: bool) -> Stream:
    """One connection of the burst, from 127.0.0.(10 + n % ADDRESSES); behind the PROXY
    protocol it claims 203.0.113.(n % ADDRESSES), as a balancer would pass it on.  It
    never starts TLS."""
    stream = Stream()
    source = f"127.0.0.{10 + n % ADDRESSES}"
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", port, bindAddress=(source, 0))
    await connectProtocol(endpoint, stream)
    if proxied and stream.transport is not None:
        stream.transport.write(header(f"203.0.113.{n % ADDRESSES}"))
    return stream


async def game_login(port: int, tls: ssl.Certificate | None, proxied: bool) -> Stream:
    """alice's CLIP login from 127.0.0.1 (behind the PROXY protocol: 198.51.100.7)."""
    client = Stream()
    await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), client)
    assert client.transport is not None
    if proxied:
        client.transport.write(header("198.51.100.7"))
    if tls is not None:
        client.transport.startTLS(  # type: ignore[attr-defined]
            ssl.optionsForClientTLS("localhost", trustRoot=tls))
    await client.expect(b"login: ")
    client.transport.write(b"login test 1008 alice secret\r\n")
    await client.expect(b"\r\n6\r\n")
    return client


@pytest.mark.parametrize("listener", ["plain", "tls", "plain+proxy", "tls+proxy"])
@pytest_twisted.ensureDeferred
async def test_a_burst_at_the_game_port_costs_no_file_and_no_log_line_each(
        tmp_path: Path, listener: str) -> None:
    tls, proxied = listener.startswith("tls"), listener.endswith("proxy")
    database = tmp_path / "fibsd.sqlite"
    create_accounts(str(database), ["alice"])
    cert_path, key_path = self_signed(tmp_path)
    web_port, tls_port = free_port(), free_port()
    config = tmp_path / "burst.toml"
    config.write_text(
        f'database = "{database}"\nmotd = "{REPO / "config" / "motd.txt"}"\n'
        f"web_port = {web_port}\n"
        "[passwords]\ntime_cost = 1\nmemory_kib = 64\n"
        "[limits]\nlisten_backlog = 2048\n"
        f"[access]\nproxy_protocol = {'true' if proxied else 'false'}\n"
        f'[tls]\nenabled = true\nport = {tls_port}\ncertificate = "{cert_path}"\n'
        f'key = "{key_path}"\n')
    waits = Waits(60)
    server = start_limited(waits, config)
    burst: list[Stream] = []
    try:
        port = await listening(waits, server)
        await waits.until(lambda: b"listening with TLS" in server.output,
                          lambda: "the TLS listener")
        target = tls_port if tls else port
        started = len(server.output.splitlines())
        results = await DeferredList(
            [Deferred.fromCoroutine(attacker(target, n, proxied)) for n in range(BURST)],
            consumeErrors=True)
        burst = [stream for ok, stream in results if ok]
        assert len(burst) == BURST  # the kernel took each; the server decides
        # The server keeps at most its cap; the others are closed, at once or after
        # their refusal line (over TLS, never started here, within 5 s: LINGER).
        for _ in range(6000):
            if sum(s.lost.called for s in burst) >= BURST - GAME_CAP:
                break
            await deferLater(reactor, 0.01)
        closed = [s for s in burst if s.lost.called]
        assert len(closed) >= BURST - GAME_CAP
        if not tls:  # what the closed ones read: a refusal line, or nothing at all
            assert all(s.data == b"" or s.data.endswith(REFUSALS) for s in closed)
            assert any(s.data.endswith(REFUSALS) for s in closed)  # the FIBS-style line
        # A web page, from an address of its own, and a game login on the port attacked.
        agent = Agent(reactor, bindAddress=("127.0.0.2", 0))
        response = await agent.request(b"GET", f"http://127.0.0.1:{web_port}/ratings".encode())
        assert response.code == 200
        assert b"Ratings" in await readBody(response)
        trust = ssl.Certificate.loadPEM(cert_path.read_bytes()) if tls else None
        alice = await game_login(target, trust, proxied)
        address = b"198.51.100.7" if proxied else b"127.0.0.1"
        assert b"\r\n5 alice - - 0 0 1500.00 0 0 " in alice.data
        assert b" " + address + b" test -\r\n6\r\n" in alice.data
        assert alice.transport is not None
        alice.transport.loseConnection()
        log = server.output.splitlines()[started:]
        text = b"\n".join(log).decode(errors="replace")
        assert b"EMFILE" not in server.output, text[-3000:]
        assert b"Too many open files" not in server.output
        assert b"Traceback" not in server.output, text[-3000:]
        # One refusal event per address and limit at most (the claimed addresses and,
        # behind the PROXY protocol, the balancer's too), and the login and the page.
        assert len(log) <= 3 * ADDRESSES + 10, text[-3000:]
    finally:
        for stream in burst:
            if stream.transport is not None:
                stream.transport.loseConnection()
        if not server.ended:
            server.signal(15)
        await waits.until(lambda: server.ended, lambda: "the server to stop")
    assert server.exit_code == 0


@pytest_twisted.ensureDeferred
async def test_files_run_out_anyway_one_event_and_accepting_recovers(tmp_path: Path) -> None:
    """Caps set by hand above the open-file limit (1,000 at 256 files): a burst takes
    every file and Twisted meets ``EMFILE``.  Its line per socket becomes one
    ``accept_failed`` event (fibsd.operator_log.AcceptErrors), and once the burst is
    gone the same port logs alice in."""
    database = tmp_path / "fibsd.sqlite"
    create_accounts(str(database), ["alice"])
    config = tmp_path / "over.toml"
    config.write_text(
        f'database = "{database}"\nmotd = "{REPO / "config" / "motd.txt"}"\nweb_port = 0\n'
        "[passwords]\ntime_cost = 1\nmemory_kib = 64\n[limits]\nlisten_backlog = 2048\n"
        "[access]\nmax_connections = 1000\nunauthenticated_per_address = 1000\n")
    waits = Waits(60)
    server = start_limited(waits, config)
    burst: list[Stream] = []
    try:
        port = await listening(waits, server)
        results = await DeferredList(
            [Deferred.fromCoroutine(attacker(port, n, False)) for n in range(400)],
            consumeErrors=True)
        burst = [stream for ok, stream in results if ok]
        for _ in range(6000):  # each is greeted or closed by Twisted
            if all(s.lost.called or s.data.endswith(b"login: ") for s in burst):
                break
            await deferLater(reactor, 0.01)
        assert all(s.lost.called or s.data.endswith(b"login: ") for s in burst)
        assert any(s.lost.called for s in burst)  # the files did run out
        for stream in burst:
            if stream.transport is not None:
                stream.transport.loseConnection()
        await DeferredList([s.lost for s in burst])
        alice = await game_login(port, None, False)
        assert b" 127.0.0.1 test -\r\n6\r\n" in alice.data
        assert alice.transport is not None
        alice.transport.loseConnection()
        text = server.output.decode(errors="replace")
        emfile = [line for line in text.splitlines() if "EMFILE" in line]
        assert len(emfile) == 1, text[-3000:]
        assert "could not accept connections (EMFILE" in emfile[0]
        assert "Traceback" not in text
    finally:
        for stream in burst:
            if stream.transport is not None:
                stream.transport.loseConnection()
        if not server.ended:
            server.signal(15)
        await waits.until(lambda: server.ended, lambda: "the server to stop")
    assert server.exit_code == 0


def test_the_game_sockets_are_capped_in_the_accept_itself() -> None:
    """Past the cap on connections plus BUSY_AT_ONCE, a newcomer is never built: the
    port closes its socket at once.  Every socket counts, plain and TLS, until it is
    closed, whatever it turns out to be; a refusal is logged once per address."""
    refusals = RefusalLog(Clock())
    sessions = Factory.forProtocol(Protocol)  # stands in for the FibsFactory
    sessions.max_connections = 2  # type: ignore[attr-defined]
    sockets = GameSockets(sessions, refusals)
    plain, tls = sockets.counted(sessions), sockets.counted(sessions)
    seen: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(seen.append)
    try:
        opened = []
        for n in range(2 + BUSY_AT_ONCE):
            protocol = (plain, tls)[n % 2].buildProtocol(IPv4Address("TCP", "192.0.2.1", n))
            assert protocol is not None
            protocol.makeConnection(StringTransport())
            opened.append(protocol)
        assert sockets.open == 2 + BUSY_AT_ONCE
        for _ in range(3):
            assert plain.buildProtocol(IPv4Address("TCP", "198.51.100.9", 1)) is None
            assert tls.buildProtocol(IPv4Address("TCP", "198.51.100.9", 1)) is None
        opened[0].connectionLost(Failure(ConnectionDone()))
        assert tls.buildProtocol(IPv4Address("TCP", "198.51.100.9", 1)) is not None
    finally:
        globalLogPublisher.removeObserver(seen.append)
    assert [(e["event"], e["limit"], e["address"], e["count"]) for e in seen
            if e.get("event")] == [
        ("connection_refused", "access.max_connections", "198.51.100.9", 1)]
