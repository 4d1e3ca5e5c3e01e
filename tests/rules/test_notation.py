"""Move text both ways: FIBS pairs in absolute numbers, and gnubg-style standard notation."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fibsd.rules.errors import InvalidPlayText
from fibsd.rules.movegen import check_play, legal_plays
from fibsd.rules.notation import (
    FIBS_BAR,
    FIBS_OFF,
    O_DIRECTION,
    X_DIRECTION,
    format_fibs_moves,
    format_standard,
    parse_fibs_pairs,
    parse_standard,
    to_absolute_numbering,
    to_mover_numbering,
)
from fibsd.rules.play import Move
from fibsd.rules.position import Position

from .boards import BAR, board, random_queries

# -- FIBS pairs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, pairs",
    [
        ("24-18 13-11", [(24, 18), (13, 11)]),
        ("13 7 8 7", [(13, 7), (8, 7)]),
        ("13-7 8 7", [(13, 7), (8, 7)]),
        ("bar-22", [(FIBS_BAR, 22)]),
        ("b-22 BAR-22 Bar 3", [(FIBS_BAR, 22), (FIBS_BAR, 22), (FIBS_BAR, 3)]),
        ("6-off 6-o 5-home 5-h 20-OFF", [(6, FIBS_OFF), (6, FIBS_OFF), (5, FIBS_OFF),
                                          (5, FIBS_OFF), (20, FIBS_OFF)]),
        ("  24-18\t13-11  ", [(24, 18), (13, 11)]),
        ("", []),
    ],
)
def test_parse_fibs_pairs(text: str, pairs: list[tuple[int, int]]) -> None:
    assert parse_fibs_pairs(text) == pairs


@pytest.mark.parametrize(
    "text, ordinal",
    [
        ("24-18 13-x", 2),
        ("bar-22 13", 2),
        ("13", 1),
        ("0-3", 1),
        ("25-22", 1),
        ("8-5 6-5 7-25", 3),
        ("6-bar", 1),
        ("off-6", 1),
        ("8-5 ６-5", 2),
        ("24/18 13/11", 1),
    ],
)
def test_parse_fibs_pairs_refuses(text: str, ordinal: int) -> None:
    with pytest.raises(InvalidPlayText) as caught:
        parse_fibs_pairs(text)
    assert (caught.value.text, caught.value.ordinal) == (text, ordinal)


def test_o_numbering_is_absolute() -> None:
    pairs = parse_fibs_pairs("bar-22 8-5 6-off")
    assert to_mover_numbering(pairs, O_DIRECTION) == [(25, 22), (8, 5), (6, 0)]


def test_x_numbering_is_mirrored() -> None:
    # X enters with a 3 on absolute 3 (its own 22) and bears off from 19-24.
    pairs = parse_fibs_pairs("bar-3 1-7 12-14 20-off")
    assert to_mover_numbering(pairs, X_DIRECTION) == [(25, 22), (24, 18), (13, 11), (5, 0)]


@pytest.mark.parametrize("direction", [O_DIRECTION, X_DIRECTION])
def test_numbering_round_trip(direction: int) -> None:
    mover = [(25, 22), (24, 18), (13, 11), (6, 0), (1, 0)]
    absolute = to_absolute_numbering(mover, direction)
    assert to_mover_numbering(absolute, direction) == mover
    assert all(point not in (0, 25) for pair in absolute for point in pair)


def test_format_fibs_moves() -> None:
    moves = [Move(25, 22), Move(8, 5), Move(8, 5), Move(6, 3)]
    assert format_fibs_moves(moves, O_DIRECTION) == "bar-22 8-5 8-5 6-3"
    assert format_fibs_moves(moves, X_DIRECTION) == "bar-3 17-20 17-20 19-22"
    assert format_fibs_moves([(6, 0), (5, 0)], X_DIRECTION) == "19-off 20-off"
    assert format_fibs_moves([], O_DIRECTION) == ""


def test_format_fibs_moves_keeps_the_order_given() -> None:
    # The live server showed X's 6-4 as "12-18 1-5": the six first, as typed.
    assert format_fibs_moves([Move(13, 7), Move(24, 20)], X_DIRECTION) == "12-18 1-5"


@pytest.mark.parametrize("direction", [O_DIRECTION, X_DIRECTION])
def test_fibs_text_round_trip(direction: int) -> None:
    moves = [Move(25, 21), Move(21, 15, hit=True), Move(6, 0)]
    text = format_fibs_moves(moves, direction)
    assert to_mover_numbering(parse_fibs_pairs(text), direction) == [(m.src, m.dst) for m in moves]


# -- standard notation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "moves, text",
    [
        ([Move(24, 18), Move(13, 11)], "24/18 13/11"),
        ([Move(13, 11), Move(24, 18)], "24/18 13/11"),
        ([Move(24, 18), Move(18, 13)], "24/13"),
        ([Move(24, 18, hit=True), Move(18, 13)], "24/18*/13"),
        ([Move(13, 9, hit=True)], "13/9*"),
        ([Move(13, 11), Move(13, 11)], "13/11(2)"),
        ([Move(24, 18)] * 2 + [Move(13, 7)] * 2, "24/18(2) 13/7(2)"),
        ([Move(6, 2, hit=True), Move(2, 1)], "6/2*/1"),
        ([Move(25, 22), Move(6, 0)], "bar/22 6/off"),
        ([Move(25, 21, hit=True), Move(25, 21)], "bar/21*(2)"),
        ([Move(8, 5), Move(8, 5), Move(5, 2)], "8/2 8/5"),
        ([Move(13, 9, hit=True), Move(10, 9)], "13/9* 10/9"),
        ([], ""),
    ],
)
def test_format_standard(moves: list[Move], text: str) -> None:
    assert format_standard(moves) == text


def test_format_standard_takes_a_play() -> None:
    play = check_play(Position.initial(), (3, 1), [(8, 5), (6, 5)])
    assert format_standard(play) == "8/5 6/5"


@pytest.mark.parametrize(
    "text, pairs",
    [
        ("24/18 13/11", [(24, 18), (13, 11)]),
        ("bar/22", [(25, 22)]),
        ("b/22 6/o", [(25, 22), (6, 0)]),
        ("6/off 6/OFF 6/O", [(6, 0), (6, 0), (6, 0)]),
        ("13/10(2)", [(13, 10), (13, 10)]),
        ("24/18*", [(24, 18)]),
        ("24/18/13", [(24, 18), (18, 13)]),
        ("6/2*/1 bar/20*(2)", [(6, 2), (2, 1), (25, 20), (25, 20)]),
        ("24/14", [(24, 14)]),
        ("", []),
    ],
)
def test_parse_standard(text: str, pairs: list[tuple[int, int]]) -> None:
    assert parse_standard(text) == pairs


@pytest.mark.parametrize(
    "text, ordinal",
    [
        ("24-18", 1),
        ("24/18 13", 2),
        ("24/18 13/", 2),
        ("/13", 1),
        ("13/10(5)", 1),
        ("13/10(2", 1),
        ("off/3", 1),
        ("6/bar", 1),
        ("25/20", 1),
        ("24/18 13/11 12/x", 3),
    ],
)
def test_parse_standard_refuses(text: str, ordinal: int) -> None:
    with pytest.raises(InvalidPlayText) as caught:
        parse_standard(text)
    assert caught.value.ordinal == ordinal


QUERIES = [query for query in random_queries(400, seed=7) if legal_plays(*query)]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(QUERIES), st.randoms(use_true_random=False))
def test_standard_round_trip_over_legal_plays(query: tuple[Position, tuple[int, int]],
                                              rng: random.Random) -> None:
    position, dice = query
    play = rng.choice(legal_plays(position, dice))
    text = format_standard(play)
    assert check_play(position, dice, parse_standard(text)).result == play.result
    assert format_standard(check_play(position, dice, parse_standard(text))) == text


def test_round_trip_with_a_hit_on_the_way() -> None:
    position = board({24: 1, 1: 14}, {18: 1, 10: 2})
    play = check_play(position, (6, 1), parse_standard("24/18*/17"))
    assert play.moves == (Move(24, 18, hit=True), Move(18, 17))
    assert check_play(position, (6, 1), parse_standard("24/17")).result != play.result


def test_bar_pairs_round_trip() -> None:
    position = board({BAR: 2, 13: 13}, {22: 2, 19: 2})
    for play in legal_plays(position, (4, 4)):
        assert check_play(position, (4, 4), parse_standard(format_standard(play))).result == play.result
