"""A tournament for the web face: its JSON object and its knockout bracket as SVG.

Both are made from the stored records alone (``fibsd.store.tournaments``), so the page
and the JSON always agree with ``tournament <id>`` on the wire.  The bracket is drawn by
the server (no script): one column per round, one box per pairing with both names, the
winner in bold, and each box a link to the match's replay (decided) or live board
(being played).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

BOX_W, BOX_H, GAP_X, GAP_Y, LINE = 170, 44, 40, 12, 18


def rounds_data(pairings: Sequence[Any]) -> list[list[dict[str, Any]]]:
    """``rounds`` of the JSON: per round, each pairing's players, winner, match, forfeit."""
    rounds: list[list[dict[str, Any]]] = []
    for p in pairings:
        while len(rounds) < p.round:
            rounds.append([])
        rounds[p.round - 1].append({"players": [p.first, p.second], "winner": p.winner,
                                    "match": p.match_id, "forfeit": bool(p.forfeit)})
    return rounds


def tournament_data(record: Any, entries: Sequence[tuple[str, float]],
                    pairings: Sequence[Any],
                    standings: Sequence[tuple[str, float, float]] | None) -> dict[str, Any]:
    """``/tournaments/<id>.json`` (protocol/web.md)."""
    data: dict[str, Any] = {
        "id": record.id,
        "name": record.name,
        "format": record.format,
        "state": record.state,
        "lengths": list(record.lengths),
        "rounds_planned": record.rounds,
        "max_players": record.max_players,
        "bots": record.bots,
        "clock": record.clock or None,
        "start_at": record.start_at,
        "players": [name for name, _ in entries],
        "rounds": rounds_data(pairings),
        "winner": record.winner,
    }
    if standings is not None:
        data["standings"] = [{"name": n, "points": p, "buchholz": b} for n, p, b in standings]
    return data


def match_link(p: Any, live: Callable[[Any], bool]) -> str | None:
    """Where a pairing's box leads: the replay, or the live board while it is played."""
    if p.match_id is not None:
        return f"/matches/{p.match_id}"
    if p.second is not None and p.winner is None and live(p):
        return f"/live/{quote(p.first, safe='')}"
    return None


def bracket_svg(pairings: Sequence[Any], total_rounds: int, live: Callable[[Any], bool],
                title: str) -> str:
    """The knockout bracket: round r's pairing i sits between its two feeders."""
    by_round: dict[int, list[Any]] = {}
    for p in pairings:
        by_round.setdefault(p.round, []).append(p)
    first = len(by_round.get(1, [])) or 1
    height = first * (BOX_H + GAP_Y) + GAP_Y
    width = max(1, total_rounds) * (BOX_W + GAP_X) + GAP_X
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="bracket" role="img" '
             f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
             f"<title>{escape(title)}</title>"]
    for number in range(1, max(1, total_rounds) + 1):
        slots = first // (2 ** (number - 1)) or 1
        span = height / slots
        x = GAP_X + (number - 1) * (BOX_W + GAP_X)
        shown = by_round.get(number, [])
        for index in range(slots):
            y = span * index + (span - BOX_H) / 2
            p = shown[index] if index < len(shown) else None
            parts.append(_box(p, x, y, live))
            if number > 1:  # the lines from the two feeders
                for feeder in (2 * index, 2 * index + 1):
                    fy = (height / (slots * 2)) * feeder + height / (slots * 4)
                    parts.append(f'<path class="feed" d="M{x - GAP_X} {fy:.1f} H{x - GAP_X / 2}'
                                 f' V{y + BOX_H / 2:.1f} H{x}"/>')
    parts.append("</svg>")
    return "".join(parts)


def _box(p: Any, x: float, y: float, live: Callable[[Any], bool]) -> str:
    names = ("", "") if p is None else (p.first, p.second or "(bye)")
    rows = []
    for row, name in enumerate(names):
        won = p is not None and p.winner is not None and p.winner == name
        mark = ' font-weight="bold"' if won else ""
        tail = " (by forfeit)" if won and p.forfeit else ""
        rows.append(f'<text x="{x + 8}" y="{y + 16 + row * LINE:.1f}"{mark}>'
                    f"{escape(name + tail)}</text>")
    box = (f'<rect x="{x}" y="{y:.1f}" width="{BOX_W}" height="{BOX_H}" rx="4"/>'
           + "".join(rows))
    link = None if p is None else match_link(p, live)
    if link is None:
        return f'<g class="pairing">{box}</g>'
    label = escape(f"{names[0]} - {names[1]}")
    return f'<a href="{escape(link)}" aria-label="{label}"><g class="pairing">{box}</g></a>'
