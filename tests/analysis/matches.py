"""Fixed matches for the analysis tests: played by the rules tests' seeded random
player (or scripted), kept as the server stores them, with what each must contain."""

from __future__ import annotations

import json
from fibsd.rules.match import Match
from fibsd.store import FinishedMatch
from fibsd.web.replay import replay
from tests.rules.conftest import RandomPlayer

PLAYERS = ("alice", "bob")


def record_of(match: Match, length: int) -> str:
    return json.dumps({"format": "fibsd-live-match", "players": list(PLAYERS), "o_first": 0,
                       "length": length, "match": match.to_record()}, separators=(",", ":"))


def played(seed: int, length: int, *, double: float, resign: float, redouble: float = 0.0,
           redouble_limit: int | None = 0, games: int | None = None) -> str:
    """A match (or its first ``games`` games, for an unlimited one) played at random."""
    match = Match(length, redouble_limit=redouble_limit)
    player = RandomPlayer(seed)
    player.p_double, player.p_redouble, player.p_resign = double, redouble, resign
    while not match.over:
        game = match.game
        if games is not None and game is not None and game.over and match.number >= games:
            break
        player.step(match)
    return record_of(match, length)


def finished(record: str, finished_at: int = 1_700_000_000) -> FinishedMatch:
    data = json.loads(record)
    match = Match.from_record(data["match"])
    score = match.score
    winner = 0 if score[0] >= score[1] else 1
    return FinishedMatch(PLAYERS[winner], PLAYERS[1 - winner], data["length"],
                         score[winner], score[1 - winner], finished_at, record)


def features(record: str) -> set[str]:
    """What happens in the match: resign, take, drop, beaver, crawford, post-crawford."""
    shown = replay(record)
    found: set[str] = set()
    for number, game in enumerate(shown.games, 1):
        kinds = [a["action"] for a in game["actions"]]
        found |= {k for k in ("resign", "take", "drop") if k in kinds}
        found |= {"beaver" for a, b in zip(kinds, kinds[1:]) if a == b == "double"}
        if game["crawford"]:
            found.add("crawford")
        if shown.crawford_game is not None and number > shown.crawford_game:
            found.add("post-crawford")
    return found


# name: (record, what it must contain)
def fixed_matches() -> dict[str, tuple[str, set[str]]]:
    return {
        "five-point": (played(3, 5, double=0.1, resign=0.03),
                       {"resign", "take", "drop", "crawford"}),
        "unlimited": (played(0, 0, double=0.1, resign=0.0, games=2), {"take", "drop"}),
        "beavers": (played(1, 0, double=0.1, resign=0.0, redouble=0.5, redouble_limit=1,
                           games=2), {"beaver", "take"}),
    }
