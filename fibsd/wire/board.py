"""The FIBS ``board:`` line (boardstyle 3): its 52 values, and the bridge to the engine.

Rule 1: the 26 board slots are absolute and the same for every recipient.  O owns the
positive counts, moves 24 -> 1, bears off at 0 and has its bar at slot 25; X owns the
negative counts, moves 1 -> 24, bears off at 25 and has its bar at slot 0.

Rule 2: only the "P1" fields depend on the recipient.  P1 is ``You`` for a player and
the watched player's name for a watcher; names, scores, dice, may-double flags, the
colour block, the home/bar counts and can-move/forced-move are P1's first.

Rule 3: direction, home and bar follow from colour alone (O: -1, 0, 25; X: 1, 25, 0).
Mixing them up is the classic clone bug (BaldLies CLIP-BUGS), so ``board_view`` derives
them and never takes them as input.

The engine sees each side in its own numbering (index 0..23 = points 1..24, 24 = bar).
Own point k is absolute k for O and 25 - k for X; the bar (own point 25) lands on slot
25 for O and slot 0 for X by the same formula.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from operator import sub

from fibsd.rules.position import BAR, CHECKERS, Position

PREFIX = "board"
YOU = "You"
UNLIMITED = 9999  # match length FIBS sends for an unlimited match
TOKENS = 53  # "board" plus 52 values
SLOTS = 26

_INT = re.compile(r"0|-?[1-9][0-9]*")


class Colour(IntEnum):
    """A side's colour as FIBS writes it in the ``colour`` and ``turn`` fields."""

    X = -1
    O = 1  # noqa: E741 - the letter FIBS draws

    @property
    def direction(self) -> int:
        return -int(self)

    @property
    def home(self) -> int:
        return 0 if self is Colour.O else 25

    @property
    def bar(self) -> int:
        return 25 if self is Colour.O else 0

    @property
    def other(self) -> Colour:
        return Colour(-int(self))


class InvalidBoardLine(ValueError):
    """The text is not a well-formed ``board:`` line."""

    def __init__(self, line: str, reason: str) -> None:
        super().__init__(f"{reason}: {line!r}")
        self.line = line
        self.reason = reason


@dataclass(frozen=True, slots=True)
class BoardView:
    """One recipient's ``board:`` line, field by field, in FIBS's own meaning.

    Field numbers (``board`` = 0) are in the comments; protocol/board.md has the table.
    """

    player: str  # 1: "You", or the watched player's name
    opponent: str  # 2
    match_length: int  # 3: UNLIMITED for an unlimited match
    player_score: int  # 4
    opponent_score: int  # 5
    board: tuple[int, ...]  # 6-31: absolute slots 0..25 (see Rule 1)
    turn: int  # 32: colour expected to act, 0 between games
    player_dice: tuple[int, int]  # 33-34: (0, 0) when P1 has no unplayed roll
    opponent_dice: tuple[int, int]  # 35-36
    cube: int  # 37
    player_may_double: bool  # 38: only encodes cube ownership
    opponent_may_double: bool  # 39
    was_doubled: bool  # 40: P1 must answer a double
    colour: int  # 41: P1's colour
    direction: int  # 42
    home: int  # 43
    bar: int  # 44
    player_home: int  # 45: P1's checkers borne off
    opponent_home: int  # 46
    player_bar: int  # 47
    opponent_bar: int  # 48
    can_move: int  # 49: pieces P1 must move with P1's latest roll (stale otherwise)
    forced_move: int  # 50: the die of P1's last one-die-only roll, else 0
    did_crawford: bool  # 51: in truth the post-Crawford flag
    redoubles: int  # 52

    def __post_init__(self) -> None:
        if len(self.board) != SLOTS:
            raise ValueError(f"the board has {SLOTS} slots, not {len(self.board)}")
        if len(self.player_dice) != 2 or len(self.opponent_dice) != 2:
            raise ValueError("each dice pair has two values")
        for name in (self.player, self.opponent):
            if not name or ":" in name or any(c.isspace() for c in name):
                raise ValueError(f"bad name {name!r}")

    def values(self) -> tuple[int | str, ...]:
        """The 52 values after ``board``, in line order."""
        return (
            self.player,
            self.opponent,
            self.match_length,
            self.player_score,
            self.opponent_score,
            *self.board,
            self.turn,
            *self.player_dice,
            *self.opponent_dice,
            self.cube,
            int(self.player_may_double),
            int(self.opponent_may_double),
            int(self.was_doubled),
            self.colour,
            self.direction,
            self.home,
            self.bar,
            self.player_home,
            self.opponent_home,
            self.player_bar,
            self.opponent_bar,
            self.can_move,
            self.forced_move,
            int(self.did_crawford),
            self.redoubles,
        )


