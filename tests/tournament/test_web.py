"""The tournament pages: /tournaments, /tournaments/<id> (a knockout's bracket as SVG,
Swiss standings as a table, every match linked), /tournaments/<id>.json, and the
tournament and round in /matches/<id>.json; over HTTP, and in headless Chromium."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_twisted
from passlib.hash import argon2

from fibsd.store.sqlite import SQLiteStore
from fibsd.tournament import pairing as formats
from tests.web.conftest import Web, start_web, stop_web
from tests.web.records import finished_match

NAMES = ("alice", "bob", "carol", "dan", "erin")


def _play(store: SQLiteStore, number: int, fmt: str, rounds: int | None,
          forfeit_first: bool) -> None:
    """Enter everyone, start, and decide every round: the better seed wins each match,
    stored as a real finished match of the tournament; one pairing by forfeit."""
    seeds = list(NAMES)
    for name in seeds:
        store.join_tournament(number, name, 1500.0, 1_700_000_000)
    played: list[list[formats.Pairing]] = []
    now = 1_700_000_100
    while (pairs := formats.next_round(fmt, seeds, played, rounds=rounds)) is not None:
        rows = [(p.first, p.second, p.winner) for p in pairs]
        if not played:
            assert store.start_tournament(number, [(n, 1500.0) for n in seeds], rows, now, now)
        else:
            assert store.add_round(number, len(played) + 1, rows, now, now)
        decided = []
        for slot, p in enumerate(pairs):
            if p.second is None:
                decided.append(p)
                continue
            winner, loser = sorted((p.first, p.second), key=seeds.index)
            if forfeit_first and not played and slot == 1:
                store.record_forfeit(number, 1, slot, winner)
                decided.append(dataclasses.replace(p, winner=winner, forfeit=True))
                continue
            now += 100
            match = dataclasses.replace(finished_match(11, 1, (winner, loser), now),
                                        tournament=number, tournament_round=len(played) + 1)
            assert match.winner == winner
            store.record_finished_match(match)
            decided.append(dataclasses.replace(p, winner=winner))
        played.append(decided)
    champion = formats.champion(fmt, seeds, played, rounds=rounds)
    store.finish_tournament(number, champion, now)


def seed(database: Path) -> None:
    store = SQLiteStore(database)
    password = argon2.using(type="ID", memory_cost=64, time_cost=1).hash("secret")
    for name in NAMES:
        store.create_user(name, password, 1_700_000_000)
    common = dict(lengths=[1], max_players=8, start_at=None, bots=False, clock="",
                  created=1_700_000_000)
    knockout = store.create_tournament(name="Spring Cup", fmt="knockout", rounds=None, **common)
    _play(store, knockout, "knockout", None, forfeit_first=True)
    swiss = store.create_tournament(name="Swiss Open", fmt="swiss", rounds=3, **common)
    _play(store, swiss, "swiss", 3, forfeit_first=False)
    store.create_tournament(name="Next Cup", fmt="roundrobin", rounds=None, **common)
    store.close()


@pytest_twisted.async_yield_fixture
async def site(tmp_path: Path) -> AsyncIterator[Web]:
    database = tmp_path / "fibsd.sqlite"
    seed(database)
    running = await start_web(database)
    yield running
    await stop_web(running)


@pytest_twisted.ensureDeferred
async def test_the_json_of_a_knockout(site: Web) -> None:
    reply = await site.get("/tournaments/1.json")
    assert reply.code == 200 and reply.header("content-type").startswith("application/json")
    data = json.loads(reply.text)
    assert {k: data[k] for k in ("id", "name", "format", "state", "players", "winner")} == {
        "id": 1, "name": "Spring Cup", "format": "knockout", "state": "finished",
        "players": list(NAMES), "winner": "alice"}
    first = data["rounds"][0]
    assert first[0] == {"players": ["alice", None], "winner": "alice", "match": None,
                        "forfeit": False}
    assert first[1] == {"players": ["dan", "erin"], "winner": "dan", "match": None,
                        "forfeit": True}
    final = data["rounds"][-1][0]
    assert final["players"] == ["alice", "bob"] and final["winner"] == "alice"
    assert [len(r) for r in data["rounds"]] == [4, 2, 1]
    match = json.loads((await site.get(f"/matches/{final['match']}.json")).text)
    assert match["tournament"] == {"id": 1, "round": 3}
    assert match["winner"] == "alice"


@pytest_twisted.ensureDeferred
async def test_the_pages_and_a_missing_tournament(site: Web) -> None:
    listing = await site.get("/tournaments")
    assert listing.code == 200
    for text in ('href="/tournaments/1">Spring Cup', 'href="/tournaments/2">Swiss Open',
                 'href="/tournaments/3">Next Cup'):
        assert text in listing.text
    swiss = json.loads((await site.get("/tournaments/2.json")).text)
    assert swiss["standings"][0] == {"name": "alice", "points": 3.0, "buchholz": 5.0}
    assert (await site.get("/tournaments/99")).code == 404
    assert (await site.get("/tournaments/99.json")).code == 404
    assert json.loads((await site.get("/tournaments/3.json")).text)["state"] == "open"


# -- in the browser --------------------------------------------------------------------

try:
    from tests.web.test_browser import Browser, CHROMIUM, DRIVER
except ImportError:  # pragma: no cover - selenium missing
    CHROMIUM = None

browser_only = pytest.mark.skipif(
    CHROMIUM is None or not DRIVER.exists(), reason="Chromium is not installed")


@pytest_twisted.async_yield_fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    from twisted.internet.threads import deferToThread

    opened = await deferToThread(Browser, tmp_path / "profile")
    yield opened
    await deferToThread(opened.driver.quit)


def shots(tmp_path: Path) -> Path:
    where = Path(os.environ.get("FIBSD_SCREENSHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    print(f"screenshots in {where}")
    return where


@browser_only
@pytest_twisted.ensureDeferred
async def test_the_bracket_in_a_browser(browser: Browser, site: Web, tmp_path: Path) -> None:
    await browser.run(browser.driver.set_window_size, 1100, 800)
    await browser.open(site.base + "/tournaments/1")
    assert await browser.text("h1") == "Spring Cup"
    boxes = await browser.script(
        "return Array.from(document.querySelectorAll('svg.bracket g.pairing')).map("
        "g => Array.from(g.querySelectorAll('text')).map(t => t.textContent"
        " + (t.getAttribute('font-weight') === 'bold' ? '*' : '')).join(' / '));")
    assert boxes == ["alice* / (bye)", "dan (by forfeit)* / erin", "bob* / (bye)",
                     "carol* / (bye)", "alice* / dan", "bob* / carol", "alice* / bob"]
    links = await browser.script(
        "return Array.from(document.querySelectorAll('svg.bracket a')).map("
        "a => a.getAttribute('href'));")
    assert len(links) == 3 and all(link.startswith("/matches/") for link in links)
    drawn = await browser.script(
        "var r = document.querySelector('svg.bracket').getBoundingClientRect();"
        "return [r.width > 500, r.height > 150];")
    assert drawn == [True, True]
    await browser.run(browser.driver.save_screenshot, str(shots(tmp_path) / "bracket.png"))
    await browser.click("svg.bracket a")
    assert (await browser.text("h1")).startswith("alice - ")


@browser_only
@pytest_twisted.ensureDeferred
async def test_the_swiss_standings_in_a_browser(browser: Browser, site: Web,
                                                tmp_path: Path) -> None:
    await browser.open(site.base + "/tournaments/2")
    assert await browser.text("h1") == "Swiss Open"
    rows = await browser.texts("table.standings tbody tr")
    assert rows[0] == "1 alice 3 5"
    assert len(rows) == 5
    assert await browser.fits_the_phone()
    await browser.run(browser.driver.save_screenshot, str(shots(tmp_path) / "standings.png"))
    await browser.open(site.base + "/tournaments")
    assert await browser.texts("table.tournaments tbody tr td:nth-child(2)") == [
        "Next Cup", "Spring Cup", "Swiss Open"]  # open, then finished oldest first
