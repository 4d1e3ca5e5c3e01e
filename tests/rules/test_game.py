"""One game: phases, every action and every refusal, cube handling, and every way it ends."""

from collections.abc import Mapping

import pytest

from fibsd.rules.dice import ScriptedDice
from fibsd.rules.errors import (
    AlreadyRolled,
    AwaitingDoubleAnswer,
    AwaitingResignAnswer,
    CubeUnavailable,
    GameOver,
    GameStateError,
    IllegalPlay,
    InvalidResignation,
    MustAnswerFirst,
    MustRollFirst,
    NothingToAnswer,
    NotYourTurn,
)
from fibsd.rules.events import (
    CannotMove,
    CubeAutoDoubled,
    DoubleAccepted,
    Doubled,
    DoubleRejected,
    EndReason,
    GameWon,
    Moved,
    OpeningRoll,
    Redoubled,
    ResignAccepted,
    ResignOffered,
    ResignRejected,
    Rolled,
    WinKind,
)
from fibsd.rules.game import DoubleOffer, Game, Phase, Resignation
from fibsd.rules.movegen import legal_plays
from fibsd.rules.play import Move
from fibsd.rules.position import Position


def side(points: Mapping[int, int]) -> tuple[int, ...]:
    """A side's 25 counts from {point: checkers}; point 25 is the bar."""
    counts = [0] * 25
    for point, n in points.items():
        counts[point - 1] = n
    return tuple(counts)


def started(*openings: tuple[int, int], **rules: object) -> Game:
    game = Game(**rules)  # type: ignore[arg-type]
    game.start(ScriptedDice(openings or [(3, 1)]))
    return game


def roll(game: Game, player: int, dice: tuple[int, int]) -> tuple[object, ...]:
    return game.roll(player, ScriptedDice([dice]))


AFTER_31 = Position(  # player 0 played 8/5 6/5 from the start
    side({24: 2, 13: 5, 8: 2, 6: 4, 5: 2}), Position.initial().opponent
)
# Player 0 on the bar against a closed board: every roll dances.
DANCE = Position(side({25: 1, 6: 14}), side({1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3}))
# Player 0 bears off his last checker with any roll; the opponent's sides decide the kind.
LAST_CHECKER = side({1: 1})
LOSER_SIDES = {
    WinKind.SINGLE: side({7: 14}),
    WinKind.GAMMON: side({7: 15}),
    WinKind.BACKGAMMON: side({7: 14, 20: 1}),  # his 20 is the winner's 5
}


# -- the opening roll ---------------------------------------------------------------


def test_opening_roll_winner_plays_both_dice() -> None:
    game = Game()
    assert (game.phase, game.turn, game.to_act, game.dice) == (Phase.OPENING, None, None, None)
    events = game.start(ScriptedDice([(2, 5)]))
    assert events == (OpeningRoll((2, 5)),)
    assert events[0].winner == 1 and not events[0].tie
    assert (game.phase, game.turn, game.to_act, game.dice) == (Phase.MOVE, 1, 1, (2, 5))
    assert game.playable(1) == 2 and game.playable(0) == 0
    assert game.only_play() is None
    # The roll's survey stopped at two plays; asking for them searches the rest.
    assert game.legal_plays() == legal_plays(Position.initial(), (5, 2))
    assert len(game.legal_plays()) == 8
    assert game.position == Position.initial()


def test_opening_ties_are_rolled_again() -> None:
    game = Game()
    events = game.start(ScriptedDice([(4, 4), (6, 6), (6, 1)]))
    assert events == (OpeningRoll((4, 4)), OpeningRoll((6, 6)), OpeningRoll((6, 1)))
    assert [e.winner for e in events] == [None, None, 0]
    assert events[0].tie
    assert (game.turn, game.dice, game.cube) == (0, (6, 1), 1)


def test_autodouble_doubles_the_cube_on_each_opening_tie() -> None:
    game = Game(autodouble=True)
    events = game.start(ScriptedDice([(4, 4), (2, 2), (1, 3)]))
    assert events == (
        OpeningRoll((4, 4)),
        CubeAutoDoubled(2),
        OpeningRoll((2, 2)),
        CubeAutoDoubled(4),
        OpeningRoll((1, 3)),
    )
    assert (game.cube, game.owner) == (4, None)


