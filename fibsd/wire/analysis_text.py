"""The lines of ``analysis [number]`` (a match's engine analysis: both players' summary
and the worst decisions), of asking a deeper one, and of the notice that one is ready.

fibsd's own lines (FIBS had no analysis).  Each starts the way no FIBS client reads as
its own (protocol/analysis-command.md): a sentence beginning ``Analysis``, ``Match``,
``Worst`` or a blank, never a digit (CLIP numbers) nor a name followed by a verb a
client pattern knows; refusals are ``** `` lines.  tests/wire/test_analysis_text.py
checks every line against the stock client patterns and fibsd's own client.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

USAGE = "** usage: analysis [match number] [deeper]"
NOT_YOURS = "** You may ask a deeper analysis of your own matches only."
OFF = "** Analysis is off on this server."


@dataclass(frozen=True)
class SummaryRow:
    """One player's figures, as the store keeps them (fibsd.analysis.model)."""

    name: str
    pr: float | None
    checker_error_rate: float | None
    cube_error_rate: float | None
    luck_rate: float | None
    decisions: int
    doubtful: int
    bad: int
    very_bad: int


@dataclass(frozen=True)
class Decision:
    game: int
    player: str
    kind: str  # checker, cube, take
    played: str
    best: str
    error: float
    skill: str | None


def _figure(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def header(match_id: int, players: Sequence[str], length: int, plies: int | None) -> str:
    """``Analysis of match #42, alice - bob, 5 point match, 2-ply:``."""
    size = "unlimited match" if length == 0 else f"{length} point match"
    depth = f", {plies}-ply" if plies is not None else ""
    return f"Analysis of match #{match_id}, {players[0]} - {players[1]}, {size}{depth}:"


def summary(row: SummaryRow) -> str:
    """A player's line, two blanks first: PR, error rates (mEMG), luck, decisions."""
    return (f"  {row.name}: PR {_figure(row.pr)}, checker error rate "
            f"{_figure(row.checker_error_rate)}, cube error rate {_figure(row.cube_error_rate)},"
            f" luck rate {_figure(row.luck_rate, signed=True)}, {row.decisions} decisions"
            f" ({row.doubtful} doubtful, {row.bad} bad, {row.very_bad} very bad)")


def worst_header(shown: int) -> str:
    if shown == 0:
        return "Worst decisions: none, every decision was the engine's best."
    return f"Worst decisions ({shown}):"


def decision(d: Decision) -> str:
    """``  game 2, alice, checker play: 24/20 13/12; best 13/9 13/12; lost 0.123 (bad)``."""
    kind = {"checker": "checker play", "cube": "cube action", "take": "take or pass"}.get(
        d.kind, d.kind)
    skill = f" ({d.skill})" if d.skill else ""
    return (f"  game {d.game}, {d.player}, {kind}: {d.played}; best {d.best};"
            f" lost {d.error:.3f}{skill}")


def state_line(match_id: int, state: str, reason: str | None = None) -> str:
    """A match whose analysis is not there to show."""
    if state == "queued":
        return f"** Match #{match_id} waits for its analysis."
    if state == "running":
        return f"** Match #{match_id} is being analysed now."
    if state == "failed":
        return f"** The analysis of match #{match_id} failed: {reason or 'no reason given'}."
    return f"** Match #{match_id} is not analysed."


def no_match(match_id: int) -> str:
    return f"** There is no finished match #{match_id}."


def no_matches(name: str) -> str:
    return f"** {name} has no finished matches."


def deeper_queued(match_id: int, plies: int) -> str:
    return (f"Match #{match_id} will be analysed again at {plies}-ply;"
            f" you will be told when it is ready.")


def deeper_refused(match_id: int, plies: int) -> str:
    return f"** Match #{match_id} is already analysed at {plies}-ply or deeper."


def deeper_flood(per_day: int) -> str:
    return f"** You may ask {per_day} deeper analyses a day. Please wait."


def ready(match_id: int, players: Sequence[str]) -> str:
    """The notice to a player online when his match's analysis is stored."""
    return (f"Analysis ready: match #{match_id}, {players[0]} - {players[1]}."
            f" Type 'analysis {match_id}' to read it.")
