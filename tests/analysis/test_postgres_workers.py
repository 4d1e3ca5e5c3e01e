"""Workers against PostgreSQL: two standalone workers (``fibsd analyse``) split a backlog
of 200 matches with none done twice (``FOR UPDATE SKIP LOCKED``); and the database going
away while a worker holds a job: the worker waits it out and keeps its result.  The
real engine runs, at 0 plies, on 1-point matches."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fibsd.analysis.engine import find_gnubg
from fibsd.analysis.worker import Worker, WorkerSettings
from tests.analysis.matches import finished, played

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")
from fibsd.store.postgres import PostgresStore  # noqa: E402
from tests.postgres_server import NoPostgres, PostgresServer  # noqa: E402

pytestmark = pytest.mark.skipif(find_gnubg() is None, reason="gnubg is not installed")
BACKLOG = 200
WORKERS_END = 1200.0  # seconds two workers may take for the backlog on a busy machine
DONE = re.compile(r"\[(w\d)\]: match (\d+): analysed")


def test_two_workers_split_a_backlog_with_none_done_twice(
        postgres: PostgresServer, tmp_path: Path) -> None:
    url = postgres.new_database()
    store = PostgresStore(url)
    try:
        store.queue_analyses("all", 0)
        for seed in range(BACKLOG):
            store.record_finished_match(
                finished(played(seed, 1, double=0.2, resign=0.02), 1_700_000_000 + seed))
        (tmp_path / "site.toml").write_text("[analysis]\nlease = 600\n")
        workers = [subprocess.Popen(
            [sys.executable, "-m", "fibsd", "--config", str(tmp_path / "site.toml"),
             "analyse", "--database", url, "--once", "--name", name],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for name in ("w1", "w2")]
        logs = [worker.communicate(timeout=WORKERS_END)[0] for worker in workers]
        assert [worker.returncode for worker in workers] == [0, 0], logs
        assert store.analysis_counts() == {"done": BACKLOG}
        with psycopg.connect(url) as conn:
            attempts = conn.execute("SELECT attempts, count(*) FROM analyses"
                                    " GROUP BY attempts").fetchall()
            kept = conn.execute("SELECT count(*), count(DISTINCT match_id)"
                                " FROM analysis_done").fetchone()
    finally:
        store.close()
    assert attempts == [(1, BACKLOG)]  # no job taken twice
    assert kept == (BACKLOG, BACKLOG)  # each result kept once
    done: dict[str, set[int]] = {"w1": set(), "w2": set()}
    for text in logs:
        for name, match_id in DONE.findall(text):
            done[name].add(int(match_id))
    assert not done["w1"] & done["w2"]
    assert len(done["w1"] | done["w2"]) == BACKLOG
    print(f"split: w1 {len(done['w1'])}, w2 {len(done['w2'])}")


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresServer]:
    try:
        server = PostgresServer.start(durable=True)
    except NoPostgres as error:
        pytest.skip(f"no PostgreSQL server can be started: {error}")
    yield server
    server.stop()


def test_the_database_gone_while_a_worker_holds_a_job(own_postgres: PostgresServer) -> None:
    url = own_postgres.new_database()
    store = PostgresStore(url)
    worker_store = PostgresStore(url)
    program = find_gnubg()
    assert program is not None
    waiting = threading.Event()

    def log(text: str) -> None:
        if text.startswith("database unavailable"):
            waiting.set()

    try:
        store.queue_analyses("all", 0)
        store.record_finished_match(finished(played(7, 1, double=0.2, resign=0.0)))
        worker = Worker(worker_store, WorkerSettings(lease=600.0), program, log)
        job = worker_store.claim_analysis(1000.0, 600.0, 3)
        assert job is not None
        own_postgres.halt()
        thread = threading.Thread(target=worker.work, args=(job,))
        thread.start()
        assert waiting.wait(120), "the worker never found the database gone"
        own_postgres.restart()
        thread.join(300)
        assert not thread.is_alive()
    finally:
        worker_store.close()
        store.close()
    store = PostgresStore(url)  # the first one's connection died with the server
    try:
        analysis = store.analysis(job.match_id)
    finally:
        store.close()
    assert worker.done == 1
    assert analysis is not None and analysis.state == "done" and analysis.players