def test_start_only_once_and_nothing_before_it() -> None:
    game = Game()
    for action in (
        lambda: game.roll(0, ScriptedDice([(1, 2)])),
        lambda: game.move(0, [(8, 5)]),
        lambda: game.double(0),
        lambda: game.resign(0, WinKind.SINGLE),
    ):
        with pytest.raises(GameStateError):
            action()
    with pytest.raises(NothingToAnswer):
        game.accept(1)
    game.start(ScriptedDice([(3, 1)]))
    with pytest.raises(GameStateError):
        game.start(ScriptedDice([(3, 1)]))


# -- rolling and moving --------------------------------------------------------------


def test_a_move_passes_the_turn() -> None:
    game = started((3, 1))
    events = game.move(0, [(8, 5), (6, 5)])
    assert len(events) == 1 and isinstance(events[0], Moved)
    moved = events[0]
    assert (moved.player, moved.automatic) == (0, False)
    assert moved.play.moves == (Move(8, 5), Move(6, 5))
    assert moved.play.result == AFTER_31
    assert game.position == AFTER_31
    assert game.position_for(1) == AFTER_31.swap()
    assert (game.phase, game.turn, game.dice, game.legal_plays()) == (Phase.ROLL, 1, None, ())


def test_roll_then_move_by_the_other_player() -> None:
    game = started((3, 1))
    game.move(0, [(8, 5), (6, 5)])
    assert roll(game, 1, (6, 4)) == (Rolled(1, (6, 4), 2),)
    assert (game.phase, game.dice, game.playable(1)) == (Phase.MOVE, (6, 4), 2)
    game.move(1, [(24, 18), (18, 14)])
    assert game.position_for(1).player[13] == 1  # his 14 point
    assert game.position.opponent == game.position_for(1).player
    assert game.turn == 0


def test_turn_errors() -> None:
    game = started((3, 1))
    with pytest.raises(NotYourTurn):
        roll(game, 1, (1, 2))
    with pytest.raises(NotYourTurn):
        game.move(1, [(24, 23)])
    with pytest.raises(AlreadyRolled):
        roll(game, 0, (1, 2))
    game.move(0, [(8, 5), (6, 5)])
    with pytest.raises(MustRollFirst):
        game.move(1, [(24, 21), (24, 23)])
    with pytest.raises(NotYourTurn):
        game.move(0, [(13, 10), (13, 12)])
    with pytest.raises(ValueError):
        roll(game, 2, (1, 2))


def test_an_illegal_play_changes_nothing() -> None:
    game = started((3, 1))
    with pytest.raises(IllegalPlay):
        game.move(0, [(8, 5)])
    with pytest.raises(IllegalPlay):
        game.move(0, [(8, 4), (6, 5)])
    assert (game.phase, game.turn, game.dice, game.position) == (
        Phase.MOVE,
        0,
        (3, 1),
        Position.initial(),
    )
    assert game.history == (OpeningRoll((3, 1)),)


def test_a_roll_without_legal_play_passes_the_turn() -> None:
    game = Game.at_position(DANCE, 0)
    assert roll(game, 0, (6, 5)) == (Rolled(0, (6, 5), 0), CannotMove(0, (6, 5)))
    assert (game.phase, game.turn, game.dice, game.playable(0)) == (Phase.ROLL, 1, None, 0)
    assert game.position == DANCE


def test_auto_move_plays_the_only_play() -> None:
    closed_but_3 = side({1: 2, 2: 2, 4: 2, 5: 2, 6: 2, 13: 5})
    game = Game.at_position(Position(side({25: 1, 1: 14}), closed_but_3), 0)
    roll(game, 0, (3, 3))  # bar/22, and nothing else can move
    assert game.playable(0) == 1
    (only,) = game.legal_plays()
    assert only.moves == (Move(25, 22),)
    assert game.only_play() == only
    events = game.auto_move(0, only)
    assert events == (Moved(0, events[0].play, automatic=True),)
    assert events[0].play.result == only.result
    assert game.turn == 1


# -- the cube ---------------------------------------------------------------------------


