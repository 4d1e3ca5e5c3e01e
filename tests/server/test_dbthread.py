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
from fibsd.store import (
    NameTaken,
    SavedMatch,
    Store,
    StoredMessage,
    UnknownUser,
    UserRecord,
    WriteFailed,
)
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


def held(db: DatabaseThread) -> tuple[threading.Event, Any]:
    """Hold the worker busy until the event is set, so that calls made meanwhile queue."""
    gate = threading.Event()
    return gate, db.run(lambda _: gate.wait(30))


def commits(store: SQLiteStore) -> list[str]:
    """Every COMMIT the store's connection runs from now on."""
    seen: list[str] = []
    store._conn.set_trace_callback(  # noqa: SLF001 - watching the real connection
        lambda sql: seen.append(sql) if sql == "COMMIT" else None)
    return seen


@pytest_twisted.ensureDeferred
async def test_saves_queued_together_are_committed_together(
        db: DatabaseThread, memory_store: SQLiteStore) -> None:
    for name in ("alice", "bob", "carol"):
        memory_store.create_user(name, "h", 1)
    gate, busy = held(db)
    answered: list[str] = []
    saves = [db.save_match(SavedMatch("alice", "bob", n, f"ab {n}")) for n in range(5)]
    saves.append(db.save_match(SavedMatch("carol", "alice", 9, "ac")))
    for number, save in enumerate(saves):
        save.addCallback(lambda _, number=number: answered.append(f"save {number}"))
    seen = commits(memory_store)
    gate.set()
    await busy
    await gatherResults(saves)
    assert answered == [f"save {n}" for n in range(6)]
    assert seen == ["COMMIT"]  # six saves, one transaction
    assert memory_store.load_match("bob", "alice") == SavedMatch("alice", "bob", 4, "ab 4")
    assert memory_store.load_match("alice", "carol") == SavedMatch("alice", "carol", 9, "ac")


@pytest_twisted.ensureDeferred
async def test_a_call_between_saves_sees_exactly_the_saves_before_it(
        db: DatabaseThread, memory_store: SQLiteStore) -> None:
    for name in ("alice", "bob"):
        memory_store.create_user(name, "h", 1)
    gate, busy = held(db)
    first = db.save_match(SavedMatch("alice", "bob", 1, "first"))
    loaded = db.load_match("alice", "bob")
    second = db.save_match(SavedMatch("alice", "bob", 2, "second"))
    gate.set()
    await busy
    await first
    assert await loaded == SavedMatch("alice", "bob", 1, "first")
    await second
    assert memory_store.load_match("alice", "bob") == SavedMatch("alice", "bob", 2, "second")


@pytest_twisted.ensureDeferred
async def test_a_failed_save_in_a_batch_fails_alone(
        db: DatabaseThread, memory_store: SQLiteStore) -> None:
    for name in ("alice", "bob", "carol"):
        memory_store.create_user(name, "h", 1)
    gate, busy = held(db)
    good = db.save_match(SavedMatch("alice", "bob", 1, "ab"))
    bad = db.save_match(SavedMatch("alice", "ghost", 1, "a?"))
    also = db.save_match(SavedMatch("carol", "bob", 1, "bc"))
    gate.set()
    await busy
    await good
    with pytest.raises(UnknownUser):
        await bad
    await also
    assert [m.record for m in memory_store.saved_matches("bob")] == ["ab", "bc"]
    assert memory_store.saved_matches("ghost") == []


