"""Game lines per audience, and the FIBS line for every rules error, checked against the
exact texts of fibs-protocol game-play.md and between-games.md."""

from __future__ import annotations

import pytest

from fibsd.rules.errors import (
    AlreadyRolled,
    AwaitingDoubleAnswer,
    AwaitingResignAnswer,
    CannotBearOff,
    CubeUnavailable,
    GameOver,
    InvalidPlayText,
    MovesBackwards,
    MustAnswerFirst,
    MustEnterFirst,
    MustRollFirst,
    NoCheckerThere,
    NotAWholePlay,
    NothingToAnswer,
    NotYourTurn,
    PointBlocked,
    RulesError,
    TooManyMoves,
    WrongDistance,
    WrongMoveCount,
)
from fibsd.wire import game_text as text


def test_lines_with_their_traps() -> None:
    assert text.opening_roll("You", 5, "bob", 3) == "You rolled 5, bob rolled 3"
    assert text.player_moves("pipcat", "bar-22 8-5 8-5 6-3") == "pipcat moves bar-22 8-5 8-5 6-3 ."
    assert text.only_possible_move("8-2 6-2") == "The only possible move is 8-2 6-2 ."
    assert text.bearing_off([6, 4]) == "Bearing off: 6 o 4 o"
    assert text.score_line(5, ("alice", 1), ("bob", 0)) == "score in 5 point match: alice-1 bob-0"
    assert text.score_line(0, ("alice", 3), ("bob", 2)) == "score in unlimited match: alice-3 bob-2"
    assert text.you_win_match(5, (5, 3)) == "You win the 5 point match 5-3 ."
    assert text.wins_match("GammonBot_VII", 5, (5, 0)) == "GammonBot_VII wins the 5 point match 5-0 ."
    assert text.report_result("BlunderBot_III", 1, "nena", (1, 0)) == \
        "BlunderBot_III wins a 1 point match against nena  1-0 ."
    assert text.cube_now(2) == "The number on the doubling cube is now 2"
    assert text.match_length_line(5) == "match length: 5"
    assert text.match_length_line(0) == "match length: unlimited"
    assert text.turn_line("alice") == "turn: alice."
    assert text.points_for("alice", 2) == "points for alice: 2"
    assert text.please_move(1) == "Please move 1 piece."
    assert text.please_move(4) == "Please move 4 pieces."


def test_double_resign_and_game_end_per_audience() -> None:
    assert text.you_double("bob") == "You double. Please wait for bob to accept or reject."
    assert text.doubles_to_you("alice") == "alice doubles. Type 'accept' or 'reject'."
    assert text.doubles("pipcat") == "pipcat doubles."
    assert text.you_accept_double(2) == "You accept the double. The cube shows 2."
    assert text.accepts_double_cube("bob", 2) == "bob accepts the double. The cube shows 2."
    assert text.accepts_double("GammonBot_VII") == "GammonBot_VII accepts the double."
    assert text.you_give_up("alice", 1) == "You give up. alice wins 1 point."
    assert text.gives_up_you_win("bob", 2) == "bob gives up. You win 2 points."
    assert text.gives_up("bob", "alice", 1) == "bob gives up. alice wins 1 point."
    assert text.you_resign("bob", 2) == "You want to resign. bob will win 2 points."
    assert text.resigns_to_you("alice", 2) == \
        "alice wants to resign. You will win 2 points. Type 'accept' or 'reject'."
    assert text.resigns("pipcat", "GammonBot_VII", 4) == \
        "pipcat wants to resign. GammonBot_VII will win 4 points."
    assert text.you_accept_and_win(2) == "You accept and win 2 points."
    assert text.accepts_and_wins("GammonBot_VII", 4) == "GammonBot_VII accepts and wins 4 points."
    assert text.rejects("bob") == "bob rejects. The game continues."
    assert text.you_win_game(1) == "You win the game and get 1 point. Congratulations!"
    assert text.wins_game("alice", 2, sorry=True) == "alice wins the game and gets 2 points. Sorry."
    assert text.wins_game("alice", 2, sorry=False) == "alice wins the game and gets 2 points."


