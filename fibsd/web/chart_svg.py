"""A player's rating history as an SVG line chart, drawn on the server.

The store keeps each finished match's rating change, not the rating it led to; the
ratings after each match follow backwards from the player's current rating.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

WIDTH, HEIGHT = 320, 140
LEFT, RIGHT, TOP, BOTTOM = 40, 8, 10, 20


def rating_path(current: float, changes: Sequence[float]) -> list[float]:
    """The rating before the first of ``changes`` and after each of them.

    >>> rating_path(1510.0, [5.0, 5.0])
    [1500.0, 1505.0, 1510.0]
    """
    ratings = [current]
    for change in reversed(changes):
        ratings.append(ratings[-1] - change)
    return ratings[::-1]


def draw_chart(ratings: Sequence[float]) -> str:
    """The chart for ``ratings`` (oldest first); a note instead when there is no line."""
    if len(ratings) < 2:
        return ('<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 '
                f'{WIDTH} 30" role="img" aria-label="no rated matches yet"><text x="4" y="18" '
                'font-size="12">No rated matches yet.</text></svg>')
    low, high = min(ratings), max(ratings)
    if high - low < 1:
        low, high = low - 1, high + 1
    span_x = (WIDTH - LEFT - RIGHT) / (len(ratings) - 1)
    span_y = (HEIGHT - TOP - BOTTOM) / (high - low)
    points = " ".join(f"{LEFT + i * span_x:.1f},{TOP + (high - r) * span_y:.1f}"
                      for i, r in enumerate(ratings))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="rating from {ratings[0]:.2f} to {ratings[-1]:.2f} over '
        f'{len(ratings) - 1} matches" data-points="{len(ratings)}">'
        f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" '
        f'height="{HEIGHT - TOP - BOTTOM}" fill="#fbf8f0" stroke="#ccc"/>'
        f'<text x="{LEFT - 3}" y="{TOP + 8}" font-size="9" text-anchor="end">{high:.0f}</text>'
        f'<text x="{LEFT - 3}" y="{HEIGHT - BOTTOM}" font-size="9" text-anchor="end">'
        f'{low:.0f}</text>'
        f'<text x="{LEFT}" y="{HEIGHT - 5}" font-size="9">{len(ratings) - 1} matches ago</text>'
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 5}" font-size="9" text-anchor="end">now</text>'
        f'<polyline points="{points}" fill="none" stroke="#a33b2c" stroke-width="2"/></svg>'
    )
