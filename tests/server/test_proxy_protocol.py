"""``access.proxy_protocol``: behind a load balancer every connection starts with a PROXY
protocol header (v1 or v2), and every per-address mechanism uses the address it gives.
Real loopback sockets: the "balancer" is the test itself, writing the header first."""

from __future__ import annotations

import socket
import struct
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor, ssl
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.logger import globalLogPublisher

from fibsd.app import FibsService
from fibsd.server.access import RefusalLog
from fibsd.server.proxy_header import ProxyHeaderFactory
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import make_settings
from tests.server.test_app import _Recorder
from tests.server.test_tls import self_signed

V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
BANNER_END = b"login: "
TOO_MANY = b"** Too many connections from your address. Please try again later.\r\n"
REGISTRATION_REFUSED = (b"** Too many new accounts from your address. "
                        b"Please try again in 60 minutes.")


def v1(client: str) -> bytes:
    return f"PROXY TCP4 {client} 10.0.0.1 56324 4321\r\n".encode()


def v2_ipv4(client: str, port: int = 56324) -> bytes:
    addresses = socket.inet_aton(client) + socket.inet_aton("10.0.0.1") + struct.pack(
        "!HH", port, 4321)
    return V2_SIGNATURE + b"\x21\x11" + struct.pack("!H", len(addresses)) + addresses


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("event") in ("login", "login_failed", "connection_refused", "limit"):
            seen.append(event)

    globalLogPublisher.addObserver(observe)
    yield seen
    globalLogPublisher.removeObserver(observe)


class Site:
    """A running fibsd on loopback with ``access.proxy_protocol`` (unless told)."""

    def __init__(self, service: FibsService) -> None:
        self.service = service
        self.port = 0

    async def connect(self, first: bytes = b"") -> _Recorder:
        client = _Recorder()
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", self.port), client)
        assert client.transport is not None
        if first:
            client.transport.write(first)
        return client

    async def login(self, header: bytes, name: str) -> _Recorder:
        client = await self.connect(header + f"login test 1008 {name} secret\r\n".encode())
        await client.expect(b"\r\n6\r\n")
        return client

    def host_of(self, name: str) -> str:
        (host,) = [p.session.host for p in self.service.factory.connections
                   if p.session is not None and p.session.user is not None
                   and p.session.user.name == name]
        return host


@asynccontextmanager
async def running(tmp_path: Path, **overrides: Any) -> AsyncIterator[Site]:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    hashed = argon2.using(memory_cost=64, time_cost=1).hash("secret")
    for name in ("root", "alice", "bob"):
        store.create_user(name, hashed, 1)
    store.close()
    settings = make_settings(**{
        "port": 0, "interface": "127.0.0.1", "database": str(database),
        "access.proxy_protocol": True, "admins": ["root"], "presence_delay_ms": 0,
        "passwords.memory_kib": 64, "passwords.time_cost": 1, **overrides})
    service = FibsService(settings, reactor)
    service.startService()
    site = Site(service)
    try:
        site.port = (await service.listening).getHost().port
        yield site
    finally:
        await service.stopService()


@pytest_twisted.async_yield_fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with running(tmp_path) as site:
        yield site


@pytest_twisted.ensureDeferred
async def test_a_v1_header_gives_the_address_everyone_sees(
        site: Site, events: list[dict[str, Any]]) -> None:
    alice = await site.login(v1("203.0.113.9"), "alice")
    assert b"\r\n1 alice 1 203.0.113.9\r\n" in alice.data  # CLIP own info: in full
    assert site.host_of("alice") == "203.0.113.9"
    assert [(e["event"], e["user"], e["address"]) for e in events] == [
        ("login", "alice", "203.0.113.9")]
    bob = await site.login(v1("198.51.100.4"), "bob")
    assert b" 203.0.x.x test -\r\n" in bob.data  # others: masked
    assert b"203.0.113.9" not in bob.data
    assert bob.transport is not None
    bob.data = b""
    bob.transport.write(b"whois alice\r\n")
    await bob.expect(b"from 203.0.x.x")
    alice.data = b""
    assert alice.transport is not None
    alice.transport.write(b"whois alice\r\n")
    await alice.expect(b"Still logged in.")
    assert b"from 203.0.113.9\r\n" in alice.data


