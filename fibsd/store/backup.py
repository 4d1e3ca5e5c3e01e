"""An online copy of a SQLite database through SQLite's backup API.

``cp`` of a live database is not a backup: with WAL journaling the newest commits sit
in the ``-wal`` file until a checkpoint, so a copy of the main file alone can miss
every recent change.  The backup API reads a consistent snapshot through SQLite's own
locking while the server keeps writing.  The copy is created with mode 0600 (it holds
password hashes) and is a complete database in rollback-journal mode: restoring is
copying it into place while the server is stopped (README, "Backup and restore").
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

PAGES_PER_STEP = 1024  # between steps the server may write; the copy restarts if it did


class BackupError(Exception):
    """The backup could not be made; nothing usable was left at the target."""


def backup(source: Path, target: Path) -> int:
    """Copy the database ``source`` to the new file ``target``; the number of pages."""
    if not source.is_file():
        raise BackupError(f"no database at {source}")
    try:
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise BackupError(f"cannot create {target}: {error.strerror}") from error
    os.close(descriptor)
    try:
        with _connect(str(source)) as reader, \
                _connect(str(target)) as writer:
            reader.backup(writer, pages=PAGES_PER_STEP)
            writer.execute("PRAGMA journal_mode = DELETE")
            (pages,) = writer.execute("PRAGMA page_count").fetchone()
            (check,) = writer.execute("PRAGMA quick_check").fetchone()
        if check != "ok":
            raise BackupError(f"the copy failed its check: {check}")
    except (sqlite3.Error, BackupError) as error:
        target.unlink(missing_ok=True)
        raise BackupError(str(error)) from error
    return int(pages)


class _connect:
    """``sqlite3.connect`` as a context manager that closes (sqlite3's own only commits)."""

    def __init__(self, database: str) -> None:
        self.connection = sqlite3.connect(database, timeout=30)

    def __enter__(self) -> sqlite3.Connection:
        return self.connection

    def __exit__(self, *exc: object) -> None:
        self.connection.close()
