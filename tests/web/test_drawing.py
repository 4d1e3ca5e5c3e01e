"""The pure parts of the web face: the replay of a stored record, the SVG board and the
rating chart."""

from __future__ import annotations

import json

import pytest

from fibsd.web.board_svg import Picture, draw_board, from_board_view, names_line
from fibsd.web.chart_svg import draw_chart, rating_path
from fibsd.web.replay import UnreadableRecord, replay
from fibsd.wire.board import parse_board
from tests.web.records import played_match

# alice watched: she is X (colour -1), bob (O) rolled 6-2 and owns the cube at 2.
WATCHER_LINE = ("board:alice:bob:5:1:2:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:"
                "0:2:0:1:0:0:6:2:2:0:1:0:-1:1:0:25:0:0:0:0:0:0:0:0")


def test_a_watchers_board_line_as_a_picture() -> None:
    picture = from_board_view(parse_board(WATCHER_LINE))
    assert picture == Picture(
        slots=parse_board(WATCHER_LINE).board, o_name="bob", x_name="alice", o_off=0,
        x_off=0, cube=2, cube_owner=1, dice=(6, 2), dice_colour=1, o_score=2, x_score=1,
        length=5)
    assert names_line(picture) == "bob (O) 2 - alice (X) 1, 5 point match"


def test_the_board_drawing_escapes_names_and_carries_the_slots() -> None:
    slots = (0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0)
    hostile = Picture(slots, "<i>o</i>", "x&y", 0, 0)
    svg = draw_board(hostile, names_line(hostile))
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" class="board"')
    assert f'data-board="{":".join(map(str, slots))}"' in svg
    assert "<i>" not in svg and "&lt;i&gt;o&lt;/i&gt; (O) 0 - x&amp;y (X) 0" in svg
    assert svg.count('class="o"') == 15 and svg.count('class="x"') == 15
    tall = Picture((0, 0, 0, 0, 0, 0, 9, *([0] * 17), -6, 0), "a", "b", 6, 9, cube=4,
                   cube_owner=-1, dice=(3, 3), dice_colour=-1)
    drawn = draw_board(tall)
    assert drawn.count('class="o"') == 5 and ">9</text>" in drawn  # five drawn, "9" on top
    assert 'class="off"' in drawn and ">4</text></g>" in drawn
    assert drawn.count('class="die" data-value="3"') == 2


def test_the_rating_chart() -> None:
    assert rating_path(1510.0, [5.0, 5.0]) == [1500.0, 1505.0, 1510.0]
    assert rating_path(1500.0, []) == [1500.0]
    assert "No rated matches yet." in draw_chart([1500.0])
    chart = draw_chart(rating_path(1510.0, [5.0, 5.0]))
    assert 'data-points="3"' in chart and "<polyline" in chart
    assert 'aria-label="rating from 1500.00 to 1510.00 over 2 matches"' in chart


def test_a_replay_shows_cube_actions_resignations_and_the_crawford_game() -> None:
    record, match = played_match(11, 7, cube=0.5, resign=0.03)
    played = replay(record)
    assert played.score == match.score and played.players == ("alice", "bob")
    actions = [a for game in played.games for a in game["actions"]]
    kinds = {a["action"] for a in actions}
    assert {"double", "take", "drop", "resign", "accept_resignation"} <= kinds
    assert played.crawford_game == match.crawford_game is not None
    assert [g["crawford"] for g in played.games].count(True) == 1
    captions = [line for step in played.steps for line in step.caption]
    assert any(line.endswith("rejects the double.") for line in captions)
    assert any(" wants to resign. " in line for line in captions)
    last = played.steps[-1]
    assert last.game == len(played.games) == match.number
    assert last.caption[-1].endswith(" wins the game and gets "
                                     f"{played.games[-1]['points']} point"
                                     + ("s." if played.games[-1]["points"] > 1 else "."))
    starts = played.game_starts()
    assert len(starts) == len(played.games) and starts[0] == 1
    assert all(played.steps[i].game == n for n, i in enumerate(starts, 1))


@pytest.mark.parametrize("record", [
    "not json", json.dumps({"format": "other"}),
    json.dumps({"format": "fibsd-live-match", "players": ["a", "b"], "o_first": 0,
                "match": {"format": "fibsd-match"}}),
])
def test_an_unreadable_record_says_so(record: str) -> None:
    with pytest.raises(UnreadableRecord):
        replay(record)
