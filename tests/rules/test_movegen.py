"""Legal plays, the forced-play rules, check_play's errors and the fibsd-movegen tool.

Expected plays are written in standard notation (gnubg's style, see notation.py) and,
where the text could hide something, as resulting boards.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys

import pytest

from fibsd.rules import movegen
from fibsd.rules.errors import (
    CannotBearOff,
    MovesBackwards,
    MustEnterFirst,
    NoCheckerThere,
    NotAWholePlay,
    PointBlocked,
    RulesError,
    TooManyMoves,
    WrongDistance,
    WrongMoveCount,
)
from fibsd.rules.movegen import check_play, dice_playable, legal_plays, survey
from fibsd.rules.notation import format_standard
from fibsd.rules.play import Move
from fibsd.rules.position import Position

from .boards import BAR, board, brute_force_results, random_queries, replay, results

INITIAL = Position.initial()
# The opponent's 24, 13, 8 and 6 points are the mover's 1, 12, 17 and 19.
AFTER_85_65 = board({24: 2, 13: 5, 8: 2, 6: 4, 5: 2}, {1: 2, 12: 5, 17: 3, 19: 5})


def notations(position: Position, dice: tuple[int, int]) -> set[str]:
    return {format_standard(play) for play in legal_plays(position, dice)}


# -- the opening --------------------------------------------------------------------------


def test_opening_31_has_16_distinct_results() -> None:
    # Checked by the brute-force referee too; listed here so a change is visible.
    assert notations(INITIAL, (3, 1)) == {
        "24/23 24/21", "24/20", "24/21 8/7", "24/21 6/5", "13/9", "13/10 8/7",
        "13/10 6/5", "8/7 8/5", "8/5 6/5", "8/4", "6/5 6/3", "6/2", "24/23 13/10",
        "24/23 8/5", "24/23 6/3", "8/7 6/3",
    }
    assert results(legal_plays(INITIAL, (3, 1))) == brute_force_results(INITIAL, (3, 1))


def test_opening_66_has_11_results() -> None:
    # 18 is open but 12 is blocked, 7 is open but 1 is blocked, 2 is open and bearing off
    # is not allowed: four sixes spread over 24/18 (at most 2), 13/7 (at most 5) and
    # 8/2 (at most 3): 15 ways to split 4 in three, minus 3 with three from 24, minus 1
    # with four from 8 = 11.
    assert len(legal_plays(INITIAL, (6, 6))) == 11
    assert "24/18(2) 13/7(2)" in notations(INITIAL, (6, 6))


def test_dice_order_does_not_matter() -> None:
    assert legal_plays(INITIAL, (1, 3)) == legal_plays(INITIAL, (3, 1))


@pytest.mark.parametrize("dice", [(0, 1), (7, 2), (3, -1)])
def test_bad_dice_are_refused(dice: tuple[int, int]) -> None:
    with pytest.raises(ValueError):
        legal_plays(INITIAL, dice)


# -- forced-play rules --------------------------------------------------------------------

# The mover's checker on 20 and 14 of them on the 1-point (which cannot bear off while
# 20 is out); the opponent holds 13, so 20-6-1 cannot be done by one checker.
LONE = {20: 1, 1: 14}


def test_both_dice_must_be_played() -> None:
    # 20/19 alone would leave the 6 unplayable; 20/14 3/2 uses both.
    position = board({20: 1, 3: 1, 1: 13}, {13: 2})
    assert notations(position, (6, 1)) == {"20/14 3/2"}
    assert dice_playable(position, (6, 1)) == 2


def test_larger_die_when_only_one_can_be_played() -> None:
    position = board(LONE, {13: 2})
    assert notations(position, (6, 1)) == {"20/14"}
    assert dice_playable(position, (6, 1)) == 1


def test_smaller_die_when_the_larger_cannot_be_played() -> None:
    position = board(LONE, {13: 2, 14: 2})
    assert notations(position, (6, 1)) == {"20/19"}
    assert dice_playable(position, (6, 1)) == 1


def test_neither_die_playable() -> None:
    position = board(LONE, {14: 2, 19: 2})
    assert legal_plays(position, (6, 1)) == ()
    assert dice_playable(position, (6, 1)) == 0


@pytest.mark.parametrize(
    "block, expected, count",
    [(None, {"20/12"}, 4), (12, {"20/14"}, 3), (14, {"20/16"}, 2), (16, {"20/18"}, 1), (18, set(), 0)],
)
def test_doubles_play_as_many_as_possible(block: int | None, expected: set[str], count: int) -> None:
    position = board(LONE, {block: 2} if block else {})
    assert notations(position, (2, 2)) == expected
    assert dice_playable(position, (2, 2)) == count


def test_larger_die_rule_compares_whole_sequences() -> None:
    # The 6 cannot be played first (14 blocked), but 20/19/13 plays both dice.
    position = board(LONE, {14: 2})
    assert notations(position, (6, 1)) == {"20/13"}
    (play,) = legal_plays(position, (6, 1))
    assert play.moves == (Move(20, 19), Move(19, 13))


def test_smaller_die_alone_may_bear_off_exactly() -> None:
    # The 2 cannot be played (4 blocked, 6 stops it bearing off), so the 1 is played:
    # 6/5 or 1/off.  A bear-off with the 1 is not a play of the larger die.
    position = board({6: 1, 1: 2}, {4: 2, 3: 2})
    assert notations(position, (2, 1)) == {"6/5", "1/off"}
    assert dice_playable(position, (2, 1)) == 1
    assert check_play(position, (2, 1), [(1, 0)]).result == board({6: 1, 1: 1}, {4: 2, 3: 2})


# -- the bar -----------------------------------------------------------------------------


def test_enter_then_continue() -> None:
    # Nothing but the bar checker can move (the 1-point cannot bear off): both entries
    # lead to 18, and only bar/24* hits on the way.
    position = board({BAR: 1, 1: 14}, {24: 1})
    plays = legal_plays(position, (6, 1))
    assert {format_standard(play) for play in plays} == {"bar/24*/18", "bar/18"}
    hitting = next(play for play in plays if any(move.hit for move in play.moves))
    assert hitting.moves == (Move(25, 24, hit=True), Move(24, 18))
    assert hitting.result.opponent[24] == 1


def test_partial_entry_forfeits_the_rest() -> None:
    # Two on the bar; 19 is blocked so only the 1 enters and the 6 is lost.
    position = board({BAR: 2, 6: 13}, {19: 2})
    assert notations(position, (6, 1)) == {"bar/24"}
    assert dice_playable(position, (6, 1)) == 1


def test_dance() -> None:
    position = board({BAR: 1, 6: 14}, {19: 2, 24: 2})
    assert legal_plays(position, (6, 1)) == ()


def test_bar_checker_enters_before_anything_moves() -> None:
    position = board({BAR: 1, 13: 14})
    for play in legal_plays(position, (5, 2)):
        assert play.moves[0].src == BAR


def test_two_on_the_bar_with_a_double() -> None:
    # Both enter on 21 (22 and 19 are blocked but a 4 enters on 21), then two more fours
    # from 21 or 13: 21/17 twice, 21/17/13, 21/17 with 13/9, 13/9 twice, 13/9/5.
    position = board({BAR: 2, 13: 13}, {22: 2, 19: 2})
    assert notations(position, (4, 4)) == {
        "bar/17(2)", "bar/13 bar/21", "bar/17 bar/21 13/9", "bar/21(2) 13/9(2)",
        "bar/21(2) 13/5",
    }


# -- bearing off --------------------------------------------------------------------------


def test_bear_off_exact() -> None:
    # 6/off 5/off, or 6/1 and then the 6 bears off 5, the highest checker left.
    position = board({6: 1, 5: 1})
    assert notations(position, (6, 5)) == {"6/off 5/off", "6/1 5/off"}
    assert results(legal_plays(position, (6, 5))) == {board({}), board({1: 1})}


def test_bear_off_from_the_highest_point_with_a_larger_die() -> None:
    position = board({3: 2})
    assert notations(position, (6, 5)) == {"3/off(2)"}


def test_larger_die_cannot_bear_off_below_an_occupied_point() -> None:
    # 5 cannot bear off from 2 while 6 is occupied; the plays are 6/1 2/off (the 4 bears
    # off from 2 once 6 is empty) and 6/2 2/off, which gnubg writes as 6/off.
    position = board({6: 1, 2: 1})
    plays = legal_plays(position, (5, 4))
    assert {format_standard(play) for play in plays} == {"6/1 2/off", "6/off"}
    assert {play.result for play in plays} == {board({1: 1}), board({2: 1})}


def test_no_bear_off_with_a_checker_outside() -> None:
    # 3/off is illegal until 8 comes home; then the 6 or the 5 bears 3 off.
    position = board({8: 1, 3: 1})
    plays = legal_plays(position, (6, 5))
    assert {play.result for play in plays} == {board({2: 1}), board({3: 1})}
    for play in plays:
        assert play.moves[0].src == 8


def test_bearing_off_is_never_compulsory() -> None:
    # 1-1: four steps for the 6 (6/2), or 1/off and three for the 6.
    position = board({6: 1, 1: 1})
    assert notations(position, (1, 1)) == {"6/2", "6/3 1/off"}


def test_smaller_die_first_then_bear_off() -> None:
    # The classic 6-1: 6/off alone uses one die; 6/5 5/off uses both and must be played.
    position = board({6: 1})
    (play,) = legal_plays(position, (6, 1))
    assert play.moves == (Move(6, 5), Move(5, 0))
    assert dice_playable(position, (6, 1)) == 2
    assert play.result.player_off == 15


def test_smaller_die_first_reaches_another_result() -> None:
    # 6/off 5/4 or 6/5 5/off: the second leaves a checker on 5 and needs the 1 first.
    position = board({6: 1, 5: 1})
    assert results(legal_plays(position, (6, 1))) == {board({4: 1}), board({5: 1})}


# -- hits ------------------------------------------------------------------------------


def test_hit_flags_and_the_opponent_bar() -> None:
    position = board({24: 1, 1: 14}, {18: 1, 10: 2})
    plays = {format_standard(play): play for play in legal_plays(position, (6, 1))}
    assert set(plays) == {"24/18*/17", "24/17"}
    assert plays["24/18*/17"].moves == (Move(24, 18, hit=True), Move(18, 17))
    assert plays["24/18*/17"].result.opponent[24] == 1
    assert plays["24/18*/17"].result.opponent[24 - 18] == 0
    assert plays["24/17"].result.opponent == position.opponent


def test_a_blot_is_hit_once() -> None:
    # 13/9* and 10/9: whichever lands first hits; the second lands on its own checker.
    position = board({13: 1, 10: 1, 1: 13}, {9: 1})
    play = next(p for p in legal_plays(position, (4, 1)) if p.result.player[8] == 2)
    assert sum(move.hit for move in play.moves) == 1
    assert play.result.opponent[24] == 1


# -- against the brute-force referee ------------------------------------------------------

QUERIES = random_queries(600, seed=20261121)


def test_query_mix_covers_every_case() -> None:
    assert any(dice[0] == dice[1] for _, dice in QUERIES)
    assert any(position.player[24] for position, _ in QUERIES)
    assert any(not any(position.player[6:]) for position, _ in QUERIES)
    assert any(not legal_plays(position, dice) for position, dice in QUERIES)


@pytest.mark.parametrize("index", range(0, 600, 50))
def test_same_results_as_brute_force(index: int) -> None:
    for position, dice in QUERIES[index : index + 50]:
        plays = legal_plays(position, dice)
        assert results(plays) == brute_force_results(position, dice), (position, dice)
        assert len(plays) == len(results(plays))
        for play in plays:
            assert replay(position, play.moves) == play.result
            assert len(play.moves) == dice_playable(position, dice)


def cramped(rng: random.Random) -> Position:
    """Few checkers near home against blots and points: where the forced-play rules bite."""
    mine: dict[int, int] = {}
    for _ in range(rng.randint(1, 5)):
        point = rng.choice((1, 2, 3, 4, 5, 6, 6, 7, 8, 9, BAR))
        mine[point] = mine.get(point, 0) + 1
    theirs: dict[int, int] = {}
    for _ in range(rng.randint(0, 4)):
        point = rng.randint(1, 12)
        if point not in mine:
            theirs[point] = rng.choice((1, 2, 2))
    return board(mine, theirs)


@pytest.mark.parametrize("seed", range(4))
def test_cramped_positions_match_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(1000):
        position, dice = cramped(rng), (rng.randint(1, 6), rng.randint(1, 6))
        plays = legal_plays(position, dice)
        assert results(plays) == brute_force_results(position, dice), (position, dice)
        for play in plays:
            assert replay(position, play.moves) == play.result


def test_order_is_deterministic() -> None:
    position, dice = QUERIES[123]
    assert legal_plays(position, dice) == legal_plays(position, dice)


def test_every_legal_play_checks() -> None:
    for position, dice in QUERIES[:100]:
        for play in legal_plays(position, dice):
            pairs = [(move.src, move.dst) for move in play.moves]
            assert check_play(position, dice, pairs) == play


def test_every_legal_play_uses_the_dice_the_survey_counts() -> None:
    """Every legal play moves as many checkers as the survey says a roll's play uses
    (the game takes its "playable" count from the survey, not from the plays)."""
    for position, dice in QUERIES:
        plays, used = legal_plays(position, dice), survey(position, dice).usable
        assert [len(play.moves) for play in plays] == [len(used)] * len(plays), (position, dice)
        assert max((len(play.moves) for play in plays), default=0) == len(used)


# -- check_play ----------------------------------------------------------------------------


def test_check_play_accepts_either_order() -> None:
    play = check_play(INITIAL, (3, 1), [(6, 5), (8, 5)])
    assert play.moves == (Move(6, 5), Move(8, 5))
    assert play.result == AFTER_85_65


def test_check_play_accepts_one_pair_for_two_dice() -> None:
    # 13-11 11-8 equals 13-8 with 3-2 when both steps are open.
    play = check_play(INITIAL, (3, 2), [(13, 8)])
    assert play.moves == (Move(13, 10), Move(10, 8))
    assert play.result == check_play(INITIAL, (3, 2), [(13, 11), (11, 8)]).result


def test_check_play_picks_the_die_that_makes_the_play_legal() -> None:
    # 3/off could be the 6 or the 4; 2/off then needs the other one.
    position = board({3: 1, 2: 1})
    play = check_play(position, (6, 4), [(3, 0), (2, 0)])
    assert play.result.player_off == 15


def test_check_play_keeps_the_typed_hits() -> None:
    position = board({24: 1, 1: 14}, {18: 1, 10: 2})
    play = check_play(position, (6, 1), [(24, 18), (18, 17)])
    assert play.moves == (Move(24, 18, hit=True), Move(18, 17))
    assert play.result.opponent[24] == 1


def test_check_play_partial_entry() -> None:
    position = board({BAR: 2, 6: 13}, {19: 2})
    assert check_play(position, (6, 1), [(BAR, 24)]).moves == (Move(25, 24),)
    with pytest.raises(TooManyMoves) as caught:
        check_play(position, (6, 1), [(BAR, 24), (BAR, 19)])
    assert (caught.value.allowed, caught.value.given) == (1, 2)


def test_check_play_when_nothing_can_move() -> None:
    position = board(LONE, {14: 2, 19: 2})
    assert check_play(position, (6, 1), []) == movegen.Play((), position)
    with pytest.raises(TooManyMoves):
        check_play(position, (6, 1), [(20, 14)])


def raises(error: type[Exception], position: Position, dice: tuple[int, int],
           pairs: list[tuple[int, int]]) -> Exception:
    with pytest.raises(error) as caught:
        check_play(position, dice, pairs)
    assert type(caught.value) is error
    return caught.value


def test_too_many_moves() -> None:
    error = raises(TooManyMoves, INITIAL, (3, 1), [(8, 5), (6, 5), (24, 23)])
    assert (error.allowed, error.given) == (2, 3)


def test_wrong_move_count_comes_before_everything_else() -> None:
    error = raises(WrongMoveCount, INITIAL, (3, 1), [(8, 5)])
    assert (error.required, error.given) == (2, 1)
    raises(WrongMoveCount, INITIAL, (3, 1), [(5, 8)])
    raises(WrongMoveCount, INITIAL, (6, 6), [(24, 18), (13, 7), (8, 2)])
    raises(WrongMoveCount, INITIAL, (3, 1), [])


def test_a_pair_that_may_span_dice_passes_the_count() -> None:
    # 24-16 could be two fours, so 4-4 typed as two such pairs is counted as four dice.
    assert len(check_play(INITIAL, (4, 4), [(24, 16), (24, 16)]).moves) == 4


def test_moves_backwards() -> None:
    error = raises(MovesBackwards, INITIAL, (3, 1), [(8, 5), (5, 6)])
    assert error.ordinal == 2
    assert raises(MovesBackwards, INITIAL, (3, 1), [(7, 9), (12, 10)]).ordinal == 1


def test_must_enter_first() -> None:
    position = board({BAR: 1, 13: 14})
    assert raises(MustEnterFirst, position, (5, 2), [(13, 8), (13, 11)]).ordinal == 1
    position = board({BAR: 2, 13: 13})
    assert raises(MustEnterFirst, position, (5, 2), [(BAR, 20), (13, 11)]).ordinal == 2


def test_typed_order_does_not_matter_for_a_legal_result() -> None:
    # FIBS would want the bar first; the result is legal, so the play is accepted, and
    # its moves come back in an order that can be played.
    position = board({BAR: 1, 13: 14})
    play = check_play(position, (5, 2), [(13, 8), (BAR, 23)])
    assert play.moves == (Move(25, 23), Move(13, 8))
    # With 4-4, 6/off (6/2, 2/off) waits for 3/off, which waits for 6/2: gnubg writes
    # this play "6/off 3/off", and it can only be played interleaved.
    position = board({6: 1, 3: 1})
    play = check_play(position, (4, 4), [(6, 0), (3, 0)])
    assert play.moves == (Move(6, 2), Move(3, 0), Move(2, 0))
    assert format_standard(play) == "6/off 3/off"


def test_backwards_is_reported_before_bar_first() -> None:
    position = board({BAR: 1, 13: 14})
    assert raises(MovesBackwards, position, (5, 2), [(13, 8), (8, 10)]).ordinal == 2


def test_no_checker_there() -> None:
    error = raises(NoCheckerThere, INITIAL, (3, 1), [(8, 5), (12, 11)])
    assert (error.ordinal, error.point) == (2, 12)
    # The empty source is reported before the wrong distance of the same pair.
    assert raises(NoCheckerThere, INITIAL, (3, 1), [(12, 10), (8, 7)]).ordinal == 1
    position = board({13: 15})
    assert raises(NoCheckerThere, position, (3, 1), [(BAR, 22), (13, 12)]).point == 25


def test_wrong_distance() -> None:
    error = raises(WrongDistance, INITIAL, (3, 1), [(8, 6), (6, 5)])
    assert (error.ordinal, error.distance) == (1, 2)
    # The second pair finds its die used by the first.
    assert raises(WrongDistance, INITIAL, (3, 1), [(8, 5), (6, 3)]).ordinal == 2


def test_smaller_die_when_the_larger_is_compulsory_is_a_wrong_distance() -> None:
    position = board(LONE, {13: 2})
    error = raises(WrongDistance, position, (6, 1), [(20, 19)])
    assert (error.ordinal, error.distance) == (1, 1)


def test_point_blocked() -> None:
    error = raises(PointBlocked, INITIAL, (5, 1), [(24, 23), (6, 1)])
    assert (error.ordinal, error.point) == (2, 1)
    # A pair spanning two dice is blocked when every way through is; the first way
    # tried is the larger die first.
    position = board({20: 1, 8: 1, 1: 13}, {14: 2, 19: 2})
    assert raises(PointBlocked, position, (6, 1), [(20, 13)]).point == 14


def test_cannot_bear_off() -> None:
    assert raises(CannotBearOff, INITIAL, (6, 5), [(6, 0), (13, 8)]).ordinal == 1
    # A larger die may not bear off below an occupied point.
    position = board({6: 2, 2: 1})
    assert raises(CannotBearOff, position, (5, 4), [(2, 0), (6, 2)]).ordinal == 1


def test_not_a_whole_play() -> None:
    # 6-off could have used both dice (6/1/off), so the count passes; alone it uses one.
    position = board({6: 1, 5: 1})
    raises(NotAWholePlay, position, (6, 5), [(6, 0)])


def test_pairs_spanning_dice_from_the_bar() -> None:
    # bar-13 can be two sixes and 13-1 two more; bar-13 13-7 can be three at most.
    position = board({BAR: 1, 13: 14})
    play = check_play(position, (6, 6), [(BAR, 13), (13, 1)])
    assert play.moves == (Move(25, 19), Move(19, 13), Move(13, 7), Move(7, 1))
    raises(WrongMoveCount, position, (6, 6), [(BAR, 13), (13, 7)])


def test_pairs_must_be_points() -> None:
    with pytest.raises(ValueError):
        check_play(INITIAL, (3, 1), [(26, 23), (6, 5)])


# -- the tool -------------------------------------------------------------------------------


def run_tool(text: str) -> list[dict[str, object]]:
    out = io.StringIO()
    movegen.run(io.StringIO(text), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_tool_answers_each_query() -> None:
    (answer,) = run_tool("4HPwATDgc/ABMA 3 1\n")
    assert answer["position"] == "4HPwATDgc/ABMA"
    assert answer["dice"] == [3, 1]
    plays = answer["plays"]
    assert isinstance(plays, list) and len(plays) == 16
    assert {"move": "8/5 6/5", "result": AFTER_85_65.position_id()} in plays


def test_tool_results_are_from_the_movers_view() -> None:
    (answer,) = run_tool("4HPwATDgc/ABMA 6 6\n")
    results_seen = {play["result"] for play in answer["plays"]}  # type: ignore[union-attr]
    assert results_seen == {play.result.position_id() for play in legal_plays(INITIAL, (6, 6))}


def test_tool_reports_bad_lines_and_goes_on() -> None:
    answers = run_tool(
        "\n4HPwATDgc/ABMA 3\nnot-an-id!!!!! 3 1\n4HPwATDgc/ABMA 7 1\n  \n4HPwATDgc/ABMA 2 1\n"
    )
    assert [sorted(answer) for answer in answers] == [
        ["error"], ["error"], ["error"], ["dice", "plays", "position"],
    ]


def test_tool_dance_gives_no_plays() -> None:
    position = board({BAR: 1, 6: 14}, {19: 2, 24: 2})
    (answer,) = run_tool(f"{position.position_id()} 6 1\n")
    assert answer["plays"] == []


def test_main_reads_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.StringIO("4HPwATDgc/ABMA 1 1\n"))
    monkeypatch.setattr(sys, "stdout", out)
    movegen.main()
    assert len(json.loads(out.getvalue())["plays"]) == len(legal_plays(INITIAL, (1, 1)))


def test_module_runs_as_a_co_process() -> None:
    tool = subprocess.Popen(
        [sys.executable, "-m", "fibsd.rules.movegen"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert tool.stdin is not None and tool.stdout is not None
    tool.stdin.write("4HPwATDgc/ABMA 6 5\n")
    tool.stdin.flush()
    first = json.loads(tool.stdout.readline())  # answered before stdin closes
    tool.stdin.close()
    assert tool.wait(timeout=30) == 0
    assert first["dice"] == [6, 5]


def test_a_kept_survey_checks_plays_and_errors_as_a_fresh_one() -> None:
    """``check_play`` with the roll's surveyed dice (as a game keeps them between the roll
    and the move) finds the same plays and raises the same errors as searching again; the
    survey's plays are every legal play or, when it stopped early, the first two."""
    rng = random.Random(26)
    for _ in range(300):
        position = Position.initial()
        for _ in range(rng.randrange(12)):
            plays = legal_plays(position, (rng.randint(1, 6), rng.randint(1, 6)))
            if plays:
                position = rng.choice(plays).result.swap()
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        kept = movegen.survey(position, dice)
        every = legal_plays(position, dice)
        if kept.complete:
            assert kept.plays == every and len(every) < 2
        else:
            assert len(kept.plays) == 2 and set(kept.plays) <= set(every)
        assert len(kept.usable) == dice_playable(position, dice)
        tries = [[(m.src, m.dst) for m in play.moves] for play in every]
        tries += [[(24, 24 - dice[0])], [(25, 0)], []]
        for pairs in tries:
            try:
                fresh: object = check_play(position, dice, pairs)
            except (RulesError, ValueError) as error:
                fresh = repr(error)
            try:
                again: object = check_play(position, dice, pairs, kept.usable)
            except (RulesError, ValueError) as error:
                again = repr(error)
            assert again == fresh
