"""Matches: score, Crawford and post-Crawford, the cube's limits, unlimited matches,
match end, refusals, and random legal matches checked at every step."""

from collections.abc import Callable, Iterator

import pytest

from fibsd.rules.dice import ScriptedDice
from fibsd.rules.errors import (
    CubeUnavailable,
    GameInProgress,
    GameOver,
    MatchOver,
    NotYourTurn,
)
from fibsd.rules.events import (
    CubeAutoDoubled,
    DoubleAccepted,
    Doubled,
    DoubleRejected,
    EndReason,
    Event,
    GameStarted,
    GameWon,
    MatchWon,
    Moved,
    OpeningRoll,
    ResignAccepted,
    Rolled,
    WinKind,
)
from fibsd.rules.game import Phase
from fibsd.rules.match import Match
from fibsd.rules.position import CHECKERS, Position

# The ``play_random`` fixture (conftest.py): (match, events) after every action of a seed.
PlayRandom = Callable[[int], Iterator[tuple[Match, tuple[Event, ...]]]]


def new_game(match: Match, *openings: tuple[int, int]) -> tuple[object, ...]:
    return match.new_game(ScriptedDice(openings or [(3, 1)]))


def resign_game(match: Match, loser: int, kind: WinKind = WinKind.SINGLE) -> tuple[object, ...]:
    """Start a game (player 0 opens with 3-1 and plays it) and let ``loser`` resign."""
    new_game(match, (3, 1))
    match.move(0, [(8, 5), (6, 5)])
    match.resign(loser, kind)
    return match.accept(1 - loser)


def test_a_new_match() -> None:
    match = Match(5)
    assert (match.length, match.crawford, match.redouble_limit, match.autodouble) == (
        5,
        True,
        0,
        False,
    )
    assert (match.score, match.number, match.game, match.winner, match.over) == (
        (0, 0),
        0,
        None,
        None,
        False,
    )
    assert (match.phase, match.turn, match.to_act, match.dice, match.cube, match.owner) == (
        None,
        None,
        None,
        None,
        1,
        None,
    )
    assert match.position == Position.initial() == match.position_for(1)
    assert match.may_double(0) and match.may_double(1)
    assert not match.can_double(0) and not match.was_doubled(0)
    assert match.playable(0) == 0 and match.legal_plays() == ()
    assert match.waiting_for_new_game and not match.unlimited
    assert repr(match) == "<Match length=5 score=(0, 0) game=0 phase=None>"


