"""ASCII boards against what FIBS drew, and the board-state.md section 8 examples."""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from fibsd.rules.position import Position
from fibsd.wire.ascii_board import default_status, render_board
from fibsd.wire.board import Colour, Seat, Table, board_view, parse_board

from .captures import Capture, load_captures

CAPTURES = load_captures()
IN_STEP = [c for c in CAPTURES if not c.out_of_step]
OUT_OF_STEP = [c for c in CAPTURES if c.out_of_step]


def drawn(lines: list[str]) -> list[str]:
    """The capture tool dropped empty lines."""
    return [line for line in lines if line]


def test_capture_counts() -> None:
    assert (len(CAPTURES), len(IN_STEP), len(OUT_OF_STEP)) == (156, 147, 9)


@pytest.mark.parametrize("capture", IN_STEP, ids=lambda c: c.name)
def test_style_2_reproduces_fibs(capture: Capture) -> None:
    assert drawn(render_board(parse_board(capture.line), 2)) == list(capture.raw)


@pytest.mark.parametrize("capture", OUT_OF_STEP, ids=lambda c: c.name)
def test_out_of_step_captures_differ_only_in_the_status(capture: Capture) -> None:
    """A roll, a "can't move" or a resignation offer came between the two requests:
    the checkers, bar, off and cube agree, the status text after the cube does not."""
    ours = drawn(render_board(parse_board(capture.line), 2))
    assert ours[:-1] == list(capture.raw[:-1])
    prefix = re.compile(r".*Cube: [0-9]+(?: \(owned by \w+\))?  ")
    ours_prefix, theirs_prefix = prefix.match(ours[-1]), prefix.match(capture.raw[-1])
    assert ours_prefix and theirs_prefix
    assert ours_prefix.group() == theirs_prefix.group()
    assert ours[-1] != capture.raw[-1]


def test_status_can_be_given_for_events_the_view_does_not_show() -> None:
    capture = next(c for c in OUT_OF_STEP if c.raw[-1].endswith("wants to resign."))
    ours = render_board(parse_board(capture.line), 2, status="BlunderBot_XI wants to resign.")
    assert drawn(ours) == list(capture.raw)


# -- board-state.md 8.2 and 8.3 -------------------------------------------------------------

EXAMPLE_A_WATCHER_OF_BOB = """\
   +13-14-15-16-17-18-------19-20-21-22-23-24-+ X: alice - score: 0
   | O           X    |   |  X              O |
   | O           X    |   |  X              O |
   | O           X    |   |  X                |
   | O                |   |  X                |
   | O                |   |  X                |
  v|                  |BAR|                   |    5-point match
   | X                |   |  O                |
   | X                |   |  O                |
   | X           O    |   |  O                |
   | X           O    |   |  O              X |
   | X           O    |   |  O              X |
   +12-11-10--9--8--7--------6--5--4--3--2--1-+ O: bob - score: 0

   BAR: O-0 X-0   OFF: O-0 X-0   Cube: 1  bob rolled 5 3."""

EXAMPLE_B_WATCHER_OF_ALICE = """\
   +-1--2--3--4--5--6--------7--8--9-10-11-12-+ O: bob - score: 3
   | X        O  O  O |   |     O           X |
   |             O  O |   |     O           X |
   |                O |   |     O           X |
   |                O |   |                 X |
   |                  |   |                   |
   |                  |BAR|                   |v    7-point match
   |                  |   |                   |
   |                  |   |                 O |
   |                X |   |     X           O |
   |             X  X |   |     X           O |
   | O     X     X  X | X |     X           O |
   +24-23-22-21-20-19-------18-17-16-15-14-13-+ X: alice - score: 2

   BAR: O-0 X-1   OFF: O-0 X-0   Cube: 2 (owned by alice)  alice rolled 4 2."""

TGSBOT_STYLE_1 = """\
    13 14 15 16 17 18       19 20 21 22 23 24
   +------------------------------------------+ X: sorrytigger - score: 0
   | O           X    |   |  X              O |
   | O           X    |   |  X              O |
   | O           X    |   |  X                |
   | O                |   |  X                |
   | O                |   |  X                |
  v|                  |BAR|                   |    3-point match
   | X                |   |  O                |
   | X                |   |  O                |
   | X           O    |   |  O                |
   | X           O    |   |  O              X |
   | X           O    |   |  O              X |
   +------------------------------------------+ O: gutrune - score: 0
    12 11 10  9  8  7        6  5  4  3  2  1

   BAR: O-0 X-0   OFF: O-0 X-0   Cube: 1  You rolled 5 1."""


def test_layout_for_p1_o() -> None:
    view = parse_board("board:bob:alice:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:"
                       "0:0:2:0:1:5:3:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0")
    assert render_board(view, 2) == EXAMPLE_A_WATCHER_OF_BOB.split("\n")


