"""ASCII boards (boardstyles 1 and 2) drawn from the same ``BoardView`` as the raw line.

The drawing is always from P1's side: P1's half is at the bottom, points are absolute.
P1 = O sees 13..18 | 19..24 on top and 12..7 | 6..1 below; P1 = X sees 1..6 | 7..12
on top and 24..19 | 18..13 below.  The top bar cell holds P2's checkers, the bottom
one P1's.  Style 2 numbers the points inside the frame lines (the layout every one of
the live Fibs.Net captures shows for ``boardstyle 2``); style 1 draws plain frames with
the numbers on an extra line outside each frame (a live TGSBot transcript; see
protocol/board.md for why the captures settle which style is which).

Frames and status use real names even for the recipient, except the
``You rolled`` status of the recipient's own roll.
"""

from __future__ import annotations

from fibsd.wire.board import UNLIMITED, YOU, BoardView, Colour

STYLES = (1, 2)
ROWS = 5  # checker rows per half; a taller stack shows its count in the fifth row

_MARGIN = "   "
_GAP = " " * 6
_O_TOP = ((13, 14, 15, 16, 17, 18), (19, 20, 21, 22, 23, 24))
_O_BOTTOM = ((12, 11, 10, 9, 8, 7), (6, 5, 4, 3, 2, 1))
_X_TOP = ((1, 2, 3, 4, 5, 6), (7, 8, 9, 10, 11, 12))
_X_BOTTOM = ((24, 23, 22, 21, 20, 19), (18, 17, 16, 15, 14, 13))

Quadrants = tuple[tuple[int, ...], tuple[int, ...]]


def render_board(view: BoardView, style: int = 2, *, own_name: str | None = None,
                 status: str | None = None) -> list[str]:
    """The board's lines in ``style`` (1 or 2), without line ends.

    ``own_name`` is the recipient's real name, required when P1 is ``You``.
    ``status`` replaces the text after the cube when the event is not visible in
    the view (``<name> wants to resign.``); by default it is ``default_status``.
    """
    if style not in STYLES:
        raise ValueError(f"no ASCII boardstyle {style}")
    names = _names(view, own_name)
    p1 = Colour(view.colour)
    top, bottom = (_O_TOP, _O_BOTTOM) if p1 is Colour.O else (_X_TOP, _X_BOTTOM)
    top_frame = f" {p1.other.name}: {names[1]} - score: {view.opponent_score}"
    bottom_frame = f" {p1.name}: {names[0]} - score: {view.player_score}"
    top_rows = [_row(view, top, p1.other.bar, r) for r in range(1, ROWS + 1)]
    bottom_rows = [_row(view, bottom, p1.bar, r) for r in range(ROWS, 0, -1)]
    if style == 2:
        head = [_MARGIN + _numbered_frame(top) + top_frame]
        foot = [_MARGIN + _numbered_frame(bottom) + bottom_frame]
    else:
        plain = "+" + "-" * 42 + "+"
        head = [_number_line(top), _MARGIN + plain + top_frame]
        foot = [_MARGIN + plain + bottom_frame, _number_line(bottom)]
    text = status if status is not None else default_status(view, own_name)
    return [
        *head,
        *top_rows,
        _middle(view),
        *bottom_rows,
        *foot,
        "",
        (f"{_MARGIN}BAR: O-{view.board[25]} X-{-view.board[0]}   "
         f"OFF: O-{_off(view, Colour.O)} X-{_off(view, Colour.X)}   "
         f"{_cube(view, names)}  {text}").rstrip(),
    ]


def default_status(view: BoardView, own_name: str | None = None) -> str:
    """What FIBS shows after the cube when only the view is known: the unplayed roll
    (``<name> rolled 5 3.``, ``You rolled 5 3.``) or whose turn it is (``turn: <name>``);
    empty between games."""
    names = _names(view, own_name)
    if view.player_dice != (0, 0):
        who = YOU if view.player == YOU else names[0]
        return f"{who} rolled {view.player_dice[0]} {view.player_dice[1]}."
    if view.opponent_dice != (0, 0):
        return f"{names[1]} rolled {view.opponent_dice[0]} {view.opponent_dice[1]}."
    if view.turn == 0:
        return ""
    return f"turn: {names[0] if view.turn == view.colour else names[1]}"


def _names(view: BoardView, own_name: str | None) -> tuple[str, str]:
    if view.player != YOU:
        return view.player, view.opponent
    if own_name is None:
        raise ValueError("own_name is needed to draw a board whose P1 is 'You'")
    return own_name, view.opponent


def _cell(count: int, letter: str, row: int) -> str:
    if count < row:
        return "   "
    if row == ROWS and count > ROWS:
        return f"{count:>2} "
    return f" {letter} "


def _point_cell(view: BoardView, slot: int, row: int) -> str:
    value = view.board[slot]
    return _cell(abs(value), "O" if value > 0 else "X", row)


def _row(view: BoardView, quadrants: Quadrants, bar_slot: int, row: int) -> str:
    left, right = ("".join(_point_cell(view, p, row) for p in q) for q in quadrants)
    return f"{_MARGIN}|{left}|{_point_cell(view, bar_slot, row)}| {right}|"


def _middle(view: BoardView) -> str:
    length = ("unlimited match" if view.match_length == UNLIMITED
              else f"{view.match_length}-point match")
    inner = f"|{' ' * 18}|BAR|{' ' * 19}|"
    if view.colour == Colour.O:
        return f"  v{inner}    {length}"
    return f"{_MARGIN}{inner}v    {length}"


def _numbered_frame(quadrants: Quadrants) -> str:
    left, right = ("".join(f"{p:->2}-" for p in q) for q in quadrants)
    return f"+{left}------{right}+"


def _number_line(quadrants: Quadrants) -> str:
    left, right = ("".join(f"{p:>3}" for p in q) for q in quadrants)
    return f"{_MARGIN}{left}{_GAP}{right}"


def _off(view: BoardView, colour: Colour) -> int:
    return view.player_home if colour == view.colour else view.opponent_home


def _cube(view: BoardView, names: tuple[str, str]) -> str:
    flags = (view.player_may_double, view.opponent_may_double)
    if flags == (True, False):
        return f"Cube: {view.cube} (owned by {names[0]})"
    if flags == (False, True):
        return f"Cube: {view.cube} (owned by {names[1]})"
    return f"Cube: {view.cube}"
