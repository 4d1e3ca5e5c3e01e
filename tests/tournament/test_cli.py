"""``fibsd tournament create`` prints the new number; bad options are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from fibsd.__main__ import main
from fibsd.store.sqlite import SQLiteStore
from fibsd.tournament.spec import SpecError, parse_create


def test_create_from_the_shell(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "f.sqlite"
    SQLiteStore(str(database)).close()
    base = ["--database", str(database), "tournament", "create"]
    assert main([*base, "--name", "Spring Cup", "--format", "swiss", "--lengths", "5,5,7",
                 "--rounds", "5", "--max-players", "24", "--bots", "--clock", "12s+2m",
                 "--start", "2026-11-27T03:00"]) == 0
    assert capsys.readouterr().out == "1\n"
    assert main([*base, "--name", "X", "--format", "swiss", "--lengths", "1"]) == 1
    assert capsys.readouterr().err == "fibsd tournament: a Swiss tournament needs --rounds\n"
    store = SQLiteStore(str(database))
    record = store.tournament(1)
    store.close()
    assert (record.name, record.format, record.lengths, record.rounds, record.max_players,
            record.bots, record.clock, record.start_at, record.state) == (
        "Spring Cup", "swiss", (5, 5, 7), 5, 24, True, "12s+2m", 1795748400, "open")


@pytest.mark.parametrize(("words", "problem"), [
    ("--name Cup --format cup --lengths 1", "the format is knockout, swiss or roundrobin"),
    ("--name Cup --format knockout --lengths 0", "lengths are 1 to 20 numbers from 1 to 99"),
    ("--name Cup --format knockout --lengths 1 --rounds 3", "--rounds is for Swiss tournaments"),
    ("--name Cup --format knockout --lengths 1 --max-players 999",
     "--max-players is a number from 2 to 256"),
    ("--name Cup --format knockout --lengths 1 --clock 5", "a clock is a delay and a reserve,"
     " as 12s+2m"),
    ("--name '' --format knockout --lengths 1",
     "a name is 1 to 40 letters, digits, blanks and ' _ . -"),
    ("--format knockout --lengths 1", "--name is missing"),
    ("--name Cup --format knockout --lengths 1 --start soon",
     "--start is when-full, a Unix time or a UTC time as 2026-11-27T03:00"),
])
def test_bad_specs(words: str, problem: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_create(words, 256)
    assert str(caught.value) == problem
