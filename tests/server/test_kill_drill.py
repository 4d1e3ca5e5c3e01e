"""The crash drill: a real fibsd process is killed with SIGKILL at random points of real
matches, restarted on the same SQLite file, and every match is resumed and finished.

Three pairs of CLIP bots play 1- to 3-point matches (they double and drop now and
then, so cube and score move too), each on a clock (``CLOCK``, the server's default:
every saved and finished record must hold it).  Each round starts ``python -m fibsd`` on a loopback
port, logs the six bots in, has each pair resume its saved match (or start a new one
when ``invite`` says there is none) and kills the server once the bots together have
received a random number of boards (0: during the logins and invitations), or once
every match has ended.  With the server dead the test reads the database:

* every roll the inviter (player 0) was told of in the current match is in the stored
  record, in order, with the same dice (a line never outlives its write, so a restart
  can never roll again what a player already saw);
* a resumed match shows, on its first board, the stored position, cube, score and dice.

After the last kill the server runs until every match is finished, stops on SIGTERM
(exit 0), and the file is reconciled: each pair has exactly as many finished matches as
were started and no saved one, every rating is 1500 plus its recorded changes, every
experience the sum of the lengths played, and ``PRAGMA integrity_check`` says ok.

The kill points come from a seeded generator; the seed is printed (run with
``FIBSD_DRILL_SEED=<seed>`` to repeat one).  Every wait is for protocol lines or the
process, bounded by ``WAIT``.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import ProcessProtocol, Protocol
from twisted.python.failure import Failure

from fibsd.rules.match import Match
from fibsd.rules.movegen import legal_plays
from fibsd.rules.notation import format_fibs_moves
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.board import Colour, parse_board, view_position
from tests.helpers import Waits

KILLS = 20
# Every match runs on a clock (protocol/clock.md) generous enough that nobody loses on
# time: the clocks are stored and resumed with each match like the rest of it.
CLOCK = "30s+10m"
WAIT = 30.0  # seconds any one wait may take before the drill fails
PAIRS = (("anna", "bert"), ("cleo", "dirk"), ("emil", "fred"))
REPO = Path(__file__).resolve().parents[2]

Entry = tuple[int, ...]  # (0, d0, d1) an opening roll, (1, player, d1, d2) a roll


def recorded_rolls(record: str) -> list[Entry]:
    """The opening rolls and rolls of a stored match, every game, in order."""
    rolls: list[Entry] = []
    for game in json.loads(record)["match"]["games"]:
        for entry in game:
            if entry[0] == "opening":
                rolls.append((0, entry[1], entry[2]))
            elif entry[0] == "roll":
                rolls.append((1, entry[1], entry[2], entry[3]))
    return rolls


class Server(ProcessProtocol):
    """``python -m fibsd`` on a loopback port of its own choosing."""

    def __init__(self, drill: Waits) -> None:
        self.drill = drill
        self.output = b""
        self.port: int | None = None
        self.exit_code: int | None = None
        self.ended = False

    def outReceived(self, data: bytes) -> None:
        self.output += data
        found = re.search(rb"listening on 127\.0\.0\.1 port (\d+)", self.output)
        if found and self.port is None:
            self.port = int(found.group(1))
        self.drill.poke()

    errReceived = outReceived

    def processEnded(self, reason: Failure) -> None:
        self.ended = True
        self.exit_code = getattr(reason.value, "exitCode", None)
        self.drill.poke()

    def usage(self) -> tuple[int, float]:
        """The live process's RSS (kB) and CPU seconds so far, from /proc (Linux)."""
        assert self.transport is not None
        try:
            status = Path(f"/proc/{self.transport.pid}/status").read_text()
            fields = Path(f"/proc/{self.transport.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0, 0.0
        rss = int(re.search(r"VmRSS:\s+(\d+)", status)[1]) if "VmRSS" in status else 0
        return rss, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def signal(self, number: int) -> None:
        assert self.transport is not None
        self.transport.signalProcess({signal.SIGKILL: "KILL", signal.SIGTERM: "TERM"}[number])


@dataclass
class Pair:
    inviter: str
    invitee: str
    rng: random.Random
    starts: int = 0  # matches started, seen or found stored
    known: bool = False  # whether a match of this pair is stored unfinished
    seen: list[Entry] = field(default_factory=list)  # the current match's rolls, as told
    expected: str | None = None  # the stored record a resume must show


class Bot(Protocol):
    """A CLIP player acting only on the lines it receives; plays the first legal play."""

    def __init__(self, drill: Waits, pair: Pair, name: str) -> None:
        self.drill, self.pair, self.name = drill, pair, name
        self.opponent = pair.invitee if name == pair.inviter else pair.inviter
        self.inviter = name == pair.inviter
        self.rng = random.Random(f"{pair.rng.random()}{name}")
        self.buffer = b""
        self.lines = self.boards = 0
        self.logged_in = self.ready = self.playing = self.lost = False
        self.ended = False  # saw its match end in this round
        self.board = ""
        self.move_on_board = self.doubling = False
        self.resume_check = False

    def connectionMade(self) -> None:
        self.send(f"login drill 1008 {self.name} secret")

    def dataReceived(self, data: bytes) -> None:
        *complete, self.buffer = (self.buffer + data).split(b"\r\n")
        for raw in complete:
            self.lines += 1
            self.react(raw.decode("ascii"))
        self.drill.poke()

    def connectionLost(self, reason: Failure = Failure(ConnectionError())) -> None:
        self.lost = True
        self.drill.poke()

    def send(self, line: str) -> None:
        if not self.lost and self.transport is not None:
            self.transport.write(line.encode("ascii") + b"\r\n")

    def react(self, line: str) -> None:  # noqa: C901 - one branch per line the bot knows
        opponent, pair = self.opponent, self.pair
        if line == "6" and not self.logged_in:
            self.logged_in = True
            self.send("toggle ready")
        elif line.startswith("** You're now ready"):
            self.ready = True
        elif line.startswith("** You're now refusing"):
            self.send("toggle ready")
        elif line == f"** There's no saved match with {opponent}. Please give a match length.":
            self.send(f"invite {opponent} {pair.rng.choice((1, 1, 2, 3))}")
        elif line == f"Type 'join {opponent}' to accept.":
            self.send(f"join {opponent}")
        elif line.startswith(f"** Player {opponent} has joined you for a "):
            self.playing = True
            pair.starts += 1
            pair.known, pair.seen, pair.expected = True, [], None
        elif line == f"{opponent} has joined you. Your running match was loaded.":
            self.playing = True
            self.resume_check = True
        elif line.startswith(f"** You are now playing a ") or line.startswith(
                f"You are now playing with {opponent}."):
            self.playing = True
        elif line.startswith("board:"):
            self.on_board(line)
        elif re.fullmatch(r"(You|\w+) wins? the \d+ point match \d+-\d+ \.", line):
            self.playing = False
            self.ended = True
            if self.inviter:
                pair.known, pair.seen, pair.expected = False, [], None
        elif self.playing:
            self.play(line)

    def on_board(self, line: str) -> None:
        self.board = line
        self.boards += 1
        if self.inviter and self.resume_check:
            self.resume_check = False
            self.check_resumed(line)
        if self.move_on_board:
            self.move_on_board = False
            self.move()

    def check_resumed(self, line: str) -> None:
        """The first board of a resumed match shows the stored state."""
        if self.pair.expected is None:
            return
        rules = Match.from_record(json.loads(self.pair.expected)["match"])
        view = parse_board(line)
        assert view_position(view, Colour(view.colour)) == rules.position_for(0), line
        assert (view.player_score, view.opponent_score) == rules.score, line
        assert view.cube == rules.cube, line
        if rules.dice is not None and rules.turn is not None:
            shown = view.player_dice if rules.turn == 0 else view.opponent_dice
            assert sorted(shown) == sorted(rules.dice), line

    def play(self, line: str) -> None:
        pair, opponent = self.pair, self.opponent
        if self.inviter:
            opening = re.fullmatch(rf"You rolled (\d), {opponent} rolled (\d)", line)
            rolled = re.fullmatch(rf"(You|{opponent}) rolls? (\d) and (\d)\.", line)
            if opening:
                pair.seen.append((0, int(opening[1]), int(opening[2])))
            elif rolled:
                pair.seen.append((1, int(rolled[1] != "You"), int(rolled[2]), int(rolled[3])))
        if line == "It's your turn to move.":
            self.move_on_board = True
        elif line.startswith("Please move "):
            self.move()
        elif line == "It's your turn to roll or double.":
            if self.rng.random() < 0.15:
                self.doubling = True
                self.send("double")
            else:
                self.send("roll")
        elif line.startswith("You double."):
            self.doubling = False
        elif line.startswith("** ") and self.doubling:  # no double now (Crawford, cube)
            self.doubling = False
            self.send("roll")
        elif line == f"{opponent} doubles. Type 'accept' or 'reject'.":
            self.send("accept" if self.rng.random() < 0.8 else "reject")
        elif line.startswith("Type 'join' if you want to play the next game"):
            self.send("join")

    def move(self) -> None:
        view = parse_board(self.board)
        colour = Colour(view.colour)
        plays = legal_plays(view_position(view, colour), view.player_dice)
        self.send("move " + format_fibs_moves(plays[0].moves, colour.direction))


def write_config(path: Path, database: Path) -> Path:
    config = path / "drill.toml"
    config.write_text(f'database = "{database}"\nmotd = "{path / "motd.txt"}"\n'
                      "[passwords]\ntime_cost = 1\nmemory_kib = 64\n"
                      f'[clock]\ndefault = "{CLOCK}"\n')
    return config


def start_server(drill: Waits, config: Path) -> Server:
    server = Server(drill)
    environ = {**os.environ, "PYTHONUNBUFFERED": "1"}
    reactor.spawnProcess(server, sys.executable,
                         [sys.executable, "-m", "fibsd", "--config", str(config), "--port", "0",
                          "--interface", "127.0.0.1"], env=environ, path=str(REPO))
    return server


async def round_of_play(drill: Waits, server: Server, pairs: list[Pair], *,
                        new: bool = True) -> list[Bot]:
    """Log everyone in and get every pair playing: resumed, or (``new``) a new match."""
    await drill.until(lambda: server.port is not None or server.ended,
                      lambda: f"the server to listen; it said {server.output[-500:]!r}")
    assert server.port is not None, server.output
    bots = []
    for pair in pairs:
        for name in (pair.inviter, pair.invitee):
            bot = Bot(drill, pair, name)
            await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", server.port), bot)
            bots.append(bot)
    for inviter, invitee in zip(bots[::2], bots[1::2]):
        await drill.until(lambda: inviter.ready and invitee.ready or inviter.lost,
                          lambda: f"{inviter.name} and {invitee.name} to be ready")
        if new or inviter.pair.known:
            inviter.send(f"invite {invitee.name}")
    return bots


def check_stored(database: Path, pairs: list[Pair]) -> None:
    """With the server dead: what each inviter was told is a prefix of what is stored."""
    store = SQLiteStore(database)
    try:
        for pair in pairs:
            saved = store.load_match(pair.inviter, pair.invitee)
            if saved is not None:
                assert "clock" in json.loads(saved.record), saved.record
                rolls = recorded_rolls(saved.record)
                assert rolls[:len(pair.seen)] == pair.seen, (pair, rolls)
                if not pair.known:  # started and stored before its first line went out
                    pair.starts += 1
                pair.known, pair.seen, pair.expected = True, rolls, saved.record
            elif pair.known:  # finished, its last lines lost with the server
                done = [m for m in store.finished_matches(pair.inviter)
                        if pair.invitee in (m.winner, m.loser)]
                assert len(done) == pair.starts, f"a running match was lost: {pair}"
                rolls = recorded_rolls(done[-1].record)
                assert rolls[:len(pair.seen)] == pair.seen, (pair, rolls)
                pair.known, pair.seen, pair.expected = False, [], None
    finally:
        store.close()


def reconcile(database: Path, pairs: list[Pair]) -> None:
    store = SQLiteStore(database)
    try:
        finished = []
        for pair in pairs:
            assert store.load_match(pair.inviter, pair.invitee) is None, pair
            own = [m for m in store.finished_matches(pair.inviter)
                   if pair.invitee in (m.winner, m.loser)]
            assert len(own) == pair.starts, pair
            assert all(json.loads(m.record)["clock"]["per_point"] == 600 for m in own), pair
            finished += own
        for pair in pairs:
            for name in (pair.inviter, pair.invitee):
                user = store.get_user(name)
                assert user is not None
                changes = [m.winner_rating_change if m.winner == name else m.loser_rating_change
                           for m in finished if name in (m.winner, m.loser)]
                assert user.rating == pytest.approx(1500 + sum(changes), abs=1e-6), name
                assert user.experience == sum(m.length for m in finished
                                              if name in (m.winner, m.loser)), name
    finally:
        store.close()
    conn = sqlite3.connect(database)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


@pytest_twisted.ensureDeferred
async def test_kill_minus_nine_at_random_points_loses_no_match(tmp_path: Path) -> None:
    seed = int(os.environ.get("FIBSD_DRILL_SEED", random.randrange(2**32)))
    print(f"kill drill seed: {seed} (FIBSD_DRILL_SEED={seed} repeats it)")
    rng = random.Random(seed)
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    password_hash = argon2.using(type="ID", memory_cost=64, time_cost=1).hash("secret")
    for pair in PAIRS:
        for name in pair:
            store.create_user(name, password_hash, 1_700_000_000)
    store.close()
    config = write_config(tmp_path, database)
    pairs = [Pair(a, b, random.Random(rng.random())) for a, b in PAIRS]
    drill = Waits(WAIT)
    kills = during = 0
    usage: list[tuple[int, float]] = []  # each server's RSS and CPU when it was stopped
    for _ in range(KILLS):
        server = start_server(drill, config)
        try:
            bots = await round_of_play(drill, server, pairs)
            # A kill point: after a random number of boards (about one per action and
            # player), or once every match has ended.
            threshold = rng.randint(0, 150)
            await drill.until(
                lambda: sum(bot.boards for bot in bots) >= threshold
                or all(bot.ended for bot in bots[::2]),
                lambda: f"{threshold} boards; bots got {sum(bot.boards for bot in bots)}")
        finally:
            if not server.ended:
                usage.append(server.usage())
                server.signal(signal.SIGKILL)
            await drill.until(lambda: server.ended, lambda: "the killed server to end")
        kills += 1
        during += sum(pair.known for pair in pairs)
        await drill.until(lambda: all(bot.lost for bot in bots), lambda: "the bots to be cut off")
        check_stored(database, pairs)

    server = start_server(drill, config)
    try:
        bots = await round_of_play(drill, server, pairs, new=False)
        await drill.until(lambda: not any(pair.known for pair in pairs),
                          lambda: f"every match to end: {pairs}")
    finally:
        if not server.ended:
            usage.append(server.usage())
            server.signal(signal.SIGTERM)
        await drill.until(lambda: server.ended, lambda: "the server to stop on SIGTERM")
    assert server.exit_code == 0, server.output[-2000:]
    assert kills >= 20
    assert sum(pair.starts for pair in pairs) >= len(pairs)
    reconcile(database, pairs)
    print(f"kill drill: {kills} kills, {during} running matches interrupted, "
          f"{sum(pair.starts for pair in pairs)} matches played to the end; server RSS at "
          f"the kill at most {max(u[0] for u in usage) / 1024:.1f} MB, CPU per server "
          f"{min(u[1] for u in usage):.2f}-{max(u[1] for u in usage):.2f} s")
