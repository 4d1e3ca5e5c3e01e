"""What an analysis of a match is, as stored and shown: plain frozen data.

Pure: no Twisted, no store, no engine.  The worker fills it from gnubg's output
(``fibsd.analysis.gnubg``), the store keeps it, the web face and the ``analysis``
command read it.  The JSON forms (``mark_data``/``mark_from``) are how the store keeps
the marks of a match: one text column, read whole or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

STATES = ("queued", "running", "done", "failed")
KINDS = ("checker", "cube", "take")
SKILLS = ("doubtful", "bad", "very bad")


@dataclass(frozen=True, slots=True)
class Mark:
    """One decision of the match, as gnubg judged it."""

    game: int  # 1-based game number, as /matches/<id>.json's games
    action: int  # 0-based index into that game's "actions" list
    player: str  # who decided
    kind: str  # "checker" | "cube" (double / no double) | "take" (take / pass / beaver)
    error: float  # equity lost, >= 0 (gnubg's normalised equity, as it prints it)
    skill: str | None  # None | "doubtful" | "bad" | "very bad" (gnubg's thresholds)
    played: str  # moves in the record's notation, or "double", "no double", "take", ...
    best: str  # the best play / right cube action, same vocabulary
    best_equity: float
    played_equity: float


@dataclass(frozen=True, slots=True)
class PlayerSummary:
    """One player's figures for one match (protocol/analysis.md says what counts)."""

    name: str
    pr: float | None  # 500 x total error / decisions counted (None: no decision)
    checker_error_rate: float | None  # per checker decision counted, x 1000 (mEMG)
    cube_error_rate: float | None
    luck_rate: float | None
    luck_adjusted_result: float | None
    decisions: int  # decisions counted for PR
    checker_decisions: int
    cube_decisions: int
    doubtful: int
    bad: int
    very_bad: int


@dataclass(frozen=True, slots=True)
class MatchAnalysis:
    match_id: int
    state: str  # "queued" | "running" | "done" | "failed" (never "off": see the face)
    plies: int | None
    error: str | None  # the reason, when failed
    players: tuple[PlayerSummary, ...]  # in the record's players order (inviter first)
    marks: tuple[Mark, ...]  # every decision counted, in match order
    analysed_at: float | None  # unix time


@dataclass(frozen=True, slots=True)
class AnalysisJob:
    """A job a worker holds: the match to analyse, under a lease it must still hold
    when it stores the result (``token`` names the claim)."""

    match_id: int
    plies: int
    record: str  # the finished match's stored record
    attempt: int  # 1 for the first try
    token: str  # who holds the lease: stored with it, checked when the result is kept


def mark_data(mark: Mark) -> dict[str, Any]:
    return asdict(mark)


def mark_from(data: Mapping[str, Any]) -> Mark:
    return Mark(
        game=int(data["game"]), action=int(data["action"]), player=str(data["player"]),
        kind=str(data["kind"]), error=float(data["error"]),
        skill=None if data.get("skill") is None else str(data["skill"]),
        played=str(data["played"]), best=str(data["best"]),
        best_equity=float(data["best_equity"]), played_equity=float(data["played_equity"]))
