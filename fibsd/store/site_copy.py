"""``fibsd migrate``: copy a site's SQLite database into an empty PostgreSQL database.

Both schemas are brought to the same version first (the PostgreSQL migrations mirror
SQLite's, table for table and column for column), then every table is copied by
column name, parents before the tables that refer to them, in one PostgreSQL
transaction.  Before it commits, the copy is verified: the row count of every table
and a SHA-256 checksum of every account's rating and experience must equal the
source's, or nothing is written.  Row ids are kept (finished matches are linked by
them), and the identity sequences continue after the highest.

The source is only read (after the usual upgrade of an older schema); run it with the
server stopped, or the copy misses what is written meanwhile.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fibsd.store.opening import shown
from fibsd.store.postgres import PostgresStore
from fibsd.store.sqlite import SQLiteStore


class CopyError(Exception):
    """The site was not copied (nothing was written to the target); the reason."""


@dataclass(frozen=True)
class Copied:
    rows: dict[str, int]  # table: rows copied (and counted on both sides)
    ratings_checksum: str  # SHA-256 of the ratings, equal on both sides


def ratings_checksum(rows: Iterable[tuple[str, float, int]]) -> str:
    """SHA-256 over every (name, rating, experience), by name; ratings in ``repr``, so
    a rating that changed in its last bit changes the sum."""
    digest = hashlib.sha256()
    for name, rating, experience in sorted(rows):
        digest.update(f"{name}\t{float(rating)!r}\t{int(experience)}\n".encode())
    return digest.hexdigest()


def copy_site(source: Path, target: str) -> Copied:
    """Copy the SQLite database ``source`` into the empty PostgreSQL database at the
    URL ``target``, verified; raises ``CopyError``."""
    import psycopg

    if not source.is_file():
        raise CopyError(f"no database at {source}")
    SQLiteStore(source).close()  # an older schema is upgraded, as the server would
    try:
        PostgresStore(target).close()
    except psycopg.Error as error:
        raise CopyError(f"cannot open {shown(target)}: {str(error).strip()}") from error
    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        with psycopg.connect(target) as writer, writer.cursor() as cursor:
            copied = _copy(reader, cursor)
            writer.commit()
    except psycopg.Error as error:
        raise CopyError(str(error).strip()) from error
    finally:
        reader.close()
    return copied


def _copy(reader: sqlite3.Connection, cursor: Any) -> Copied:
    tables = _tables_parents_first(reader)
    cursor.execute(
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
    missing = set(tables) - {name for (name,) in cursor}
    if missing:
        raise CopyError(f"the PostgreSQL schema has no table {', '.join(sorted(missing))}: "
                        "is this fibsd older than the one that wrote the SQLite file?")
    for table in tables:
        cursor.execute(f'SELECT 1 FROM "{table}" LIMIT 1')
        if cursor.fetchone() is not None:
            raise CopyError(f"the PostgreSQL database is not empty (table {table} has rows): "
                            "migrate copies into a new database only")
    rows = {}
    for table in tables:
        columns = ", ".join(f'"{column}"' for column in _columns(reader, table))
        with cursor.copy(f'COPY "{table}" ({columns}) FROM STDIN') as copy:
            for row in reader.execute(f'SELECT {columns} FROM "{table}"'):
                copy.write_row(row)
        rows[table] = _count(reader.execute(f'SELECT count(*) FROM "{table}"'))
        copied = _count(cursor.execute(f'SELECT count(*) FROM "{table}"'))
        if copied != rows[table]:
            raise CopyError(f"table {table}: {rows[table]} rows in SQLite, {copied} copied")
    _continue_identities(cursor)
    query = "SELECT name, rating, experience FROM users"
    expected = ratings_checksum(reader.execute(query))
    found = ratings_checksum(cursor.execute(query))
    if found != expected:
        raise CopyError(f"the ratings checksum differs: {expected} in SQLite, {found} copied")
    return Copied(rows, expected)


def _count(cursor: Any) -> int:
    return int(cursor.fetchone()[0])


def _tables_parents_first(reader: sqlite3.Connection) -> list[str]:
    names = [name for (name,) in reader.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " AND name != 'schema_version' ORDER BY name")]
    parents = {name: {row[2] for row in reader.execute(f'PRAGMA foreign_key_list("{name}")')}
               - {name} for name in names}
    ordered: list[str] = []
    while len(ordered) < len(names):
        ready = [n for n in names if n not in ordered and parents[n] <= set(ordered)]
        if not ready:
            raise CopyError("the SQLite tables refer to each other in a cycle")
        ordered += ready
    return ordered


def _columns(reader: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in reader.execute(f'PRAGMA table_info("{table}")')]


def _continue_identities(cursor: Any) -> None:
    """Set each identity sequence past the highest copied id."""
    cursor.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND is_identity = 'YES'")
    for table, column in cursor.fetchall():
        cursor.execute(
            f"SELECT setval(pg_get_serial_sequence(%s, %s),"
            f' coalesce(max("{column}"), 0) + 1, false) FROM "{table}"', (table, column))