@pytest_twisted.ensureDeferred
async def test_a_v2_header_works_and_local_or_unknown_keeps_the_balancers_address(site: Site) -> None:
    await site.login(v2_ipv4("192.0.2.33"), "alice")
    assert site.host_of("alice") == "192.0.2.33"
    local = V2_SIGNATURE + b"\x20\x00\x00\x00"  # a balancer's own health check
    await site.login(local, "bob")
    assert site.host_of("bob") == "127.0.0.1"
    await site.login(b"PROXY UNKNOWN\r\n", "root")  # v1's word for the same
    assert site.host_of("root") == "127.0.0.1"


@pytest_twisted.ensureDeferred
async def test_the_header_may_come_in_pieces(site: Site) -> None:
    client = await site.connect(b"PRO")
    client.transport.write(b"XY TCP4 203.0.113.10 10.0")  # type: ignore[union-attr]
    client.transport.write(b".0.1 5 4321\r\nlogin test 1008 alice secret\r\n")  # type: ignore
    await client.expect(b"\r\n6\r\n")
    assert site.host_of("alice") == "203.0.113.10"


@pytest_twisted.ensureDeferred
async def test_the_cap_on_waiting_connections_counts_each_claimed_address(
        tmp_path: Path, events: list[dict[str, Any]]) -> None:
    async with running(tmp_path, **{"access.unauthenticated_per_address": 2}) as site:
        for _ in range(2):
            await (await site.connect(v1("203.0.113.1"))).expect(BANNER_END)
        third = await site.connect(v1("203.0.113.1"))
        await third.lost
        assert third.data == TOO_MANY
        other = await site.connect(v1("203.0.113.2"))  # same loopback, another client
        await other.expect(BANNER_END)
        assert [(e["limit"], e["address"]) for e in events] == [
            ("access.unauthenticated_per_address", "203.0.113.1")]


async def register(site: Site, header: bytes, name: str, refused: bool = False) -> bytes:
    """A guest registers ``name``; with ``refused``, the answer to ``name`` is awaited
    (the count is in the database: it comes after a round trip to it)."""
    guest = await site.connect(header + f"guest\r\nname {name}\r\n".encode())
    if refused:
        await guest.expect(REGISTRATION_REFUSED)
        return guest.data
    await guest.expect(b"Your name will be")
    guest.transport.write(b"secret\r\nsecret\r\n")  # type: ignore[union-attr]
    await guest.expect(b"You are registered.")
    return guest.data


@pytest_twisted.ensureDeferred
async def test_the_registration_limit_counts_each_claimed_address(tmp_path: Path) -> None:
    async with running(tmp_path, **{"access.registrations_per_hour": 1}) as site:
        assert b"You are registered." in await register(site, v1("203.0.113.5"), "ann")
        refused = await register(site, v1("203.0.113.5"), "ben", refused=True)
        assert REGISTRATION_REFUSED in refused and b"You are registered." not in refused
        assert b"You are registered." in await register(site, v1("203.0.113.6"), "ben")


@pytest_twisted.ensureDeferred
async def test_an_address_ban_applies_to_the_claimed_address(site: Site) -> None:
    root = await site.login(v1("198.51.100.1"), "root")
    root.data = b""
    root.transport.write(b"admin ban 203.0.113.66\r\n")  # type: ignore[union-attr]
    await root.expect(b"** Banned address 203.0.113.66 until lifted, by root")
    banned = await site.connect(v1("203.0.113.66") + b"login test 1008 alice secret\r\n")
    await banned.lost
    assert banned.data.endswith(b"** You are banned from this server.\r\n")
    await site.login(v1("203.0.113.67"), "alice")  # the balancer's other clients get in


