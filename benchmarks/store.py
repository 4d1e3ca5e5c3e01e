"""What one ``Store`` call costs on SQLite and on PostgreSQL, as the server makes them:
one after another from one thread (the database thread), each its own transaction.

    .venv/bin/python benchmarks/store.py [calls] [postgresql://...]

Without a URL it starts a private PostgreSQL with its default durability (every commit
flushed to disk: ``synchronous_commit = on``, ``fsync = on``) through
``tests/postgres_server.py`` (Debian's ``postgresql`` package), on a Unix socket.  The
SQLite store is a file in WAL mode with ``synchronous = NORMAL`` (a commit survives a
crash of the process, not necessarily of the machine): the two are not equally durable,
which is most of the difference; a third run turns PostgreSQL's per-commit flush off
for fibsd's connection only (in the URL: ``options=-csynchronous_commit%3Doff``), the
durability SQLite's mode has.  Per operation: calls per second and the median and
99th percentile milliseconds of one call.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fibsd.store import FinishedMatch, SavedMatch, Store, StoredMessage  # noqa: E402
from fibsd.store.sqlite import SQLiteStore  # noqa: E402

RECORD = "x" * 8000  # a saved match's record: about the size of a long match's


def operations(store: Store) -> dict[str, Callable[[int], object]]:
    for name in ("alice", "bob"):
        store.create_user(name, "hash", 1)
    return {
        "save_match (each match action)": lambda n: store.save_match(
            SavedMatch("alice", "bob", n, RECORD)),
        "get_user": lambda n: store.get_user("alice"),
        "record_login": lambda n: store.record_login("alice", n, "192.0.2.1"),
        "store_message (capped)": lambda n: store.store_message(
            StoredMessage("bob", "alice", n, "hello"), 1_000_000),
        "record_finished_match + ratings": lambda n: store.record_finished_match(
            FinishedMatch("alice", "bob", 5, 5, 2, n, RECORD, 1.5, -1.5),
            {"alice": (1500.0 + n, n), "bob": (1500.0 - n, n)}),
        "recent_finished_matches (a page)": lambda n: store.recent_finished_matches(
            "alice", 21),
    }


def measure(label: str, store: Store, calls: int) -> None:
    print(f"\n{label}")
    print(f"  {'operation':36} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for name, call in operations(store).items():
        times = []
        for n in range(calls):
            start = time.perf_counter()
            call(n)
            times.append(time.perf_counter() - start)
        p99 = statistics.quantiles(times, n=100)[98]
        print(f"  {name:36} {calls / sum(times):9.0f} {statistics.median(times) * 1e3:8.2f}"
              f" {p99 * 1e3:8.2f}")
    store.close()


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as directory:
        measure("SQLite (file, WAL, synchronous=NORMAL)",
                SQLiteStore(Path(directory) / "fibsd.sqlite"), calls)
    from fibsd.store.postgres import PostgresStore

    if len(sys.argv) > 2:
        measure(f"PostgreSQL ({sys.argv[2]})", PostgresStore(sys.argv[2]), calls)
        return
    from tests.postgres_server import PostgresServer

    server = PostgresServer.start(durable=True)
    try:
        measure("PostgreSQL (local, Unix socket, default durability)",
                PostgresStore(server.new_database()), calls)
        measure("PostgreSQL, synchronous_commit=off for fibsd's connection",
                PostgresStore(server.new_database() + "&options=-csynchronous_commit%3Doff"),
                calls)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