def test_layout_for_p1_x() -> None:
    view = parse_board("board:alice:bob:7:2:3:-1:-1:0:0:1:2:4:0:3:0:0:0:-4:4:0:0:0:-3:0:-3:"
                       "-2:0:-1:0:1:0:-1:4:2:0:0:2:1:0:0:-1:1:25:0:0:0:1:0:2:0:0:0")
    assert render_board(view, 2) == EXAMPLE_B_WATCHER_OF_ALICE.split("\n")


def test_style_1_for_the_recipient_uses_real_names_but_you_rolled() -> None:
    gutrune = Seat("gutrune", Colour.O, 0, dice=(5, 1), can_move=2)
    sorrytigger = Seat("sorrytigger", Colour.X, 0)
    view = board_view(Position.initial(), gutrune, sorrytigger, Table(3, turn=Colour.O))
    assert render_board(view, 1, own_name="gutrune") == TGSBOT_STYLE_1.split("\n")


def test_style_1_numbers_for_p1_x() -> None:
    view = parse_board("board:alice:bob:7:2:3:-1:-1:0:0:1:2:4:0:3:0:0:0:-4:4:0:0:0:-3:0:-3:"
                       "-2:0:-1:0:1:0:-1:4:2:0:0:2:1:0:0:-1:1:25:0:0:0:1:0:2:0:0:0")
    lines = render_board(view, 1)
    assert (lines[0], lines[-3]) == ("     1  2  3  4  5  6        7  8  9 10 11 12",
                                     "    24 23 22 21 20 19       18 17 16 15 14 13")
    assert lines[2:13] == EXAMPLE_B_WATCHER_OF_ALICE.split("\n")[1:12]


# -- details ------------------------------------------------------------------------------


def test_tall_stacks_show_their_count_in_the_fifth_row() -> None:
    bob = Seat("bob", Colour.O, 0)
    alice = Seat("alice", Colour.X, 0)
    side = [0] * 25
    side[1], side[2], side[24] = 12, 1, 2  # 12 on bob's 2 point, 2 on the bar
    view = board_view(Position(tuple(side), Position.initial().opponent), bob, alice,
                      Table(1, turn=Colour.O), recipient_plays=False)
    lines = render_board(view, 2)
    bottom = lines[7:12]  # row 5 (next to the middle) first
    assert [row[-7:-4] for row in bottom] == ["12 ", " O ", " O ", " O ", " O "]
    assert [row[23:26] for row in bottom] == ["   ", "   ", "   ", " O ", " O "]
    assert lines[-1] == "   BAR: O-2 X-0   OFF: O-0 X-0   Cube: 1  turn: bob"


def test_default_status() -> None:
    view = parse_board("board:You:bob:5:1:1:0:1:1:2:2:3:3:0:0:2:0:1:0:0:0:0:0:-1:0:-3:-3:-3:"
                       "-2:-2:-1:0:1:0:0:0:0:1:0:0:0:-1:1:25:0:0:0:0:0:2:0:0:0")
    assert default_status(view, "alice") == "turn: bob"
    assert default_status(replace(view, turn=-1), "alice") == "turn: alice"
    assert default_status(replace(view, turn=-1, player_dice=(3, 1)), "alice") == (
        "You rolled 3 1.")
    assert default_status(replace(view, opponent_dice=(6, 6)), "alice") == "bob rolled 6 6."
    assert render_board(replace(view, turn=0), 2, own_name="alice")[-1] == (
        "   BAR: O-0 X-0   OFF: O-0 X-0   Cube: 1")


def test_bad_requests() -> None:
    view = parse_board(CAPTURES[0].line)
    with pytest.raises(ValueError):
        render_board(view, 3)
    with pytest.raises(ValueError):
        render_board(replace(view, player="You"), 2)


# -- every drawn line is in the catalogue ---------------------------------------------------


def catalogue_patterns() -> list[re.Pattern[str]]:
    path = Path(__file__).resolve().parents[2] / "protocol" / "catalogue" / "board.toml"
    with open(path, "rb") as file:
        return [re.compile(e["pattern"]) for e in tomllib.load(file)["line"]]


def all_drawn_lines() -> list[str]:
    lines = {""}
    for capture in CAPTURES:
        for style in (1, 2):
            lines.update(render_board(parse_board(capture.line), style))
        lines.update(capture.raw)
    lines.update(TGSBOT_STYLE_1.split("\n"))
    return sorted(lines)


def test_every_drawn_line_matches_a_catalogue_entry() -> None:
    patterns = catalogue_patterns()
    unmatched = [line for line in all_drawn_lines()
                 if not any(p.fullmatch(line) for p in patterns)]
    assert unmatched == []
