"""The database thread through an outage (issue 19): a hung call refuses what waits
behind it instead of leaving it hanging, a call past the statement deadline is
interrupted, a database that refuses writes is asked again until it takes one, and a
whole outage costs a bounded number of log lines however many calls fail in it.

Real SQLite: a worker held on a gate (a hung server), an endless recursive query, and
``PRAGMA query_only`` (a database that refuses writes)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults
from twisted.logger import globalLogPublisher

from fibsd.server.dbthread import DatabaseDown, DatabaseThread, unattended
from fibsd.store import SavedMatch, Unavailable, WriteFailed
from fibsd.store.sqlite import SQLiteStore


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    """The operator events logged meanwhile (their ``event`` field)."""
    seen: list[dict[str, Any]] = []

    def observe(event: dict[str, Any]) -> None:
        if "event" in event:
            seen.append(event)

    globalLogPublisher.addObserver(observe)
    yield seen
    globalLogPublisher.removeObserver(observe)


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [event["event"] for event in events
            if event["event"] in ("database_down", "database_up", "write_failed")]


def went_down(db: DatabaseThread) -> Deferred[None]:
    down: Deferred[None] = Deferred()
    db.on_down(lambda: down.called or down.callback(None))
    return down


@pytest_twisted.ensureDeferred
async def test_a_hung_call_refuses_the_calls_behind_it_then_the_database_comes_back(
        tmp_path: Path, events: list[dict[str, Any]]) -> None:
    store = SQLiteStore(tmp_path / "fibsd.sqlite")
    for name in ("alice", "bob"):
        store.create_user(name, "h", 1)
    db = DatabaseThread(store, stall_ms=200, statement_timeout_ms=60000)
    db.start()
    down = went_down(db)
    gate = threading.Event()
    hung = db.run(lambda _: gate.wait(60))
    queued = db.name_taken("alice")
    queued_save = db.save_match(SavedMatch("alice", "bob", 1, "refused"))
    await down
    assert db.down
    with pytest.raises(DatabaseDown):
        await queued
    with pytest.raises(DatabaseDown):
        await queued_save
    refused = db.get_user("alice")  # made while the call still hangs: refused at once
    assert refused.called
    with pytest.raises(DatabaseDown):
        await refused
    assert not db.when_up().called
    gate.set()
    assert await hung is True
    await db.when_up()  # the probe: one real write
    assert not db.down
    # A save after the outage is written, not added to the batch that was refused.
    saved = db.save_match(SavedMatch("alice", "bob", 2, "after"))
    await saved.addTimeout(10, reactor)
    assert await db.name_taken("carol") is False
    assert await db.load_match("alice", "bob") == SavedMatch("alice", "bob", 2, "after")
    await db.stop()
    assert kinds(events) == ["database_down", "database_up"]
    up = next(e for e in events if e["event"] == "database_up")
    assert up["failed"] == 4  # the stall itself and the three refused calls


@pytest_twisted.ensureDeferred
async def test_a_call_past_the_statement_deadline_is_interrupted(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "fibsd.sqlite")
    db = DatabaseThread(store, stall_ms=100, statement_timeout_ms=100)
    db.start()
    endless = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
               " SELECT count(*) FROM c")
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        await db.run(lambda s: s._conn.execute(endless).fetchone())  # noqa: SLF001
    await db.when_up()
    assert await db.name_taken("alice") is False
    await db.stop()


@pytest_twisted.ensureDeferred
async def test_an_outage_is_logged_once_however_many_writes_fail(
        tmp_path: Path, events: list[dict[str, Any]]) -> None:
    store = SQLiteStore(tmp_path / "fibsd.sqlite")
    for name in ("alice", "bob"):
        store.create_user(name, "h", 1)
    db = DatabaseThread(store, retry_max_ms=200)
    db.start()
    store._conn.execute("PRAGMA query_only = ON")  # noqa: SLF001
    with pytest.raises(WriteFailed):
        await db.save_match(SavedMatch("alice", "bob", 0, "first"))
    assert db.down
    await gatherResults([unattended(db.save_match(SavedMatch("alice", "bob", n, "x")),
                                    "save_match") for n in range(200)])
    await gatherResults([unattended(db.set_rating("bob", 1600.0, n), "set_rating")
                         for n in range(100)])
    store._conn.execute("PRAGMA query_only = OFF")  # noqa: SLF001
    await db.when_up()
    await db.save_match(SavedMatch("alice", "bob", 1, "after"))
    assert await db.load_match("alice", "bob") == SavedMatch("alice", "bob", 1, "after")
    await db.stop()
    assert kinds(events) == ["database_down", "write_failed", "database_up"]


def test_a_sqlite_read_that_is_interrupted_is_unavailable(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "fibsd.sqlite")
    endless = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
               " SELECT count(*) FROM c")
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            store._one(endless)  # noqa: SLF001 - a store read, as every method makes it
        except BaseException as error:  # noqa: BLE001 - the test looks at it
            outcome.append(error)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    while worker.is_alive():
        store.interrupt()
        worker.join(0.05)
    assert len(outcome) == 1 and isinstance(outcome[0], Unavailable)
    assert "interrupted" in str(outcome[0])
    store.close()
