"""Which ``Store`` a ``database`` setting names: a SQLite file's path, or a PostgreSQL
URL (``postgresql://user@host/db``, or ``postgres://...``).

PostgreSQL is optional (``pip install 'fibsd[postgres]'``): psycopg is imported only
when a URL is opened, and its absence is a ``DatabaseUnavailable`` that says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fibsd.store import Store

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True)
class Timeouts:
    """How long the server waits for PostgreSQL (the ``[db]`` keys); a statement
    timeout of 0 waits for ever (the admin commands, a migration)."""

    connect_timeout: int = 5  # seconds (libpq counts whole seconds, at least 2)
    statement_timeout_ms: int = 0
    keepalives_idle: int = 10  # seconds of silence before the first TCP keepalive
    keepalives_interval: int = 5  # seconds between two unanswered keepalives
    keepalives_count: int = 3  # unanswered keepalives that end the connection


class DatabaseUnavailable(Exception):
    """The PostgreSQL database cannot be used (no psycopg, no server, refused login)."""


def is_postgres_url(database: Path | str) -> bool:
    return isinstance(database, str) and database.startswith(_POSTGRES_SCHEMES)


def shown(database: Path | str) -> str:
    """``database`` for logs and messages: a URL's password replaced by ``***``."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", str(database))


def open_store(database: Path | str, timeouts: Timeouts = Timeouts()) -> Store:
    """The store ``database`` names (its schema brought up to date); ``timeouts``
    apply to PostgreSQL (the server passes its ``[db]`` keys; the admin commands keep
    the defaults, which never cut a statement)."""
    if not is_postgres_url(database):
        from fibsd.store.sqlite import SQLiteStore

        return SQLiteStore(database)
    try:
        import psycopg

        from fibsd.store.postgres import PostgresStore
    except ImportError as error:
        raise DatabaseUnavailable(
            "PostgreSQL needs psycopg: pip install 'fibsd[postgres]'") from error
    try:
        return PostgresStore(str(database), timeouts)
    except psycopg.Error as error:
        raise DatabaseUnavailable(str(error).strip()) from error
