"""The board: line: format/parse round trip, real FIBS lines, the engine bridge."""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fibsd.rules.position import Position
from fibsd.wire.board import (
    BoardView,
    Colour,
    InvalidBoardLine,
    Seat,
    Table,
    absolute_board,
    board_line,
    board_view,
    consistency_problems,
    format_board,
    parse_board,
    view_position,
)

from .captures import load_captures, session_board_lines

CATALOGUE = Path(__file__).resolve().parents[2] / "protocol" / "catalogue"


def own(points: dict[int, int], bar: int = 0) -> tuple[int, ...]:
    """A side in its own numbering from {own point: checkers}."""
    side = [0] * 25
    for point, count in points.items():
        side[point - 1] = count
    side[24] = bar
    return tuple(side)


# -- board-state.md section 7: the worked examples, built from the engine -------------

EXAMPLE_A = {
    "bob": "board:You:alice:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:"
           "5:3:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0",
    "alice": "board:You:bob:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:"
             "0:0:5:3:1:1:1:0:-1:1:25:0:0:0:0:0:0:0:0:0",
    "watcher of bob": "board:bob:alice:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:"
                      "0:0:2:0:1:5:3:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0",
}

EXAMPLE_B = {
    "alice": "board:You:bob:7:2:3:-1:-1:0:0:1:2:4:0:3:0:0:0:-4:4:0:0:0:-3:0:-3:-2:0:-1:0:1:0:"
             "-1:4:2:0:0:2:1:0:0:-1:1:25:0:0:0:1:0:2:0:0:0",
    "bob": "board:You:alice:7:3:2:-1:-1:0:0:1:2:4:0:3:0:0:0:-4:4:0:0:0:-3:0:-3:-2:0:-1:0:1:0:"
           "-1:0:0:4:2:2:0:1:0:1:-1:0:25:0:0:0:1:2:0:0:0",
    "watcher of alice": "board:alice:bob:7:2:3:-1:-1:0:0:1:2:4:0:3:0:0:0:-4:4:0:0:0:-3:0:-3:"
                        "-2:0:-1:0:1:0:-1:4:2:0:0:2:1:0:0:-1:1:25:0:0:0:1:0:2:0:0:0",
}

EXAMPLE_C = {
    "bob": "board:You:alice:5:1:1:0:1:1:2:2:3:3:0:0:2:0:1:0:0:0:0:0:-1:0:-3:-3:-3:-2:-2:-1:0:"
           "1:0:0:0:0:1:0:0:1:1:-1:0:25:0:0:0:0:2:0:0:0",
    "alice": "board:You:bob:5:1:1:0:1:1:2:2:3:3:0:0:2:0:1:0:0:0:0:0:-1:0:-3:-3:-3:-2:-2:-1:0:"
             "1:0:0:0:0:1:0:0:0:-1:1:25:0:0:0:0:0:2:0:0:0",
    "watcher of alice": "board:alice:bob:5:1:1:0:1:1:2:2:3:3:0:0:2:0:1:0:0:0:0:0:-1:0:-3:-3:"
                        "-3:-2:-2:-1:0:1:0:0:0:0:1:0:0:0:-1:1:25:0:0:0:0:0:2:0:0:0",
}


def three_views(position_of_bob: Position, bob: Seat, alice: Seat,
                table: Table) -> dict[str, str]:
    """Every recipient's line, as the server would ask for them."""
    of_alice = position_of_bob.swap()
    return {
        "bob": format_board(board_view(position_of_bob, bob, alice, table)),
        "alice": format_board(board_view(of_alice, alice, bob, table)),
        "watcher of bob": format_board(
            board_view(position_of_bob, bob, alice, table, recipient_plays=False)),
        "watcher of alice": format_board(
            board_view(of_alice, alice, bob, table, recipient_plays=False)),
    }


def test_example_a_start_of_a_match() -> None:
    bob = Seat("bob", Colour.O, 0, dice=(5, 3), can_move=2)
    alice = Seat("alice", Colour.X, 0)
    lines = three_views(Position.initial(), bob, alice, Table(5, turn=Colour.O))
    assert {k: lines[k] for k in EXAMPLE_A} == EXAMPLE_A


def test_example_b_checker_on_the_bar_recipient_plays_x() -> None:
    bob_side = own({4: 1, 5: 2, 6: 4, 8: 3, 13: 4, 24: 1})
    alice_side = own({24: 1, 13: 4, 8: 3, 6: 3, 5: 2, 3: 1}, bar=1)
    bob = Seat("bob", Colour.O, 3, may_double=False, can_move=2)
    alice = Seat("alice", Colour.X, 2, dice=(4, 2), can_move=2)
    lines = three_views(Position(bob_side, alice_side), bob, alice,
                        Table(7, cube=2, turn=Colour.X))
    assert {k: lines[k] for k in EXAMPLE_B} == EXAMPLE_B


