"""The database thread: order, thread, errors, draining stop."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet.defer import fail, gatherResults, succeed
from twisted.logger import LogLevel, globalLogPublisher

from fibsd.server.dbthread import DatabaseStopped, DatabaseThread, unattended
from fibsd.store import NameTaken, Store, StoredMessage, UserRecord
from fibsd.store.sqlite import SQLiteStore


@pytest.fixture
def db(memory_store: SQLiteStore) -> Iterator[DatabaseThread]:
    thread = DatabaseThread(memory_store)
    thread.start()
    yield thread
    pytest_twisted.blockon(thread.stop())


@pytest_twisted.ensureDeferred
async def test_store_methods_return_deferreds(db: DatabaseThread) -> None:
    created = await db.create_user("alice", "h", 10)
    assert created == UserRecord("alice", "h", 10)
    assert await db.call("get_user", "alice") == created
    assert await db.name_taken("ALICE") is True


@pytest_twisted.ensureDeferred
async def test_calls_run_on_one_thread_that_is_not_the_reactors(db: DatabaseThread) -> None:
    seen = await gatherResults([db.run(lambda store: threading.get_ident()) for _ in range(20)])
    assert len(set(seen)) == 1
    assert seen[0] != threading.get_ident()


@pytest_twisted.ensureDeferred
async def test_calls_run_in_the_order_made(db: DatabaseThread) -> None:
    order: list[int] = []
    await gatherResults([db.run(lambda store, i: order.append(i), i) for i in range(200)])
    assert order == list(range(200))


@pytest_twisted.ensureDeferred
async def test_writes_made_without_waiting_are_applied_in_order(db: DatabaseThread) -> None:
    db.create_user("alice", "h", 10)
    for n in range(50):
        db.store_message(StoredMessage("bob", "alice", 20, f"message {n}"))
    taken = await db.take_messages("alice")
    assert [message.text for message in taken] == [f"message {n}" for n in range(50)]


@pytest_twisted.ensureDeferred
async def test_store_errors_arrive_as_failures(db: DatabaseThread) -> None:
    await db.create_user("alice", "h", 10)
    with pytest.raises(NameTaken):
        await db.create_user("Alice", "h", 11)
    assert await db.get_user("alice") == UserRecord("alice", "h", 10)


def test_only_store_methods_are_offered(memory_store: SQLiteStore) -> None:
    db = DatabaseThread(memory_store)
    with pytest.raises(AttributeError):
        db.close  # noqa: B018 - closing goes through stop()
    with pytest.raises(AttributeError):
        db.call("_transaction")


@pytest_twisted.ensureDeferred
async def test_stop_drains_queued_writes_then_closes(tmp_path: Path) -> None:
    path = tmp_path / "fibsd.sqlite"
    store: Store = SQLiteStore(path)
    db = DatabaseThread(store)
    db.start()
    db.create_user("alice", "h", 10)
    for n in range(30):
        db.store_message(StoredMessage("bob", "alice", 20, f"message {n}"))
    await gatherResults([db.stop(), db.stop()])
    with pytest.raises(DatabaseStopped):
        await db.get_user("alice")
    await db.stop()

    reopened = SQLiteStore(path)
    assert reopened.count_messages("alice") == 30
    reopened.close()


@pytest_twisted.ensureDeferred
async def test_as_a_service(memory_store: SQLiteStore) -> None:
    db = DatabaseThread(memory_store)
    db.startService()
    assert db.running
    await db.create_user("alice", "h", 10)
    await db.stopService()
    assert not db.running
    with pytest.raises(DatabaseStopped):
        await db.name_taken("alice")


@pytest_twisted.ensureDeferred
async def test_stop_without_start_still_closes(tmp_path: Path) -> None:
    db = DatabaseThread(SQLiteStore(tmp_path / "fibsd.sqlite"))
    db.create_user("alice", "h", 10)
    await db.stop()
    reopened = SQLiteStore(tmp_path / "fibsd.sqlite")
    assert reopened.name_taken("alice")
    reopened.close()


def logged_events(run: Callable[[], object]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(events.append)
    try:
        run()
    finally:
        globalLogPublisher.removeObserver(events.append)
    return [e for e in events if e.get("log_namespace") == "fibsd.server.dbthread"]


def test_an_unattended_write_that_fails_is_logged_not_lost() -> None:
    events = logged_events(lambda: unattended(fail(NameTaken("alice")), "create_user"))
    assert [(e["log_level"], e["log_format"], e["what"]) for e in events] == [
        (LogLevel.critical, "Store call {what} failed", "create_user")]
    assert events[0]["log_failure"].check(NameTaken)


def test_an_unattended_write_after_the_database_stopped_is_only_noted() -> None:
    done: list[object] = []
    events = logged_events(
        lambda: unattended(fail(DatabaseStopped()), "record_logout").addCallback(done.append))
    assert [(e["log_level"], e["what"]) for e in events] == [(LogLevel.warn, "record_logout")]
    assert done == [None]


def test_an_unattended_write_that_succeeds_passes_its_result_on() -> None:
    done: list[object] = []
    events = logged_events(lambda: unattended(succeed(7), "save_match").addCallback(done.append))
    assert events == []
    assert done == [7]