def test_double_take_and_redouble() -> None:
    game = started((3, 1))
    game.move(0, [(8, 5), (6, 5)])
    assert game.can_double(1) and not game.can_double(0)
    assert game.double(1) == (Doubled(1, 2),)
    assert game.phase is Phase.DOUBLE_OFFERED
    assert (game.turn, game.to_act, game.cube) == (1, 0, 1)
    assert game.pending_double == DoubleOffer(1, 2, 0)
    assert game.was_doubled(0) and not game.was_doubled(1)
    assert game.accept(0) == (DoubleAccepted(0, 2),)
    assert (game.phase, game.turn, game.cube, game.owner) == (Phase.ROLL, 1, 2, 0)
    assert game.pending_double is None and not game.was_doubled(0)
    with pytest.raises(CubeUnavailable) as caught:
        game.double(1)
    assert caught.value.reason == CubeUnavailable.OPPONENT_OWNS
    roll(game, 1, (6, 4))
    game.move(1, [(24, 18), (18, 14)])
    assert game.double(0) == (Doubled(0, 4),)
    game.accept(1)
    assert (game.cube, game.owner, game.turn) == (4, 1, 0)


@pytest.mark.parametrize(
    ("setup", "player", "reason"),
    [
        ("opening", 1, CubeUnavailable.NOT_ON_ROLL),
        ("opening", 0, CubeUnavailable.AFTER_ROLL),  # the opening roll is the first roll
        ("rolled", 1, CubeUnavailable.AFTER_ROLL),
        ("crawford", 1, CubeUnavailable.CRAWFORD),
        ("dead", 1, CubeUnavailable.CUBE_DEAD),
    ],
)
def test_double_refusals(setup: str, player: int, reason: str) -> None:
    no_cube = {"crawford": CubeUnavailable.CRAWFORD, "dead": CubeUnavailable.CUBE_DEAD}
    game = started((3, 1), no_cube=no_cube.get(setup))
    if setup != "opening":
        game.move(0, [(8, 5), (6, 5)])
    if setup == "rolled":
        roll(game, 1, (6, 4))
    with pytest.raises(CubeUnavailable) as caught:
        game.double(player)
    assert caught.value.reason == reason
    assert not game.can_double(player)


def test_pending_double_blocks_everything_but_the_answer() -> None:
    game = started((3, 1))
    game.move(0, [(8, 5), (6, 5)])
    game.double(1)
    for action in (
        lambda: roll(game, 1, (1, 2)),
        lambda: game.double(1),
        lambda: game.resign(1, 1),
        lambda: game.accept(1),
        lambda: game.reject(1),
        lambda: game.redouble(1),
        lambda: game.move(1, [(24, 23)]),
    ):
        with pytest.raises(AwaitingDoubleAnswer):
            action()
    for action in (
        lambda: roll(game, 0, (1, 2)),
        lambda: game.double(0),
        lambda: game.resign(0, 1),
        lambda: game.move(0, [(6, 5)]),
    ):
        with pytest.raises(MustAnswerFirst) as caught:
            action()
        assert caught.value.offer == MustAnswerFirst.DOUBLE
    assert game.pending_double == DoubleOffer(1, 2, 0)


def test_drop_scores_the_cube_before_the_double() -> None:
    game = Game.at_position(Position.initial(), 1, cube=2, owner=1)
    game.double(1)
    assert game.reject(0) == (DoubleRejected(0), GameWon(1, 2, WinKind.SINGLE, EndReason.DROPPED))
    assert game.over and game.phase is Phase.OVER
    assert game.result == GameWon(1, 2, WinKind.SINGLE, EndReason.DROPPED)
    assert game.to_act is None and game.turn == 1


def test_instant_redoubles_up_to_the_limit() -> None:
    game = Game.at_position(Position.initial(), 0, redouble_limit=2)
    game.double(0)
    assert game.redouble(1) == (Redoubled(1, 4, 1),)
    assert (game.to_act, game.pending_double) == (0, DoubleOffer(1, 4, 1))
    assert game.redouble(0) == (Redoubled(0, 8, 2),)
    with pytest.raises(CubeUnavailable) as caught:
        game.redouble(1)
    assert caught.value.reason == CubeUnavailable.REDOUBLE_LIMIT
    assert game.accept(1) == (DoubleAccepted(1, 8),)
    assert (game.phase, game.turn, game.cube, game.owner) == (Phase.ROLL, 0, 8, 1)


