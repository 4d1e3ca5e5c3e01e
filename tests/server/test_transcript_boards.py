"""Every ``board:`` line of the golden match and watching transcripts, as the server
renders it while the transcript is replayed, shows the engine's position, score, cube,
dice, turn and flags as its recipient sees them (issue 4: the player, the opponent and a
watcher each get their own view)."""

from __future__ import annotations

from pathlib import Path

import pytest
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from tests.server.board_check import check_every_board
from tests.server.test_transcripts import PATHS, MemoryDriver
from tests.server.transcript import parse, replay

GAMES = [path for path in PATHS if path.stem.startswith(("match-", "watch-", "persistence"))]


@pytest.mark.parametrize("path", GAMES, ids=[p.stem for p in GAMES])
def test_every_board_in_the_transcript_is_the_engine_state(
        path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = check_every_board(monkeypatch)
    driver = MemoryDriver(tmp_path / "fibsd.sqlite")
    try:
        failures: list[Failure] = []
        Deferred.fromCoroutine(replay(parse(path), driver)).addErrback(failures.append)
        if failures:
            failures[0].raiseException()
    finally:
        driver.stop()
    expected = sum(line.count("board:") for line in path.read_text().splitlines()
                   if " < board:" in line)
    assert len(seen) >= expected
