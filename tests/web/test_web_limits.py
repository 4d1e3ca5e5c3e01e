"""The web port's limits (fibsd.web.gate): connections per address and in all, the
deadline of a whole request, bodies refused before they are read, live streams per
address; and the pages that cannot exist, /healthz and who may read /metrics."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.address import IPv4Address
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.task import Clock, deferLater
from twisted.internet.testing import StringTransport
from twisted.logger import globalLogPublisher
from twisted.web.client import Agent, readBody

from fibsd.app import FibsService
from fibsd.config import ConfigError, Web as WebLimits
from fibsd.server.access import RefusalLog, connection_caps
from fibsd.web.gate import GatedConnection, WebGate
from fibsd.web.health import Health
from fibsd.web.sources import Archive
from tests.helpers import make_settings
from tests.server.test_app import _Recorder as Stream
from tests.server.test_match_restart import Bot
from tests.web.conftest import Reply, Web, start_web, stop_web
from tests.web.test_web_flood import free_port
from tests.web.ws_client import open_socket, ws_connect


@pytest.fixture
def events() -> Any:
    seen: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(seen.append)
    yield seen
    globalLogPublisher.removeObserver(seen.append)


def limit_events(events: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    return [(e["event"], e["limit"], e["count"]) for e in events
            if e.get("event") in ("limit", "connection_refused")
            and str(e.get("limit", "")).startswith("web.")]


async def until(done: Callable[[], bool]) -> None:
    """A few reactor turns until the server has seen what the client did (a socket
    opened or closed); fails rather than hangs."""
    for _ in range(1000):
        if done():
            return
        await deferLater(reactor, 0.01)
    raise AssertionError("the server never got there")


async def connect(web: Web, source: str = "127.0.0.1") -> Stream:
    stream = Stream()
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", web.http.getHost().port,
                                  bindAddress=(source, 0))
    await connectProtocol(endpoint, stream)
    return stream


async def get_from(web: Web, path: str, source: str) -> Reply:
    agent = Agent(reactor, bindAddress=(source, 0))
    response = await agent.request(b"GET", (web.base + path).encode("ascii"))
    return Reply(response.code, response.headers, await readBody(response))


def temp_files() -> list[str]:
    """This process's open files in the temporary directory (twisted.web spools
    request bodies there, unlinked at once)."""
    where = os.path.realpath(tempfile.gettempdir())
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(where + "/"):
            found.append(target)
    return found


# -- the request deadline, on a fake clock ----------------------------------------------

def gate_on_clock(web: Web, **limits: Any) -> tuple[WebGate, Clock]:
    clock = Clock()
    gate = WebGate(web.service.site, clock, WebLimits(**limits), 100, RefusalLog(clock))
    return gate, clock


def open_on(gate: WebGate, host: str = "192.0.2.7") -> tuple[GatedConnection, StringTransport]:
    address = IPv4Address("TCP", host, 40000)
    connection = gate.buildProtocol(address)
    assert isinstance(connection, GatedConnection)
    transport = StringTransport(peerAddress=address)
    connection.makeConnection(transport)
    return connection, transport


@pytest_twisted.ensureDeferred
async def test_a_slowloris_is_cut_at_the_request_deadline_whatever_it_trickles(
        web: Web, events: list[dict[str, Any]]) -> None:
    gate, clock = gate_on_clock(web, request_timeout=20)
    connection, transport = open_on(gate)
    connection.dataReceived(b"GET /ratings HTTP/1.1\r\n")
    for header in range(4):  # a header line every 4.9 s: twisted.web's timeout restarts
        clock.advance(4.9)
        connection.dataReceived(b"X-Slow-%d: yes\r\n" % header)
    assert not transport.disconnecting
    clock.advance(0.5)  # 20 s after the first byte
    assert transport.disconnecting
    assert transport.value().startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert transport.value().endswith(b"\r\n\r\nThe request took too long to arrive.\n")
    assert limit_events(events) == [("limit", "web.request_timeout", 1)]
    clock.advance(5)  # a client that does not read its 408 is dropped
    assert transport.disconnecting and gate.count == 1  # (StringTransport never closes)


@pytest_twisted.ensureDeferred
async def test_no_clock_runs_while_a_request_is_answered_and_idle_connections_close(
        web: Web) -> None:
    gate, clock = gate_on_clock(web, request_timeout=20, idle_timeout=60)
    connection, transport = open_on(gate)
    clock.advance(59)
    connection.dataReceived(b"GET /static/style.css HTTP/1.1\r\nHost: x\r\n\r\n")
    assert transport.value().startswith(b"HTTP/1.1 200 OK\r\n")
    clock.advance(59)  # answered: now it waits for its next request
    assert not transport.disconnecting
    connection.dataReceived(b"GET /live/alice/events HTTP/1.1\r\n")
    clock.advance(19)
    connection.dataReceived(b"Host: x\r\n\r\n")
    assert b"text/event-stream" in transport.value()
    clock.advance(3600)  # a live stream is answered for as long as it lasts
    assert not transport.disconnecting
    connection.connectionLost(ConnectionError())
    web.service.web.live.close_all()

    idle, idle_transport = open_on(gate)
    clock.advance(59.9)
    assert not idle_transport.disconnecting
    clock.advance(0.1)
    assert idle_transport.disconnecting and idle_transport.value() == b""


# -- bodies -----------------------------------------------------------------------------

@pytest_twisted.ensureDeferred
async def test_a_two_gigabyte_body_is_refused_before_one_byte_of_it_is_read(
        web: Web, events: list[dict[str, Any]]) -> None:
    before = temp_files()
    stream = await connect(web)
    assert stream.transport is not None
    stream.transport.write(b"POST /players/alice HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Length: 2000000000\r\nExpect: 100-continue\r\n\r\n")
    stream.transport.write(b"x" * 65536)
    await stream.expect(b"Request bodies are not taken here.\n")
    stream.transport.loseConnection()  # (the server throws away what comes meanwhile)
    await stream.lost
    assert stream.data.startswith(b"HTTP/1.1 413 Content Too Large\r\n")
    assert b"100 Continue" not in stream.data
    assert temp_files() == before
    assert limit_events(events) == [("limit", "web.max_body", 1)]
    await until(lambda: web.service.web_gate.count == 0)


@pytest_twisted.ensureDeferred
async def test_a_chunked_body_is_cut_at_the_cap_and_a_small_one_is_read(web: Web) -> None:
    stream = await connect(web)
    assert stream.transport is not None
    stream.transport.write(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    for _ in range(3):
        stream.transport.write(b"200\r\n" + b"y" * 512 + b"\r\n")  # 1,536 bytes > 1,024
    await stream.expect(b"Request bodies are not taken here.\n")
    stream.transport.loseConnection()
    await stream.lost
    assert stream.data.startswith(b"HTTP/1.1 413 Content Too Large\r\n")

    small = await connect(web)
    assert small.transport is not None
    small.transport.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                          b"GET /static/style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    await small.lost
    assert small.data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert small.data.count(b"HTTP/1.1 200 OK\r\n") == 2  # kept alive for the second


# -- connections ------------------------------------------------------------------------

@pytest_twisted.ensureDeferred
async def test_connections_are_capped_per_address_and_in_all(
        database: Path, match_ids: list[int], events: list[dict[str, Any]]) -> None:
    web = await start_web(database, **{"web.connections_per_address": 3,
                                       "web.max_connections": 5})
    gate = web.service.web_gate
    held: list[Stream] = []
    try:
        for _ in range(3):
            held.append(await connect(web))
        await until(lambda: gate.count == 3)
        refused = await connect(web)
        await refused.lost
        assert refused.data.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
        assert refused.data.endswith(b"Too many connections; try again later.\n")
        assert gate.count == 3
        # Another address is served, and fills the port.
        assert (await get_from(web, "/healthz", "127.0.0.2")).body == b"ok\n"
        held.append(await connect(web, "127.0.0.2"))
        held.append(await connect(web, "127.0.0.2"))
        await until(lambda: gate.count == 5)
        # Full: a third address takes the place of 127.0.0.1's oldest connection.
        newcomer = await connect(web, "127.0.0.3")
        await held[0].lost
        assert held[0].data == b""
        await until(lambda: gate.count == 5)
        assert newcomer.transport is not None
        newcomer.transport.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        await newcomer.expect(b"\r\n\r\nok\n")
        # 127.0.0.2 would hold three, more than anyone else holds: refused.
        late = await connect(web, "127.0.0.2")
        await late.lost
        assert late.data.startswith(b"HTTP/1.1 503 ")
    finally:
        for stream in held + [newcomer]:
            if stream.transport is not None:
                stream.transport.loseConnection()
        await stop_web(web)
    assert limit_events(events) == [
        ("connection_refused", "web.connections_per_address", 1),
        ("limit", "web.max_connections", 1),
        ("connection_refused", "web.max_connections", 1)]


@pytest_twisted.ensureDeferred
async def test_live_streams_are_capped_per_address(
        database: Path, match_ids: list[int], events: list[dict[str, Any]]) -> None:
    web = await start_web(database, **{"web.live_per_address": 2})
    streams = []
    try:
        for _ in range(2):
            stream = await connect(web)
            assert stream.transport is not None
            stream.transport.write(b"GET /live/alice/events HTTP/1.1\r\nHost: x\r\n\r\n")
            await stream.expect(b"is not playing now.")
            streams.append(stream)
        third = await get_from(web, "/live/bob/events", "127.0.0.1")
        assert (third.code, third.body) == (503, b"Too many live viewers; try again later.\n")
        fourth = await get_from(web, "/live/alice/events", "127.0.0.1")
        assert fourth.code == 503
        # One event for both refusals, the first at once (RefusalLog: once a minute).
        assert limit_events(events) == [("limit", "web.live_per_address", 1)]
        other = await connect(web, "127.0.0.2")
        assert other.transport is not None
        other.transport.write(b"GET /live/bob/events HTTP/1.1\r\nHost: x\r\n\r\n")
        await other.expect(b"bob is not playing now.")
        streams.append(other)
        assert web.service.web.live.count == 3
        assert streams[0].transport is not None
        streams[0].transport.loseConnection()
        await until(lambda: web.service.web.live.count == 2)
        again = await connect(web)
        assert again.transport is not None
        again.transport.write(b"GET /live/bob/events HTTP/1.1\r\nHost: x\r\n\r\n")
        await again.expect(b"bob is not playing now.")
        streams.append(again)
    finally:
        for stream in streams:
            if stream.transport is not None:
                stream.transport.loseConnection()
        await stop_web(web)


# -- pages, /healthz, /metrics ----------------------------------------------------------

@pytest_twisted.ensureDeferred
async def test_pages_that_cannot_exist_are_404_without_a_traceback(
        web: Web, events: list[dict[str, Any]]) -> None:
    huge = "999999999999999999"
    for path in (f"/players/alice?page={huge}", "/players/alice?page=0",
                 "/players/alice?page=-1", "/players/alice?page=x", "/players/alice?page=3",
                 f"/ratings?page={huge}", "/players/nobody?page=2"):
        reply = await web.get(path)
        assert reply.code == 404, path
        assert "No such p" in reply.text or "Bad page." in reply.text, path
    for path in (f"/api/matches?player=alice&page={huge}", "/api/matches?player=alice&page=0",
                 "/api/matches?player=alice&page=3", "/api/matches?player=nobody&page=2"):
        reply = await web.get(path)
        assert (reply.code, reply.body) == (404, b'{"error": "no such page"}\n'), path
    assert (await web.get("/api/matches?player=nobody")).body.startswith(b'{"player": "nobody"')
    assert (await web.get("/players/alice?page=2")).code == 200
    assert [e for e in events if e.get("log_failure") is not None] == []


@pytest_twisted.ensureDeferred
async def test_healthz_says_ok_while_the_database_answers(web: Web) -> None:
    reply = await web.get("/healthz")
    assert (reply.code, reply.body, reply.header("cache-control")) == (200, b"ok\n", "no-store")
    # A database that does not answer within 5 s: 503, on the face's clock.
    clock = Clock()
    web.service.web.health = health = Health(Archive(web.service.db), clock)
    release = threading.Event()
    busy = web.service.db.run(lambda store: release.wait(30))
    try:
        asked = Deferred.fromCoroutine(web.get("/healthz"))
        await until(lambda: health._waiting is not None)
        second = health.check()  # waits for the same probe: one at a time
        clock.advance(5)
        reply = await asked
        assert (reply.code, reply.body) == (503, b"the database does not answer\n")
        assert second.result is False
    finally:
        release.set()
        await busy
    clock.advance(1)
    assert (await web.get("/healthz")).code == 200


@pytest_twisted.ensureDeferred
async def test_metrics_answer_only_the_allowed_addresses(database: Path,
                                                         match_ids: list[int]) -> None:
    web = await start_web(database)
    try:
        assert (await get_from(web, "/metrics", "127.0.0.1")).code == 200
        refused = await get_from(web, "/metrics", "127.0.0.2")
        assert refused.code == 404 and b"fibsd_" not in refused.body
    finally:
        await stop_web(web)
    web = await start_web(database, **{"web.metrics_from": ["127.0.0.2/32", "10.0.0.0/8"]})
    try:
        assert (await get_from(web, "/metrics", "127.0.0.2")).code == 200
        assert (await get_from(web, "/metrics", "127.0.0.1")).code == 404
    finally:
        await stop_web(web)


@pytest_twisted.ensureDeferred
async def test_websockets_count_per_address_until_their_player_logs_in(
        database: Path, match_ids: list[int]) -> None:
    web = await start_web(database, **{"web.connections_per_address": 2})
    gate = web.service.web_gate
    port = web.http.getHost().port
    sockets = []
    try:
        alice, alice_socket = await ws_connect(port, "alice")  # a player: not counted
        sockets.append(alice_socket)
        waiting = await open_socket(port, Bot("guest"))  # at the login prompt: counted
        sockets.append(waiting)
        sockets.append(await open_socket(port, Bot("guest")))
        await until(lambda: gate.count == 3)
        refused = await connect(web)
        await refused.lost
        assert refused.data.startswith(b"HTTP/1.1 503 ")
        waiting.sendClose(1000)
        await waiting.closed
        await until(lambda: gate.count == 2)
        bob, bob_socket = await ws_connect(port, "bob")
        sockets.append(bob_socket)
        assert gate.count == 3
        assert alice.transport is not None
    finally:
        for socket in sockets:
            if socket.state != socket.STATE_CLOSED:
                socket.sendClose(1000)
                await socket.closed
        await stop_web(web)


@pytest_twisted.ensureDeferred
async def test_the_web_port_listens_on_its_own_interface(database: Path,
                                                         match_ids: list[int]) -> None:
    web_port = free_port()
    service = FibsService(make_settings(port=0, interface="127.0.0.1", database=str(database),
                                        web_port=web_port, **{"web.interface": "127.0.0.2"}),
                          reactor)
    service.startService()
    try:
        await service.listening
        assert service.port is not None and service.port.getHost().host == "127.0.0.1"
        assert service.web_port is not None
        assert (service.web_port.getHost().host, service.web_port.getHost().port) == (
            "127.0.0.2", web_port)
        response = await Agent(reactor).request(
            b"GET", f"http://127.0.0.2:{web_port}/healthz".encode())
        assert (response.code, await readBody(response)) == (200, b"ok\n")
    finally:
        await service.stopService()


def test_metrics_from_takes_addresses_and_networks_only() -> None:
    assert make_settings(**{"web.metrics_from": ["10.0.0.0/8", "::1"]}).web.metrics_from == (
        "10.0.0.0/8", "::1")
    with pytest.raises(ConfigError) as error:
        make_settings(**{"web.metrics_from": ["localhost"]})
    assert str(error.value) == ("web.metrics_from: 'localhost' is not an IP address or "
                                "network (203.0.113.0/24, ::1)")


def test_the_web_port_and_the_game_ports_share_the_open_files() -> None:
    assert connection_caps(make_settings(web_port=8080), 1024) == (720, 240)
    assert connection_caps(make_settings(web_port=8080), 65536) == (49104, 16368)
    assert connection_caps(make_settings(web_port=0), 1024) == (960, 240)  # no web port
    assert connection_caps(make_settings(web_port=8080, **{"web.max_connections": 100}),
                           1024) == (860, 100)
    assert connection_caps(make_settings(web_port=8080, **{"access.max_connections": 50}),
                           1024) == (50, 240)
