"""A random but legal match player for the match and record tests.

Dice come from a ScriptedDice fed by a seeded ``random.Random`` here in the tests (the
rules themselves never touch ``random``), so every failure replays from its seed.
"""

import random
from collections.abc import Callable, Iterator

import pytest

from fibsd.rules.dice import ScriptedDice
from fibsd.rules.errors import CubeUnavailable
from fibsd.rules.events import Event, WinKind
from fibsd.rules.game import Phase
from fibsd.rules.match import Match


class RandomPlayer:
    """Drives a match one legal action at a time; each seed picks its own temper (how
    often the players double, drop, redouble and resign), so some games run to the
    bear-off and others end at the cube or by resignation."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.dice = ScriptedDice(
            (self.rng.randint(1, 6), self.rng.randint(1, 6)) for _ in range(20_000)
        )
        self.p_double = self.rng.choice([0.0, 0.05, 0.3])
        self.p_drop = self.rng.choice([0.1, 0.5])
        self.p_redouble = self.rng.choice([0.0, 0.5])
        self.p_resign = self.rng.choice([0.0, 0.005, 0.03])
        self.p_auto = 0.3

    def step(self, match: Match) -> tuple[Event, ...]:
        """One action by whoever must act; a new game when the last one is over."""
        rng = self.rng
        game = match.game
        if game is None or game.over:
            return match.new_game(self.dice)
        phase = game.phase
        turn = game.turn
        assert turn is not None
        if phase is Phase.DOUBLE_OFFERED:
            offer = game.pending_double
            assert offer is not None
            answerer = 1 - offer.player
            if rng.random() < self.p_redouble:
                limit = match.redouble_limit
                if limit is None or offer.redoubles < limit:
                    return match.redouble(answerer)
                with pytest.raises(CubeUnavailable):
                    match.redouble(answerer)
            if rng.random() < self.p_drop:
                return match.reject(answerer)
            return match.accept(answerer)
        if phase is Phase.RESIGN_OFFERED:
            resignation = game.pending_resignation
            assert resignation is not None
            answer = match.accept if rng.random() < 0.4 else match.reject
            return answer(1 - resignation.player)
        if rng.random() < self.p_resign:
            return match.resign(rng.randrange(2), rng.choice(list(WinKind)))
        if phase is Phase.ROLL:
            if match.can_double(turn) and rng.random() < self.p_double:
                return match.double(turn)
            return match.roll(turn, self.dice)
        play = rng.choice(game.legal_plays())
        if rng.random() < self.p_auto:
            return match.auto_move(turn, play)
        return match.move(turn, [(m.src, m.dst) for m in play.moves])


def random_match_for(seed: int) -> Match:
    """The match a seed plays: length 1..7 or unlimited, with or without Crawford."""
    rng = random.Random(seed * 7919 + 1)
    length = rng.choice([0, 1, 2, 3, 5, 7])
    return Match(
        length,
        crawford=rng.random() < 0.8,
        redouble_limit=rng.choice([0, 1, 3, None]),
        autodouble=rng.random() < 0.5,
    )


PlayRandom = Callable[[int], Iterator[tuple[Match, tuple[Event, ...]]]]


@pytest.fixture
def play_random() -> PlayRandom:
    """``play_random(seed)`` yields (match, events) after every action of the seed's
    match, until it is won (unlimited matches: after 8 games)."""

    def run(seed: int) -> Iterator[tuple[Match, tuple[Event, ...]]]:
        match = random_match_for(seed)
        player = RandomPlayer(seed)
        while not match.over:
            if match.unlimited and match.number == 8 and match.game and match.game.over:
                return
            events = player.step(match)
            yield match, events

    return run