def test_no_instant_redouble_without_a_limit_to_spend() -> None:
    game = Game.at_position(Position.initial(), 0)
    game.double(0)
    with pytest.raises(CubeUnavailable) as caught:
        game.redouble(1)
    assert caught.value.reason == CubeUnavailable.REDOUBLE_LIMIT
    with pytest.raises(AwaitingDoubleAnswer):
        game.redouble(0)


def test_unbounded_instant_redoubles() -> None:
    game = Game.at_position(Position.initial(), 0, redouble_limit=None)
    game.double(0)
    for count in range(1, 11):
        (event,) = game.redouble(count % 2)
        assert event == Redoubled(count % 2, 2 ** (count + 1), count)
    assert game.pending_double == DoubleOffer(0, 2048, 10)


def test_the_beavering_player_keeps_the_cube() -> None:
    game = Game.at_position(Position.initial(), 0, redouble_limit=1)
    game.double(0)
    game.redouble(1)
    assert game.accept(0) == (DoubleAccepted(0, 4),)
    assert (game.turn, game.owner, game.phase) == (0, 1, Phase.ROLL)
    with pytest.raises(CubeUnavailable) as caught:
        game.double(0)
    assert caught.value.reason == CubeUnavailable.OPPONENT_OWNS
    roll(game, 0, (6, 4))
    game.move(0, [(24, 18), (18, 14)])
    assert game.double(1) == (Doubled(1, 8),)


def test_a_raccoon_leaves_the_cube_with_the_beaverer() -> None:
    game = Game.at_position(Position.initial(), 0, redouble_limit=3)
    game.double(0)
    game.redouble(1)
    game.redouble(0)
    assert game.accept(1) == (DoubleAccepted(1, 8),)
    assert (game.turn, game.owner, game.cube) == (0, 1, 8)
    with pytest.raises(CubeUnavailable):
        game.double(0)


def test_a_dropped_beaver_scores_the_beaver_before_it() -> None:
    game = Game.at_position(Position.initial(), 0, cube=2, owner=0, redouble_limit=3)
    game.double(0)
    game.redouble(1)
    assert game.reject(0) == (DoubleRejected(0), GameWon(1, 4, WinKind.SINGLE, EndReason.DROPPED))


# -- resignations ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(WinKind))
def test_accepted_resignation_scores_kind_times_cube(kind: WinKind) -> None:
    game = Game.at_position(Position.initial(), 0, cube=4, owner=1)
    assert game.resign(0, kind) == (ResignOffered(0, kind, 4 * kind),)
    assert game.pending_resignation == Resignation(0, kind, 4 * kind)
    assert (game.phase, game.turn, game.to_act) == (Phase.RESIGN_OFFERED, 0, 1)
    assert game.accept(1) == (
        ResignAccepted(1, 4 * kind),
        GameWon(1, 4 * kind, kind, EndReason.RESIGNED),
    )
    assert game.over and game.pending_resignation is None


def test_resignation_kind_may_be_given_as_a_number() -> None:
    game = Game.at_position(Position.initial(), 0)
    assert game.resign(1, 2) == (ResignOffered(1, WinKind.GAMMON, 2),)


@pytest.mark.parametrize("kind", [0, 4, "g", None])
def test_unknown_resignation_kind(kind: object) -> None:
    game = Game.at_position(Position.initial(), 0)
    with pytest.raises(InvalidResignation):
        game.resign(0, kind)  # type: ignore[arg-type]
    assert game.phase is Phase.ROLL


def test_rejected_resignation_resumes_after_the_roll() -> None:
    game = started((6, 4))
    game.resign(0, WinKind.SINGLE)  # after the (opening) roll, dice not played
    assert game.legal_plays() == ()
    assert game.reject(1) == (ResignRejected(1),)
    assert (game.phase, game.turn, game.dice) == (Phase.MOVE, 0, (6, 4))
    assert len(game.legal_plays()) > 1
    game.move(0, [(24, 18), (18, 14)])
    assert game.turn == 1


