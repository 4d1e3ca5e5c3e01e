"""The bot's heuristic: it beats a random mover clearly, and its cube and resignation rules."""

from __future__ import annotations

import sys
from pathlib import Path

from fibsd.client.strategy import (
    CubeState, accept_resignation, choose_play, evaluate, expected_kind, has_contact, keith_count,
    should_double, should_take,
)
from fibsd.rules.movegen import legal_plays
from fibsd.rules.position import Position

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from strategy_vs_random import match_up, wilson  # noqa: E402


def side(points: dict[int, int], bar: int = 0) -> tuple[int, ...]:
    counts = [0] * 25
    for point, count in points.items():
        counts[point - 1] = count
    counts[24] = bar
    return tuple(counts)


RACE = Position(side({6: 5, 5: 4, 4: 3, 3: 2, 2: 1}), side({6: 5, 5: 4, 4: 3, 3: 2, 2: 1}))
MONEY = CubeState(cube=1, length=None, my_score=0, opponent_score=0)


def test_the_heuristic_beats_a_random_mover_clearly() -> None:
    wins = match_up(40, seed=7)
    assert wins >= 36
    assert wilson(wins, 40)[0] > 0.75


def test_opening_three_one_makes_the_five_point() -> None:
    play = choose_play(legal_plays(Position.initial(), (3, 1)))
    assert play is not None
    assert play.result.player == side({24: 2, 13: 5, 8: 2, 6: 4, 5: 2})


def test_a_hit_is_preferred_to_a_quiet_move() -> None:
    # our checkers on 13 and 6; his blot on our 10 (his 15)
    position = Position(side({13: 5, 6: 10}), side({15: 1, 6: 14}))
    play = choose_play(legal_plays(position, (3, 2)))
    assert play is not None and any(move.hit for move in play.moves)


def test_no_play_is_none() -> None:
    assert choose_play(()) is None


def test_contact_and_race() -> None:
    assert has_contact(Position.initial())
    assert not has_contact(RACE)
    bar = Position(side({6: 15}), side({6: 14}, bar=1))
    assert has_contact(bar)


def test_a_finished_side_scores_highest() -> None:
    assert evaluate(Position(side({}), side({6: 15}))) > evaluate(Position(side({1: 1}), side({6: 15})))


def test_keith_count() -> None:
    # 5x6 4x5 3x4 2x3 1x2 = 72 pips; no gaps, no waste on 1, 2 or 3
    assert keith_count(RACE.player) == 30 + 20 + 12 + 6 + 2
    # 3 on the 1 point (+6), 3 on the 2 point (+2), 4 empty... 4, 5 and 6 empty (+3)
    assert keith_count(side({1: 3, 2: 3})) == 3 + 6 + 6 + 2 + 3


def test_race_doubles_and_takes_by_the_keith_count() -> None:
    ahead = Position(side({6: 3, 5: 3, 4: 3, 3: 3, 2: 3}), side({6: 8, 5: 4, 4: 3}))
    assert should_double(ahead, MONEY)
    assert not should_double(RACE, MONEY)  # even race: 82.3 vs 72
    # as taker of the mirror: the doubler (him) counts 60*8/7 = 68.6 against our 88
    assert not should_take(ahead.swap(), MONEY)
    assert should_take(RACE, MONEY)


def test_match_score_overrides() -> None:
    behind = CubeState(cube=1, length=5, my_score=0, opponent_score=4)
    assert should_double(Position.initial(), behind)  # free double after Crawford
    dead = CubeState(cube=2, length=5, my_score=3, opponent_score=0)
    ahead = Position(side({6: 3, 5: 3, 4: 3, 3: 3, 2: 3}), side({6: 8, 5: 4, 4: 3}))
    assert not should_double(ahead, dead)
    must = CubeState(cube=2, length=5, my_score=0, opponent_score=3)
    assert should_take(ahead.swap(), must)


def test_contact_cube() -> None:
    blitz = Position(side({6: 3, 5: 3, 4: 3, 3: 3, 2: 2, 13: 1}), side({24: 2, 6: 10}, bar=3))
    assert should_double(blitz, MONEY)
    assert not should_double(Position.initial(), MONEY)
    assert should_take(Position.initial(), MONEY)
    assert not should_take(blitz.swap(), MONEY)


def test_resignations() -> None:
    # he has borne off: a single game is all we can win
    assert expected_kind(Position(side({1: 1}), side({6: 5}))) == 1
    assert accept_resignation(Position(side({1: 1}), side({6: 5})), 1, MONEY)
    # he has all 15 on his 13 point and we bear off from 10 pips: a gammon
    gammon = Position(side({1: 4, 2: 3}), side({13: 15}))
    assert expected_kind(gammon) == 2
    assert not accept_resignation(gammon, 1, MONEY)
    assert accept_resignation(gammon, 2, MONEY)
    # he has checkers in our home board: a backgammon
    backgammon = Position(side({1: 2, 2: 1}), side({22: 2, 13: 13}))
    assert expected_kind(backgammon) == 3
    assert not accept_resignation(backgammon, 2, MONEY)
    assert accept_resignation(backgammon, 6, CubeState(2, None, 0, 0))
    # a single point that wins the match is always enough
    assert accept_resignation(backgammon, 1, CubeState(1, 3, 2, 0))
