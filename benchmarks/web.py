"""Web face benchmark: pages per second from a fibsd server holding an archive.

    .venv/bin/python benchmarks/web.py --matches 5000 --accounts 1000 --duration 20

1. A fresh database gets ``--accounts`` accounts (ratings spread, all above the ladder's
   experience threshold) and ``--matches`` finished matches between them.  The records
   are real: ``--distinct`` matches played through the rules engine with seeded dice
   (tests/web/records.py), each stored many times under different players.
2. The server starts as a subprocess (``python -m fibsd`` with the web face on), as in
   load.py, so its CPU time is its own.
3. For each page, ``--clients`` keep-alive HTTP connections ask for it back to back for
   ``--duration`` seconds: pages/s, the server's CPU per page, and latency percentiles.
   Pages: ``/ratings``, a replay step of one match (cached after the first request, as
   a reader stepping through a match), replays of ever other matches (each replayed
   from its record), a profile, and ``/api/matches``.

The game's cost with live-board viewers open is measured by load.py ``--viewers``.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import REPO, ServerProcess, account, create_database, free_port, percentile  # noqa: E402

from twisted.internet import defer, task  # noqa: E402
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol  # noqa: E402
from twisted.internet.protocol import Protocol  # noqa: E402

from fibsd.web.replay import replay  # noqa: E402
from tests.web.records import played_match  # noqa: E402

FINISHED = 1_760_000_000


def fill_archive(path: Path, names: Sequence[str], matches: int, distinct: int,
                 seed: int) -> None:
    """``matches`` finished matches between random pairs of ``names``."""
    rng = random.Random(seed)
    played = [played_match(n, rng.choice((1, 3, 5, 7))) for n in range(distinct)]
    rows = []
    for n in range(matches):
        record, match = played[n % distinct]
        a, b = rng.sample(list(names), 2)
        data = json.loads(record)
        data["players"] = [a, b]
        winner = match.winner
        assert winner is not None
        players = (a, b)
        change = round(rng.uniform(0.5, 12.0), 6)
        rows.append((players[winner], players[1 - winner], match.length,
                     match.score[winner], match.score[1 - winner], FINISHED + 60 * n,
                     json.dumps(data, separators=(",", ":")), change, -change))
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO finished_matches (winner, loser, length, winner_points, loser_points,"
            " finished, record, winner_rating_change, loser_rating_change)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        conn.executemany("UPDATE users SET rating = ?, experience = ? WHERE name = ?",
                         [(rng.uniform(1300, 1900), rng.randint(50, 3000), name)
                          for name in names])


class KeepAlive(Protocol):
    """One HTTP/1.1 connection asking for pages back to back (the server sends a
    Content-Length with every page)."""

    def __init__(self, paths: Callable[[], str], until: float) -> None:
        self.paths = paths
        self.until = until
        self.buffer = b""
        self.wanted: int | None = None
        self.sent = 0.0
        self.latencies: list[float] = []
        self.bad = 0
        self.done: defer.Deferred[None] = defer.Deferred()

    def connectionMade(self) -> None:
        self.ask()

    def ask(self) -> None:
        if time.perf_counter() >= self.until:
            self.transport.loseConnection()
            return
        self.sent = time.perf_counter()
        self.transport.write(f"GET {self.paths()} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())

    def dataReceived(self, data: bytes) -> None:
        self.buffer += data
        while True:
            if self.wanted is None:
                head, found, rest = self.buffer.partition(b"\r\n\r\n")
                if not found:
                    return
                if not head.startswith(b"HTTP/1.1 200"):
                    self.bad += 1
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    key, _, value = line.partition(b":")
                    if key.strip().lower() == b"content-length":
                        length = int(value)
                self.wanted, self.buffer = length, rest
            if len(self.buffer) < self.wanted:
                return
            self.buffer = self.buffer[self.wanted:]
            self.wanted = None
            self.latencies.append(time.perf_counter() - self.sent)
            self.ask()

    def connectionLost(self, reason: Any = None) -> None:
        if not self.done.called:
            self.done.callback(None)


async def measure(reactor: Any, server: ServerProcess, name: str, paths: Callable[[], str],
                  clients: int, duration: float) -> None:
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", server.web_port)
    cpu0 = server.cpu()
    started = time.perf_counter()
    workers = [KeepAlive(paths, started + duration) for _ in range(clients)]
    for worker in workers:
        await connectProtocol(endpoint, worker)
    await defer.gatherResults([worker.done for worker in workers])
    elapsed = time.perf_counter() - started
    cpu = server.cpu() - cpu0
    latencies = [value for worker in workers for value in worker.latencies]
    bad = sum(worker.bad for worker in workers)
    count = len(latencies)
    print(f"{name}: {count / elapsed:.0f} pages/s ({count} in {elapsed:.1f} s, {clients} "
          f"connections{f', {bad} not 200' if bad else ''}), server CPU "
          f"{cpu / max(count, 1) * 1000:.2f} ms/page ({cpu / elapsed:.0%} of a core), latency "
          f"p50 {percentile(latencies, .5) * 1000:.1f} ms, p95 "
          f"{percentile(latencies, .95) * 1000:.1f} ms")


async def run(reactor: Any, options: argparse.Namespace) -> None:
    directory = Path(tempfile.mkdtemp(prefix="fibsd-web-"))
    database = directory / "fibsd.sqlite"
    names = [account("pa", n) for n in range(options.accounts)]
    started = time.perf_counter()
    create_database(database, names)
    fill_archive(database, names, options.matches, options.distinct, options.seed)
    print(f"database: {options.accounts} accounts, {options.matches} finished matches "
          f"({options.distinct} distinct records) in {time.perf_counter() - started:.1f} s "
          f"({database.stat().st_size / 2**20:.1f} MB, {directory})")
    server = ServerProcess(directory, free_port(), options.accounts + 10, False, free_port())
    server.wait_listening()
    try:
        for _ in range(100):  # the web port opens just after the game port
            try:
                await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1",
                                                         server.web_port), Protocol())
                break
            except ConnectionError:
                await task.deferLater(reactor, 0.1)
        rng = random.Random(options.seed)
        one = rng.randint(1, options.matches)
        with sqlite3.connect(database) as conn:
            (record,) = conn.execute("SELECT record FROM finished_matches WHERE id = ?",
                                     (one,)).fetchone()
        steps = len(replay(record).steps)
        player = names[0]
        pages: list[tuple[str, Callable[[], str]]] = [
            ("/ratings", lambda: "/ratings"),
            (f"/matches/{one}?step=N (one match, cached replay)",
             lambda: f"/matches/{one}?step={rng.randrange(steps)}"),
            ("/matches/<random id> (replayed from the record)",
             lambda: f"/matches/{rng.randint(1, options.matches)}?step=0"),
            (f"/players/{player}", lambda: f"/players/{player}"),
            (f"/api/matches?player={player}", lambda: f"/api/matches?player={player}"),
        ]
        for name, paths in pages:
            await measure(reactor, server, name, paths, options.clients, options.duration)
    finally:
        server.stop()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=5000, help="finished matches stored")
    parser.add_argument("--accounts", type=int, default=1000)
    parser.add_argument("--distinct", type=int, default=60,
                        help="distinct match records played for the archive")
    parser.add_argument("--clients", type=int, default=4, help="keep-alive connections")
    parser.add_argument("--duration", type=float, default=20, help="seconds per page")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args(argv)
    assert REPO.is_dir()
    task.react(lambda reactor: defer.Deferred.fromCoroutine(run(reactor, options)))


if __name__ == "__main__":
    main()
