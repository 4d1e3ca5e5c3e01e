"""Whole match records as the server stores them, made by playing through the rules
engine with seeded dice (the rules tests' random player).  The web tests and
benchmarks/web.py fill stores with them."""

from __future__ import annotations

import json

from fibsd.rules.match import Match
from fibsd.store import FinishedMatch
from tests.rules.conftest import RandomPlayer


def played_match(seed: int, length: int, players: tuple[str, str] = ("alice", "bob"),
                 o_first: int = 0, cube: float | None = None, resign: float | None = None,
                 ) -> tuple[str, Match]:
    """(the stored record text, the finished rules match), played by the rules tests'
    ``RandomPlayer`` (``cube`` and ``resign`` override its chances to double and to
    resign)."""
    match = Match(length)
    player = RandomPlayer(seed)
    if cube is not None:
        player.p_double = cube
    if resign is not None:
        player.p_resign = resign
    while not match.over:
        player.step(match)
    record = json.dumps({"format": "fibsd-live-match", "players": list(players),
                         "o_first": o_first, "length": length, "match": match.to_record()},
                        separators=(",", ":"))
    return record, match


def finished_match(seed: int, length: int, players: tuple[str, str] = ("alice", "bob"),
                   finished: int = 1_700_000_000, change: float = 0.0,
                   **options: float | None) -> FinishedMatch:
    """The store's row for a played match (``change``: the winner's rating gain)."""
    record, match = played_match(seed, length, players, **options)
    winner = match.winner
    assert winner is not None
    score = match.score
    return FinishedMatch(players[winner], players[1 - winner], length, score[winner],
                         score[1 - winner], finished, record, change, -change)
