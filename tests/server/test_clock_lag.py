"""A slow link on a clock (protocol/clock.md section 4), over real sockets: bob plays
through a TCP proxy that holds every byte 300 ms each way; his reserve must not pay
for the link at every decision.  Without the allowance each decision of his would
cost at least the 600 ms round trip (he answers at once, with a clock of no delay)."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import ClientFactory, Factory, Protocol
from twisted.python.failure import Failure

from fibsd.app import FibsService
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import make_settings
from tests.server.test_match_restart import Bot, rolls

ONE_WAY = 0.3  # seconds the proxy holds each chunk, in each direction
DECISIONS = 5  # bob's moves before he stops answering


class _Half(Protocol):
    """One side of the proxy: what it receives reaches ``peer`` ``ONE_WAY`` later."""

    peer: _Half | None = None

    def dataReceived(self, data: bytes) -> None:
        reactor.callLater(ONE_WAY, self._forward, data)

    def _forward(self, data: bytes) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.write(data)

    def connectionLost(self, reason: Failure = Failure(ConnectionError())) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.loseConnection()


class _Inbound(_Half):
    def connectionMade(self) -> None:
        assert self.transport is not None
        self.transport.pauseProducing()  # until the server side is connected
        outbound = _Half()
        outbound.peer, self.peer = self, outbound
        factory = ClientFactory.forProtocol(lambda: outbound)
        reactor.connectTCP("127.0.0.1", self.factory.server_port, factory)  # type: ignore[attr-defined]

        def made() -> None:
            assert self.transport is not None
            self.transport.resumeProducing()

        outbound.connectionMade = made  # type: ignore[method-assign]


class Counting(Bot):
    """The bot of test_match_restart, counting the commands it sends in the match."""

    sent = 0

    def send(self, line: str) -> None:
        if self.active:
            self.sent += 1
        super().send(line)


@pytest_twisted.ensureDeferred
async def test_a_slow_link_pays_at_most_the_allowance_per_decision(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    for name in ("alice", "bob"):
        store.create_user(name, argon2.using(type="ID", memory_cost=64, time_cost=1)
                          .hash("secret"), 1_700_000_000)
    store.close()
    settings = make_settings(port=0, interface="127.0.0.1", database=str(database),
                             **{"passwords.memory_kib": 64, "passwords.time_cost": 1,
                                "clock.lag_allowance_ms": 1000})
    service = FibsService(settings, reactor)
    service.shared.lobby.dice = rolls(3)
    service.shared.lobby.coin = lambda: 1
    service.startService()
    port = int((await service.listening).getHost().port)
    proxy_factory = Factory.forProtocol(_Inbound)
    proxy_factory.server_port = port  # type: ignore[attr-defined]
    proxy = reactor.listenTCP(0, proxy_factory, interface="127.0.0.1")
    bots: list[Bot] = []
    try:
        alice, bob = Counting("alice"), Counting("bob")
        bots += [alice, bob]
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), alice)
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1",
                                                 proxy.getHost().port), bob)
        for bot in (alice, bob):
            bot.send(f"login testbot 1008 {bot.name} secret")
            await bot.wait_line(lambda line: line == "6", "login")
            bot.send("toggle ready")
            await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
        alice.send("set clock 0s+1m")
        await alice.wait_line(lambda line: line == "Value of 'clock' set to 0s+1m.", "set")
        for bot in (alice, bob):
            bot.active = True
        bob.moves_left = DECISIONS
        alice.send("invite bob 3")
        await bob.wait_line(lambda line: line == "Type 'join alice' to accept.", "invitation")
        bob.send("join alice")
        # bob opens (coin 1, "It's your turn to move."); he stops after DECISIONS moves
        # and is asked for one more.
        await bob.wait(lambda: sum(line.startswith("Please move") for line in bob.lines)
                       >= DECISIONS, "bob's last roll")
        match = service.shared.lobby.matches["alice"]
        assert match.clocks is not None
        decisions = bob.sent - 1  # his join is no decision
        used = 180.0 - match.clocks.state.reserves[1]
        assert decisions >= DECISIONS
        # The stated bound: the link is charged at most its round trip less the quickest
        # answer, per decision; with steady lag that is well under one way's delay.
        assert used < decisions * ONE_WAY, (used, decisions)
    finally:
        for bot in bots:
            if bot.transport is not None:
                bot.transport.loseConnection()
        await proxy.stopListening()
        await service.stopService()
