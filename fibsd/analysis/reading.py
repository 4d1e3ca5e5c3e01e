"""gnubg's analysis of a match, read into fibsd's marks and summaries.

Pure: no I/O, no engine.  ``engine.run_gnubg`` gives gnubg's ``match()`` dictionary
(its cube equities already normalised, EMG); this module lays it beside the stored
record, replayed as ``/matches/<id>.json`` shows it, and

* maps every gnubg decision to (game, action index) of the record: the n-th checker
  turn gnubg read (a play or a roll that could not be played) is the record's n-th
  ``move``/``cannot_move`` of that game, a no-double decision is the ``roll`` before
  it, and doubles, takes and drops are taken in order;
* refuses a match gnubg read otherwise than the record says (``Mismatch``: another
  number of games or turns, other dice, a play where the record has none): gnubg's
  importer then analysed some other match, and a wrong analysis is worse than none;
* takes each player's figures from gnubg's own statistics, so that the PR is what
  gnubg reports (protocol/analysis.md gives the definitions), and the marks (one per
  decision counted) from the per-decision analysis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fibsd.analysis.model import Mark, MatchAnalysis, PlayerSummary
from fibsd.rules.notation import format_fibs_moves
from fibsd.web.replay import Replay
from fibsd.wire.board import Colour

# gnubg 1.07's default analysis thresholds (EMG): ``show analysis``
DOUBTFUL, BAD, VERY_BAD = 0.03, 0.06, 0.12
# gnubg counts a no-double decision when doubling would be less than a very bad
# error (eval.c's isCloseCubedecision)
CLOSE_CUBE = 0.16
_SIDES = ("X", "O")  # gnubg's names for the .mat's player 1 and player 2


class Mismatch(ValueError):
    """gnubg read the exported match otherwise than the record says."""


def skill(error: float) -> str | None:
    """gnubg's mark for an error of ``error`` (EMG) at its default thresholds."""
    if error > VERY_BAD:
        return "very bad"
    if error > BAD:
        return "bad"
    if error > DOUBTFUL:
        return "doubtful"
    return None


def read_analysis(data: Mapping[str, Any], replay: Replay, match_id: int, plies: int,
                  now: float) -> MatchAnalysis:
    """The analysis of the match ``replay`` shows, from gnubg's ``data``."""
    games = data.get("games") or []
    if len(games) != len(replay.games):
        raise Mismatch(f"gnubg read {len(games)} games, the record has {len(replay.games)}")
    marks: list[Mark] = []
    for number, (theirs, ours) in enumerate(zip(games, replay.games), 1):
        marks += _game_marks(number, theirs.get("game") or [], ours, replay.players)
    stats = data.get("stats") or {}
    players = tuple(_summary(name, stats.get(side) or {}, [m for m in marks if m.player == name])
                    for side, name in zip(_SIDES, replay.players))
    return MatchAnalysis(match_id, "done", plies, None, players, tuple(marks), now)


def _summary(name: str, stats: Mapping[str, Any], marks: Sequence[Mark]) -> PlayerSummary:
    """One player's figures from gnubg's statistics.  gnubg's ``moves`` ``error-skill``
    is the total checker error, its ``cube`` ``error-skill`` the error per close cube
    decision (as ``show statistics`` prints them: totals and rates)."""
    moves, cube, dice = (stats.get(key) or {} for key in ("moves", "cube", "dice"))
    unforced = int(moves.get("unforced-moves", 0))
    close = int(cube.get("close-cube", 0))
    checker_total = float(moves.get("error-skill", 0.0))
    cube_rate = float(cube.get("error-skill", 0.0))
    total = checker_total + cube_rate * close
    decisions = unforced + close
    rolls = int(moves.get("total-moves", 0))
    luck = dice.get("luck")
    adjusted = dice.get("luck-adjusted-result")
    return PlayerSummary(
        name=name,
        pr=500.0 * total / decisions if decisions else None,
        checker_error_rate=1000.0 * checker_total / unforced if unforced else None,
        cube_error_rate=1000.0 * cube_rate if close else None,
        luck_rate=1000.0 * float(luck) / rolls if rolls and luck is not None else None,
        luck_adjusted_result=None if adjusted is None else float(adjusted),
        decisions=decisions, checker_decisions=unforced, cube_decisions=close,
        doubtful=sum(m.skill == "doubtful" for m in marks),
        bad=sum(m.skill == "bad" for m in marks),
        very_bad=sum(m.skill == "very bad" for m in marks))


