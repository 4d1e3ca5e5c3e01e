"""A tournament played by fibsd-bots over real sockets against a ``python -m fibsd``
process: the accounts, the server process (on a fixed loopback port, so that the bots'
reconnecting factories find it again after a SIGKILL and a restart), the bots (in this
process: ``TournamentBot`` on the Twisted client library, each with its own TCP
connection; 56 bot processes would not fit on two cores) and the checks of the result.
Used by tests/tournament/test_end_to_end.py and benchmarks/tournament.py."""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.task import deferLater

from fibsd.client.protocol import Credentials, connect
from fibsd.client.tournament_bot import TournamentBot
from fibsd.store.sqlite import SQLiteStore
from fibsd.tournament import pairing as formats
from fibsd.tournament.director import rounds_of
from tests.server.test_kill_drill import Server

REPO = Path(__file__).resolve().parents[2]


def bot_names(count: int) -> list[str]:
    """FIBS names are letters only: bot_aa, bot_ab, ..."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [f"bot_{letters[i // 26 % 26]}{letters[i % 26]}" + ("" if i < 676 else "_" * (i // 676))
            for i in range(count)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def prepare(tmp: Path, names: list[str], *, fmt: str, lengths: list[int],
            rounds: int | None = None, start_timeout: int = 5) -> tuple[Path, Path, int]:
    """Accounts, one open tournament for ``len(names)`` players, a config file."""
    database = tmp / "fibsd.sqlite"
    store = SQLiteStore(database)
    password_hash = argon2.using(type="ID", memory_cost=64, time_cost=1).hash("secret")
    for name in names:
        store.create_user(name, password_hash, 1_700_000_000)
    number = store.create_tournament(
        name="Test Cup", fmt=fmt, lengths=lengths, rounds=rounds, max_players=len(names),
        start_at=None, bots=True, clock="", created=1_700_000_000)
    store.close()
    assert number is not None
    config = tmp / "field.toml"
    config.write_text(
        f'database = "{database}"\nmotd = "{tmp / "motd.txt"}"\nweb_port = 0\n'
        "[passwords]\ntime_cost = 1\nmemory_kib = 64\n"
        "[access]\nunauthenticated_per_address = 1000\n"
        f"[tournaments]\nstart_timeout = {start_timeout}\ntick_ms = 200\nmax_players = 512\n")
    return database, config, number


def start_server(waits: Any, config: Path, port: int) -> Server:
    server = Server(waits)
    environ = {**os.environ, "PYTHONUNBUFFERED": "1"}
    reactor.spawnProcess(server, sys.executable,  # type: ignore[attr-defined]
                         [sys.executable, "-m", "fibsd", "--config", str(config), "--port",
                          str(port), "--interface", "127.0.0.1"], env=environ, path=str(REPO))
    return server


def bot(name: str, number: int, port: int) -> TournamentBot:
    player = TournamentBot(name, number, clock=reactor)
    factory, _ = connect(reactor, "127.0.0.1", port, Credentials(name, "secret", "fibsd-bot"),
                         player, reconnect=True, connected=player.attach)
    factory.maxDelay = 1.0  # back soon after a restart
    factory.initialDelay = 0.2
    return player


def drop_out(player: TournamentBot) -> None:
    """The bot leaves for good: no reconnection, the connection closed."""
    if player.factory is not None:
        player.factory.stopTrying()
    if player.protocol is not None and player.protocol.transport is not None:
        player.protocol.transport.loseConnection()


async def until(done: Callable[[], bool], what: str, limit: float) -> None:
    """Look every 0.2 s until ``done()``; fail after ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit}s for {what}")
        await deferLater(reactor, 0.2, lambda: None)


def read(database: Path, number: int) -> tuple[Any, list[tuple[str, float]], list[Any]]:
    store = SQLiteStore(database)
    try:
        return (store.tournament(number), store.tournament_entries(number),
                store.tournament_pairings(number))
    finally:
        store.close()


def check_consistent(database: Path, number: int, names: list[str]) -> str:
    """The checks of a finished tournament; its champion."""
    store = SQLiteStore(database)
    try:
        record = store.tournament(number)
        assert record.state == "finished" and record.winner is not None
        seeds = [name for name, _ in store.tournament_entries(number)]
        pairings = store.tournament_pairings(number)
        played = rounds_of(pairings)
        # every round is the one the pure pairing makes from the rounds before it
        for index, actual in enumerate(played):
            expected = formats.next_round(record.format, seeds, played[:index],
                                          rounds=record.rounds)
            assert [(p.first, p.second) for p in expected] == [
                (p.first, p.second) for p in actual], index
        assert formats.next_round(record.format, seeds, played, rounds=record.rounds) is None
        assert record.winner == formats.champion(record.format, seeds, played,
                                                 rounds=record.rounds)
        # every decided pairing agrees with the archive; every tournament match is in it
        tagged = set()
        for p in pairings:
            assert p.winner is not None
            if p.match_id is not None:
                match = store.finished_match(p.match_id)
                assert {match.winner, match.loser} == {p.first, p.second}
                assert match.winner == p.winner and not p.forfeit
                assert (match.tournament, match.tournament_round) == (number, p.round)
                tagged.add(p.match_id)
            else:
                assert p.forfeit or p.second is None
        archived = {m.id for name in names for m in store.finished_matches(name)
                    if m.tournament == number}
        assert archived == tagged
        # every rating is 1500 plus its recorded changes
        for name in names:
            user = store.get_user(name)
            changes = [m.winner_rating_change if m.winner == name else m.loser_rating_change
                       for m in store.finished_matches(name)]
            assert abs(user.rating - (1500 + sum(changes))) < 1e-6, name
            assert store.saved_matches(name) == [], name
        return str(record.winner)
    finally:
        store.close()