def format_board(view: BoardView) -> str:
    """The exact line FIBS sends (without CR LF).

    >>> line = ("board:You:someplayer:3:0:1:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:"
    ...         "0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0")
    >>> format_board(parse_board(line)) == line
    True
    """
    return PREFIX + ":" + ":".join(map(str, view.values()))


def parse_board(line: str) -> BoardView:
    """Read a ``board:`` line strictly: 53 tokens, canonical integers, 0/1 flags."""
    tokens = line.split(":")
    if len(tokens) != TOKENS:
        raise InvalidBoardLine(line, f"{len(tokens)} tokens instead of {TOKENS}")
    if tokens[0] != PREFIX:
        raise InvalidBoardLine(line, "does not start with 'board:'")
    bad = [i for i, t in enumerate(tokens[3:], 3) if not _INT.fullmatch(t)]
    if bad:
        raise InvalidBoardLine(line, f"token {bad[0]} is not an integer")
    n = [0, 0, 0] + [int(t) for t in tokens[3:]]
    flags = {38, 39, 40, 51}
    if any(n[i] not in (0, 1) for i in flags):
        raise InvalidBoardLine(line, "a flag is neither 0 nor 1")
    try:
        return BoardView(
            player=tokens[1],
            opponent=tokens[2],
            match_length=n[3],
            player_score=n[4],
            opponent_score=n[5],
            board=tuple(n[6:32]),
            turn=n[32],
            player_dice=(n[33], n[34]),
            opponent_dice=(n[35], n[36]),
            cube=n[37],
            player_may_double=bool(n[38]),
            opponent_may_double=bool(n[39]),
            was_doubled=bool(n[40]),
            colour=n[41],
            direction=n[42],
            home=n[43],
            bar=n[44],
            player_home=n[45],
            opponent_home=n[46],
            player_bar=n[47],
            opponent_bar=n[48],
            can_move=n[49],
            forced_move=n[50],
            did_crawford=bool(n[51]),
            redoubles=n[52],
        )
    except ValueError as exc:
        raise InvalidBoardLine(line, str(exc)) from None


def consistency_problems(view: BoardView) -> list[str]:
    """What in this view breaks the rules every live FIBS board keeps (empty if none).

    A parser needs no such checks; a server test uses them on every board it sends.
    """
    problems: list[str] = []
    if view.colour not in (-1, 1):
        return [f"colour {view.colour} is neither -1 nor 1"]
    colour = Colour(view.colour)
    if (view.direction, view.home, view.bar) != (colour.direction, colour.home, colour.bar):
        problems.append(f"direction/home/bar {view.direction}/{view.home}/{view.bar} "
                        f"do not belong to colour {colour.name}")
    if view.turn not in (-1, 0, 1):
        problems.append(f"turn {view.turn} is not -1, 0 or 1")
    b = view.board
    if b[0] > 0 or b[25] < 0:
        problems.append("slot 0 holds only X (<= 0) and slot 25 only O (>= 0)")
    for c in Colour:
        on_board = sum(c * v for v in b if v * c > 0)
        if on_board > CHECKERS:
            problems.append(f"{c.name} has {on_board} checkers on the board")
    off = {c: CHECKERS - sum(c * v for v in b if v * c > 0) for c in Colour}
    on_bar = {Colour.O: max(b[25], 0), Colour.X: max(-b[0], 0)}
    mine, theirs = colour, colour.other
    if (view.player_home, view.opponent_home) != (off[mine], off[theirs]):
        problems.append(f"home counts {view.player_home}/{view.opponent_home} "
                        f"differ from the board ({off[mine]}/{off[theirs]})")
    if (view.player_bar, view.opponent_bar) != (on_bar[mine], on_bar[theirs]):
        problems.append(f"bar counts {view.player_bar}/{view.opponent_bar} "
                        f"differ from the board ({on_bar[mine]}/{on_bar[theirs]})")
    for who, dice, c in (("P1", view.player_dice, mine), ("P2", view.opponent_dice, theirs)):
        if any(not 0 <= d <= 6 for d in dice) or (0 in dice and dice != (0, 0)):
            problems.append(f"{who} dice {dice} are not a roll")
        elif dice != (0, 0) and view.turn != c:
            problems.append(f"{who} has dice but turn is {view.turn}")
    if view.opponent == YOU:
        problems.append("'You' is only ever the first name")
    return problems


