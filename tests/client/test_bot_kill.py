"""Kill tests of issue 24 with real processes: a fibsd server (``python -m fibsd``) and
``fibsd-bot`` processes on a loopback port.  Mid-match, a bot is killed with SIGKILL and
started again, then the server is killed with SIGKILL and started again on the same
database and port: the saved match is resumed each time and finished, with no deadlock.
Once with two fibsd-bot processes (and then both are killed and started again without
``--invite``: neither waits for the other), once with a fibsd-bot process against the MatchDog-like
bot (tests/client/test_fibscom_bot.py), which after a cut only waits for its opponent's
login.

"Mid-match" is counted in boards of the first game, as a watcher (or the MatchDog-like
bot) receives them: the bot is killed after ``BOARDS`` boards, the server (and then
both bots) ``AGAIN`` boards after each resume, long before a game of bots can end.  Every wait is for output,
a process or a protocol event, bounded by ``WAIT``.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest_twisted
from twisted.internet import reactor

from fibsd.client import events as ev
from fibsd.client.protocol import ClipClientFactory, ClipClientProtocol, Credentials, connect
from fibsd.store.sqlite import SQLiteStore
from tests.client.test_bot import hang_up, online
from tests.client.test_bot_command import BotProcess, spawn
from tests.client.test_bot_stuck import WatchedDog
from tests.helpers import Waits
from tests.server.test_kill_drill import REPO, Server, write_config

WAIT = 90.0  # any one wait: a server restart, reconnection delays, a slow shared machine
LENGTH = 5
BOARDS = 8  # boards into the first game when the bot is killed
AGAIN = 2  # boards after the resume when the server is killed


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(waits: Waits, config: Path, port: int) -> Server:
    server = Server(waits)
    reactor.spawnProcess(server, sys.executable,  # type: ignore[attr-defined]
                         [sys.executable, "-m", "fibsd", "--config", str(config), "--port",
                          str(port), "--interface", "127.0.0.1"],
                         env={**os.environ, "PYTHONUNBUFFERED": "1"}, path=str(REPO))
    return server


async def listening(waits: Waits, server: Server) -> None:
    await waits.until(lambda: server.port is not None or server.ended,
                      lambda: f"the server to listen; it said {server.output[-500:]!r}")
    assert server.port is not None, server.output


class Watcher:
    """eve, who watches a bot and counts the boards she is sent; she comes back after a
    server restart and watches again once the bot is back."""

    def __init__(self, waits: Waits, player: str) -> None:
        self.waits, self.player = waits, player
        self.boards = 0
        self.protocol: ClipClientProtocol | None = None

    def attach(self, protocol: ClipClientProtocol) -> None:
        self.protocol = protocol

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.Board):
            self.boards += 1
        elif self.protocol is not None and (
                isinstance(event, ev.OwnInfo)
                or isinstance(event, ev.LoginNotice) and event.name == self.player):
            self.protocol.send(f"watch {self.player}")
        self.waits.poke()


async def watch(waits: Waits, port: int, player: str) -> tuple[Watcher, ClipClientFactory]:
    watcher = Watcher(waits, player)
    factory, ready = connect(reactor, "127.0.0.1", port, Credentials("eve", "secret", "test"),
                             watcher, register=True, reconnect=True, connected=watcher.attach)
    # back within half a second of the restarted server, whatever its restart took: with
    # the factory's growing delays she could come back after the resumed match has ended
    factory.initialDelay = factory.delay = 0.1
    factory.maxDelay = 0.5
    await ready.addTimeout(WAIT, reactor)
    return watcher, factory


def start_bot(waits: Waits, port: int, name: str, *args: str) -> BotProcess:
    return spawn(waits, port, "--name", name, "--password", "secret", "--register",
                 "--matches", "1", *args)


async def kill(waits: Waits, process: BotProcess | Server) -> None:
    assert process.transport is not None
    process.transport.signalProcess("KILL")
    await waits.until(lambda: process.ended, lambda: "the killed process to end")


def check_database(database: Path, first: str, second: str) -> None:
    """The one match was finished, with its full length, and nothing is left saved."""
    store = SQLiteStore(database)
    try:
        assert store.load_match(first, second) is None
        finished = [m for m in store.finished_matches(first) if second in (m.winner, m.loser)]
        assert [(m.length, max(m.winner_points, m.loser_points) >= LENGTH) for m in finished] \
            == [(LENGTH, True)]
    finally:
        store.close()


def fibs_drops(config: Path) -> Path:
    """A dropped bot's match saved at once, as on FIBS (``[pace] drop_grace = 0``): these
    tests are about saved matches; with the grace a bot started again within it goes on
    playing without a resume (tests/server/test_grace_kill.py, protocol/play.md 6)."""
    config.write_text(config.read_text() + "[pace]\ndrop_grace = 0\n")
    return config


@pytest_twisted.ensureDeferred
async def test_two_bot_processes_survive_killed_bots_and_a_killed_server(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    config = fibs_drops(write_config(tmp_path, database))
    port = free_port()
    waits = Waits(WAIT)
    server = start_server(waits, config, port)
    processes: list[BotProcess] = []
    try:
        await listening(waits, server)
        beta = start_bot(waits, port, "beta")
        processes.append(beta)
        await waits.until(lambda: "logged in as beta" in beta.err, lambda: f"beta: {beta.err!r}")
        eve, watcher_factory = await watch(waits, port, "beta")
        alpha = start_bot(waits, port, "alpha", "--invite", "beta", "--length", str(LENGTH))
        processes.append(alpha)
        await waits.until(lambda: eve.boards >= BOARDS, lambda: f"{BOARDS} boards: {alpha.err!r}")
        await kill(waits, alpha)

        alpha = start_bot(waits, port, "alpha", "--invite", "beta", "--length", str(LENGTH))
        processes.append(alpha)
        await waits.until(lambda: "match with beta resumed" in alpha.err,
                          lambda: f"the resume: alpha {alpha.err!r} beta {beta.err!r}")
        seen = eve.boards
        await waits.until(lambda: eve.boards >= seen + AGAIN, lambda: "boards after the resume")
        await kill(waits, server)

        server = start_server(waits, config, port)
        await listening(waits, server)
        back = time.monotonic()
        await waits.until(lambda: alpha.err.count("match with beta resumed") == 2,
                          lambda: f"the resume after the restart: {alpha.err!r}")
        print(f"resumed {time.monotonic() - back:.1f} s after the server listened again "
              "(the bots' reconnection delays)")
        seen = eve.boards
        await waits.until(lambda: eve.boards >= seen + AGAIN, lambda: "boards after the resume")
        # both bots killed: restarted, neither invites anyone (the old deadlock)
        await kill(waits, alpha)
        await kill(waits, beta)
        restarted, survivor = alpha.err, beta.err
        alpha, beta = start_bot(waits, port, "alpha"), start_bot(waits, port, "beta")
        processes += [alpha, beta]
        await waits.until(lambda: alpha.ended and beta.ended,
                          lambda: f"both bots to finish: alpha {alpha.err!r} beta {beta.err!r}")
        assert (alpha.exit_code, beta.exit_code) == (0, 0), (alpha.err, beta.err)
        assert alpha.out.startswith("alpha: 1 matches, ") and beta.out.startswith("beta: 1 matches, ")
        assert "match with beta resumed" in alpha.err and "match with alpha resumed" in beta.err
        assert survivor.count("match with alpha resumed") == 2  # after each kill
        assert "inviting beta to a 5 point match" not in restarted  # only to resume
        assert "would discard" not in survivor + beta.err
    finally:
        watcher_factory.stopTrying()
        if eve.protocol is not None and eve.protocol.transport is not None:
            eve.protocol.transport.loseConnection()
        for process in processes:
            process.stop()
        if not server.ended:
            server.signal(15)
        await waits.until(lambda: server.ended, lambda: "the server to stop")
    assert server.exit_code == 0, server.output[-2000:]
    check_database(database, "alpha", "beta")


@pytest_twisted.ensureDeferred
async def test_a_bot_process_and_a_matchdog_survive_kills(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    config = fibs_drops(write_config(tmp_path, database))
    port = free_port()
    waits = Waits(WAIT)
    server = start_server(waits, config, port)
    dog = WatchedDog("dog", matches=1, clock=reactor, waits=waits)
    processes: list[BotProcess] = []
    try:
        await listening(waits, server)
        await online(port, dog)
        alpha = start_bot(waits, port, "alpha", "--invite", "dog", "--length", str(LENGTH))
        processes.append(alpha)
        await waits.until(lambda: dog.boards >= BOARDS, lambda: f"{BOARDS} boards: {alpha.err!r}")
        await kill(waits, alpha)

        alpha = start_bot(waits, port, "alpha", "--invite", "dog", "--length", str(LENGTH))
        processes.append(alpha)
        await waits.until(lambda: "match with dog resumed" in alpha.err,
                          lambda: f"the resume: alpha {alpha.err!r}")
        seen = dog.boards
        await waits.until(lambda: dog.boards >= seen + AGAIN, lambda: "boards after the resume")
        await kill(waits, server)

        server = start_server(waits, config, port)
        await listening(waits, server)
        await waits.until(lambda: alpha.ended and dog.finished.done,
                          lambda: f"both to finish: alpha {alpha.err!r}, dog sent {dog.sent[-5:]}")
        assert alpha.exit_code == 0, alpha.err
        assert alpha.err.count("match with dog resumed") == 2
        assert dog.matches_played == 1 and len(dog.joined_after_who) >= 1
    finally:
        hang_up(dog)
        for process in processes:
            process.stop()
        if not server.ended:
            server.signal(15)
        await waits.until(lambda: server.ended, lambda: "the server to stop")
    assert server.exit_code == 0, server.output[-2000:]
    check_database(database, "alpha", "dog")
