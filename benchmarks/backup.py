"""``fibsd backup`` of a large site while a writer commits all the time (issue 19: a
249 MB site under load gave no answer in 300 s).

    .venv/bin/python benchmarks/backup.py [megabytes] [seconds]

Builds a SQLite site of about ``megabytes`` (250) in a temporary directory (admin-log
rows of 4 KB), then runs ``fibsd backup`` in a subprocess while a thread commits one
small row after another (as fast as it can, each its own transaction), and prints how
long the backup took, how many commits were made meanwhile and the backup's own lines.
A backup still running after ``seconds`` (120) is stopped and reported as such.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fibsd.store.sqlite import SQLiteStore  # noqa: E402


def build(database: Path, megabytes: int) -> None:
    SQLiteStore(database).close()
    conn = sqlite3.connect(database, isolation_level=None)
    conn.execute("BEGIN")
    for _ in range(megabytes * 250):  # about 4 KB a row with its page overhead
        conn.execute("INSERT INTO admin_log (at, admin, action, target, detail)"
                     " VALUES (1, 'a', 'b', 'c', ?)", (os.urandom(1950).hex(),))
    conn.execute("COMMIT")
    conn.close()


def main() -> None:
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 250
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else 120.0
    with tempfile.TemporaryDirectory() as directory:
        database = Path(directory) / "fibsd.sqlite"
        build(database, megabytes)
        print(f"site: {database.stat().st_size / 1e6:.0f} MB")
        stop = threading.Event()
        commits = [0]

        def write() -> None:
            conn = sqlite3.connect(database, isolation_level=None, timeout=30)
            while not stop.is_set():
                conn.execute("INSERT INTO admin_log (at, admin, action, target, detail)"
                             " VALUES (2, 'a', 'b', 'c', 'x')")
                commits[0] += 1
            conn.close()

        writer = threading.Thread(target=write)
        writer.start()
        start = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, "-m", "fibsd", "--database", str(database), "backup",
                 str(Path(directory) / "copy.sqlite")],
                capture_output=True, text=True, timeout=limit)
            outcome = f"exit status {done.returncode}\n{done.stdout}{done.stderr}"
        except subprocess.TimeoutExpired:
            outcome = f"no answer in {limit:.0f} s (stopped)"
        took = time.monotonic() - start
        stop.set()
        writer.join()
        print(f"backup: {took:.1f} s, {commits[0]} commits meanwhile; {outcome}")


if __name__ == "__main__":
    main()
