"""The match record: its exact format, and replay to the identical state at any point."""

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fibsd.rules.dice import ScriptedDice
from fibsd.rules.errors import InvalidRecord
from fibsd.rules.events import Event, WinKind
from fibsd.rules.game import Game, Resignation
from fibsd.rules.match import Match
from fibsd.rules.record import Header, RecordText, compact
from tests.rules.conftest import RandomPlayer

# The ``play_random`` fixture (conftest.py): (match, events) after every action of a seed.
PlayRandom = Callable[[int], Iterator[tuple[Match, tuple[Event, ...]]]]


def game_state(game: Game) -> tuple[Any, ...]:
    return (
        game.phase,
        game.turn,
        game.to_act,
        game.dice,
        game.cube,
        game.owner,
        game.position,
        game.pending_double,
        game.pending_resignation,
        game.result,
        game.history,
        game.legal_plays(),
        game.playable(0),
        game.playable(1),
        game.can_double(0),
        game.can_double(1),
        game.no_cube,
        game.redouble_limit,
        game.autodouble,
    )


def match_state(match: Match) -> tuple[Any, ...]:
    return (
        match.length,
        match.crawford,
        match.redouble_limit,
        match.autodouble,
        match.score,
        match.winner,
        match.number,
        match.crawford_game,
        match.did_crawford,
        [game_state(game) for game in match.games],
    )


def round_trip(match: Match) -> Match:
    """Save through JSON text and restore."""
    return Match.from_record(json.loads(json.dumps(match.to_record())))


def assert_restores(match: Match) -> None:
    restored = round_trip(match)
    assert match_state(restored) == match_state(match)
    assert restored.to_record() == match.to_record()


def scripted_match() -> Match:
    """A 5-point match, in game 2 (the Crawford game) with a resignation pending."""
    match = Match(5)
    match.new_game(ScriptedDice([(5, 5), (3, 1)]))
    match.move(0, [(8, 5), (6, 5)])
    match.double(1)
    match.accept(0)
    match.roll(1, ScriptedDice([(6, 4)]))
    match.move(1, [(24, 18), (18, 14)])
    match.roll(0, ScriptedDice([(2, 1)]))
    match.resign(0, WinKind.SINGLE)
    match.reject(1)
    (play,) = [p for p in match.legal_plays() if [m.src for m in p.moves] == [13, 6]]
    match.auto_move(0, play)
    match.resign(0, WinKind.GAMMON)
    match.accept(1)
    match.new_game(ScriptedDice([(1, 2)]))
    match.resign(0, WinKind.SINGLE)
    return match


SCRIPTED_RECORD = {
    "format": "fibsd-match",
    "version": 1,
    "length": 5,
    "crawford": True,
    "redouble_limit": 0,
    "autodouble": False,
    "score": [0, 4],
    "games": [
        [
            ["opening", 5, 5],
            ["opening", 3, 1],
            ["move", 0, [[8, 5], [6, 5]]],
            ["double", 1],
            ["accept", 0],
            ["roll", 1, 6, 4],
            ["move", 1, [[24, 18], [18, 14]]],
            ["roll", 0, 2, 1],
            ["resign", 0, 1],
            ["reject", 1],
            ["move", 0, [[13, 11], [6, 5]], "auto"],
            ["resign", 0, 2],
            ["accept", 1],
        ],
        [["opening", 1, 2], ["resign", 0, 1]],
    ],
}


def test_the_record_format() -> None:
    match = scripted_match()
    assert match.to_record() == SCRIPTED_RECORD
    assert json.loads(json.dumps(SCRIPTED_RECORD)) == SCRIPTED_RECORD


def test_a_pending_resignation_survives_the_round_trip() -> None:
    match = scripted_match()
    restored = round_trip(match)
    assert restored.pending_resignation == Resignation(0, WinKind.SINGLE, 1)
    assert restored.is_crawford_game and restored.score == (0, 4)
    assert restored.accept(1) == match.accept(1)
    assert restored.winner == match.winner == 1


@pytest.mark.parametrize(
    "stop",
    ["rolled", "doubled", "redoubled", "resign-after-roll", "between-games", "over", "none"],
)
def test_mid_turn_states_restore_exactly(stop: str) -> None:
    match = Match(0, redouble_limit=2)
    if stop != "none":
        match.new_game(ScriptedDice([(6, 1)]))
        match.move(0, [(13, 7), (8, 7)])
    if stop == "rolled":
        match.roll(1, ScriptedDice([(4, 4)]))
    if stop in ("doubled", "redoubled"):
        match.double(1)
    if stop == "redoubled":
        match.redouble(0)
    if stop == "resign-after-roll":
        match.roll(1, ScriptedDice([(5, 2)]))
        match.resign(1, WinKind.GAMMON)
    if stop in ("between-games", "over"):
        match.resign(1, WinKind.BACKGAMMON)
        match.accept(0)
    assert_restores(match)
    restored = round_trip(match)
    if stop == "rolled":
        assert restored.dice == (4, 4) and restored.legal_plays() == match.legal_plays()
    if stop == "redoubled":
        assert restored.pending_double == match.pending_double
        assert restored.accept(1) == match.accept(1)
        assert match_state(restored) == match_state(match)
    if stop == "resign-after-roll":
        assert restored.reject(0) == match.reject(0)
        assert restored.dice == (5, 2) and match_state(restored) == match_state(match)