def test_example_c_double_pending() -> None:
    bob_side = own({1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 9: 2, 11: 1})
    alice_side = own({8: 1, 6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 1})
    bob = Seat("bob", Colour.O, 1, may_double=False, can_move=2)
    alice = Seat("alice", Colour.X, 1, may_double=False, can_move=2)
    lines = three_views(Position(bob_side, alice_side), bob, alice,
                        Table(5, turn=Colour.O, doubled=Colour.O))
    assert {k: lines[k] for k in EXAMPLE_C} == EXAMPLE_C


def test_only_the_recipient_fields_differ() -> None:
    """board-state.md 4: the array, turn, cube and length are shared; P1's fields swap."""
    line_a, line_b = (EXAMPLE_B["alice"].split(":"), EXAMPLE_B["bob"].split(":"))
    differing = [i for i, (a, b) in enumerate(zip(line_a, line_b)) if a != b]
    assert differing == [2, 4, 5, 33, 34, 35, 36, 38, 39, 41, 42, 43, 44, 47, 48]


def test_clip_spec_example_round_trips() -> None:
    line = ("board:You:someplayer:3:0:1:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:"
            "2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0")
    view = parse_board(line)
    assert (view.player, view.opponent, view.player_dice, view.colour) == (
        "You", "someplayer", (6, 2), 1)
    assert format_board(view) == line


# -- real FIBS lines --------------------------------------------------------------------

SESSION = session_board_lines()
CAPTURES = load_captures()
REAL_LINES = SESSION + [c.line for c in CAPTURES]


def test_the_real_lines_are_all_there() -> None:
    assert (len(SESSION), len(CAPTURES)) == (275, 156)


@pytest.mark.parametrize("line", REAL_LINES)
def test_real_line_round_trips_and_is_consistent(line: str) -> None:
    view = parse_board(line)
    assert format_board(view) == line
    assert consistency_problems(view) == []


@pytest.mark.parametrize("line", REAL_LINES)
def test_real_line_through_the_engine(line: str) -> None:
    """Position out of the view, then the same view built back from it."""
    view = parse_board(line)
    colour = Colour(view.colour)
    position = view_position(view, colour)
    me = Seat(view.player, colour, view.player_score, view.player_dice,
              view.player_may_double, view.can_move, view.forced_move)
    them = Seat(view.opponent, colour.other, view.opponent_score, view.opponent_dice,
                view.opponent_may_double)
    table = Table(view.match_length, view.cube, None if view.turn == 0 else Colour(view.turn),
                  colour if view.was_doubled else None, view.did_crawford, view.redoubles)
    rebuilt = board_view(position, me, them, table, recipient_plays=view.player == "You")
    assert rebuilt == view
    assert view_position(view, colour.other) == position.swap()


def test_watched_player_on_the_bar_is_at_his_colours_slot() -> None:
    """A live line: GammonBot_VII (X) has one checker on the bar, at slot 0."""
    view = parse_board(SESSION[5])
    assert (view.board[0], view.player_bar, view.colour) == (-1, 1, -1)
    assert view_position(view, Colour.X).player[24] == 1


# -- the coordinates, for any position ---------------------------------------------------


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Any legal board: O's checkers first, then X's on what O left free."""
    sides: list[list[int]] = []
    taken: set[int] = set()  # absolute points already used by O
    for colour in (Colour.O, Colour.X):
        side = [0] * 25
        for _ in range(draw(st.integers(0, 15))):
            index = draw(st.integers(0, 24))
            absolute = index + 1 if colour is Colour.O else 24 - index
            if index < 24 and colour is Colour.X and absolute in taken:
                continue
            side[index] += 1
            if colour is Colour.O and index < 24:
                taken.add(absolute)
        sides.append(side)
    return Position(tuple(sides[0]), tuple(sides[1]))


@given(positions(), st.sampled_from(Colour))
def test_absolute_board_inverts(position: Position, colour: Colour) -> None:
    board = absolute_board(position, colour)
    assert board[0] <= 0 <= board[25]
    mine = sum(v for v in board if v * colour > 0) * colour
    assert mine == sum(position.player)
    view = parse_board(EXAMPLE_A["bob"])
    assert view_position(replace(view, board=board), colour) == position


dice = st.tuples(st.integers(1, 6), st.integers(1, 6))


@given(positions(), st.sampled_from(Colour), dice, st.booleans(), st.integers(0, 4))
def test_built_views_round_trip(position: Position, colour: Colour, roll: tuple[int, int],
                                watcher: bool, can_move: int) -> None:
    me = Seat("alice", colour, 2, dice=roll, can_move=can_move)
    them = Seat("bob", colour.other, 4, may_double=False)
    view = board_view(position, me, them, Table(7, cube=2, turn=colour),
                      recipient_plays=not watcher)
    assert parse_board(format_board(view)) == view
    assert consistency_problems(view) == []
    assert view_position(view, colour) == position


seats = st.builds(Seat, st.sampled_from(["alice", "bob7"]), st.sampled_from(Colour),
                  st.integers(0, 30), st.sampled_from([(0, 0), (3, 5), (6, 6)]),
                  st.booleans(), st.integers(0, 4), st.integers(0, 6))
tables = st.builds(Table, st.sampled_from([1, 7, 9999]), st.sampled_from([1, 2, 64]),
                   st.sampled_from([None, *Colour]), st.sampled_from([None, *Colour]),
                   st.booleans(), st.integers(0, 99))


@given(positions(), seats, tables, st.booleans())
def test_board_line_is_the_formatted_view(position: Position, me: Seat, table: Table,
                                          plays: bool) -> None:
    """The server's shortcut writes exactly the line of the view it skips."""
    them = Seat("carol", me.colour.other, 1, (2, 1), not me.may_double, 2, 1)
    assert board_line(position, me, them, table, recipient_plays=plays) == format_board(
        board_view(position, me, them, table, recipient_plays=plays))
    with pytest.raises(ValueError):
        board_line(position, me, me, table)


