"""A write to an idle plain TCP socket goes to the kernel at once (issue 26: Twisted's
buffered write cost two ``epoll_ctl`` calls and a reactor pass per write), behind
whatever Twisted still holds for a busy one, and never under TLS's or another
encoding layer's feet."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.testing import StringTransport
from twisted.protocols.tls import TLSMemoryBIOProtocol

from fibsd.app import FibsService
from fibsd.server.ports import CountedConnection
from fibsd.server.protocol import FibsProtocol, _plain_socket
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import make_settings
from tests.server.test_app import _Recorder
from tests.server.test_limits_loopback import _server_side


async def _logged_in(tmp_path: Path) -> tuple[FibsService, _Recorder, FibsProtocol]:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    store.create_user("alice", argon2.using(memory_cost=64, time_cost=1).hash("secret"), 1)
    store.close()
    service = FibsService(make_settings(**{
        "port": 0, "interface": "127.0.0.1", "database": str(database),
        "limits.max_output": 4_000_000}), reactor)
    service.startService()
    port = (await service.listening).getHost().port
    alice = _Recorder()
    await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), alice)
    assert alice.transport is not None
    alice.transport.write(b"login test 1008 alice secret\r\n")
    await alice.expect(b"\r\n6\r\n")
    return service, alice, _server_side(service, "alice")


@pytest_twisted.ensureDeferred
async def test_a_write_to_an_idle_socket_leaves_nothing_in_twisteds_buffer(
        tmp_path: Path) -> None:
    service, alice, to_alice = await _logged_in(tmp_path)
    try:
        to_alice.write(b"first\r\n")
        assert to_alice.unsent() == 0  # in the kernel: no writer registered for it
        assert to_alice.transport not in reactor.getWriters()
        await alice.expect(b"first\r\n")
    finally:
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_what_the_kernel_cannot_take_waits_and_later_writes_go_behind_it(
        tmp_path: Path) -> None:
    service, alice, to_alice = await _logged_in(tmp_path)
    try:
        assert to_alice.transport is not None
        to_alice.transport.getHandle().setsockopt(  # type: ignore[attr-defined]
            socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        alice.data = b""
        big = b"".join(b"%07d\r\n" % n for n in range(200_000))  # 1.8 MB
        to_alice.write(big)
        held = to_alice.unsent()
        assert 0 < held < len(big)  # the kernel took a part, Twisted holds the rest
        to_alice.write(b"last\r\n")  # not at once: it would overtake the rest
        assert to_alice.unsent() == held + len(b"last\r\n")
        await alice.expect(b"last\r\n")
        assert alice.data == big + b"last\r\n"
    finally:
        await service.stopService()


def test_only_layers_that_pass_bytes_through_are_looked_under() -> None:
    assert _plain_socket(StringTransport()) is None  # an in-memory transport
    counted = CountedConnection.__new__(CountedConnection)
    counted.transport = StringTransport()
    assert _plain_socket(counted) is None
    tls = TLSMemoryBIOProtocol.__new__(TLSMemoryBIOProtocol)
    counted.transport = tls  # TLS must encrypt every byte: never looked under
    assert _plain_socket(counted) is None
