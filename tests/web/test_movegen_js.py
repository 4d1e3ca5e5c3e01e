"""The web client's move generator (fibsd/web/static/play/movegen.js), run under Node,
reaches exactly the positions GNU Backgammon reaches on every query of
tests/data/movegen.txt (which the rules engine is checked against too), and plays by
itself exactly the rolls that allow one position only."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fibsd.rules.position import Position

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data" / "movegen.txt"
NODE = shutil.which("node")


def key(position: Position) -> str:
    return ",".join(map(str, position.player)) + "|" + ",".join(map(str, position.opponent))


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (Debian: apt-get install nodejs)")
def test_javascript_move_generator_agrees_with_gnubg() -> None:
    queries, expected = [], []
    for line in DATA.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        position_id, d1, d2, _category, _n, *results = line.split()
        start = Position.from_position_id(position_id)
        queries.append(json.dumps({"mine": start.player, "theirs": start.opponent,
                                   "d1": int(d1), "d2": int(d2)}))
        expected.append((line, sorted(key(Position.from_position_id(r)) for r in results)))
    assert len(queries) == 5450
    assert NODE is not None
    run = subprocess.run([NODE, str(HERE / "js" / "movegen_check.mjs")], input="\n".join(queries),
                         capture_output=True, text=True, timeout=600, check=True)
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(answers) == len(expected)
    wrong = [query for (query, want), (got, _) in zip(expected, answers) if got != want]
    assert not wrong, f"{len(wrong)} queries differ, first: {wrong[0]}"
    forced = [(query, got) for (query, want), (_, got) in zip(expected, answers)
              if got != (want[0] if len(want) == 1 else None)]
    assert not forced, f"{len(forced)} forced plays differ, first: {forced[0]}"
    assert sum(1 for _, want in expected if len(want) == 1) > 100
