"""The output cap over real loopback sockets: a client that stops reading gets no more
tells once half of ``limits.max_output`` waits for it, and is cut off at the cap, with
the server's buffer for it never past the cap (issue 9: +412 MB for 400,000 tells)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.logger import globalLogPublisher

from fibsd.app import FibsService
from fibsd.server.protocol import FibsProtocol
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import make_settings
from tests.server.test_app import _Recorder

CAP = 65536
BATCH = 100


class _Counter(_Recorder):
    """A recorder that can wait for a number of complete lines."""

    lines_wanted: tuple[int, Deferred[None]] | None = None

    def dataReceived(self, data: bytes) -> None:
        super().dataReceived(data)
        if self.lines_wanted is not None and self.data.count(b"\r\n") >= self.lines_wanted[0]:
            wanted, self.lines_wanted = self.lines_wanted, None
            wanted[1].callback(None)

    def send_and_wait(self, line: bytes, times: int) -> Deferred[None]:
        """Send ``line`` ``times`` times (one answer line each) and wait for the answers."""
        self.data = b""
        d: Deferred[None] = Deferred()
        self.lines_wanted = (times, d)
        assert self.transport is not None
        self.transport.write(line * times)
        return d.addTimeout(20, reactor)


def _server_side(service: FibsService, name: str) -> FibsProtocol:
    (found,) = [p for p in service.factory.connections
                if p.session is not None and p.session.user is not None
                and p.session.user.name == name]
    return found


@pytest_twisted.ensureDeferred
async def test_a_client_that_stops_reading_is_refused_then_cut_at_the_cap(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    hashed = argon2.using(memory_cost=64, time_cost=1).hash("secret")
    for name in ("alice", "bob"):
        store.create_user(name, hashed, 1)
    store.close()
    events: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(events.append)
    service = FibsService(make_settings(**{
        "port": 0, "interface": "127.0.0.1", "database": str(database),
        "limits.max_output": CAP, "limits.tells_per_minute": 1_000_000,
        "limits.toggles_per_minute": 1_000_000, "presence_delay_ms": 0}), reactor)
    service.startService()
    try:
        port = (await service.listening).getHost().port
        alice, bob = _Counter(), _Recorder()
        for client, name in ((bob, "bob"), (alice, "alice")):
            await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), client)
            assert client.transport is not None
            client.transport.write(f"login test 1008 {name} secret\r\n".encode())
            await client.expect(b"\r\n6\r\n")
        assert bob.transport is not None and alice.transport is not None
        bob.transport.getHandle().setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        bob.transport.pauseProducing()  # type: ignore[attr-defined]  # bob stops reading
        to_bob = _server_side(service, "bob")
        # Small kernel buffers on both ends, so that the server's own buffer fills soon.
        to_bob.transport.getHandle().setsockopt(  # type: ignore[union-attr]
            socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        refused = b"** bob is not reading; your message was not delivered.\r\n"
        text = "x" * 900
        sent = 0
        while refused not in alice.data:
            assert sent < 50_000, "never refused"
            await alice.send_and_wait(f"tell bob {text}\r\n".encode(), BATCH)
            sent += BATCH
        # (The kernel may still take some of it afterwards, as its buffers grow: what the
        # server holds is what the limit bounds, tests/server/test_limits.py has exact
        # counts.)
        lobby = service.factory.services.lobby
        assert lobby.find("bob") is not None
        # Who-info lines (alice's toggle ready) go to every CLIP user, reading or not;
        # each toggle answers alice with one line (and a 5 line about herself).
        batches = 0
        while lobby.find("bob") is not None:
            assert to_bob.unsent() <= CAP
            assert batches < 200, "never cut"
            await alice.send_and_wait(b"toggle ready\r\n", BATCH)
            batches += 1
        # The notice may come after the batch that saw bob cut had its count of lines.
        await alice.expect(b"8 bob bob drops connection.")
        assert [e["limit"] for e in events if e.get("event") == "limit"] == ["limits.max_output"]
    finally:
        globalLogPublisher.removeObserver(events.append)
        await service.stopService()
