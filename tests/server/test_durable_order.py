"""The lines of a game action leave only after its write has committed.

The real database thread is held busy (its single worker waits on an event), so the
action's write waits in its queue: meanwhile nobody hears of the action, not even
through ``board``, and the stored record is still the one before it.  Once the worker
goes on, the lines follow in action order and the record holds the action."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest_twisted
from twisted.internet import reactor

from fibsd.server.dbthread import DatabaseThread
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import FakeServer
from tests.server.test_match import NAMES, Table


def stored_record(path: Path) -> str:
    """The saved match as another reader sees it (WAL: readers do not wait)."""
    conn = sqlite3.connect(path)
    try:
        (record,) = conn.execute("SELECT record FROM saved_matches").fetchone()
        return str(record)
    finally:
        conn.close()


@pytest_twisted.ensureDeferred
async def test_an_action_is_announced_only_once_stored(tmp_path: Path) -> None:
    path = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(path)
    server = FakeServer(store=store)
    for name in NAMES:
        server.register(name)
    table = Table([(3, 5), (6, 2), (5, 5)], server=server)
    table.start("5")
    table.match.add_watcher(table.user("carol"), "alice")
    table.lines()
    before = stored_record(path)
    thread = DatabaseThread(store, reactor)
    thread.start()
    server.services.db = thread
    gate = threading.Event()
    held = thread.run(lambda _: gate.wait(30))
    try:
        table.send("bob", "move 8-3 6-3")
        table.send("bob", "board")  # typed ahead: waits behind the move
        table.send("alice", "board")  # another user's look waits for the write too
        table.send("carol", "pip")
        assert table.lines() == {"alice": [], "bob": [], "carol": []}
        assert stored_record(path) == before
    finally:
        gate.set()
    await held
    await thread.run(lambda _: None)  # every answer queued before this one has come back
    got = table.lines()
    assert got["bob"][0].startswith("board:You:alice:5:")  # autoboard: the move's reply
    assert got["bob"][1].startswith("board:You:alice:5:")  # then his `board`
    assert got["alice"][:2] == ["", "bob moves 8-3 6-3 ."]
    assert got["alice"][2].startswith("board:You:bob:5:")
    assert got["alice"][3:] == ["It's your turn to roll or double.", got["alice"][2]]  # `board`
    assert got["carol"] == ["", "bob moves 8-3 6-3 .", got["carol"][2],
                            "alice's pip count is 167. bob's pip count is 159."]
    assert stored_record(path) != before
    assert '["move",1,[[' in stored_record(path)
    await thread.stop()


@pytest_twisted.ensureDeferred
async def test_a_join_while_the_leave_is_being_saved_waits_for_its_line(
        tmp_path: Path) -> None:
    """bob's ``join`` arrives while alice's ``leave`` is being written: it waits, and
    the line saying that alice left is all bob gets (not ``** Error: Join who?``)."""
    path = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(path)
    server = FakeServer(store=store)
    for name in NAMES:
        server.register(name)
    table = Table([(3, 5)], server=server)
    table.start("5")
    table.send("alice", "resign n")
    table.send("bob", "accept")
    table.lines()
    thread = DatabaseThread(store, reactor)
    thread.start()
    server.services.db = thread
    gate = threading.Event()
    held = thread.run(lambda _: gate.wait(30))
    try:
        table.send("alice", "leave")
        table.send("bob", "join")
        assert table.lines("bob") == []
    finally:
        gate.set()
    await held
    await thread.run(lambda _: None)
    await thread.run(lambda _: None)
    server.settle()
    got = table.lines("bob")
    assert got[0] == "** Player alice has left the game. The game was saved."
    assert "** Error: Join who?" not in got
    await thread.stop()
