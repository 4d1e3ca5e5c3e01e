"""``Store`` on a PostgreSQL server, through psycopg 3 (the ``postgres`` extra).

Like ``SQLiteStore``, one connection, used only by the single database worker thread
(``fibsd.server.dbthread``), so the reactor never waits on the network and calls run
in the order they were made.  Each public method is one transaction (``with
conn.transaction()``: committed at the end, rolled back on any exception).  The queries,
and the reading of rows into records, are ``fibsd.store.sql``'s, shared with the SQLite
store and written with its ``?`` placeholders; this module holds the connection, its
transactions and PostgreSQL's side of the few dialect differences.

SQLite serialises writers (``BEGIN IMMEDIATE``); PostgreSQL runs them side by side at
READ COMMITTED, so where a method reads before it writes it locks what it read: the
stored-message cap locks the recipient's account row (``FOR UPDATE``) before counting,
so senders at once (other servers on the same database) cannot pass the cap.

A connection the server lost (PostgreSQL restarted) is opened again by the next call,
inside the same error handling as the call itself, so a server that is still down is
one clear error per call and never a traceback.  A write PostgreSQL refuses for want of
resources or a connection (a full disk, a read-only server or transaction, a lost
connection, a timeout) is rolled back and raised as ``WriteFailed``, a read that cannot
reach it as ``Unavailable``; opening ends with one real write, so a server never starts
on a database it cannot write.  One case is ambiguous in any client of a database
server: a connection lost while COMMIT was under way leaves the transaction either
wholly done or wholly undone, and no way to ask which; it is reported as ``WriteFailed``
too (``fibsd.server.match`` retries the end of a match only if it is not stored).

Timeouts (``Timeouts``, the server's ``[db]`` keys): a connect gives up after
``connect_timeout`` seconds, a statement after ``statement_timeout_ms`` (PostgreSQL's own
``statement_timeout``, set once the schema is up to date so a long migration is not cut),
and TCP keepalives find a peer that vanished.  A server whose processes are stopped
(SIGSTOP) answers neither a statement timeout nor a keepalive: ``interrupt`` is for that,
called by the database thread's watchdog from another thread, and ends the call under
way by shutting the connection's socket.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import errors

from fibsd.store import Unavailable, WriteFailed
from fibsd.store.timeouts import Timeouts
from fibsd.store.postgres_migrations import upgrade
from fibsd.store.sql import Cursor, SQLStore

# what PostgreSQL raises when it cannot take a write, rather than refusing its content
_REFUSED_WRITES = (psycopg.OperationalError, errors.ReadOnlySqlTransaction)


@lru_cache(maxsize=256)
def _pyformat(sql: str) -> str:
    """The shared SQL (``?`` placeholders, no other ``?`` nor ``%``) in psycopg's
    placeholders; cached, as the store runs a few dozen statements over and over."""
    return sql.replace("%", "%%").replace("?", "%s")


class _QmarkCursor(psycopg.Cursor[Any]):
    """A psycopg cursor that runs ``fibsd.store.sql``'s statements as written."""

    def execute(self, query: Any, params: Any = None, **options: Any) -> _QmarkCursor:
        # psycopg reads placeholders (and ``%%``) only in a statement given parameters
        return super().execute(query if params is None else _pyformat(query), params,
                               **options)

    def executemany(self, query: Any, params_seq: Any, **options: Any) -> None:
        super().executemany(_pyformat(query), params_seq, **options)


class PostgresStore(SQLStore):
    """``Store`` on the PostgreSQL database at ``url`` (``postgresql://user@host/db``);
    the schema is brought up to date on opening."""

    def __init__(self, url: str, timeouts: Timeouts = Timeouts()) -> None:
        self._url = url
        self._timeouts = timeouts
        self._conn = self._connect(migrating=True)
        try:
            try:
                upgrade(self._conn)
                self._limit_statements(self._conn)
            except _REFUSED_WRITES as error:
                raise WriteFailed(str(error).strip()) from error
            self._check_writable()
        except BaseException:
            self._conn.close()
            raise

    def _connect(self, migrating: bool = False) -> psycopg.Connection[Any]:
        timeouts = self._timeouts
        conn = psycopg.connect(self._url, autocommit=True,
                               connect_timeout=timeouts.connect_timeout, keepalives=1,
                               keepalives_idle=timeouts.keepalives_idle,
                               keepalives_interval=timeouts.keepalives_interval,
                               keepalives_count=timeouts.keepalives_count)
        if not migrating:
            try:
                self._limit_statements(conn)
            except BaseException:
                conn.close()
                raise
        return conn

    def _limit_statements(self, conn: psycopg.Connection[Any]) -> None:
        if self._timeouts.statement_timeout_ms:
            conn.execute("SELECT set_config('statement_timeout', %s, false)",
                         (f"{self._timeouts.statement_timeout_ms}ms",))

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[_QmarkCursor]:
        try:
            if self._conn.broken or self._conn.closed:
                self._conn = self._connect()
            with self._conn.transaction(), _QmarkCursor(self._conn) as cursor:
                yield cursor
        except _REFUSED_WRITES as error:
            message = str(error).strip() or type(error).__name__
            if not write:
                raise Unavailable(message) from error
            raise WriteFailed(message) from error

    def interrupt(self) -> None:
        """From any thread: end the call under way on the worker at once (the socket is
        shut, so the worker's wait for an answer ends with a lost connection; the next
        call opens a new one).  For a server that no longer answers at all."""
        try:
            descriptor = self._conn.fileno()
        except psycopg.Error:  # closed already: nothing is waiting on it
            return
        with socket.socket(fileno=os.dup(descriptor)) as connection:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _reads(self) -> AbstractContextManager[_QmarkCursor]:
        """A read transaction, so that a lost connection is opened again here too."""
        return self._transaction(write=False)

    # the dialect (fibsd.store.sql)

    _NAME_CLASH = errors.UniqueViolation
    _LOCK_ROW = " FOR UPDATE"  # writers run side by side: lock what a write depends on
    # workers on any machines: each takes a job no other holds, none waits for another
    _SKIP_LOCKED = " FOR UPDATE SKIP LOCKED"
    _LAST_MATCH_ID = "currval(pg_get_serial_sequence('finished_matches', 'id'))"
    _DEFER_FOREIGN_KEYS = "SET CONSTRAINTS ALL DEFERRED"
    # Two servers counting one network's registrations at once: one waits for the other.
    _SERIALISE_REGISTRATIONS = "LOCK TABLE registrations IN SHARE ROW EXCLUSIVE MODE"

    @staticmethod
    def _nocase(expression: str) -> str:
        return f"lower({expression})"

    @staticmethod
    def _take(cursor: Cursor, table: str, columns: str, where: str,
              parameters: Sequence[object]) -> list[Any]:
        """One statement: a row another writer stores meanwhile is either taken here
        or left for later, never deleted unread."""
        rows: list[Any] = cursor.execute(
            f"DELETE FROM {table} WHERE {where} RETURNING {columns}", parameters).fetchall()
        return rows

    def close(self) -> None:
        self._conn.close()
