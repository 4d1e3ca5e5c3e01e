"""Jobs that must not hang or loop a worker: a record gnubg cannot read, a record that
is no match, a huge one, gnubg crashing or hanging; and a server without gnubg.  Each
ends ``failed`` with its reason, after its tries (or at once, where trying again would
read it the same way).  The engines that crash and hang are real programs: shell
scripts standing where gnubg would be."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fibsd.analysis.engine import EngineFailed, find_gnubg, run_gnubg
from fibsd.analysis.model import MatchAnalysis
from fibsd.analysis.supervisor import analysis_state
from fibsd.analysis.worker import Worker, WorkerSettings
from fibsd.config import Analysis
from fibsd.rules.errors import InvalidRecord
from fibsd.store import FinishedMatch
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.mat import mat_record, parse_mat
from tests.analysis.matches import PLAYERS, finished, played

SAMPLES = Path("/work/shared/samples")
needs_gnubg = pytest.mark.skipif(find_gnubg() is None, reason="gnubg is not installed")


def outcome(tmp_path: Path, record: str, program: str, attempts: int = 3,
            time_limit: float = 60.0) -> tuple[MatchAnalysis, list[str]]:
    """The stored job after a worker did all it would with ``record``."""
    store = SQLiteStore(tmp_path / "fibsd.sqlite")
    said: list[str] = []
    try:
        store.queue_analyses("all", 0)
        try:
            result = finished(record)
        except InvalidRecord:  # no match at all: stored as the server would any record
            result = FinishedMatch("alice", "bob", 1, 1, 0, 1_700_000_000, record)
        store.record_finished_match(result)
        settings = WorkerSettings(lease=600.0, attempts=attempts, time_limit=time_limit)
        Worker(store, settings, program, log=said.append).serve(once=True)
        (match_id,) = [m.id for m in store.finished_matches("alice")]
        assert match_id is not None
        analysis = store.analysis(match_id)
    finally:
        store.close()
    assert analysis is not None
    return analysis, said


def engine(tmp_path: Path, body: str) -> str:
    """A program that stands where gnubg would, doing ``body``."""
    path = tmp_path / "engine.sh"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def sample_record(name: str) -> str:
    """A .mat sample as the record the server would have stored for it."""
    parsed = parse_mat((SAMPLES / name).read_text())
    return json.dumps({"format": "fibsd-live-match", "players": list(PLAYERS),
                       "o_first": 0, "length": parsed.length, "match": mat_record(parsed)})


@needs_gnubg
def test_a_match_gnubg_reads_otherwise_fails_at_once(tmp_path: Path) -> None:
    """gnubg 1.07 keeps 7 cube levels: the export stops the cube at 64 for it, and
    gnubg then reads fewer cube actions than the record has."""
    program = find_gnubg()
    assert program is not None
    analysis, said = outcome(tmp_path, sample_record("gnubg_crash_cube256.mat"), program)
    assert analysis.state == "failed"
    assert analysis.error == ("gnubg cannot read the match:"
                              " game 2: gnubg read fewer double and take actions")
    assert (analysis.players, analysis.marks) == ((), ())
    assert len(said) == 1  # one try: another would read it the same way


@needs_gnubg
def test_gnubg_crashing_on_a_file_is_a_clear_failure() -> None:
    program = find_gnubg()
    assert program is not None
    with pytest.raises(EngineFailed, match=r"^gnubg died of signal 11 \(SIGSEGV\)$"):
        run_gnubg(program, (SAMPLES / "gnubg_crash_cube256.mat").read_text(), 0, 120)


def test_an_engine_that_crashes_fails_after_its_attempts(tmp_path: Path) -> None:
    record = played(1, 1, double=0.2, resign=0.0)
    analysis, said = outcome(tmp_path, record, engine(tmp_path, "kill -SEGV $$"),
                             attempts=2)
    assert (analysis.state, analysis.error) == ("failed", "gnubg died of signal 11 (SIGSEGV)")
    assert len(said) == 2


def test_an_engine_that_hangs_is_cut_off(tmp_path: Path) -> None:
    record = played(1, 1, double=0.2, resign=0.0)
    analysis, _ = outcome(tmp_path, record, engine(tmp_path, "exec sleep 600"),
                          attempts=1, time_limit=1.0)
    assert analysis.state == "failed"
    assert analysis.error is not None and "took longer than 1 s" in analysis.error


def test_an_engine_that_writes_nothing_fails(tmp_path: Path) -> None:
    record = played(1, 1, double=0.2, resign=0.0)
    analysis, _ = outcome(tmp_path, record, engine(tmp_path, "echo no such file; exit 1"),
                          attempts=1)
    assert (analysis.state, analysis.error) == (
        "failed", "gnubg wrote no analysis (exit 1): no such file")


def test_a_record_that_is_no_match_fails_at_once(tmp_path: Path) -> None:
    bad = json.dumps({"format": "fibsd-live-match", "players": ["alice", "bob"],
                      "o_first": 0, "length": 1,
                      "match": {"format": "fibsd-match", "version": 1, "games": "x" * 1000}})
    analysis, said = outcome(tmp_path, bad, "/nonexistent/gnubg")
    assert analysis.state == "failed"
    assert analysis.error is not None
    assert analysis.error.startswith("the record cannot be exported: ")
    assert len(said) == 1


def test_a_huge_record_is_cut_off_by_the_time_limit(tmp_path: Path) -> None:
    """400 games: replaying and exporting alone take longer than the limit; the alarm
    ends the job in fibsd's own part, the worker goes on."""
    huge = played(5, 0, double=0.0, resign=0.3, games=400)
    analysis, _ = outcome(tmp_path, huge, engine(tmp_path, "exec sleep 600"), attempts=1,
                          time_limit=1.0)
    assert analysis.state == "failed"
    assert analysis.error is not None and "took longer than 1 s" in analysis.error


def test_without_gnubg_analysis_is_off_and_said_so() -> None:
    off = Analysis(engine="/nonexistent/gnubg")
    assert analysis_state(off, "/tmp/x.sqlite") == (
        False, "analysis is off: no gnubg program ([analysis] engine ="
               " '/nonexistent/gnubg'); install GNU Backgammon (README)")
    # a server whose workers run elsewhere queues without an engine of its own
    assert analysis_state(Analysis(engine="/nonexistent/gnubg", workers=0), "x")[0]
    assert analysis_state(Analysis(matches="none"), "x") == (
        False, 'analysis is off ([analysis] matches = "none")')
