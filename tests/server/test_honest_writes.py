"""Honest writes: a database that cannot be written stops the server at start; one that
starts refusing writes (a full disk, a read-only file) is told to the users with ``** ``
lines and logged as ``write_failed``, and no line claims a save or a rating that did
not happen (a match pauses: ``test_db_outage``).  The database files are created
private (0600).

Failures are real SQLite ones: an immutable (root) or mode-0444 file and directory, a
database whose ``max_page_count`` is its current size (``SQLITE_FULL``, what a full disk
gives), and ``PRAGMA query_only`` (``SQLITE_READONLY``) for a file that turns read-only
under a running server.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from twisted.logger import globalLogPublisher

from fibsd.store import SavedMatch, WriteFailed
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire import game_text as text
from tests.helpers import REPO, FakeServer
from tests.server.test_match import NAMES, Table, random_rolls

NOT_SAVED = "** Sorry, that was not saved: the server could not write its database."


@contextmanager
def write_failures() -> Iterator[list[dict[str, Any]]]:
    """The ``write_failed`` events logged meanwhile."""
    events: list[dict[str, Any]] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("event") == "write_failed":
            events.append(event)

    globalLogPublisher.addObserver(observe)
    try:
        yield events
    finally:
        globalLogPublisher.removeObserver(observe)


def small_pages(path: Path) -> SQLiteStore:
    """A store of 512-byte pages, so that a growing match record soon needs new ones."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA page_size = 512")
    conn.execute("CREATE TABLE pad (x)")
    conn.execute("DROP TABLE pad")
    conn.close()
    return SQLiteStore(path)


def disk_full(store: SQLiteStore) -> None:
    """From now on the file cannot grow: the next write that needs a page fails."""
    (pages,) = store._conn.execute("PRAGMA page_count").fetchone()
    store._conn.execute(f"PRAGMA max_page_count = {pages}")


def read_only_now(store: SQLiteStore) -> None:
    store._conn.execute("PRAGMA query_only = ON")


def table_on(store: SQLiteStore, rolls: list[tuple[int, int]]) -> Table:
    server = FakeServer(store=store)
    for name in NAMES:
        server.register(name)
    return Table(rolls, server=server)


def everything(table: Table) -> list[str]:
    return [line for lines in table.received.values() for line in lines]


# -- a full disk under a running server ------------------------------------------------------

def test_a_full_disk_refuses_a_write_whole(tmp_path: Path) -> None:
    store = small_pages(tmp_path / "full.sqlite")
    for name in ("alice", "bob"):
        store.create_user(name, "hash", 1)
    store.save_match(SavedMatch("alice", "bob", 1, "short"))
    disk_full(store)
    with pytest.raises(WriteFailed, match="database or disk is full"):
        store.save_match(SavedMatch("alice", "bob", 2, "x" * 5000))
    saved = store.load_match("alice", "bob")
    assert saved is not None and (saved.saved, saved.record) == (1, "short")
    store.close()


# -- a database that turns read-only under a running server ------------------------------------

def test_a_command_whose_write_fails_is_told(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "ro.sqlite")
    table = table_on(store, [])
    read_only_now(store)
    with write_failures() as failures:
        table.send("carol", "address carol@example.org")
        table.send("carol", "message nobody_here hello")
        got = table.lines("carol")
    assert got.count(NOT_SAVED) == 1  # the address; `nobody_here` has no account
    assert failures[0]["user"] == "carol"


# -- a database that cannot be written stops the start ------------------------------------------

@contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """``path`` read-only for this process: by its mode, or for root (whom modes do not
    stop) by the immutable attribute."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if shutil.which("chattr") is None:
        pytest.skip("chattr (e2fsprogs) is needed to make a file read-only for root")
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"chattr +i is not allowed here: {made.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def start_fibsd(tmp_path: Path, database: Path) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "start.toml"
    config.write_text(f'database = "{database}"\nmotd = "{tmp_path / "motd.txt"}"\n')
    return subprocess.run(
        [sys.executable, "-m", "fibsd", "--config", str(config), "--port", "0",
         "--interface", "127.0.0.1"],
        capture_output=True, text=True, timeout=60, cwd=REPO)


def test_a_read_only_database_file_stops_the_start(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    SQLiteStore(database).close()
    with unwritable(database):
        result = start_fibsd(tmp_path, database)
    assert result.returncode == 2
    assert result.stderr.startswith(f"fibsd: cannot write the database {database}: ")
    assert "readonly" in result.stderr
    assert "listening" not in result.stdout


def test_a_read_only_database_directory_stops_the_start(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    database = directory / "fibsd.sqlite"
    SQLiteStore(database).close()
    with unwritable(directory):
        result = start_fibsd(tmp_path, database)
    assert result.returncode == 2
    assert result.stderr.startswith(f"fibsd: cannot open the database {database}: ")
    assert result.stderr.endswith(
        " (the server must be able to write the file and its directory)\n")
    assert "listening" not in result.stdout


# -- privacy of the files ----------------------------------------------------------------------

def test_the_database_and_its_wal_files_are_created_0600(tmp_path: Path) -> None:
    database = tmp_path / "new" / "fibsd.sqlite"
    umask = os.umask(0)  # whatever the umask allows
    try:
        store = SQLiteStore(database)
        store.create_user("alice", "hash", 1)
        modes = {suffix: stat.S_IMODE(os.stat(f"{database}{suffix}").st_mode)
                 for suffix in ("", "-wal", "-shm")}
        store.close()
    finally:
        os.umask(umask)
    assert modes == {"": 0o600, "-wal": 0o600, "-shm": 0o600}


# -- checkpoints off the writing thread --------------------------------------------------------

def file_only(path: Path) -> list[tuple[int]]:
    """The saved matches' times as the database file alone holds them (WAL unread)."""
    conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        return conn.execute("SELECT saved FROM saved_matches").fetchall()
    finally:
        conn.close()


def test_the_store_checkpoints_on_its_own_connection(tmp_path: Path) -> None:
    path = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(path)
    for name in ("alice", "bob"):
        store.create_user(name, "hash", 1)
    store.checkpoint()  # the schema and the accounts into the file
    for number in range(50):
        store.save_match(SavedMatch("alice", "bob", number, "x" * 3000))
    assert file_only(path) == []  # all in the WAL: no commit checkpointed by itself
    store.checkpoint()
    assert file_only(path) == [(49,)]
    store.save_match(SavedMatch("alice", "bob", 99, "y" * 3000))  # writes go on
    store.checkpoint()
    assert file_only(path) == [(99,)]
    store.close()
