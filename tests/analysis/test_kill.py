"""Kill drill for the analysis queue: matches finish (stored with their jobs, in one
transaction, the way the server stores them) while the server (``python -m fibsd``
with its own worker) and a standalone worker (``fibsd analyse``) are killed with
SIGKILL at random points and started again.  In the end every finished match is
analysed, each exactly once (one kept result per match), none failed.

The real engine runs, at 0 plies, on 1-point matches.  The points of the kills are
random (seeded); nothing waits for luck: the end waits until the queue is empty."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fibsd.analysis.engine import find_gnubg
from fibsd.store.sqlite import SQLiteStore
from tests.analysis.matches import finished, played

pytestmark = pytest.mark.skipif(find_gnubg() is None, reason="gnubg is not installed")
ROUNDS = 6
MATCHES_PER_ROUND = 4
DRAIN = 300.0  # seconds the last server and worker may take to empty the queue

CONFIG = """\
web_port = 0
[analysis]
plies = 0
workers = 1
lease = 4
attempts = 100
time_limit = 3
poll_ms = 100
"""


def start_server(folder: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "fibsd", "--config", str(folder / "site.toml"),
         "--database", str(folder / "fibsd.sqlite"), "--port", "0",
         "--interface", "127.0.0.1"],
        stdout=log.open("ab"), stderr=subprocess.STDOUT, cwd=folder)


def start_worker(folder: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "fibsd", "--config", str(folder / "site.toml"), "analyse",
         "--database", str(folder / "fibsd.sqlite"), "--name", "standalone"],
        stdout=log.open("ab"), stderr=subprocess.STDOUT, cwd=folder)


def stop(process: subprocess.Popen[bytes], how: int) -> None:
    if process.poll() is None:
        process.send_signal(how)
    process.wait(timeout=60)


def test_every_match_is_analysed_exactly_once_through_kills(tmp_path: Path) -> None:
    rng = random.Random(22)
    (tmp_path / "site.toml").write_text(CONFIG)
    log = tmp_path / "processes.log"
    store = SQLiteStore(tmp_path / "fibsd.sqlite")
    store.queue_analyses("all", 0)
    server = start_server(tmp_path, log)
    worker = start_worker(tmp_path, log)
    servers = 1
    made = 0
    try:
        for _ in range(ROUNDS):
            for _ in range(MATCHES_PER_ROUND):
                record = played(made, 1, double=0.2, resign=0.02)
                store.record_finished_match(finished(record, 1_700_000_000 + made))
                made += 1
                time.sleep(rng.uniform(0.0, 0.5))  # a random point of the kill to come
            victim = rng.choice(["server", "worker", "both"])
            if victim in ("server", "both"):
                stop(server, signal.SIGKILL)
                server = start_server(tmp_path, log)
                servers += 1
            if victim in ("worker", "both"):
                stop(worker, signal.SIGKILL)
                worker = start_worker(tmp_path, log)
        deadline = time.monotonic() + DRAIN
        # a server SIGTERMed before its reactor runs dies of the signal (returncode -15):
        # the end waits for the last one started to be listening, as for the queue
        while (store.analysis_counts() != {"done": made}
               or log.read_text().count("fibsd listening on") < servers):
            assert time.monotonic() < deadline, (store.analysis_counts(), log.read_text())
            assert server.poll() is None and worker.poll() is None, log.read_text()
            time.sleep(0.2)  # polling for the end, not for luck
    finally:
        stop(server, signal.SIGTERM)
        stop(worker, signal.SIGTERM)
        store.close()
    with sqlite3.connect(tmp_path / "fibsd.sqlite") as conn:
        kept = conn.execute("SELECT match_id, count(*) FROM analysis_done"
                            " GROUP BY match_id").fetchall()
        ids = [row[0] for row in conn.execute("SELECT id FROM finished_matches")]
    assert len(ids) == made
    assert sorted(kept) == [(match_id, 1) for match_id in sorted(ids)]
    assert server.returncode == 0 and worker.returncode == 0
