"""The stored analysis is what GNU Backgammon itself reports for the exported match,
at the same settings (0 plies here, for speed): each player's PR, checker and cube
errors and decision counts, and the marks behind them, for fixed matches with
resignations, Crawford and post-Crawford games, doubles taken and dropped, beavers and
unlimited matches.  The real engine runs; gnubg's figures come from its own text
output (``show statistics match``), the worker's from its Python API."""

from __future__ import annotations

from pathlib import Path

import pytest

from fibsd.analysis.engine import find_gnubg
from fibsd.analysis.model import MatchAnalysis
from fibsd.analysis.worker import Worker, WorkerSettings
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.mat import mat_text
from tests.analysis.gnubg_text import gnubg_statistics
from tests.analysis.matches import PLAYERS, features, finished, fixed_matches, record_of
from tests.wire.test_mat import scripted_match

pytestmark = pytest.mark.skipif(find_gnubg() is None, reason="gnubg is not installed")
# gnubg prints totals to 3 decimals, rates to 1
TOTAL = 0.0006
RATE = 0.06
CASES = {**fixed_matches(),
         "scripted-three-point": (record_of(scripted_match(), 3),
                                  {"resign", "take", "drop", "crawford"})}


def analysed(tmp_path: Path, record: str) -> MatchAnalysis:
    """The match stored, its job queued and done by a worker at 0 plies."""
    store = SQLiteStore(tmp_path / "fibsd.sqlite")
    try:
        store.queue_analyses("all", 0)
        store.record_finished_match(finished(record))
        program = find_gnubg()
        assert program is not None
        Worker(store, WorkerSettings(), program, log=lambda text: None).serve(once=True)
        (match_id,) = [m.id for m in store.finished_matches("alice")]
        assert match_id is not None
        analysis = store.analysis(match_id)
    finally:
        store.close()
    assert analysis is not None
    return analysis


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_stored_analysis_is_gnubgs(tmp_path: Path, name: str) -> None:
    record, wanted = CASES[name]
    assert wanted <= features(record)
    analysis = analysed(tmp_path, record)
    assert (analysis.state, analysis.plies, analysis.error) == ("done", 0, None)
    mat = tmp_path / "match.mat"
    mat.write_text(mat_text(record, match_id=1))
    gnubg = gnubg_statistics(mat, 0)
    for seat, summary in enumerate(analysis.players):
        assert summary.name == PLAYERS[seat]

        def figure(row: str) -> float:
            return gnubg[row][seat]

        unforced = int(figure("Chequerplay statistics: Unforced moves"))
        close = int(figure("Cube statistics: Close or actual cube decisions"))
        assert (summary.checker_decisions, summary.cube_decisions) == (unforced, close)
        assert summary.decisions == unforced + close
        overall = -figure("Overall statistics: Error total EMG (MWC)") \
            if "Overall statistics: Error total EMG (MWC)" in gnubg \
            else -figure("Overall statistics: Error total EMG (Points)")
        assert summary.pr is not None
        assert summary.pr * summary.decisions / 500 == pytest.approx(overall, abs=TOTAL)
        assert summary.pr == pytest.approx(
            -figure(_row(gnubg, "Overall statistics: Error rate mEMG")) / 2, abs=RATE)
        assert summary.checker_error_rate == pytest.approx(
            -figure(_row(gnubg, "Chequerplay statistics: Error rate mEMG")), abs=RATE)
        mine = [m for m in analysis.marks if m.player == summary.name]
        checker = [m for m in mine if m.kind == "checker"]
        assert len(checker) == unforced
        assert sum(m.error for m in checker) == pytest.approx(
            -figure(_row(gnubg, "Chequerplay statistics: Error total EMG")), abs=TOTAL)
        for skill in ("doubtful", "bad", "very bad"):
            assert sum(m.skill == skill for m in checker) == int(
                figure(f"Chequerplay statistics: Moves marked {skill}"))
        if "beaver" not in wanted:  # gnubg's beaver bookkeeping is its own (analysis.md)
            cube = [m for m in mine if m.kind != "checker"]
            assert len(cube) == close
            assert sum(m.error for m in cube) == pytest.approx(
                -figure(_row(gnubg, "Cube statistics: Error total EMG")), abs=TOTAL)
        assert all(m.error >= 0 for m in mine)


def _row(rows: dict[str, tuple[float, float]], start: str) -> str:
    """The row whose label starts with ``start`` (gnubg says MWC in a match, Points
    in an unlimited one)."""
    (found,) = [row for row in rows if row.startswith(start)]
    return found


def test_marks_point_at_the_records_actions(tmp_path: Path) -> None:
    """Each mark names the action of /matches/<id>.json it judges: a checker mark a
    move by that player, a cube mark his roll (no double) or double, a take mark his
    take or drop."""
    from fibsd.web.replay import replay

    record, _ = CASES["five-point"]
    analysis = analysed(tmp_path, record)
    games = replay(record).games
    wanted = {"checker": {"move"}, "cube": {"roll", "double"}, "take": {"take", "drop"}}
    for mark in analysis.marks:
        action = games[mark.game - 1]["actions"][mark.action]
        assert action["action"] in wanted[mark.kind]
        assert action["player"] == mark.player
        if mark.kind == "checker":
            assert mark.played == action["moves"]
        else:
            assert mark.played == {"roll": "no double", "double": "double", "take": "take",
                                   "drop": "pass"}[action["action"]]
    assert {m.kind for m in analysis.marks} == {"checker", "cube", "take"}