@pytest.mark.parametrize("kwargs", [{"length": -1}, {"length": 0, "redouble_limit": -1}])
def test_bad_settings(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Match(**kwargs)


def test_first_game_starts_with_the_opening_roll() -> None:
    match = Match(5)
    events = new_game(match, (2, 2), (1, 6))
    assert events == (GameStarted(1, False, (0, 0)), OpeningRoll((2, 2)), OpeningRoll((1, 6)))
    assert (match.number, match.phase, match.turn, match.dice, match.playable(1)) == (
        1,
        Phase.MOVE,
        1,
        (1, 6),
        2,
    )
    assert len(match.legal_plays()) == len(match.game.legal_plays()) > 1  # type: ignore[union-attr]
    assert repr(match) == "<Match length=5 score=(0, 0) game=1 phase=move>"


def test_refusals_between_and_around_games() -> None:
    match = Match(3)
    for action in (
        lambda: match.roll(0, ScriptedDice([(1, 2)])),
        lambda: match.move(0, [(8, 5)]),
        lambda: match.double(0),
        lambda: match.redouble(0),
        lambda: match.accept(0),
        lambda: match.reject(0),
        lambda: match.resign(0, 1),
    ):
        with pytest.raises(GameOver):
            action()
    new_game(match)
    with pytest.raises(GameInProgress):
        new_game(match)
    with pytest.raises(NotYourTurn):
        match.roll(1, ScriptedDice([(1, 2)]))
    match.resign(0, WinKind.GAMMON)
    match.accept(1)
    assert match.waiting_for_new_game
    with pytest.raises(GameOver):
        match.roll(1, ScriptedDice([(1, 2)]))
    resign_game(match, 0)
    assert match.over and not match.waiting_for_new_game
    with pytest.raises(MatchOver):
        new_game(match)


def test_a_whole_match_through_crawford_and_post_crawford() -> None:
    match = Match(3)
    # Game 1: player 0 gives up a gammon: 0-2, player 1 is one point away.
    assert resign_game(match, 0, WinKind.GAMMON) == (
        ResignAccepted(1, 2),
        GameWon(1, 2, WinKind.GAMMON, EndReason.RESIGNED),
    )
    assert match.score == (0, 2) and not match.over
    assert not match.did_crawford and match.crawford_game is None

    # Game 2 is the Crawford game: no doubling, though the board flags stay on.
    assert new_game(match, (1, 3))[0] == GameStarted(2, True, (0, 2))
    assert match.is_crawford_game and not match.is_post_crawford
    assert match.crawford_game == 2
    match.move(1, [(8, 5), (6, 5)])
    assert match.may_double(0) and match.may_double(1)
    assert not match.can_double(0)
    with pytest.raises(CubeUnavailable) as caught:
        match.double(0)
    assert caught.value.reason == CubeUnavailable.CRAWFORD
    assert not match.did_crawford
    match.resign(1, WinKind.SINGLE)
    match.accept(0)
    assert match.score == (1, 2)
    assert match.did_crawford  # the Crawford game is over, player 1 is 1-away

    # Game 3 is post-Crawford: the trailer doubles at once.
    assert new_game(match, (1, 3))[0] == GameStarted(3, False, (1, 2))
    assert match.is_post_crawford and not match.is_crawford_game and match.did_crawford
    match.move(1, [(8, 5), (6, 5)])
    assert match.can_double(0)
    assert match.double(0) == (Doubled(0, 2),)
    assert match.was_doubled(1) and not match.may_double(0) and not match.may_double(1)
    assert match.pending_double is not None and match.to_act == 1
    assert match.accept(1) == (DoubleAccepted(1, 2),)
    assert (match.cube, match.owner) == (2, 1)
    assert match.may_double(1) and not match.may_double(0)
    assert not match.can_double(0)  # the doubler must roll now
    assert match.roll(0, ScriptedDice([(6, 4)])) == (Rolled(0, (6, 4), 2),)
    match.move(0, [(24, 18), (18, 14)])
    match.resign(1, WinKind.BACKGAMMON)
    assert match.pending_resignation is not None
    assert match.accept(0) == (
        ResignAccepted(0, 6),
        GameWon(0, 6, WinKind.BACKGAMMON, EndReason.RESIGNED),
        MatchWon(0, (7, 2)),
    )
    assert (match.over, match.winner, match.score) == (True, 0, (7, 2))
    assert match.game is not None and match.game.over and match.phase is Phase.OVER


def test_crawford_game_after_a_jump_to_one_away() -> None:
    match = Match(5)
    new_game(match, (3, 1))
    match.move(0, [(8, 5), (6, 5)])
    match.double(1)
    match.accept(0)
    match.roll(1, ScriptedDice([(6, 4)]))
    match.resign(1, WinKind.GAMMON)
    assert match.accept(0)[-1] == GameWon(0, 4, WinKind.GAMMON, EndReason.RESIGNED)
    assert new_game(match)[0] == GameStarted(2, True, (4, 0))


def test_only_one_crawford_game() -> None:
    match = Match(3)
    resign_game(match, 0)  # 0-1
    resign_game(match, 1)  # 1-1
    assert not match.is_crawford_game and match.crawford_game is None
    resign_game(match, 0)  # 1-2
    resign_game(match, 1)  # game 4, the Crawford game: 2-2
    assert match.crawford_game == 4
    events = new_game(match)
    assert events[0] == GameStarted(5, False, (2, 2))
    assert match.is_post_crawford and match.did_crawford
    match.move(0, [(8, 5), (6, 5)])
    assert match.double(1) == (Doubled(1, 2),)
    assert match.reject(0) == (
        DoubleRejected(0),
        GameWon(1, 1, WinKind.SINGLE, EndReason.DROPPED),
        MatchWon(1, (2, 3)),
    )


def test_no_crawford_game_when_the_rule_is_off() -> None:
    match = Match(3, crawford=False)
    resign_game(match, 0, WinKind.GAMMON)
    assert new_game(match)[0] == GameStarted(2, False, (0, 2))
    match.move(0, [(8, 5), (6, 5)])
    assert match.double(1) == (Doubled(1, 2),)
    assert not match.did_crawford and match.crawford_game is None


def test_two_point_match_crawford() -> None:
    match = Match(2)
    resign_game(match, 1)
    assert new_game(match)[0] == GameStarted(2, True, (1, 0))


def test_one_point_match_has_no_cube_and_counts_gammons() -> None:
    match = Match(1)
    new_game(match, (3, 1))
    match.move(0, [(8, 5), (6, 5)])
    with pytest.raises(CubeUnavailable) as caught:
        match.double(1)
    assert caught.value.reason == CubeUnavailable.CUBE_DEAD
    assert match.may_double(1)
    match.resign(0, WinKind.GAMMON)
    assert match.accept(1)[-1] == MatchWon(1, (0, 2))
    assert match.crawford_game is None


def test_unlimited_match_never_ends_by_score() -> None:
    match = Match(0, redouble_limit=2, autodouble=True)
    assert (match.unlimited, match.crawford, match.redouble_limit, match.autodouble) == (
        True,
        False,
        2,
        True,
    )
    events = new_game(match, (2, 2), (3, 1))
    assert events[1:] == (OpeningRoll((2, 2)), CubeAutoDoubled(2), OpeningRoll((3, 1)))
    assert (match.cube, match.owner) == (2, None)
    match.move(0, [(8, 5), (6, 5)])
    match.double(1)
    match.redouble(0)
    match.redouble(1)
    with pytest.raises(CubeUnavailable) as caught:
        match.redouble(0)
    assert caught.value.reason == CubeUnavailable.REDOUBLE_LIMIT
    assert match.accept(0) == (DoubleAccepted(0, 16),)
    match.resign(1, WinKind.GAMMON)
    match.accept(0)
    assert match.score == (32, 0) and not match.over
    for _ in range(5):
        resign_game(match, 0)
    assert match.score == (32, 5) and not match.over and match.number == 6
    assert match.crawford_game is None


def test_unlimited_redoubles_without_limit() -> None:
    match = Match(0, redouble_limit=None)
    new_game(match)
    match.move(0, [(8, 5), (6, 5)])
    match.double(1)
    for n in range(6):
        match.redouble(n % 2)
    assert match.pending_double is not None and match.pending_double.value == 128


def test_a_match_with_a_length_has_no_instant_redoubles_nor_autodoubles() -> None:
    match = Match(5, redouble_limit=None, autodouble=True)
    assert (match.redouble_limit, match.autodouble) == (0, False)
    assert new_game(match, (4, 4), (3, 1))[1:] == (OpeningRoll((4, 4)), OpeningRoll((3, 1)))
    assert match.cube == 1
    match.move(0, [(8, 5), (6, 5)])
    match.double(1)
    with pytest.raises(CubeUnavailable) as caught:
        match.redouble(0)
    assert caught.value.reason == CubeUnavailable.REDOUBLE_LIMIT


# -- random legal matches ------------------------------------------------------------------


def check_invariants(match: Match) -> None:
    game = match.game
    assert game is not None
    board = game.position
    # Checkers: the 15 of each side are on the board, on the bar or off, and what is off
    # or on the bar agrees with the moves made.
    for player in (0, 1):
        mine = game.position_for(player)
        assert sum(mine.player) + mine.player_off == CHECKERS
        own = [e for e in game.history if isinstance(e, Moved) and e.player == player]
        other = [e for e in game.history if isinstance(e, Moved) and e.player != player]
        assert mine.player_off == sum(m.dst == 0 for e in own for m in e.play.moves)
        hits = sum(m.hit for e in other for m in e.play.moves)
        entered = sum(m.src == 25 for e in own for m in e.play.moves)
        assert mine.player[24] == hits - entered
    assert board.swap().swap() == board
    # The cube: a power of two; owned once a double was taken.
    assert game.cube & (game.cube - 1) == 0
    took = any(isinstance(e, DoubleAccepted) for e in game.history)
    assert (game.owner is not None) == took
    # The score is the sum of the games won, and decides the match.
    score = [0, 0]
    for g in match.games:
        if g.result is not None:
            score[g.result.winner] += g.result.points
    assert match.score == tuple(score)
    if match.length:
        reached = [p for p in (0, 1) if score[p] >= match.length]
        assert match.winner == (reached[0] if reached else None)
        assert len(reached) <= 1
    else:
        assert match.winner is None
    # Every finished game but the last; no double in the Crawford game.
    assert all(g.over for g in match.games[:-1])
    if match.crawford_game is not None:
        played = match.games[match.crawford_game - 1]
        assert not any(isinstance(e, Doubled) for e in played.history)


@pytest.mark.parametrize("seed", range(60))
def test_random_legal_matches_stay_consistent(seed: int, play_random: PlayRandom) -> None:
    steps = 0
    won = []
    for match, events in play_random(seed):
        check_invariants(match)
        won.extend(e for e in events if isinstance(e, MatchWon))
        steps += 1
    assert steps > 0
    if match.length:
        assert won == [MatchWon(match.winner, match.score)]  # type: ignore[arg-type]
        assert max(match.score) >= match.length
    else:
        assert won == [] and match.number == 8


def test_random_matches_end_games_every_way(play_random: PlayRandom) -> None:
    """Across the seeds, games end by bear-off as singles and gammons, by drops and by
    resignations, and each ending is scored into the match."""
    endings = set()
    for seed in range(60):
        for match, events in play_random(seed):
            for event in events:
                if isinstance(event, GameWon):
                    endings.add((event.reason, event.kind))
                    assert event.points % event.kind == 0
    assert {
        (EndReason.BORNE_OFF, WinKind.SINGLE),
        (EndReason.BORNE_OFF, WinKind.GAMMON),
        (EndReason.DROPPED, WinKind.SINGLE),
        (EndReason.RESIGNED, WinKind.SINGLE),
        (EndReason.RESIGNED, WinKind.GAMMON),
        (EndReason.RESIGNED, WinKind.BACKGAMMON),
    } <= endings
