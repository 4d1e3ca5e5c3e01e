"""What players see of the engine analysis on the web face, over real HTTP against a
seeded store whose analyses were planted with the store's own ``save_analysis``:
``/matches/<id>.json``'s ``analysis`` and annotated actions, the replay's marks,
summaries and error chart, the states before and without a result, the profile's PR
and the PR ladder."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_twisted

from fibsd.analysis.model import MatchAnalysis
from fibsd.store.sqlite import SQLiteStore
from tests.web.analysis_records import planted
from tests.web.conftest import Web, seed, start_web, stop_web
from tests.web.test_pages import rows


@pytest.fixture
def analysed(database: Path) -> dict[str, int]:
    """The seeded matches (tests/web/conftest.py) and: the first two analysed (alice's
    PR 6.5 then 3.0), the third queued, the fourth failed."""
    ids = seed(database)
    store = SQLiteStore(database)
    first, second, third, fourth = ids
    store.save_analysis(planted(first, store.finished_match(first).record))  # type: ignore[union-attr]
    store.save_analysis(planted(second, store.finished_match(second).record,  # type: ignore[union-attr]
                                prs=(9.0, 3.0)))  # bob - alice: alice 3.0
    store.save_analysis(MatchAnalysis(third, "queued", 2, None, (), (), None))
    store.save_analysis(MatchAnalysis(fourth, "failed", 2, "gnubg could not read the match",
                                      (), (), None))
    store.close()
    return {"done": first, "second": second, "queued": third, "failed": fourth}


@pytest_twisted.async_yield_fixture
async def site(database: Path, analysed: dict[str, int]) -> AsyncIterator[Web]:
    running = await start_web(database, **{"analysis.ladder_min_matches": 2})
    yield running
    await stop_web(running)


@pytest_twisted.ensureDeferred
async def test_the_json_record_carries_the_analysis(site: Web, analysed: dict[str, int],
                                                    database: Path) -> None:
    data = json.loads((await site.get(f"/matches/{analysed['done']}.json")).body)
    analysis = data["analysis"]
    assert analysis["state"] == "done" and analysis["plies"] == 0
    assert [p["name"] for p in analysis["players"]] == data["players"] == ["alice", "bob"]
    alice = analysis["players"][0]
    assert {k: alice[k] for k in ("pr", "checker_error_rate", "cube_error_rate", "luck_rate",
                                  "decisions", "doubtful", "bad", "very_bad")} == {
        "pr": 6.5, "checker_error_rate": 4.5, "cube_error_rate": 1.5, "luck_rate": 0.25,
        "decisions": 20, "doubtful": 1, "bad": 1, "very_bad": 1}
    store = SQLiteStore(database)
    marks = store.analysis(analysed["done"]).marks  # type: ignore[union-attr]
    store.close()
    annotated = {(n, i): a for n, game in enumerate(data["games"], 1)
                 for i, a in enumerate(game["actions"]) if "error" in a}
    assert sorted(annotated) == sorted((m.game, m.action) for m in marks)
    for mark in marks:
        action = annotated[(mark.game, mark.action)]
        assert (action["error"], action["best"], action["skill"], action["decision"]) == (
            mark.error, mark.best, mark.skill, mark.kind)
        assert action.get("moves", action["action"]) in (mark.played, "double", "take", "drop")
    queued = json.loads((await site.get(f"/matches/{analysed['queued']}.json")).body)
    assert queued["analysis"] == {"state": "queued", "plies": 2, "players": []}
    failed = json.loads((await site.get(f"/matches/{analysed['failed']}.json")).body)
    assert failed["analysis"] == {"state": "failed", "plies": 2, "players": [],
                                  "error": "gnubg could not read the match"}
    assert not any("error" in a for g in failed["games"] for a in g["actions"])


@pytest_twisted.ensureDeferred
async def test_the_replay_marks_each_step_and_shows_both_summaries(
        site: Web, analysed: dict[str, int]) -> None:
    match_id = analysed["done"]
    data = json.loads((await site.get(f"/matches/{match_id}.json")).body)
    first_move = data["games"][0]["actions"][1]
    assert first_move["skill"] == "very bad"
    page = (await site.get(f"/matches/{match_id}")).text
    marked = re.findall(r'<a class="([a-z-]+)" href="\?step=(\d+)"', page)
    assert [cls for cls, _ in marked] == ["very-bad", "bad", "bad", "doubtful"]
    assert 'data-marks="6"' in page  # every analysed decision has its bar
    summary = rows(page.split('class="list summary-table"', 1)[1])
    # a column a player (record order), a row a figure: it fits a phone
    assert '<th scope="col"><a href="/players/alice">alice</a></th><th scope="col">' in page
    assert summary == [["6.50", "12.25"], ["4.50", "5.50"], ["1.50", "1.50"],
                       ["+0.25", "-0.25"], ["20", "21"], ["1 / 1 / 1", "0 / 1 / 0"]]
    step = marked[0][1]
    shown = (await site.get(f"/matches/{match_id}?step={step}")).text
    box = re.search(r'<p class="mark very-bad">(.*?)</p>', shown, re.S)
    assert box is not None
    text = re.sub(r"<[^>]+>", "", box.group(1))
    assert text == (f"very bad · alice played {first_move['moves']} · "
                    f"best: {first_move['best']} · equity lost 0.250")
    assert '<p class="mark' not in (await site.get(f"/matches/{match_id}?step=0")).text
    french = (await site.get(f"/matches/{match_id}?step={step}&lang=fr")).text
    assert "très mauvais" in french and "équité perdue 0.250" in french


@pytest_twisted.ensureDeferred
async def test_pages_without_a_result_say_so(site: Web, analysed: dict[str, int]) -> None:
    queued = (await site.get(f"/matches/{analysed['queued']}")).text
    assert 'data-state="queued"' in queued and "This match waits for its analysis." in queued
    assert "error-chart" not in queued
    failed = (await site.get(f"/matches/{analysed['failed']}")).text
    assert "The analysis failed: gnubg could not read the match" in failed


@pytest_twisted.ensureDeferred
async def test_a_match_never_analysed_says_not_analysed(database: Path) -> None:
    """The engine off (no job row): state ``off`` and "Not analysed." on the page."""
    first = seed(database)[0]
    web = await start_web(database)
    try:
        data = json.loads((await web.get(f"/matches/{first}.json")).body)
        assert data["analysis"] == {"state": "off", "plies": None, "players": []}
        assert not any("error" in a for g in data["games"] for a in g["actions"])
        page = (await web.get(f"/matches/{first}")).text
        assert 'data-state="off"' in page and "<p>Not analysed.</p>" in page
        profile = (await web.get("/players/alice")).text
        assert '<p class="no-pr">No analysed matches yet.</p>' in profile
        assert "pr-chart" not in profile
    finally:
        await stop_web(web)


@pytest_twisted.ensureDeferred
async def test_the_profile_shows_average_pr_chart_best_and_worst(
        site: Web, analysed: dict[str, int]) -> None:
    page = (await site.get("/players/alice")).text
    # Newest first: the second match (PR 3.0) then the first (6.5).
    assert '<dd class="pr10">4.75 (2)</dd>' in page
    assert '<dd class="pr50">4.75 (2)</dd>' in page
    assert f'<dd class="pr-best"><a href="/matches/{analysed["second"]}">3.00</a>' in page
    assert f'<dd class="pr-worst"><a href="/matches/{analysed["done"]}">6.50</a>' in page
    assert 'class="chart pr-chart"' in page and 'data-points="2"' in page
    assert 'aria-label="PR over the last 2 analysed matches, from 6.50 to 3.00' in page


@pytest_twisted.ensureDeferred
async def test_the_pr_ladder_lists_players_with_enough_analysed_matches(site: Web) -> None:
    page = await site.get("/ratings/pr")
    assert page.code == 200
    # alice 6.5 and 3.0, bob 12.25 and 9.0; carol has none: two needed (the config key).
    assert rows(page.text) == [["1", "alice", "4.75", "2"], ["2", "bob", "10.62", "2"]]
    assert "Players with at least 2 analysed matches" in page.text
    assert '<a href="/ratings/pr" aria-current="page">' in page.text