@pytest.mark.parametrize("sent, reason", [
    (b"login test 1008 alice secret\r\n", "no PROXY protocol header"),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", "no PROXY protocol header"),
    (b"PROXY TCP4 " + b"1" * 200, "header longer than 107 bytes"),
    (V2_SIGNATURE + b"\x21\x11\xff\xff" + b"\x00" * 100, "header longer than 4096 bytes"),
    (b"PROXY TCP4 alice 10.0.0.1 1 2\r\n", "not an IP address"),
    (b"PROXY TCP6 fe80::1%\x1b[2J ::1 1 2\r\n", "not an IP address"),
    (b"PROXY TCP4 ::1 10.0.0.1 1 2\r\n", "not an IP address"),
    (b"PROXY TCP4 203.0.113.9 10.0.0.1 port 4321\r\n", "malformed header"),
    (b"PROXY SCTP 203.0.113.9 10.0.0.1 1 4321\r\n", "malformed header"),
])
@pytest_twisted.ensureDeferred
async def test_a_connection_without_a_valid_header_is_closed_without_a_word(
        site: Site, events: list[dict[str, Any]], sent: bytes, reason: str) -> None:
    client = await site.connect(sent)
    await client.lost
    assert client.data == b""
    assert site.service.factory.connections == set()
    assert [{k: e[k] for k in ("event", "limit", "reason", "address", "count")}
            for e in events] == [{"event": "connection_refused",
                                  "limit": "access.proxy_protocol", "reason": reason,
                                  "address": "127.0.0.1", "count": 1}]


@pytest_twisted.ensureDeferred
async def test_with_the_key_off_a_proxy_line_is_just_a_bad_name(
        tmp_path: Path, events: list[dict[str, Any]]) -> None:
    async with running(tmp_path, **{"access.proxy_protocol": False}) as site:
        client = await site.connect()
        await client.expect(BANNER_END)
        client.data = b""
        client.transport.write(v1("203.0.113.9"))  # type: ignore[union-attr]
        await client.expect(b"password: ")
        assert client.data == b"\xff\xfb\x01password: "  # telnet's echo off, as FIBS
        client.data = b""
        client.transport.write(b"secret\r\n")  # type: ignore[union-attr]
        await client.expect(b"login: ")
        assert client.data == b"\xff\xfc\x01\r\nlogin: "
        assert [(e["event"], e["user"], e["address"]) for e in events] == [
            ("login_failed", "PROXY", "127.0.0.1")]


class _Kept(Protocol):
    """What the wrapper hands on: the connection, the peer it sees and the bytes."""

    def __init__(self) -> None:
        self.peer: object = None
        self.data = b""

    def connectionMade(self) -> None:
        assert self.transport is not None
        self.peer = self.transport.getPeer()

    def dataReceived(self, data: bytes) -> None:
        self.data += data


def wrapped(clock: Clock) -> tuple[Any, StringTransport, list[_Kept]]:
    made: list[_Kept] = []

    def build() -> _Kept:
        made.append(_Kept())
        return made[-1]

    factory = ProxyHeaderFactory(Factory.forProtocol(build), clock, 60, RefusalLog(clock))
    protocol = factory.buildProtocol(IPv4Address("TCP", "10.0.0.2", 40000))
    transport = StringTransport(peerAddress=IPv4Address("TCP", "10.0.0.2", 40000))
    protocol.makeConnection(transport)
    return protocol, transport, made


