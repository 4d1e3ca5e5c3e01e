"""Analyses planted in a store for the face's tests: marks on real decisions of a
stored match (legal plays found by the rules engine), summaries that add up, saved
with the store's own ``save_analysis``."""

from __future__ import annotations

import json
from typing import Any

from fibsd.analysis.model import Mark, MatchAnalysis, PlayerSummary
from fibsd.rules.events import Event
from fibsd.rules.notation import O_DIRECTION, X_DIRECTION, format_fibs_moves
from fibsd.rules.record import Entry, decode_record
from fibsd.web.replay import _Replayer

SKILLS = ("very bad", "bad", "doubtful", None)
ERRORS = {"very bad": 0.25, "bad": 0.1, "doubtful": 0.03, None: 0.0}


def checker_choices(record: str) -> tuple[list[dict[str, Any]], dict[tuple[int, int], list[str]]]:
    """(the replay's games, for each play's (game, action): the legal plays of its roll)."""
    data = json.loads(record)
    header, games = decode_record(data["match"])
    plays: dict[tuple[int, int], list[str]] = {}

    class Noting(_Replayer):
        def apply(self, entry: Entry) -> tuple[Event, ...]:
            if entry.action == "move":
                direction = O_DIRECTION if entry.player == self.o_player() else X_DIRECTION
                plays[(self.match.number, len(self.actions))] = [
                    format_fibs_moves(p.moves, direction) for p in self.match.legal_plays()]
            return super().apply(entry)

    replayer = Noting((data["players"][0], data["players"][1]), int(data["o_first"]),
                      header.length, header.crawford, header.redouble_limit, header.autodouble)
    return replayer.run(games).games, plays


def planted(match_id: int, record: str, plies: int = 0, marks_wanted: int = 4,
            prs: tuple[float, float] = (6.5, 12.25)) -> MatchAnalysis:
    """An analysis of the stored match: its first plays marked very bad, bad, doubtful
    and best (each with another legal play as the best), its first double and take or
    pass marked too; each player's summary counts his marks."""
    games, plays = checker_choices(record)
    players = json.loads(record)["players"]
    marks: list[Mark] = []
    skills = list(SKILLS[:marks_wanted])
    for number, game in enumerate(games, 1):
        for index, action in enumerate(game["actions"]):
            kind = action["action"]
            if kind == "move" and skills:
                legal = [p for p in plays.get((number, index), []) if p != action["moves"]]
                skill = skills[0]
                if skill is not None and not legal:
                    continue
                skills.pop(0)
                error = ERRORS[skill]
                best = legal[0] if skill is not None else action["moves"]
                marks.append(Mark(number, index, action["player"], "checker", error, skill,
                                  action["moves"], best, 0.1, 0.1 - error))
            elif kind == "double" and not any(m.kind == "cube" for m in marks):
                marks.append(Mark(number, index, action["player"], "cube", 0.05, "bad",
                                  "double", "no double", 0.3, 0.25))
            elif kind in ("take", "drop") and not any(m.kind == "take" for m in marks):
                played = "take" if kind == "take" else "pass"
                marks.append(Mark(number, index, action["player"], "take", 0.0, None,
                                  played, played, -0.5, -0.5))
    summaries = []
    for seat, name in enumerate(players):
        mine = [m for m in marks if m.player == name]
        count = {s: sum(1 for m in mine if m.skill == s) for s in SKILLS[:3]}
        summaries.append(PlayerSummary(
            name, prs[seat], 4.5 + seat, 1.5, 0.25 - seat * 0.5, 0.1, 20 + seat, 18, 2 + seat,
            count["doubtful"], count["bad"], count["very bad"]))
    return MatchAnalysis(match_id, "done", plies, None, tuple(summaries), tuple(marks),
                         1_700_100_000.0)
