"""A match over real loopback sockets, played by two CLIP bots that act only on the lines
they receive: started, saved when one bot's connection drops, the server stopped and
started again on the same SQLite file, resumed with ``invite``/``join`` and finished."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol
from twisted.python.failure import Failure

from fibsd.app import FibsService
from fibsd.rules.dice import ScriptedDice
from fibsd.rules.movegen import legal_plays
from fibsd.rules.notation import format_fibs_moves
from fibsd.store.opening import open_store
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.board import Colour, consistency_problems, parse_board, view_position
from tests.helpers import Waits, make_settings

WAIT = 20.0


class Bot(Protocol):
    """Plays the first legal play of every roll, computed from the ``board:`` line alone."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lines: list[str] = []
        self.buffer = b""
        self.active = False
        self.moves_left = 10_000
        self.board = ""
        self.move_on_board = False
        self.waits = Waits(WAIT)
        self.lost = False

    def dataReceived(self, data: bytes) -> None:
        *complete, self.buffer = (self.buffer + data).split(b"\r\n")
        for raw in complete:
            line = raw.decode("ascii")
            self.lines.append(line)
            self.react(line)
        self.waits.poke()

    def connectionLost(self, reason: Failure = Failure(ConnectionError())) -> None:
        self.lost = True
        self.waits.poke()

    def send(self, line: str) -> None:
        assert self.transport is not None
        self.transport.write(line.encode("ascii") + b"\r\n")

    def react(self, line: str) -> None:
        if line.startswith("board:"):
            assert consistency_problems(parse_board(line)) == [], line
            self.board = line
            if self.move_on_board:
                self.move_on_board = False
                self.move()
            return
        if not self.active:
            return
        if line == "It's your turn to move.":
            self.move_on_board = True
        elif line.startswith("Please move "):
            self.move()
        elif line == "It's your turn to roll or double.":
            self.send("roll")
        elif line.endswith("doubles. Type 'accept' or 'reject'."):
            self.send("accept")
        elif line.startswith("Type 'join' if you want"):
            self.send("join")

    def move(self) -> None:
        if self.moves_left <= 0:
            return
        self.moves_left -= 1
        view = parse_board(self.board)
        colour = Colour(view.colour)
        plays = legal_plays(view_position(view, colour), view.player_dice)
        self.send("move " + format_fibs_moves(plays[0].moves, colour.direction))

    def wait(self, done: Callable[[], bool], what: str) -> Deferred[None]:
        return self.waits.until(done, lambda: f"{self.name}: {what}; got {self.lines[-30:]}")

    def wait_line(self, predicate: Callable[[str], bool], what: str) -> Deferred[None]:
        start = len(self.lines)
        return self.wait(lambda: any(predicate(line) for line in self.lines[start:]), what)


def rolls(seed: int) -> ScriptedDice:
    rng = random.Random(seed)
    return ScriptedDice([(3, 5)] + [(rng.randint(1, 6), rng.randint(1, 6)) for _ in range(5000)])


async def start(database: Path | str, seed: int) -> tuple[FibsService, int]:
    settings = make_settings(port=0, interface="127.0.0.1", database=str(database),
                             **{"passwords.memory_kib": 64, "passwords.time_cost": 1})
    service = FibsService(settings, reactor)
    service.shared.lobby.dice = rolls(seed)
    service.shared.lobby.coin = lambda: 1
    service.startService()
    port = await service.listening
    return service, int(port.getHost().port)


async def connect(port: int, name: str) -> Bot:
    bot = Bot(name)
    await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), bot)
    bot.send(f"login testbot 1008 {name} secret")
    await bot.wait_line(lambda line: line == "6", "login")
    return bot


@pytest_twisted.ensureDeferred
async def test_dropped_match_resumes_after_a_restart(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    for name in ("alice", "bob"):
        store.create_user(name, argon2.using(type="ID", memory_cost=64, time_cost=1)
                          .hash("secret"), 1_700_000_000)
    store.close()

    services: list[FibsService] = []
    try:
        await play_drop_restart_and_resume(database, services)
    finally:
        for service in services:
            if service.running:
                await service.stopService()
    store = SQLiteStore(database)
    [finished] = store.finished_matches("alice")
    assert store.load_match("alice", "bob") is None
    assert finished.length == 2 and finished.winner_points >= 2
    assert store.get_user(finished.winner).experience == 2
    store.close()


async def play_drop_restart_and_resume(database: Path | str,
                                       services: list[FibsService]) -> None:
    """A match dropped, kept through a restart and resumed; ``database`` a SQLite file
    or a PostgreSQL URL (tests/test_postgres_site.py)."""
    service, port = await start(database, 1)
    services.append(service)
    alice, bob = await connect(port, "alice"), await connect(port, "bob")
    for bot in (alice, bob):
        bot.send("toggle ready")
        await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
        bot.active = True
        bot.moves_left = 3
    alice.send("invite bob 2")
    await bob.wait_line(lambda line: line == "Type 'join alice' to accept.", "invitation")
    bob.send("join alice")
    # bob opens; after three moves each, bob has rolled again and is asked to move.
    await bob.wait(lambda: sum(line.startswith("Please move") for line in bob.lines) == 3,
                   "bob's fourth roll")
    match = service.shared.lobby.matches["alice"]
    position, score, dice = match.rules.position, match.rules.score, match.rules.dice
    assert dice is not None
    assert bob.transport is not None
    bob.transport.loseConnection()
    await alice.wait_line(lambda line: line == "bob drops connection. The game was saved.",
                          "the saved notice")
    await service.stopService()
    await alice.wait(lambda: alice.lost, "the shutdown")

    store = open_store(database)
    assert store.load_match("alice", "bob") is not None
    store.close()

    service, port = await start(database, 2)
    services.append(service)
    alice, bob = await connect(port, "alice"), await connect(port, "bob")
    bob.send("invite alice")
    await alice.wait_line(lambda line: line == "Type 'join bob' to accept.", "resume invitation")
    for bot in (alice, bob):
        bot.active = True
    end = lambda line: " the 2 point match " in line  # noqa: E731
    alice_ends, bob_ends = alice.wait_line(end, "the match end"), bob.wait_line(end, "the match end")
    alice.send("join bob")
    await bob.wait_line(lambda line: line.startswith("Please move"), "the resumed turn")
    start_line = alice.lines.index("You are now playing with bob. Your running match was loaded.")
    resume = alice.lines[start_line:start_line + 7]
    assert resume[2:6] == ["turn: bob.", "match length: 2", "points for alice: 0",
                           "points for bob: 0"]
    view = parse_board(resume[6])
    assert view_position(view, Colour(view.colour)) == position  # alice is player 0
    assert (view.opponent_dice, view.player_score, view.opponent_score) == (dice, *score)
    await alice_ends
    await bob_ends
    await service.stopService()
