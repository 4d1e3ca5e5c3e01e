"""fibsd's legal plays agree with GNU Backgammon on every query of ``tests/data/movegen.txt``.

The data file was made by gnubg itself (``tests/data/gnubg_movegen.py``, see
``tests/data/README.md``); this test only reads it, so it runs without gnubg.  A play is
judged by the position it reaches, so the comparison is between sets of result ids.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from fibsd.rules import movegen
from fibsd.rules.position import Position

DATA = Path(__file__).parent.parent / "data" / "movegen.txt"
CATEGORIES = (
    "random",
    "game",
    "bar",
    "closed",
    "bearoff",
    "contact-bearoff",
    "one-die",
    "larger-die",
    "double-1",
    "double-2",
    "double-3",
    "dance",
)
MIN_PER_CATEGORY = 150
MIN_QUERIES = 5000
SHOWN = 10  # mismatches spelled out in a failure message
CLI_SAMPLE_STEP = 17  # every 17th query also goes through the command-line tool


@dataclass(frozen=True)
class Query:
    line: int
    position_id: str
    dice: tuple[int, int]
    category: str
    results: frozenset[str]

    def __str__(self) -> str:
        d1, d2 = self.dice
        return f"line {self.line}: {self.position_id} {d1}-{d2} ({self.category})"


def load(path: Path) -> list[Query]:
    queries = []
    for number, text in enumerate(path.read_text(encoding="ascii").splitlines(), 1):
        if not text.strip() or text.startswith("#"):
            continue
        position_id, d1, d2, category, count, *results = text.split()
        if int(count) != len(results) or len(set(results)) != len(results):
            raise ValueError(f"{path}:{number}: count {count} does not match its results")
        queries.append(Query(number, position_id, (int(d1), int(d2)), category, frozenset(results)))
    return queries


QUERIES = load(DATA)


def describe(query: Query, got: list[str]) -> str:
    missing = sorted(query.results - set(got))
    extra = sorted(set(got) - query.results)
    repeated = sorted(r for r, n in Counter(got).items() if n > 1)
    return (
        f"{query}: gnubg {len(query.results)}, fibsd {len(got)}; missing {missing},"
        f" extra {extra}" + (f", repeated {repeated}" if repeated else "")
    )


def disagreements(queries: list[Query], answers: list[list[str]]) -> str:
    bad = [
        describe(query, got)
        for query, got in zip(queries, answers)
        if len(got) != len(set(got)) or set(got) != query.results
    ]
    if not bad:
        return ""
    return f"{len(bad)} of {len(queries)} queries disagree with gnubg:\n" + "\n".join(bad[:SHOWN])


@pytest.mark.parametrize("category", CATEGORIES)
def test_legal_plays_match_gnubg(category: str) -> None:
    queries = [q for q in QUERIES if q.category == category]
    answers = [
        [
            play.result.position_id()
            for play in movegen.legal_plays(Position.from_position_id(q.position_id), q.dice)
        ]
        for q in queries
    ]
    report = disagreements(queries, answers)
    assert not report, report


def test_command_line_tool_matches_gnubg(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = QUERIES[::CLI_SAMPLE_STEP]
    lines = "".join(f"{q.position_id} {q.dice[0]} {q.dice[1]}\n" for q in sample)
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    movegen.main()
    replies = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    asked = [(q.position_id, list(q.dice)) for q in sample]
    assert [(r["position"], r["dice"]) for r in replies] == asked
    no_text = [str(q) for q, r in zip(sample, replies) if any(not p["move"] for p in r["plays"])]
    assert not no_text, f"plays without move text: {no_text[:SHOWN]}"
    report = disagreements(sample, [[p["result"] for p in r["plays"]] for r in replies])
    assert not report, report


def test_data_covers_every_category() -> None:
    counts = Counter(q.category for q in QUERIES)
    assert set(counts) == set(CATEGORIES)
    assert {c: n for c, n in counts.items() if n < MIN_PER_CATEGORY} == {}
    assert len(QUERIES) >= MIN_QUERIES
    assert len({(q.position_id, q.dice) for q in QUERIES}) == len(QUERIES)


def test_outcome_categories_have_their_outcome() -> None:
    """The labels hold as far as the data alone can show: a dance has no play, the other
    outcome categories have some, ``double-*`` queries roll doubles, the die ones do not."""
    wrong = [
        str(q)
        for q in QUERIES
        if (q.category == "dance" and q.results)
        or (q.category.startswith("double-") and (q.dice[0] != q.dice[1] or not q.results))
        or (q.category in ("one-die", "larger-die") and (q.dice[0] == q.dice[1] or not q.results))
    ]
    assert not wrong, wrong[:SHOWN]


DICE_USED = {"one-die": 1, "larger-die": 1, "double-1": 1, "double-2": 2, "double-3": 3, "dance": 0}


def test_dice_playable_matches_outcome() -> None:
    """The count behind FIBS's "Please move n pieces" agrees with gnubg's outcome labels."""
    wrong = [
        f"{q}: fibsd {used}"
        for q in QUERIES
        if q.category in DICE_USED
        and (used := movegen.dice_playable(Position.from_position_id(q.position_id), q.dice))
        != DICE_USED[q.category]
    ]
    assert not wrong, wrong[:SHOWN]
