"""The backgammon board as SVG, drawn on the server (no script, any browser, any size).

A ``Picture`` holds what is drawn, in the ``board:`` line's absolute terms: 26 slots
with O's checkers positive and X's negative, O moving 24 -> 1 (home bottom right, bar
slot 25) and X moving 1 -> 24 (home top right, bar slot 0).  The top row shows points
13..24 from left to right, the bottom row 12..1.  Live boards come from a watcher's
``board:`` line (``from_board_view``); replays build the picture from the rules.

Names are the only text from users; they are escaped here.  The ``data-board``
attribute carries the slots, so a test (or a script) can tell two boards apart.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from fibsd.wire.board import YOU, BoardView

POINT_W = 22  # width of a point
BAR_W = 24
MARGIN = 8
CHECKER_R = 10
HEIGHT = 260
HALF = 6 * POINT_W
BOARD_W = 2 * HALF + BAR_W
TRAY_X = MARGIN + BOARD_W + 6
WIDTH = TRAY_X + 34
STACK = 5  # checkers drawn on a point before a count is written on the last one
O_FILL, X_FILL = "#f6f1e4", "#2b2b2b"
DIE_PIPS = {1: [(1, 1)], 2: [(0, 0), (2, 2)], 3: [(0, 0), (1, 1), (2, 2)],
            4: [(0, 0), (2, 0), (0, 2), (2, 2)], 5: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)],
            6: [(0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)]}


@dataclass(frozen=True)
class Picture:
    slots: tuple[int, ...]  # the 26 absolute slots of the board line
    o_name: str
    x_name: str
    o_off: int
    x_off: int
    cube: int = 1
    cube_owner: int = 0  # 1 O, -1 X, 0 centred
    dice: tuple[int, int] | None = None
    dice_colour: int = 0  # whose dice: 1 O, -1 X
    o_score: int = 0
    x_score: int = 0
    length: int = 0  # 0: unlimited


def from_board_view(view: BoardView) -> Picture:
    """A watcher's (or a player's) ``board:`` line as a picture."""
    me = view.colour
    them = -me
    names = {me: view.player, them: view.opponent}
    off = {me: view.player_home, them: view.opponent_home}
    scores = {me: view.player_score, them: view.opponent_score}
    dice = None
    dice_colour = 0
    for colour, rolled in ((me, view.player_dice), (them, view.opponent_dice)):
        if rolled[0] and rolled[1]:
            dice, dice_colour = (rolled[0], rolled[1]), colour
    mine, theirs = view.player_may_double, view.opponent_may_double
    owner = 0 if mine == theirs else (me if mine else them)
    length = 0 if view.match_length >= 9999 else view.match_length
    return Picture(view.board, names[1], names[-1], off[1], off[-1], view.cube, owner,
                   dice, dice_colour, scores[1], scores[-1], length)


def _point_x(point: int) -> float:
    """Left edge of ``point`` (1..24): 13..24 along the top, 12..1 along the bottom."""
    column = point - 13 if point >= 13 else 12 - point  # 0..11 from the left
    return MARGIN + column * POINT_W + (BAR_W if column >= 6 else 0)


def _checkers(cx: float, top: bool, count: int, fill: str, cls: str) -> list[str]:
    parts = []
    shown = min(count, STACK)
    for i in range(shown):
        offset = MARGIN + CHECKER_R + i * 2 * CHECKER_R
        cy = offset if top else HEIGHT - offset
        parts.append(f'<circle class="{cls}" cx="{cx:g}" cy="{cy:g}" r="{CHECKER_R - 0.5:g}" '
                     f'fill="{fill}" stroke="#777"/>')
        if i == shown - 1 and count > STACK:
            ink = X_FILL if fill == O_FILL else O_FILL
            parts.append(f'<text x="{cx:g}" y="{cy + 4:g}" font-size="11" text-anchor="middle" '
                         f'fill="{ink}">{count}</text>')
    return parts


def _die(x: float, y: float, value: int, colour: int) -> str:
    fill, ink = (O_FILL, X_FILL) if colour == 1 else (X_FILL, O_FILL)
    size = 18
    pips = "".join(f'<circle cx="{x + 4 + col * 5:g}" cy="{y + 4 + row * 5:g}" r="1.7" '
                   f'fill="{ink}"/>' for col, row in DIE_PIPS.get(value, []))
    return (f'<g class="die" data-value="{value}"><rect x="{x:g}" y="{y:g}" width="{size}" '
            f'height="{size}" rx="3" fill="{fill}" stroke="#777"/>{pips}</g>')


def draw_board(picture: Picture, title: str = "") -> str:
    """The SVG element (text, safe to put into HTML as is)."""
    p = picture
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="board" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" data-board="{":".join(map(str, p.slots))}" '
        f'aria-label="{escape(title or "backgammon board")}">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#7a5230" rx="6"/>',
        f'<rect x="{MARGIN}" y="{MARGIN}" width="{BOARD_W}" height="{HEIGHT - 2 * MARGIN}" '
        'fill="#e8d8b0"/>',
        f'<rect x="{MARGIN + HALF}" y="{MARGIN}" width="{BAR_W}" '
        f'height="{HEIGHT - 2 * MARGIN}" fill="#7a5230"/>',
    ]
    tip = HEIGHT / 2 - 14
    for point in range(1, 25):
        x = _point_x(point)
        fill = "#a33b2c" if point % 2 else "#3c6e71"
        if point >= 13:
            shape = f"{x:g},{MARGIN} {x + POINT_W:g},{MARGIN} {x + POINT_W / 2:g},{tip:g}"
        else:
            bottom = HEIGHT - MARGIN
            shape = (f"{x:g},{bottom} {x + POINT_W:g},{bottom} "
                     f"{x + POINT_W / 2:g},{HEIGHT - tip:g}")
        parts.append(f'<polygon points="{shape}" fill="{fill}"/>')
        label_y = MARGIN - 1.5 if point >= 13 else HEIGHT - 1.5
        parts.append(f'<text x="{x + POINT_W / 2:g}" y="{label_y:g}" font-size="6.5" '
                     f'text-anchor="middle" fill="#f0e6d0">{point}</text>')
        count = p.slots[point]
        if count:
            fill_c, cls = (O_FILL, "o") if count > 0 else (X_FILL, "x")
            parts += _checkers(x + POINT_W / 2, point >= 13, abs(count), fill_c, cls)
    bar_x = MARGIN + HALF + BAR_W / 2
    # O enters from the bar into X's home (top right) and X into O's: draw each side's
    # bar checkers on the half they re-enter from.
    if p.slots[25] > 0:
        parts += _bar(bar_x, HEIGHT / 2 + 14, p.slots[25], O_FILL, "o")
    if p.slots[0] < 0:
        parts += _bar(bar_x, HEIGHT / 2 - 14, -p.slots[0], X_FILL, "x")
    for colour, count, y in ((-1, p.x_off, MARGIN + 4), (1, p.o_off, HEIGHT / 2 + 6)):
        fill = O_FILL if colour == 1 else X_FILL
        for i in range(count):
            parts.append(f'<rect x="{TRAY_X + 4}" y="{y + i * 7:g}" width="24" height="6" '
                         f'fill="{fill}" stroke="#777"/>')
        if count:
            parts.append(f'<text class="off" x="{TRAY_X + 16}" y="{y + count * 7 + 9:g}" '
                         f'font-size="9" text-anchor="middle" fill="#fff">{count}</text>')
    cube_y = {1: HEIGHT - MARGIN - 24, -1: MARGIN + 2, 0: HEIGHT / 2 - 11}[p.cube_owner]
    parts.append(f'<g class="cube"><rect x="{TRAY_X + 5}" y="{cube_y:g}" width="22" '
                 f'height="22" rx="3" fill="#fff" stroke="#333"/><text x="{TRAY_X + 16}" '
                 f'y="{cube_y + 15:g}" font-size="11" text-anchor="middle">'
                 f'{p.cube if p.cube > 1 else 64}</text></g>')
    if p.dice is not None:
        left = MARGIN + HALF + BAR_W + HALF / 2 - 21 if p.dice_colour == 1 \
            else MARGIN + HALF / 2 - 21
        parts.append(_die(left, HEIGHT / 2 - 9, p.dice[0], p.dice_colour))
        parts.append(_die(left + 24, HEIGHT / 2 - 9, p.dice[1], p.dice_colour))
    parts.append("</svg>")
    return "".join(parts)


def _bar(cx: float, cy: float, count: int, fill: str, cls: str) -> list[str]:
    ink = X_FILL if fill == O_FILL else O_FILL
    return [f'<circle class="{cls} bar" cx="{cx:g}" cy="{cy:g}" r="{CHECKER_R - 0.5:g}" '
            f'fill="{fill}" stroke="#777"/>',
            f'<text x="{cx:g}" y="{cy + 4:g}" font-size="11" text-anchor="middle" '
            f'fill="{ink}">{count}</text>']


def names_line(picture: Picture) -> str:
    """``alice (O) 2 - bob (X) 1, 5 point match`` as plain text (escape it to show)."""
    what = "unlimited match" if picture.length == 0 else f"{picture.length} point match"
    o = picture.o_name if picture.o_name != YOU else "you"
    return f"{o} (O) {picture.o_score} - {picture.x_name} (X) {picture.x_score}, {what}"
