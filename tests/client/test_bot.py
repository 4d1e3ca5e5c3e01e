"""fibsd-bot against a real fibsd on loopback: two bots play whole matches on seeded dice,
every line classifies, and a bot whose connection is cut comes back and resumes the match."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import gatherResults

from fibsd.app import FibsService
from fibsd.client import events as ev
from fibsd.client.bot import Bot, Stats
from fibsd.client.protocol import ClipClientProtocol, Credentials, connect
from tests.client.test_loopback import start_server
from tests.fair_verifier import check_record

WAIT = 60.0  # a whole match on a slow machine


class SeededDice:
    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def roll(self) -> tuple[int, int]:
        return (self.random.randint(1, 6), self.random.randint(1, 6))


class RecordingBot(Bot):
    """A bot that keeps every event and every connection; ``cut_after`` boards it hangs up once."""

    def __init__(self, *args: Any, cut_after: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.events: list[ev.Event] = []
        self.protocols: list[ClipClientProtocol] = []
        self.cut_after = cut_after
        self.boards = 0

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)
        super().__call__(event)

    def attach(self, protocol: ClipClientProtocol) -> None:
        super().attach(protocol)
        self.protocols.append(protocol)

    def on_Board(self, event: ev.Board) -> None:
        super().on_Board(event)
        self.boards += 1
        if self.boards == self.cut_after and self.protocol is not None:
            self.protocol.transport.loseConnection()

    def kinds(self) -> set[type[ev.Event]]:
        return {type(event) for event in self.events}


async def seeded_server(tmp_path: Path, seed: int) -> tuple[FibsService, int]:
    service, port = await start_server(tmp_path)
    service.shared.lobby.dice = SeededDice(seed)
    service.shared.lobby.coin = lambda: 0
    return service, port


async def fair_server(tmp_path: Path, seed: int) -> tuple[FibsService, int]:
    """A server rolling fair dice (protocol/fair-dice.md) from reproducible server seeds."""
    service, port = await start_server(tmp_path)
    drawn = iter(range(1000))
    service.shared.lobby.draw_seed = lambda: hashlib.sha256(f"{seed}/{next(drawn)}".encode()).digest()
    service.shared.lobby.coin = lambda: 0
    return service, port


async def verify_finished_dice(service: FibsService, name: str) -> None:
    """Every finished match of ``name`` reproduces with the independent verifier."""
    finished = await service.db.finished_matches(name)
    assert finished and all(check_record(match.record) > 0 for match in finished)


async def online(port: int, bot: Bot) -> None:
    factory, ready = connect(reactor, "127.0.0.1", port, Credentials(bot.name, "secret", "fibsd-bot"),
                             bot, register=True, reconnect=True, connected=bot.attach)
    factory.initialDelay = factory.delay = 0.05
    await ready.addTimeout(10, reactor)


async def ready(bot: Bot) -> None:
    """Wait until the bot has made itself ready (its first act after login)."""
    assert bot.protocol is not None
    answer = await bot.protocol.wait_for(ev.ToggleChanged).addTimeout(10, reactor)
    assert answer == ev.ToggleChanged("ready", True)


def hang_up(*bots: RecordingBot) -> None:
    for bot in bots:
        if bot.factory is not None:
            bot.factory.stopTrying()
        for protocol in bot.protocols:
            if protocol.transport is not None:
                protocol.transport.loseConnection()


@pytest_twisted.ensureDeferred
async def test_two_bots_play_two_whole_matches(tmp_path: Path) -> None:
    service, port = await fair_server(tmp_path, seed=5)
    stats = Stats()
    bob = RecordingBot("bob", matches=2, clock=reactor, stats=stats)
    alice = RecordingBot("alice", invite="bob", length=3, matches=2, clock=reactor, stats=stats)
    try:
        await online(port, bob)
        await ready(bob)
        await online(port, alice)
        done = [bot.finished.wait() for bot in (alice, bob)]
        await gatherResults(done).addTimeout(2 * WAIT, reactor)

        for bot in (alice, bob):
            assert [p.unknown_lines for p in bot.protocols] == [[] for _ in bot.protocols]
            assert bot.matches_played == 2 and bot.games_played >= 4
            won = [e for e in bot.events if isinstance(e, ev.MatchWon)]
            assert len(won) == 2 and all(e.match_length == 3 and e.winner_score >= 3 for e in won)
            assert {ev.NewMatch, ev.Rolls, ev.Moves, ev.Board, ev.JoinNextGame} <= bot.kinds()
        assert stats.errors == []
        assert stats.matches == 4 and len(stats.latencies) >= stats.actions // 2
        finished = await service.db.finished_matches("alice")
        assert [(m.length, max(m.winner_points, m.loser_points) >= 3) for m in finished] == \
            [(3, True), (3, True)]
        await verify_finished_dice(service, "alice")
    finally:
        hang_up(alice, bob)
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_a_bot_resumes_its_match_after_its_connection_is_cut(tmp_path: Path) -> None:
    service, port = await fair_server(tmp_path, seed=11)
    bob = RecordingBot("bob", matches=1, clock=reactor, cut_after=12)
    alice = RecordingBot("alice", invite="bob", length=3, matches=1, clock=reactor)
    try:
        await online(port, bob)
        await ready(bob)
        await online(port, alice)
        done = [bot.finished.wait() for bot in (alice, bob)]
        await gatherResults(done).addTimeout(WAIT, reactor)

        assert len(bob.protocols) == len(alice.protocols) + 1  # the guest dialogue, a login, the comeback
        assert any(isinstance(e, ev.GameSaved) and e.player == "bob" for e in alice.events)
        # bob reads show saved and invites; alice invites at his login: one join wins
        resumed = [e for e in bob.events if isinstance(e, ev.MatchResumed)]
        assert len(resumed) == 1 and resumed[0].opponent == "alice"
        assert ev.MatchResumed("bob", you_joined=not resumed[0].you_joined) in alice.events
        for bot in (alice, bob):
            assert [p.unknown_lines for p in bot.protocols] == [[] for _ in bot.protocols]
            assert bot.matches_played == 1
        finished = await service.db.finished_matches("bob")
        assert len(finished) == 1 and finished[0].length == 3
        assert await service.db.saved_matches("bob") == []
        await verify_finished_dice(service, "bob")  # the rolls before and after the cut
    finally:
        hang_up(alice, bob)
        await service.stopService()