def test_o_moves_down_and_x_moves_up() -> None:
    """Own point 24 (the back checkers) is absolute 24 for O and absolute 1 for X."""
    side = own({24: 2})
    empty = own({})
    assert absolute_board(Position(side, empty), Colour.O)[24] == 2
    assert absolute_board(Position(side, empty), Colour.X)[1] == -2
    assert absolute_board(Position(own({}, bar=1), empty), Colour.O)[25] == 1
    assert absolute_board(Position(own({}, bar=1), empty), Colour.X)[0] == -1


def test_colour_fixes_direction_home_and_bar() -> None:
    assert [(c.direction, c.home, c.bar) for c in Colour] == [(1, 25, 0), (-1, 0, 25)]


def test_same_colour_twice_is_refused() -> None:
    seat = Seat("bob", Colour.O, 0)
    with pytest.raises(ValueError):
        board_view(Position.initial(), seat, seat, Table(1))


# -- bad input ------------------------------------------------------------------------------

GOOD = EXAMPLE_A["bob"]


@pytest.mark.parametrize("line, reason", [
    (GOOD + ":0", "54 tokens instead of 53"),
    (GOOD.rsplit(":", 1)[0], "52 tokens instead of 53"),
    ("boards" + GOOD[5:], "does not start with 'board:'"),
    (GOOD.replace(":5:0:0:0:-2:", ":05:0:0:0:-2:", 1), "token 3 is not an integer"),
    (GOOD.replace(":5:0:0:0:-2:", ":+5:0:0:0:-2:", 1), "token 3 is not an integer"),
    (GOOD.replace(":5:0:0:0:-2:", ":5:0:0:-0:-2:", 1), "token 6 is not an integer"),
    (GOOD + " ", "token 52 is not an integer"),
    (GOOD.replace(":1:1:1:0:1:-1:", ":1:2:1:0:1:-1:", 1), "a flag is neither 0 nor 1"),
    (GOOD.replace("board:You:", "board::", 1), "bad name ''"),
])
def test_malformed_lines_are_refused(line: str, reason: str) -> None:
    with pytest.raises(InvalidBoardLine) as caught:
        parse_board(line)
    assert (caught.value.line, caught.value.reason) == (line, reason)


def test_inconsistent_views_are_reported() -> None:
    view = parse_board(GOOD)
    assert consistency_problems(replace(view, direction=1)) == [
        "direction/home/bar 1/0/25 do not belong to colour O"]
    assert consistency_problems(replace(view, player_home=1)) == [
        "home counts 1/0 differ from the board (0/0)"]
    assert consistency_problems(replace(view, turn=-1)) == ["P1 has dice but turn is -1"]
    assert consistency_problems(replace(view, opponent="You")) == [
        "'You' is only ever the first name"]


def test_view_has_52_values() -> None:
    assert len(parse_board(GOOD).values()) == 52
    assert isinstance(eval(repr(parse_board(GOOD)), {"BoardView": BoardView}), BoardView)


# -- the message catalogue ------------------------------------------------------------------


def catalogue(name: str) -> list[dict[str, str]]:
    with open(CATALOGUE / name, "rb") as file:
        entries: list[dict[str, str]] = tomllib.load(file)["line"]
    return entries


@pytest.mark.parametrize("name", ["board.toml", "rating.toml"])
def test_catalogue_examples_match_their_patterns(name: str) -> None:
    entries = catalogue(name)
    assert entries
    for entry in entries:
        assert set(entry) == {"id", "pattern", "example", "when", "source"}, entry["id"]
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", entry["id"]), entry["id"]
        assert re.fullmatch(entry["pattern"], entry["example"]), entry["id"]
    ids = [e["id"] for e in catalogue("board.toml") + catalogue("rating.toml")]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("line", REAL_LINES + [*EXAMPLE_A.values(), *EXAMPLE_C.values()])
def test_every_board_line_matches_the_catalogue(line: str) -> None:
    board = next(e for e in catalogue("board.toml") if e["id"] == "board")
    assert re.fullmatch(board["pattern"], line)