def test_invitation_and_join_lines() -> None:
    assert text.you_invited("BlunderBot_XII", 1) == "** You invited BlunderBot_XII to a 1 point match."
    assert text.you_invited("bob", 0) == "** You invited bob to an unlimited match."
    assert text.you_invited("bob", None) == "** You invited bob to resume a saved match."
    assert text.invitation("BlunderBot_XII", None) == \
        "BlunderBot_XII wants to resume a saved match with you."
    assert text.invitation("alice", 0) == "alice wants to play an unlimited match with you."
    assert text.now_playing("alice", 5) == "** You are now playing a 5 point match with alice"
    assert text.has_joined("bob", 5) == "** Player bob has joined you for a 5 point match."
    assert text.has_joined("bob", 0) == "Player bob has joined you for an unlimited match."
    assert text.report_start("GammonBot_VII", "pipcat", 5) == \
        "GammonBot_VII and pipcat start a 5 point match."
    assert text.report_resume("GammonBot_XX", "HALIS", 13) == \
        "GammonBot_XX and HALIS are resuming their 13-point match."
    assert text.game_saved("bob drops connection.") == "bob drops connection. The game was saved."
    assert text.saved_match_warning(0) == \
        "WARNING: Don't accept if you want to continue the saved unlimited match!"


@pytest.mark.parametrize(("error", "line"), [
    (InvalidPlayText("x", 2), "** second move: legal words are 'bar', 'home', 'off', 'b', 'h' and 'o'."),
    (WrongMoveCount(2, 1), "** You must give 2 moves."),
    (TooManyMoves(2, 3), "** Please don't give more than 2 moves."),
    (MustEnterFirst(1), "** You have to remove pieces from the bar in your first move."),
    (MovesBackwards(3), "** You can't move home in your third move."),
    (WrongDistance(2, 3), "** You can't move 3 points in your second move."),
    (NoCheckerThere(1, 25), "** You can't move from the bar in your first move."),
    (NoCheckerThere(4, 7), "** You can't move from 7 in your fourth move."),
    (PointBlocked(2, 14), "** You can't move to 14 in your second move."),
    (CannotBearOff(1), "** You can't remove this piece in your first move."),
    (NotAWholePlay(), "** That's not a legal move."),
    (MustRollFirst(), "** You have to roll the dice before moving."),
    (NotYourTurn(), "** It's not your turn to move."),
    (AwaitingDoubleAnswer(), "** bob hasn't responded to your double yet."),
    (AwaitingResignAnswer(), "** Wait until bob accepted or rejected your resign."),
])
def test_move_errors(error: RulesError, line: str) -> None:
    assert text.move_error(error, "bob") == line


@pytest.mark.parametrize(("error", "line"), [
    (CubeUnavailable(CubeUnavailable.NOT_ON_ROLL), "** Please wait until bob has moved."),
    (CubeUnavailable(CubeUnavailable.AFTER_ROLL), "** You can only double before you roll the dice."),
    (CubeUnavailable(CubeUnavailable.OPPONENT_OWNS), "** It's not your turn to double."),
    (CubeUnavailable(CubeUnavailable.CRAWFORD),
     "** The Crawford rule doesn't allow you to double in this game."),
    (CubeUnavailable(CubeUnavailable.CUBE_DEAD), "** You can't double in a 1 point match."),
    (AwaitingResignAnswer(), "** You can't double now. You want to resign."),
    (MustAnswerFirst(MustAnswerFirst.DOUBLE), "** Type 'accept' or 'reject'."),
])
def test_double_errors(error: RulesError, line: str) -> None:
    assert text.double_error(error, "bob") == line


def test_other_command_errors() -> None:
    assert text.roll_error(AlreadyRolled(), "bob") == "** You did already roll the dice."
    assert text.roll_error(NotYourTurn(), "bob") == "** It's not your turn to roll the dice."
    assert text.roll_error(GameOver(), "bob") == "** It's not your turn to roll the dice."
    assert text.answer_error(NothingToAnswer(), "bob") == "** bob didn't double or resign."
    assert text.resign_error(AwaitingResignAnswer(), "bob") == "** You already did that."
    assert text.resign_error(GameOver(), "bob") == "** The game is already over."
    assert text.resign_error(MustAnswerFirst(MustAnswerFirst.DOUBLE), "bob") == \
        "** Type 'accept' or 'reject'."
    assert text.redouble_error(NothingToAnswer(), "bob", unlimited=False) == \
        "** Redoubles are only allowed in unlimited matches."


def test_points_in_errors_are_made_absolute() -> None:
    def x_player(point: int) -> int:
        return point if point == 25 else 25 - point

    assert text.move_error(PointBlocked(1, 11), "bob", x_player) == \
        "** You can't move to 14 in your first move."
    assert text.move_error(NoCheckerThere(2, 25), "bob", x_player) == \
        "** You can't move from the bar in your second move."
