"""The stored-message cap holds against senders at once (issue 9: 30 senders stored 75
messages against a cap of 50, counting and writing in separate steps), on both backends."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fibsd.store import StoredMessage
from fibsd.store.sqlite import SQLiteStore


@pytest.fixture(params=["sqlite", "postgres"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Any]:
    """Opens a new connection to one database, of each backend (PostgreSQL's as if each
    connection were another server)."""
    if request.param == "sqlite":
        return lambda: SQLiteStore(tmp_path / "fibsd.sqlite")
    url = request.getfixturevalue("postgres_url")
    from fibsd.store.postgres import PostgresStore

    return lambda: PostgresStore(url)


def test_senders_at_once_never_pass_the_stored_message_cap(open_store: Callable[[], Any]):
    """30 connections store for one user at the same moment, cap 10: exactly 10 kept."""
    setup = open_store()
    setup.create_user("bob", "x", 1)
    stores = [open_store() for _ in range(30)]
    start = threading.Barrier(30)
    results: list[bool] = []

    def send(store: Any, n: int) -> None:
        start.wait()
        results.append(store.store_message(StoredMessage(f"s{n}", "bob", n, "hi"), 10))

    threads = [threading.Thread(target=send, args=(s, n)) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 20 + [True] * 10
    assert setup.count_messages("bob") == 10
    for store in (setup, *stores):
        store.close()


def test_the_cap_is_optional(tmp_path: Path):
    store = SQLiteStore(tmp_path / "fibsd.sqlite")
    store.create_user("bob", "x", 1)
    assert [store.store_message(StoredMessage("a", "bob", n, "hi")) for n in range(3)] == [True] * 3
    assert store.store_message(StoredMessage("a", "bob", 4, "hi"), 3) is False
    assert store.count_messages("bob") == 3
    store.close()
