"""A match's engine analysis as the web face shows it: the ``analysis`` object of
``/matches/<id>.json``, the games' actions with their ``error`` and ``best``, the marks
of each replay step and an SVG chart of the errors across the match.

The store keeps a ``fibsd.analysis.model.MatchAnalysis``; a mark names its decision
by game and action index, as the JSON's games do, and ``Step.actions`` says which
actions each replay step shows, so a mark finds its step without a second replay.

Pure: no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from fibsd.analysis.model import MatchAnalysis, Mark, PlayerSummary
from fibsd.web.replay import Replay

SKILL_CLASS = {"doubtful": "doubtful", "bad": "bad", "very bad": "very-bad"}
SKILL_COLOUR = {"doubtful": "#d9a400", "bad": "#e06a00", "very bad": "#b3001b"}
PLAIN_COLOUR = "#8a8a8a"
WIDTH, HEIGHT = 320, 150
LEFT, RIGHT, TOP, BOTTOM = 34, 8, 14, 18


def _number(value: float | None, places: int = 4) -> float | None:
    return None if value is None else round(value, places)


def player_data(summary: PlayerSummary) -> dict[str, Any]:
    return {"name": summary.name, "pr": _number(summary.pr, 2),
            "checker_error_rate": _number(summary.checker_error_rate, 2),
            "cube_error_rate": _number(summary.cube_error_rate, 2),
            "luck_rate": _number(summary.luck_rate, 2),
            "luck_adjusted_result": _number(summary.luck_adjusted_result),
            "decisions": summary.decisions, "checker_decisions": summary.checker_decisions,
            "cube_decisions": summary.cube_decisions, "doubtful": summary.doubtful,
            "bad": summary.bad, "very_bad": summary.very_bad}


def analysis_object(found: MatchAnalysis | None) -> dict[str, Any]:
    """``/matches/<id>.json``'s ``analysis``: ``off`` when no analysis was or will be
    made (the engine is off, or the match was never queued: it ended before analysis
    was turned on, or ``[analysis] matches`` left it out)."""
    if found is None:
        return {"state": "off", "plies": None, "players": []}
    data: dict[str, Any] = {"state": found.state, "plies": found.plies,
                            "players": [player_data(p) for p in found.players]}
    if found.state == "failed":
        data["error"] = found.error or "unknown"
    if found.analysed_at is not None and found.state == "done":
        data["analysed_at"] = round(found.analysed_at)
    return data


def annotated_games(games: Sequence[dict[str, Any]],
                    marks: Sequence[Mark]) -> list[dict[str, Any]]:
    """A copy of the replay's games (the cached replay is shared) with ``error``,
    ``best``, ``best_equity``, ``played_equity`` and ``skill`` on each analysed action."""
    result = copy.deepcopy(list(games))
    for mark in marks:
        if 1 <= mark.game <= len(result):
            actions = result[mark.game - 1]["actions"]
            if 0 <= mark.action < len(actions):
                actions[mark.action].update({
                    "error": round(mark.error, 4), "best": mark.best,
                    "best_equity": round(mark.best_equity, 4),
                    "played_equity": round(mark.played_equity, 4),
                    "decision": mark.kind, "skill": mark.skill})
    return result


def marks_by_step(played: Replay, marks: Sequence[Mark]) -> dict[int, list[Mark]]:
    """The marks each step shows, by step index."""
    where: dict[tuple[int, int], int] = {}
    for index, step in enumerate(played.steps):
        for action in range(*step.actions):
            where[(step.game, action)] = index
    found: dict[int, list[Mark]] = {}
    for mark in marks:
        shown = where.get((mark.game, mark.action))
        if shown is not None:
            found.setdefault(shown, []).append(mark)
    return found


def worst(marks: Sequence[Mark]) -> Mark | None:
    """The mark whose class is the worst (``very bad`` > ``bad`` > ``doubtful``)."""
    ranked = [m for m in marks if m.skill in SKILL_CLASS]
    return max(ranked, key=lambda m: m.error) if ranked else None


@dataclass(frozen=True)
class StepMark:
    """A step's worst class, for the list of marked steps."""

    step: int
    skill: str
    player: str
    error: float


def marked_steps(by_step: dict[int, list[Mark]]) -> list[StepMark]:
    found = []
    for step in sorted(by_step):
        bad = worst(by_step[step])
        if bad is not None and bad.skill is not None:
            found.append(StepMark(step, bad.skill, bad.player, bad.error))
    return found