def _game_marks(number: int, entries: Sequence[Mapping[str, Any]],
                game: Mapping[str, Any], players: tuple[str, str]) -> list[Mark]:
    actions: list[Mapping[str, Any]] = game["actions"]
    turns = [i for i, a in enumerate(actions) if a["action"] in ("move", "cannot_move")]
    queues = {kind: [i for i, a in enumerate(actions) if a["action"] == kind]
              for kind in ("double", "take", "drop")}
    direction = {game["O"]: Colour.O.direction, game["X"]: Colour.X.direction}
    marks: list[Mark] = []
    offer: Mapping[str, Any] | None = None  # the cube analysis of the double answered
    beaver = False
    for entry in entries:
        kind = entry.get("action")
        name = players[0] if entry.get("player") == "X" else players[1]
        analysis = entry.get("analysis") or {}
        if kind == "move":
            played = entry.get("move") or []
            if not turns:
                if played:  # past the record's last turn: a play it never made
                    raise Mismatch(f"game {number}: gnubg read a play the record lacks")
                continue  # dice alone (a game resigned before its first play)
            index = turns.pop(0)
            action = actions[index]
            if bool(played) != (action["action"] == "move") or action["player"] != name:
                raise Mismatch(f"game {number}: gnubg read action {index} otherwise")
            roll = _roll_before(actions, index)
            if roll is not None and sorted(actions[roll]["dice"]) != sorted(entry["dice"]):
                raise Mismatch(f"game {number}: gnubg read other dice at action {roll}")
            cube = entry.get("fibsd-cube")
            if cube is not None:
                if roll is None:
                    raise Mismatch(f"game {number}: a cube decision before the opening")
                mark = _no_double(number, roll, name, cube)
                if mark is not None:
                    marks.append(mark)
            candidates = analysis.get("moves") or []
            if analysis.get("fibsd-candidates", len(candidates)) > 1:
                marks.append(_checker(number, index, name, action, candidates,
                                      int(analysis.get("imove", 0)), analysis.get("skill"),
                                      direction[name]))
        elif kind == "double":
            index = _pop(queues["double"], number, "double")
            cube = entry.get("fibsd-cube")
            if offer is not None and cube is not None:  # a beaver: taken and redoubled
                marks.append(_answer(number, index, name, offer, "beaver", analysis))
                beaver = True
            elif cube is not None:
                marks.append(_double(number, index, name, cube, analysis))
            offer = cube
        elif kind in ("take", "drop"):
            index = _pop(queues[kind], number, kind)
            if offer is not None and not beaver:
                marks.append(_answer(number, index, name, offer,
                                     "take" if kind == "take" else "pass", analysis))
            offer, beaver = None, False
    left = [kind for kind, queue in queues.items() if queue] + (["move"] if turns else [])
    if left:
        raise Mismatch(f"game {number}: gnubg read fewer {' and '.join(left)} actions")
    return marks


def _pop(queue: list[int], number: int, kind: str) -> int:
    if not queue:
        raise Mismatch(f"game {number}: gnubg read a {kind} the record lacks")
    return queue.pop(0)


def _roll_before(actions: Sequence[Mapping[str, Any]], index: int) -> int | None:
    """The ``roll`` action the turn at ``index`` played (None: the opening roll's)."""
    for back in range(index - 1, -1, -1):
        kind = actions[back]["action"]
        if kind == "roll":
            return back
        if kind in ("opening", "move", "cannot_move"):
            return None
    return None


def _checker(number: int, index: int, name: str, action: Mapping[str, Any],
             candidates: Sequence[Mapping[str, Any]], chosen: int, marked: str | None,
             direction: int) -> Mark:
    best = candidates[0]
    played = candidates[chosen]
    error = max(0.0, float(best["score"]) - float(played["score"]))
    return Mark(number, index, name, "checker", error,
                marked if marked in ("doubtful", "bad", "very bad") else None,
                str(action["moves"]),
                format_fibs_moves([tuple(pair) for pair in best["move"]], direction),
                float(best["score"]), float(played["score"]))


def _optimal(cube: Mapping[str, float]) -> float:
    return max(cube["nd"], min(cube["dt"], cube["dp"]))


def _no_double(number: int, roll: int, name: str, cube: Mapping[str, float]) -> Mark | None:
    """The decision not to double before ``roll``, if gnubg counts it (a close one)."""
    optimal = _optimal(cube)
    if optimal - min(cube["dt"], 1.0) >= CLOSE_CUBE:
        return None
    error = max(0.0, optimal - cube["nd"])
    best = "no double" if cube["nd"] >= optimal else "double"
    return Mark(number, roll, name, "cube", error, skill(error), "no double", best,
                optimal, cube["nd"])


def _double(number: int, index: int, name: str, cube: Mapping[str, float],
            analysis: Mapping[str, Any]) -> Mark:
    optimal = _optimal(cube)
    doubled = min(cube["dt"], cube["dp"])
    error = max(0.0, optimal - doubled)
    best = "no double" if cube["nd"] >= optimal and cube["nd"] > doubled else "double"
    return Mark(number, index, name, "cube", error, analysis.get("skill") or skill(error),
                "double", best, optimal, doubled)


def _answer(number: int, index: int, name: str, offer: Mapping[str, float], played: str,
            analysis: Mapping[str, Any]) -> Mark:
    """A take, pass or beaver, in the taker's equity (the double's analysis turned
    round): taking gives -dt, passing -dp (= -1), a beaver -2 dt."""
    options = {"take": -offer["dt"], "pass": -offer["dp"]}
    if played == "beaver":
        options["beaver"] = -2.0 * offer["dt"]
    best = max(options, key=lambda option: options[option])
    error = max(0.0, options[best] - options[played])
    return Mark(number, index, name, "take", error, analysis.get("skill") or skill(error),
                played, best, options[best], options[played])
