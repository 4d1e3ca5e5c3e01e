"""Whole match records as the server stores them, made by playing through the rules
engine with seeded dice and a plain policy: the first legal play, now and then a
double (taken or dropped) or a resignation (accepted).  The archive tests and
benchmarks/web.py fill stores with them."""

from __future__ import annotations

import json
import random

from fibsd.rules.dice import ScriptedDice
from fibsd.rules.game import Phase
from fibsd.rules.match import Match
from fibsd.store import FinishedMatch


def played_match(seed: int, length: int, players: tuple[str, str] = ("alice", "bob"),
                 o_first: int = 0, cube: float = 0.08, resign: float = 0.01,
                 ) -> tuple[str, Match]:
    """(the stored record text, the finished rules match)."""
    rng = random.Random(seed)

    def dice(n: int) -> ScriptedDice:
        return ScriptedDice([(rng.randint(1, 6), rng.randint(1, 6)) for _ in range(n)])

    match = Match(length)
    while not match.over:
        match.new_game(dice(30))
        game = match.game
        assert game is not None
        while not game.over:
            phase, player = game.phase, game.to_act
            assert player is not None
            if phase is Phase.DOUBLE_OFFERED:
                (match.reject if rng.random() < 0.3 else match.accept)(player)
            elif phase is Phase.RESIGN_OFFERED:
                match.accept(player)
            elif phase is Phase.ROLL:
                if rng.random() < resign:
                    match.resign(player, rng.choice((1, 2)))
                elif match.can_double(player) and rng.random() < cube:
                    match.double(player)
                else:
                    match.roll(player, dice(1))
            else:
                play = match.legal_plays()[0]
                match.move(player, [(m.src, m.dst) for m in play.moves])
    record = json.dumps({"format": "fibsd-live-match", "players": list(players),
                         "o_first": o_first, "length": length, "match": match.to_record()},
                        separators=(",", ":"))
    return record, match


def finished_match(seed: int, length: int, players: tuple[str, str] = ("alice", "bob"),
                   finished: int = 1_700_000_000, change: float = 0.0,
                   **options: float) -> FinishedMatch:
    """The store's row for a played match (``change``: the winner's rating gain)."""
    record, match = played_match(seed, length, players, **options)
    winner = match.winner
    assert winner is not None
    score = match.score
    return FinishedMatch(players[winner], players[1 - winner], length, score[winner],
                         score[1 - winner], finished, record, change, -change)
