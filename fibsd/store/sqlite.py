"""The default ``Store``: one SQLite file, standard library only.

The queries, and the reading of rows into records, are ``fibsd.store.sql``'s, shared
with the PostgreSQL store; this module holds the connection, its transactions and
SQLite's side of the few dialect differences.

Each public method is one short transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``,
rolled back on any exception), so a failure half-way leaves nothing half-written.
The connection is opened with ``check_same_thread=False`` because it is created on
the main thread and then used by the single database worker thread; never by two
threads at once.  Files use WAL journaling with ``synchronous=NORMAL``: a commit
survives a crash of the process, and readers (an operator's ``sqlite3`` shell) do not
block the server.

A write the database refuses (``SQLITE_FULL``, ``SQLITE_READONLY``, an I/O error) is
rolled back and raised as ``WriteFailed``; opening runs one real write (a no-op update
of the schema version row, committed) so that a database the server could not write
stops it at start instead of failing every save later.

Privacy: the file holds password hashes, so a new database file is created with mode
0600 (owner only); SQLite gives its ``-wal`` and ``-shm`` files the database file's mode.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fibsd.store import Unavailable, WriteFailed
from fibsd.store.migrations import upgrade
from fibsd.store.sql import Cursor, SQLStore

_BUSY_TIMEOUT_MS = 5000
# WAL pages after which a commit checkpoints by itself (SQLite's default is 1000).  The
# server checkpoints from a second connection on a thread of its own (``checkpoint``),
# so that the writes, one per game action, never wait for a checkpoint's copying and
# syncing; this is only the backstop for a store used without it.
_AUTOCHECKPOINT_PAGES = 10000
PRIVATE_MODE = 0o600  # owner read and write only


def create_private(path: Path) -> None:
    """Create ``path`` empty with mode 0600 if it does not exist (SQLite would create
    it with the umask's mode, commonly 0644: readable by every local user).  An
    existing file keeps its mode: an operator may have chosen it."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE))
    except FileExistsError:
        pass


class SQLiteStore(SQLStore):
    """``Store`` on SQLite; ``path`` may be ``":memory:"`` for a private database.

    A file's directory is created if missing, so a fresh checkout starts with no
    setup step.
    """

    def __init__(self, path: str | Path) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            create_private(Path(path))
        self._conn = sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=False
        )
        self._conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._path = str(path)
        self._checkpointer: sqlite3.Connection | None = None
        if str(path) != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute(f"PRAGMA wal_autocheckpoint = {_AUTOCHECKPOINT_PAGES}")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        try:
            upgrade(self._conn)
            self._check_writable()
        except BaseException:
            self._conn.close()
            raise

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[sqlite3.Cursor]:
        """One transaction; a writer takes the write lock at once (IMMEDIATE) so
        it never fails half-way for want of it, a reader gets a stable snapshot."""
        cursor = self._conn.cursor()
        try:
            cursor.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield cursor
                cursor.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # a failed COMMIT may have ended it
                    cursor.execute("ROLLBACK")
                raise
        except (sqlite3.OperationalError, sqlite3.InternalError) as error:
            if not write:
                raise
            raise WriteFailed(str(error)) from error

    @contextmanager
    def _reads(self) -> Iterator[sqlite3.Connection]:
        """The connection itself: a statement outside a transaction is one of its own.
        A read the database cannot make (an I/O error, an interrupt) is ``Unavailable``."""
        try:
            yield self._conn
        except sqlite3.OperationalError as error:
            raise Unavailable(str(error)) from error

    # the dialect (fibsd.store.sql)

    _NAME_CLASH = sqlite3.IntegrityError
    _LOCK_ROW = ""  # the writer holds the whole database (BEGIN IMMEDIATE)
    _DEFER_FOREIGN_KEYS = "PRAGMA defer_foreign_keys = ON"

    @staticmethod
    def _nocase(expression: str) -> str:
        return f"{expression} COLLATE NOCASE"

    @staticmethod
    def _take(cursor: Cursor, table: str, columns: str, where: str,
              parameters: Sequence[object]) -> list[Any]:
        """Read, then delete: no other writer can come between (BEGIN IMMEDIATE)."""
        rows: list[Any] = cursor.execute(f"SELECT {columns} FROM {table} WHERE {where}",
                                         parameters).fetchall()
        if rows:
            cursor.execute(f"DELETE FROM {table} WHERE {where}", parameters)
        return rows

    def interrupt(self) -> None:
        """From any thread: end the statement under way (SQLite's own interrupt); the
        database thread's watchdog calls it for a call that runs far too long."""
        self._conn.interrupt()

    def checkpoint(self) -> None:
        """Copy committed pages from the WAL into the database file (a PASSIVE
        checkpoint: it never blocks a writer, nor waits for one).  Runs on its own
        connection, so it may run on another thread than the other methods, but never
        on two at once, nor after ``close``."""
        if self._path == ":memory:":
            return
        if self._checkpointer is None:
            self._checkpointer = sqlite3.connect(self._path, isolation_level=None,
                                                 check_same_thread=False)
        self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
        self._conn.close()