def error_chart(played: Replay, by_step: dict[int, list[Mark]], current: int | None) -> str:
    """Each decision's equity lost as a bar at its step: the first player's above the
    line, the second's below, coloured by class (an image: the marked steps' links are
    beside it, as links inside an image are lost to screen readers)."""
    last = max(len(played.steps) - 1, 1)
    errors = [m.error for marks in by_step.values() for m in marks]
    top = max([0.1, *errors])
    middle = TOP + (HEIGHT - TOP - BOTTOM) / 2
    half = (HEIGHT - TOP - BOTTOM) / 2
    width = WIDTH - LEFT - RIGHT
    bar = max(1.5, min(6.0, width / (last + 1)))
    first, second = played.players
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart error-chart" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" data-marks="{len(errors)}" '
        f'aria-label="equity lost at each decision: {escape(first)} above the line, '
        f'{escape(second)} below">',
        f'<rect x="{LEFT}" y="{TOP}" width="{width}" height="{HEIGHT - TOP - BOTTOM}" '
        'fill="#fbf8f0" stroke="#ccc"/>',
        f'<line x1="{LEFT}" y1="{middle:.1f}" x2="{WIDTH - RIGHT}" y2="{middle:.1f}" '
        'stroke="#999"/>',
        f'<text x="{LEFT - 3}" y="{TOP + 8}" font-size="9" text-anchor="end">'
        f'{top:.2f}</text>',
        f'<text x="{LEFT - 3}" y="{HEIGHT - BOTTOM}" font-size="9" text-anchor="end">'
        f'{top:.2f}</text>',
        # the names outside the plot, under and over it, so that no bar hides them
        f'<text x="{WIDTH - RIGHT}" y="{TOP - 3}" font-size="9" text-anchor="end">'
        f'{escape(first)} ▲</text>',
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" y="{HEIGHT - 5}" font-size="9" '
        f'text-anchor="middle">{escape(second)} ▼</text>',
        f'<text x="{LEFT}" y="{HEIGHT - 5}" font-size="9">start</text>',
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 5}" font-size="9" text-anchor="end">end</text>',
    ]
    if current is not None:
        x = LEFT + current / last * width
        parts.append(f'<line class="now" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" '
                     f'y2="{HEIGHT - BOTTOM}" stroke="#333" stroke-dasharray="2 2"/>')
    for step in sorted(by_step):
        x = LEFT + step / last * width - bar / 2
        for mark in by_step[step]:
            size = max(0.5, mark.error / top * half)
            y = middle - size if mark.player == first else middle
            colour = SKILL_COLOUR.get(mark.skill or "", PLAIN_COLOUR)
            label = f"step {step}: {mark.player} lost {mark.error:.3f}"
            if mark.skill:
                label += f" ({mark.skill})"
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" data-step="{step}" '
                         f'width="{bar:.1f}" height="{size:.1f}" fill="{colour}">'
                         f'<title>{escape(label)}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class PrMatch:
    id: int
    finished: int
    pr: float


@dataclass(frozen=True)
class PrProfile:
    """A player's PR on his profile: averages over his last 10 and 50 analysed matches
    (each over as many as there are), the chart, his best and worst match."""

    last10: float
    count10: int
    last50: float
    count50: int
    chart: str
    best: PrMatch
    worst: PrMatch


def pr_profile(analysed: Sequence[tuple[int, float, PlayerSummary]]) -> PrProfile | None:
    """From ``analyses_of`` (newest first); None when no analysed match has a PR."""
    rows = [PrMatch(match_id, int(finished), summary.pr)
            for match_id, finished, summary in analysed if summary.pr is not None]
    if not rows:
        return None
    recent, all_ = rows[:10], rows[:50]
    return PrProfile(
        last10=sum(r.pr for r in recent) / len(recent), count10=len(recent),
        last50=sum(r.pr for r in all_) / len(all_), count50=len(all_),
        chart=pr_chart([r.pr for r in reversed(all_)]),
        best=min(all_, key=lambda r: (r.pr, -r.finished)),
        worst=max(all_, key=lambda r: (r.pr, r.finished)))


def pr_chart(prs: Sequence[float]) -> str:
    """PR per analysed match, oldest first, as a line (a dot alone for one match);
    lower is better, so the scale runs from 0 at the bottom."""
    high = max([5.0, *prs])
    width, height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = width / max(len(prs) - 1, 1)
    points = [(LEFT + i * step, TOP + (high - pr) / high * height) for i, pr in enumerate(prs)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="#a33b2c"/>'
                   for x, y in points)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart pr-chart" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" data-points="{len(prs)}" '
        f'aria-label="PR over the last {len(prs)} analysed matches, from {prs[0]:.2f} to '
        f'{prs[-1]:.2f} (lower is better)">'
        f'<rect x="{LEFT}" y="{TOP}" width="{width}" height="{height}" fill="#fbf8f0" '
        'stroke="#ccc"/>'
        f'<text x="{LEFT - 3}" y="{TOP + 8}" font-size="9" text-anchor="end">{high:.0f}</text>'
        f'<text x="{LEFT - 3}" y="{HEIGHT - BOTTOM}" font-size="9" text-anchor="end">0</text>'
        f'<text x="{LEFT}" y="{HEIGHT - 5}" font-size="9">oldest</text>'
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 5}" font-size="9" text-anchor="end">newest</text>'
        f'<polyline points="{line}" fill="none" stroke="#a33b2c" stroke-width="2"/>{dots}'
        "</svg>")