@pytest_twisted.ensureDeferred
async def test_a_batch_the_database_refuses_fails_every_save_in_it(
        db: DatabaseThread, memory_store: SQLiteStore) -> None:
    for name in ("alice", "bob", "carol"):
        memory_store.create_user(name, "h", 1)
    memory_store.save_match(SavedMatch("alice", "bob", 1, "before"))
    memory_store._conn.execute("PRAGMA query_only = ON")  # noqa: SLF001 - a refusing database
    gate, busy = held(db)
    saves = [db.save_match(SavedMatch("alice", "bob", 2, "ab")),
             db.save_match(SavedMatch("bob", "carol", 2, "bc"))]
    gate.set()
    await busy
    for save in saves:
        with pytest.raises(WriteFailed, match="readonly"):
            await save
    memory_store._conn.execute("PRAGMA query_only = OFF")  # noqa: SLF001
    assert [m.record for m in memory_store.saved_matches("bob")] == ["before"]


@pytest_twisted.ensureDeferred
async def test_a_store_without_batches_gets_the_saves_one_by_one(tmp_path: Path) -> None:
    class Unbatched(SQLiteStore):
        """A store with only the ``Store`` interface's ``save_match``."""

        save_matches = None  # type: ignore[assignment]

    store = Unbatched(tmp_path / "fibsd.sqlite")
    for name in ("alice", "bob"):
        store.create_user(name, "h", 1)
    db = DatabaseThread(store)
    db.start()
    gate, busy = held(db)
    first = db.save_match(SavedMatch("alice", "bob", 1, "one"))
    bad = db.save_match(SavedMatch("alice", "ghost", 1, "two"))
    third = db.save_match(SavedMatch("alice", "bob", 2, "three"))
    seen = commits(store)
    gate.set()
    await busy
    await first
    with pytest.raises(UnknownUser):
        await bad
    await third
    assert seen == ["COMMIT", "COMMIT"]  # one transaction each (the failed one rolled back)
    assert store.load_match("alice", "bob") == SavedMatch("alice", "bob", 2, "three")
    await db.stop()


@pytest_twisted.ensureDeferred
async def test_the_saves_of_one_reactor_turn_are_one_hand_off(
        db: DatabaseThread, memory_store: SQLiteStore) -> None:
    """Issue 26: with the worker idle, the saves one reactor turn makes (each command's
    game action) still wait for the end of the turn and go to the worker as one job, one
    transaction, instead of the first going alone and waking the worker for itself."""
    for name in ("alice", "bob", "carol"):
        memory_store.create_user(name, "h", 1)
    await db.name_taken("alice")  # the worker is idle
    seen = commits(memory_store)
    saves = [db.save_match(SavedMatch("alice", "bob", 1, "ab")),
             db.save_match(SavedMatch("bob", "carol", 1, "bc")),
             db.save_match(SavedMatch("alice", "bob", 2, "ab 2"))]
    assert len(db._queue) == 0  # noqa: SLF001 - nothing handed over within the turn
    await gatherResults(saves)
    assert seen == ["COMMIT"]
    assert memory_store.load_match("alice", "bob") == SavedMatch("alice", "bob", 2, "ab 2")


@pytest_twisted.ensureDeferred
async def test_a_call_after_saves_of_the_same_turn_is_written_after_them(
        db: DatabaseThread, memory_store: SQLiteStore) -> None:
    for name in ("alice", "bob"):
        memory_store.create_user(name, "h", 1)
    await db.name_taken("alice")
    saved = db.save_match(SavedMatch("alice", "bob", 1, "first"))
    loaded = db.load_match("alice", "bob")  # hands the save over first
    assert await loaded == SavedMatch("alice", "bob", 1, "first")
    await saved


@pytest_twisted.ensureDeferred
async def test_a_save_made_in_the_turn_of_stop_is_written_before_the_store_closes(
        tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "fibsd.sqlite")
    for name in ("alice", "bob"):
        store.create_user(name, "h", 1)
    db = DatabaseThread(store)
    db.start()
    saved = db.save_match(SavedMatch("alice", "bob", 1, "last"))
    await db.stop()
    await saved
    reopened = SQLiteStore(tmp_path / "fibsd.sqlite")
    assert reopened.load_match("alice", "bob") == SavedMatch("alice", "bob", 1, "last")
    reopened.close()
