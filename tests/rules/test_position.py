"""Position: the gnubg Position ID both ways, swap, pips, and what is refused."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fibsd.rules.position import CHECKERS, InvalidPositionId, Position

INITIAL_ID = "4HPwATDgc/ABMA"


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Any legal board: 0..15 checkers a side on 25 slots, never both sides on a point."""
    player = [0] * 25
    for slot in draw(st.lists(st.integers(0, 24), max_size=CHECKERS)):
        player[slot] += 1
    # The opponent's slot i is the player's point 24 - i (index 23 - i); the bar is free.
    free = [i for i in range(25) if i == 24 or not player[23 - i]]
    opponent = [0] * 25
    for slot in draw(st.lists(st.sampled_from(free), max_size=CHECKERS)):
        opponent[slot] += 1
    return Position(tuple(player), tuple(opponent))


def id_from_bits(bits: str) -> str:
    """Hand-encode a key written as bits, first bit first (gnubg's order)."""
    value = int(bits[::-1], 2) if bits else 0
    return base64.b64encode(value.to_bytes(10, "little")).decode()[:14]


def test_initial_position_id() -> None:
    assert Position.initial().position_id() == INITIAL_ID
    assert Position.from_position_id(INITIAL_ID) == Position.initial()


def test_hand_encoded_id() -> None:
    # Opponent: one checker on its point 1; player: one on its point 1; the rest off.
    bits = "10" + "0" * 24 + "10" + "0" * 24
    text = id_from_bits(bits)
    assert text == "AQAABAAAAAAAAA"
    position = Position.from_position_id(text)
    assert position.player == (1,) + (0,) * 24
    assert position.opponent == (1,) + (0,) * 24
    assert (position.player_off, position.opponent_off) == (14, 14)


def test_bar_is_the_last_slot() -> None:
    # Player: 2 on the bar only; opponent: nothing on the board.
    bits = "0" * 25 + "0" * 24 + "110"
    position = Position.from_position_id(id_from_bits(bits))
    assert position.player[24] == 2
    assert position.pips() == (50, 0)


@given(positions())
def test_position_id_round_trip(position: Position) -> None:
    text = position.position_id()
    assert len(text) == 14
    assert Position.from_position_id(text) == position


@given(positions())
def test_swap_is_an_involution_that_exchanges_sides(position: Position) -> None:
    swapped = position.swap()
    assert swapped.player == position.opponent
    assert swapped.opponent == position.player
    assert swapped.swap() == position
    assert swapped.pips() == position.pips()[::-1]
    assert (swapped.player_off, swapped.opponent_off) == (position.opponent_off, position.player_off)


def test_initial_pips_and_off() -> None:
    initial = Position.initial()
    assert initial.pips() == (167, 167)
    assert (initial.player_off, initial.opponent_off) == (0, 0)
    assert initial.swap() == initial


def test_repr_evaluates_back() -> None:
    assert repr(Position.initial()) == f"Position.from_position_id({INITIAL_ID!r})"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("4HPwATDgc/ABM", "a Position ID has 14 characters"),
        ("4HPwATDgc/ABMAA", "a Position ID has 14 characters"),
        ("4HPwATDgc/AB!A", "not base64"),
        ("//////////////", "runs past the end of the key"),
    ],
)
def test_malformed_ids(text: str, reason: str) -> None:
    with pytest.raises(InvalidPositionId) as caught:
        Position.from_position_id(text)
    assert caught.value.text == text
    assert caught.value.reason == reason


def test_id_with_sixteen_checkers_is_refused() -> None:
    bits = "1" * 16 + "0" + "0" * 24 + "0" * 25
    with pytest.raises(InvalidPositionId):
        Position.from_position_id(id_from_bits(bits))


def test_id_with_both_sides_on_one_point_is_refused() -> None:
    # Opponent on its 24-point (slot 23) is the player's 1-point, where the player also is.
    bits = "0" * 23 + "10" + "0" + "10" + "0" * 24
    with pytest.raises(InvalidPositionId):
        Position.from_position_id(id_from_bits(bits))


def test_constructor_refuses_bad_sides() -> None:
    with pytest.raises(ValueError):
        Position((0,) * 24, (0,) * 25)
    with pytest.raises(ValueError):
        Position((16,) + (0,) * 24, (0,) * 25)