# -- the bridge from the engine ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Seat:
    """One player's facts in the current game, for the views where he is P1 or P2.

    ``dice`` is the roll not yet played, in the order rolled; ``can_move`` and
    ``forced_move`` are the (stale-by-design) values of this player's last roll.
    ``may_double`` encodes cube ownership only: False for the side that does not own
    the cube, and False for both while a double waits for an answer.
    """

    name: str
    colour: Colour
    score: int
    dice: tuple[int, int] = (0, 0)
    may_double: bool = True
    can_move: int = 0
    forced_move: int = 0


@dataclass(frozen=True, slots=True)
class Table:
    """The facts that are the same in every recipient's line.

    ``turn`` is the colour expected to act (None between games or once the game is
    over); ``doubled`` is the colour that must answer a pending double, if any.
    """

    match_length: int
    cube: int = 1
    turn: Colour | None = None
    doubled: Colour | None = None
    post_crawford: bool = False
    redoubles: int = 0


def absolute_board(position: Position, colour: Colour) -> tuple[int, ...]:
    """The 26 slots for ``position`` seen by the side playing ``colour``.

    >>> absolute_board(Position.initial(), Colour.O)[:8]
    (0, -2, 0, 0, 0, 0, 5, 0)
    """
    # O's own point n is slot n (its bar 25), X's own point n is slot 25 - n (its bar
    # 0): O's side shifted up by one, minus X's side reversed.  Built once per board
    # line sent, so without a loop in Python.
    o, x = ((position.player, position.opponent) if colour is Colour.O
            else (position.opponent, position.player))
    return tuple(map(sub, (0, *o), (*x[::-1], 0)))


def _slot(index: int, colour: Colour) -> int:
    """The absolute slot of a side's own index (0..23 points, 24 bar)."""
    own_point = index + 1
    return own_point if colour is Colour.O else 25 - own_point


def board_view(position: Position, me: Seat, them: Seat, table: Table, *,
               recipient_plays: bool = True) -> BoardView:
    """The view in which ``me`` is P1; ``position`` must be seen by ``me``.

    Call it once per recipient: the player (``me``, ``them``, ``position``), the
    opponent (``them``, ``me``, ``position.swap()``), and a watcher of either player
    as that player with ``recipient_plays=False`` (real name instead of ``You``).
    """
    if me.colour is them.colour:
        raise ValueError(f"both players are {me.colour.name}")
    return BoardView(
        player=YOU if recipient_plays else me.name,
        opponent=them.name,
        match_length=table.match_length,
        player_score=me.score,
        opponent_score=them.score,
        board=absolute_board(position, me.colour),
        turn=0 if table.turn is None else int(table.turn),
        player_dice=me.dice,
        opponent_dice=them.dice,
        cube=table.cube,
        player_may_double=me.may_double,
        opponent_may_double=them.may_double,
        was_doubled=table.doubled is me.colour,
        colour=int(me.colour),
        direction=me.colour.direction,
        home=me.colour.home,
        bar=me.colour.bar,
        player_home=position.player_off,
        opponent_home=position.opponent_off,
        player_bar=position.player[BAR],
        opponent_bar=position.opponent[BAR],
        can_move=me.can_move,
        forced_move=me.forced_move,
        did_crawford=table.post_crawford,
        redoubles=table.redoubles,
    )


def view_position(view: BoardView, colour: Colour) -> Position:
    """The engine's Position seen by the side playing ``colour`` (the inverse of
    ``absolute_board``); checkers of the wrong sign on a bar slot raise ValueError.

    >>> line = ("board:You:someplayer:3:0:1:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:"
    ...         "0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0")
    >>> view_position(parse_board(line), Colour.X) == Position.initial()
    True
    """
    b = view.board
    if b[0] > 0 or b[25] < 0:
        raise ValueError(f"a bar slot holds the wrong colour: {b[0]}, {b[25]}")
    sides = {
        c: tuple(max(c * b[_slot(index, c)], 0) for index in range(BAR + 1)) for c in Colour
    }
    return Position(sides[colour], sides[colour.other])