def test_a_won_match_restores() -> None:
    match = scripted_match()
    match.accept(1)
    assert match.over
    assert_restores(match)
    assert round_trip(match).winner == 1


@pytest.mark.parametrize("seed", range(3))
def test_random_matches_restore_at_every_step(seed: int, play_random: PlayRandom) -> None:
    """Every one of the first 150 actions (replay costs grow with the match)."""
    for step, (match, _) in enumerate(play_random(seed)):
        if step == 150:
            break
        assert_restores(match)


@pytest.mark.parametrize("seed", range(3, 40))
def test_random_matches_restore_at_many_steps(seed: int, play_random: PlayRandom) -> None:
    for step, (match, _) in enumerate(play_random(seed)):
        if step % 97 == 13:
            assert_restores(match)
    assert_restores(match)


def broken(change: str) -> dict[str, Any]:
    record = json.loads(json.dumps(SCRIPTED_RECORD))
    game = record["games"][0]
    if change == "not-a-dict":
        return [record]  # type: ignore[return-value]
    if change == "format":
        record["format"] = "gnubg"
    elif change == "version":
        record["version"] = 2
    elif change == "length":
        record["length"] = -3
    elif change == "limit":
        record["redouble_limit"] = "none"
    elif change == "crawford":
        record["crawford"] = 1
    elif change == "score-shape":
        record["score"] = [0]
    elif change == "games-shape":
        record["games"] = {"1": game}
    elif change == "score":
        record["score"] = [1, 3]
    elif change == "settings":
        record["redouble_limit"] = None  # not possible in a match with a length
    elif change == "unknown-entry":
        game[3] = ["beaver", 0]
    elif change == "bad-die":
        game[5] = ["roll", 1, 7, 4]
    elif change == "bad-player":
        game[3] = ["double", 2]
    elif change == "bad-point":
        game[2] = ["move", 0, [[8, 5], [6, -1]]]
    elif change == "bad-flag":
        game[10] = ["move", 0, [[13, 11], [6, 5]], "forced"]
    elif change == "bad-kind":
        game[8] = ["resign", 0, 4]
    elif change == "illegal-move":
        game[2] = ["move", 0, [[8, 4], [6, 5]]]
    elif change == "out-of-turn":
        game[5] = ["roll", 0, 6, 4]
    elif change == "extra-opening":
        game.insert(2, ["opening", 2, 2])
    elif change == "no-opening":
        record["games"][1] = [["resign", 0, 1]]
    elif change == "opening-later":
        game.insert(4, ["opening", 2, 2])
    return record


@pytest.mark.parametrize(
    "change",
    [
        "not-a-dict",
        "format",
        "version",
        "length",
        "limit",
        "crawford",
        "score-shape",
        "games-shape",
        "score",
        "settings",
        "unknown-entry",
        "bad-die",
        "bad-player",
        "bad-point",
        "bad-flag",
        "bad-kind",
        "illegal-move",
        "out-of-turn",
        "extra-opening",
        "no-opening",
        "opening-later",
    ],
)
def test_broken_records_are_refused(change: str) -> None:
    with pytest.raises(InvalidRecord) as caught:
        Match.from_record(broken(change))
    assert caught.value.reason


def test_replay_errors_say_where() -> None:
    with pytest.raises(InvalidRecord) as caught:
        Match.from_record(broken("out-of-turn"))
    assert caught.value.reason == "game 1, entry 6: NotYourTurn()"
    with pytest.raises(InvalidRecord) as caught:
        Match.from_record(broken("bad-die"))
    assert caught.value.reason == "game 1, entry 6: cannot read ['roll', 1, 7, 4]"
    with pytest.raises(InvalidRecord) as caught:
        Match.from_record(broken("score"))
    assert caught.value.reason == "replayed score (0, 4) is not the recorded (1, 3)"
    with pytest.raises(InvalidRecord) as caught:
        Match.from_record(broken("extra-opening"))
    assert caught.value.reason == "game 1: opening rolls after the first non-tie"


@pytest.mark.parametrize("seed", range(12))
def test_the_record_text_equals_the_record_encoded_whole_at_every_step(seed: int) -> None:
    match = Match(5)
    player = RandomPlayer(seed)
    steps = 0
    while not match.over:
        player.step(match)
        steps += 1
        assert match.record_text() == compact(match.to_record())
    assert steps > 20
    assert match.record_text() == match.record_text()  # asked twice, nothing new


def test_a_record_text_follows_whichever_histories_it_is_given() -> None:
    """``RecordText`` keeps text per game, but a history that did not grow from the one
    it saw last is encoded again from its start."""
    long, short = Match(3), Match(3)
    for match, seed in ((long, 1), (short, 2)):
        player = RandomPlayer(seed)
        for _ in range(30 if match is long else 10):
            player.step(match)
    text = RecordText()
    for match in (long, short, long):
        header = Header(match.length, match.crawford, match.redouble_limit,
                        match.autodouble, match.score)
        assert (text.text(header, [game.history for game in match.games])
                == compact(match.to_record()))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(_json)
def test_compact_writes_what_json_dumps_writes(data: object) -> None:
    """The shared encoder changes the cost of a record's text, not one byte of it."""
    assert compact(data) == json.dumps(data, separators=(",", ":"))