def test_a_header_that_never_comes_is_given_up_at_the_login_deadline(
        events: list[dict[str, Any]]) -> None:
    clock = Clock()
    protocol, transport, made = wrapped(clock)
    protocol.dataReceived(b"PROXY TCP4 203.0.113.9")  # and then nothing
    clock.advance(59.9)
    assert not transport.disconnecting
    clock.advance(0.1)
    assert transport.value() == b""
    assert [kept.peer for kept in made] == [None]  # built, never connected
    assert transport.disconnecting
    assert [(e["reason"], e["address"]) for e in events] == [("no header in time", "10.0.0.2")]
    assert clock.getDelayedCalls() == []


def test_the_wrapped_protocol_starts_after_the_header_and_never_sees_it() -> None:
    clock = Clock()
    protocol, transport, made = wrapped(clock)
    ipv6 = (V2_SIGNATURE + b"\x21\x21" + struct.pack("!H", 36)
            + socket.inet_pton(socket.AF_INET6, "2001:db8::7")
            + socket.inet_pton(socket.AF_INET6, "2001:db8::1") + struct.pack("!HH", 5, 4321))
    protocol.dataReceived(ipv6 + b"hello")
    (kept,) = made
    assert kept.peer == IPv6Address("TCP", "2001:db8::7", 5)
    assert kept.data == b"hello"
    protocol.dataReceived(b"PROXY more")
    assert kept.data == b"helloPROXY more"
    assert clock.getDelayedCalls() == []


@pytest_twisted.ensureDeferred
async def test_the_tls_listener_reads_the_header_before_the_handshake(tmp_path: Path) -> None:
    cert_path, key_path = self_signed(tmp_path)
    async with running(tmp_path, **{"tls.enabled": True, "tls.port": 0,
                                    "tls.certificate": str(cert_path),
                                    "tls.key": str(key_path)}) as site:
        port = (await site.service.tls_listening).getHost().port
        client = _Recorder()
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), client)
        assert client.transport is not None
        client.transport.write(v1("203.0.113.44"))  # the balancer's header, in the clear
        trust = ssl.Certificate.loadPEM(cert_path.read_bytes())
        client.transport.startTLS(  # type: ignore[attr-defined]
            ssl.optionsForClientTLS("localhost", trustRoot=trust))
        client.transport.write(b"login test 1008 alice secret\r\n")
        await client.expect(b"\r\n6\r\n")
        assert b"\r\n1 alice 1 203.0.113.44\r\n" in client.data
        assert site.host_of("alice") == "203.0.113.44"


@pytest_twisted.ensureDeferred
async def test_stopping_closes_the_connections_still_waiting_for_their_header(
        tmp_path: Path) -> None:
    async with running(tmp_path) as site:
        silent = await site.connect()
        await (await site.connect(v1("203.0.113.3"))).expect(BANNER_END)  # accepted after
        (proxied,) = site.service.proxied
        assert [p.waiting for p in proxied.protocols] == [True, False]
    await silent.lost.addTimeout(5, reactor)  # long before the header deadline (60 s)
    assert silent.data == b""
    assert [call for call in reactor.getDelayedCalls()  # type: ignore[attr-defined]
            if getattr(call.func, "__name__", "") == "_refuse"] == []


def test_the_examples_in_the_module_hold() -> None:
    import doctest

    from fibsd.server import proxy_header

    assert doctest.testmod(proxy_header).failed == 0  # fibsd/server is not in testpaths


@pytest_twisted.ensureDeferred
async def test_a_failed_login_is_logged_and_throttled_by_the_claimed_address(
        site: Site, events: list[dict[str, Any]]) -> None:
    client = await site.connect(v1("203.0.113.50"))
    await client.expect(BANNER_END)
    client.data = b""
    client.transport.write(b"login test 1008 alice wrong\r\n")  # type: ignore[union-attr]
    await client.expect(BANNER_END)
    assert [(e["event"], e["user"], e["address"]) for e in events] == [
        ("login_failed", "alice", "203.0.113.50")]
    throttle = site.service.shared.throttle
    assert (throttle.failures("203.0.113.50"), throttle.failures("127.0.0.1")) == (1, 0)
