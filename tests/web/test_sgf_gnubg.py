"""``/matches/<id>.sgf`` read by the real GNU Backgammon (Debian's ``gnubg``, never
mocked; .ci/run installs it): the moves are the ones gnubg itself writes for the same
match imported from its .mat, and the analysis loads as gnubg's own (its statistics
count the marks and add up the errors that fibsd stored)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_twisted

from fibsd.store.sqlite import SQLiteStore
from fibsd.web.replay import replay
from fibsd.web.sgf import sgf_text
from fibsd.wire.mat import mat_text
from tests.analysis.matches import fixed_matches
from tests.web.analysis_records import planted
from tests.web.conftest import Web, seed, start_web, stop_web
from tests.web.records import finished_match

GNUBG = shutil.which("gnubg") or shutil.which("gnubg", path="/usr/games")
pytestmark = pytest.mark.skipif(GNUBG is None, reason="GNU Backgammon is not installed "
                                "(apt-get install gnubg; .ci/run does it before the tests)")
MOVE_NODE = re.compile(r";([WB]\[[^]]*\])")


def gnubg(commands: str) -> str:
    assert GNUBG is not None
    run = subprocess.run([GNUBG, "-t", "-q"], input="set threads 1\n" + commands,
                         capture_output=True, text=True, timeout=120, check=True)
    return run.stdout


def games_of(sgf: str) -> list[tuple[str, list[str]]]:
    """Each game tree's result and its move nodes (what is played, not the analysis)."""
    trees = sgf.strip().split("\n(")
    return [(re.search(r"RE\[([^]]*)\]", tree).group(1),  # type: ignore[union-attr]
             MOVE_NODE.findall(tree)) for tree in trees]


def largest_cube(games: list[dict[str, object]]) -> int:
    return max([1, *(a["cube"] for g in games for a in g["actions"]  # type: ignore[attr-defined]
                     if a["action"] == "double")])


def test_the_moves_are_the_ones_gnubg_writes_itself(tmp_path: Path) -> None:
    """Bar entries, hits, bear-offs, doubles, takes, drops, resignations, Crawford,
    unlimited matches, beavers."""
    compared = 0
    records = [finished_match(number, 7, cube=0.15, resign=0.04).record
               for number in range(1, 13)]
    # the analysis tests' fixed matches: unlimited ones, beavers (tests/analysis/matches.py)
    records += [record for record, _ in fixed_matches().values()]
    for number, record in enumerate(records):
        played = replay(record)
        if largest_cube(played.games) > 32:  # the .mat caps the cube (fibsd.wire.mat)
            continue
        (tmp_path / "m.mat").write_text(mat_text(record))
        gnubg(f"import mat {tmp_path / 'm.mat'}\nsave match {tmp_path / 'theirs.sgf'}\n")
        theirs = games_of((tmp_path / "theirs.sgf").read_text())
        mine = games_of(sgf_text(played.players, played.length, played.games))
        assert _same_but_openings(mine, theirs), (number, mine, theirs)
        compared += 1
    assert compared >= 11


def _same_but_openings(mine: list[tuple[str, list[str]]],
                       theirs: list[tuple[str, list[str]]]) -> bool:
    """A game resigned before the first play: gnubg keeps its opening roll (DI[..]),
    fibsd writes no node."""
    return len(mine) == len(theirs) and all(
        m == t or (not m[1] and m[0] == t[0]) for m, t in zip(mine, theirs))


@pytest.fixture
def analysed(database: Path) -> tuple[int, dict[str, tuple[int, int, int, float]]]:
    """The first seeded match with a planted analysis (the others have none); by
    player: (doubtful, bad, very bad) checker plays and their total error."""
    first = seed(database)[0]
    store = SQLiteStore(database)
    result = planted(first, store.finished_match(first).record)  # type: ignore[union-attr]
    store.save_analysis(result)
    store.close()
    expected = {}
    for name in ("alice", "bob"):
        checker = [m for m in result.marks if m.player == name and m.kind == "checker"]
        expected[name] = (sum(m.skill == "doubtful" for m in checker),
                          sum(m.skill == "bad" for m in checker),
                          sum(m.skill == "very bad" for m in checker),
                          sum(m.error for m in checker))
    assert sum(sum(v[:3]) for v in expected.values()) == 3
    return first, expected


@pytest_twisted.async_yield_fixture
async def site(database: Path, analysed: object) -> AsyncIterator[Web]:
    running = await start_web(database)
    yield running
    await stop_web(running)


def statistic(report: str, label: str) -> list[str]:
    line = next(line for line in report.splitlines() if line.startswith(label))
    return line[len(label):].split()


@pytest_twisted.ensureDeferred
async def test_gnubg_loads_the_analysis_from_the_sgf(
        site: Web, analysed: tuple[int, dict[str, tuple[int, int, int, float]]],
        tmp_path: Path) -> None:
    match_id, expected = analysed
    reply = await site.get(f"/matches/{match_id}.sgf")
    assert reply.code == 200
    assert reply.header("content-type") == "application/x-go-sgf; charset=utf-8"
    assert reply.header("content-disposition") == (
        f'attachment; filename="fibsd-{match_id}.sgf"')
    path = tmp_path / "fibsd.sgf"
    path.write_bytes(reply.body)
    report = gnubg(f"load match {path}\nshow statistics match\n")
    assert statistic(report, "Player")[:2] == ["alice", "bob"]
    for column, name in enumerate(("alice", "bob")):
        doubtful, bad, very_bad, error = expected[name]
        assert int(statistic(report, "Moves marked doubtful")[column]) == doubtful
        assert int(statistic(report, "Moves marked bad")[column]) == bad
        assert int(statistic(report, "Moves marked very bad")[column]) == very_bad
    chequer = report.split("Chequerplay statistics", 1)[1].split("Luck statistics", 1)[0]
    totals = re.findall(r"Error total EMG \(MWC\) +(-?[0-9.]+) \(.*?\) +(-?[0-9.]+)", chequer)
    assert [abs(float(v)) for v in totals[0]] == pytest.approx(
        [expected["alice"][3], expected["bob"][3]], abs=0.0005)
    data = json.loads((await site.get(f"/matches/{match_id}.json")).body)
    assert len(games_of(reply.text)) == len(data["games"])


@pytest_twisted.ensureDeferred
async def test_an_sgf_without_analysis_loads_too(
        site: Web, analysed: tuple[int, object], tmp_path: Path) -> None:
    reply = await site.get(f"/matches/{analysed[0] + 1}.sgf")  # the second: no analysis
    path = tmp_path / "plain.sgf"
    path.write_bytes(reply.body)
    assert re.findall(r"(?<![A-Z])(?:A|C|BM|DO)\[", reply.text) == []  # no analysis
    report = gnubg(f"load match {path}\nshow statistics match\n")
    assert int(statistic(report, "Moves marked very bad")[0]) == 0
