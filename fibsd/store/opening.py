"""Which ``Store`` a ``database`` setting names: a SQLite file's path, or a PostgreSQL
URL (``postgresql://user@host/db``, or ``postgres://...``).

PostgreSQL is optional (``pip install 'fibsd[postgres]'``): psycopg is imported only
when a URL is opened, and its absence is a ``DatabaseUnavailable`` that says so.
"""

from __future__ import annotations

import re
from pathlib import Path

from fibsd.store import Store

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class DatabaseUnavailable(Exception):
    """The PostgreSQL database cannot be used (no psycopg, no server, refused login)."""


def is_postgres_url(database: Path | str) -> bool:
    return isinstance(database, str) and database.startswith(_POSTGRES_SCHEMES)


def shown(database: Path | str) -> str:
    """``database`` for logs and messages: a URL's password replaced by ``***``."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", str(database))


def open_store(database: Path | str) -> Store:
    """The store ``database`` names (its schema brought up to date)."""
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
        return PostgresStore(str(database))
    except psycopg.Error as error:
        raise DatabaseUnavailable(str(error).strip()) from error
