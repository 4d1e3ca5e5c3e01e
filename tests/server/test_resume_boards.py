"""A resumed match shows exactly the board it was saved with, field 50 (the die of the
player's last one-die-only roll) included: it was kept only in the live match, so a
resume after a crash, a drop or a ``leave`` showed 0 where it had shown the die (issue
19: 136 of 771 resumes differed).  Every position of whole matches is saved and
resumed, as the server does (``LiveMatch.from_record``), and compared line for line."""

from __future__ import annotations

import pytest

from fibsd.rules.game import Phase
from fibsd.server.match import LiveMatch
from fibsd.wire.board import format_board
from tests.server.test_match import Table, random_rolls

FORCED = 50  # the field's number in FIBS's board line (1-based, after "board")


def boards(match: LiveMatch) -> list[str]:
    return [format_board(match.board_view(player)) for player in (0, 1)]


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_every_position_resumes_with_the_same_boards_field_50_included(seed: int) -> None:
    table = Table([(3, 5)] + random_rolls(seed))
    table.start("7")
    table.lines()
    forced_positions = 0

    def resumed_the_same() -> bool:
        match = table.server.lobby.matches.get("alice")
        if match is None:
            return True
        before = boards(match)
        after = boards(LiveMatch.from_record(table.server.lobby, match.to_record()))
        assert after == before
        nonlocal forced_positions
        forced_positions += any(line.split(":")[FORCED] != "0" for line in before)
        if match.rules.phase is Phase.OVER:  # between games: on to the next one
            for name in match.names:
                table.send(name, "join")
            table.lines()
        return forced_positions >= 20

    table.play_until(resumed_the_same)
    assert forced_positions >= 20
