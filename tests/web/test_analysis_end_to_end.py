"""End to end with the real engine: a finished match queued, analysed by fibsd's
worker running Debian's gnubg (0 plies), then shown by the web face: the JSON's
analysis is the stored one, the replay marks the worst decision's step, and the .sgf
loads back into gnubg with the same checker errors and marks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import pytest_twisted

from fibsd.analysis.engine import find_gnubg
from fibsd.analysis.worker import Worker, WorkerSettings
from fibsd.store.sqlite import SQLiteStore
from tests.web.conftest import start_web, stop_web
from tests.web.records import finished_match
from tests.web.test_sgf_gnubg import gnubg, statistic

pytestmark = pytest.mark.skipif(find_gnubg() is None, reason="GNU Backgammon is not installed "
                                "(apt-get install gnubg; .ci/run does it before the tests)")


@pytest_twisted.ensureDeferred
async def test_a_match_analysed_by_gnubg_is_shown_and_exported(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    store.queue_analyses("all", 0)
    store.record_finished_match(finished_match(7, 5, ("alice", "bob"), cube=0.2))
    (match_id,) = [m.id for m in store.finished_matches("alice")]
    program = find_gnubg()
    assert program is not None and match_id is not None
    Worker(store, WorkerSettings(), program, log=lambda text: None).serve(once=True)
    stored = store.analysis(match_id)
    store.close()
    assert stored is not None and stored.state == "done", stored
    worst = max(stored.marks, key=lambda m: m.error)
    assert worst.error > 0 and worst.skill is not None

    web = await start_web(database)
    try:
        data = json.loads((await web.get(f"/matches/{match_id}.json")).body)
        assert data["analysis"]["state"] == "done" and data["analysis"]["plies"] == 0
        assert [(p["name"], p["pr"], p["decisions"]) for p in data["analysis"]["players"]] == [
            (p.name, None if p.pr is None else round(p.pr, 2), p.decisions)
            for p in stored.players]
        action = data["games"][worst.game - 1]["actions"][worst.action]
        assert (action["error"], action["best"]) == (round(worst.error, 4), worst.best)
        page = (await web.get(f"/matches/{match_id}")).text
        classes = {"doubtful": "doubtful", "bad": "bad", "very bad": "very-bad"}
        steps = dict(re.findall(r'<a class="([a-z-]+)" href="\?step=(\d+)"', page)[::-1])
        assert classes[worst.skill] in steps
        sgf = await web.get(f"/matches/{match_id}.sgf")
    finally:
        await stop_web(web)
    path = tmp_path / "analysed.sgf"
    path.write_bytes(sgf.body)
    report = gnubg(f"load match {path}\nshow statistics match\n")
    chequer = report.split("Chequerplay statistics", 1)[1].split("Luck statistics", 1)[0]
    for column, player in enumerate(stored.players):
        checker = [m for m in stored.marks if m.player == player.name and m.kind == "checker"]
        for label, skill in (("Moves marked doubtful", "doubtful"),
                             ("Moves marked bad", "bad"), ("Moves marked very bad", "very bad")):
            assert int(statistic(chequer.strip(), label)[column]) == sum(
                m.skill == skill for m in checker), (player.name, label)
        total = statistic(chequer.strip(), "Error total EMG (MWC)")
        figures = [v for v in total if re.fullmatch(r"-?[0-9]+\.[0-9]+", v)]
        assert abs(float(figures[column])) == pytest.approx(
            sum(m.error for m in checker), abs=0.0006)
