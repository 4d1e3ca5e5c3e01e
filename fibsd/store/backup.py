"""An online copy of a SQLite database through SQLite's backup API.

``cp`` of a live database is not a backup: with WAL journaling the newest commits sit
in the ``-wal`` file until a checkpoint, so a copy of the main file alone can miss
every recent change.  The backup API reads a consistent snapshot through SQLite's own
locking while the server keeps writing.  The copy is created with mode 0600 (it holds
password hashes) and is a complete database in rollback-journal mode: restoring is
copying it into place while the server is stopped (README, "Backup and restore").

The copy goes in steps of ``PAGES_PER_STEP`` pages, reported to ``progress``, inside
ONE read transaction on the source.  Without it, each step reads afresh and any commit
of the server between two steps restarts the copy from the first page: a large site
under load was never copied at all (issue 19: no answer in 300 s).  With it, the steps
read the snapshot of the first one, which WAL keeps for readers while the server goes
on committing, so the copy ends after exactly its number of steps, whatever is
written meanwhile; what was committed after the first step is not in it.  (Until it
ends, checkpoints cannot pass that snapshot, so the ``-wal`` file grows by what the
server writes meanwhile.)
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

PAGES_PER_STEP = 1024  # 4 MiB of 4 KiB pages: a progress report every few milliseconds

Progress = Callable[[int, int], object]  # called with (pages copied, pages in all)


class BackupError(Exception):
    """The backup could not be made; nothing usable was left at the target."""


def backup(source: Path, target: Path, progress: Progress | None = None,
           pages_per_step: int = PAGES_PER_STEP) -> int:
    """Copy the database ``source`` to the new file ``target``, reporting each step to
    ``progress``; the number of pages."""
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
            # The snapshot every step reads (a deferred BEGIN starts reading only at
            # the first read).
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM sqlite_master").fetchone()

            def step(status: int, remaining: int, total: int) -> None:
                if progress is not None:
                    progress(total - remaining, total)

            reader.backup(writer, pages=pages_per_step, progress=step)
            reader.execute("COMMIT")
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
        self.connection = sqlite3.connect(database, timeout=30, isolation_level=None)

    def __enter__(self) -> sqlite3.Connection:
        return self.connection

    def __exit__(self, *exc: object) -> None:
        self.connection.close()