def test_resigning_in_the_opponents_turn() -> None:
    game = started((6, 4))
    game.move(0, [(24, 18), (18, 14)])
    game.resign(0, WinKind.GAMMON)  # player 1 is to roll
    assert (game.turn, game.to_act) == (1, 1)
    game.reject(1)
    assert (game.phase, game.turn) == (Phase.ROLL, 1)
    game.resign(0, WinKind.BACKGAMMON)
    assert game.accept(1)[-1] == GameWon(1, 3, WinKind.BACKGAMMON, EndReason.RESIGNED)


def test_pending_resignation_blocks_everything_but_the_answer() -> None:
    game = started((3, 1))
    game.resign(1, WinKind.SINGLE)
    for action in (
        lambda: roll(game, 1, (1, 2)),
        lambda: game.double(1),
        lambda: game.resign(1, 2),
        lambda: game.accept(1),
        lambda: game.reject(1),
    ):
        with pytest.raises(AwaitingResignAnswer):
            action()
    for action in (
        lambda: game.move(0, [(8, 5), (6, 5)]),
        lambda: game.resign(0, 1),
        lambda: game.double(0),
    ):
        with pytest.raises(MustAnswerFirst) as caught:
            action()
        assert caught.value.offer == MustAnswerFirst.RESIGNATION
    with pytest.raises(NothingToAnswer):
        game.redouble(0)


def test_nothing_to_answer() -> None:
    game = started((3, 1))
    for player in (0, 1):
        for answer in (game.accept, game.reject, game.redouble):
            with pytest.raises(NothingToAnswer):
                answer(player)


# -- the end of the game ------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(WinKind))
@pytest.mark.parametrize("cube", [1, 2, 8])
def test_bearing_off_the_last_checker(kind: WinKind, cube: int) -> None:
    game = Game.at_position(Position(LAST_CHECKER, LOSER_SIDES[kind]), 0, cube=cube, owner=1)
    roll(game, 0, (6, 5))
    events = game.move(0, [(1, 0)])
    assert events[1:] == (GameWon(0, kind * cube, kind, EndReason.BORNE_OFF),)
    assert game.over and game.turn == 0 and game.dice is None
    assert game.position.player_off == 15


def test_backgammon_by_a_checker_on_the_bar() -> None:
    loser = side({7: 14, 25: 1})
    game = Game.at_position(Position(LAST_CHECKER, loser).swap(), 1)  # player 1 wins
    roll(game, 1, (2, 1))
    assert game.move(1, [(1, 0)])[1:] == (GameWon(1, 3, WinKind.BACKGAMMON, EndReason.BORNE_OFF),)


def test_everything_is_refused_once_the_game_is_over() -> None:
    game = Game.at_position(Position.initial(), 0)
    game.resign(0, WinKind.SINGLE)
    game.accept(1)
    history = game.history
    for action in (
        lambda: roll(game, 1, (1, 2)),
        lambda: game.move(1, [(24, 23)]),
        lambda: game.double(1),
        lambda: game.redouble(1),
        lambda: game.accept(1),
        lambda: game.reject(0),
        lambda: game.resign(1, 1),
    ):
        with pytest.raises(GameOver):
            action()
    assert game.history == history
    assert not game.can_double(0) and not game.can_double(1)


def test_history_keeps_every_event_in_order() -> None:
    game = started((5, 5), (3, 1))
    game.move(0, [(8, 5), (6, 5)])
    game.double(1)
    game.accept(0)
    roll(game, 1, (6, 4))
    game.resign(0, WinKind.GAMMON)
    game.reject(1)
    game.move(1, [(24, 18), (18, 14)])
    kinds = [type(event).__name__ for event in game.history]
    assert kinds == [
        "OpeningRoll",
        "OpeningRoll",
        "Moved",
        "Doubled",
        "DoubleAccepted",
        "Rolled",
        "ResignOffered",
        "ResignRejected",
        "Moved",
    ]


def test_at_position_checks_its_players() -> None:
    with pytest.raises(ValueError):
        Game.at_position(Position.initial(), 2)
    with pytest.raises(ValueError):
        Game.at_position(Position.initial(), 0, owner=3)
    for cube in (0, 3, 6):
        with pytest.raises(ValueError):
            Game.at_position(Position.initial(), 0, cube=cube)
