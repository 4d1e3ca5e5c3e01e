"""The board as seen by the player on roll, and the GNU Backgammon Position ID.

A position is always seen from the player on roll ("player"); ``swap()`` hands the
board to the other side.  Each side is 25 counts in that side's own numbering:
index 0..23 hold points 1..24, index 24 is the bar.  Borne-off checkers are the
ones missing from the 15, which is also why a Position ID does not store them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

CHECKERS = 15
BAR = 24  # index of the bar in a side's tuple
_SIDE_LEN = 25

_START = (0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0)


class InvalidPositionId(ValueError):
    """The text is not a well-formed 14-character Position ID of a legal board."""

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"{text!r}: {reason}")
        self.text = text
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Position:
    """Checker counts of both sides, each in its own numbering (see module doc)."""

    player: tuple[int, ...]
    opponent: tuple[int, ...]

    def __post_init__(self) -> None:
        for side in (self.player, self.opponent):
            if len(side) != _SIDE_LEN or any(n < 0 for n in side) or sum(side) > CHECKERS:
                raise ValueError(f"bad side {side!r}")
        for point in range(24):
            if self.player[point] and self.opponent[23 - point]:
                raise ValueError(f"both sides on the player's point {point + 1}")

    @classmethod
    def initial(cls) -> Position:
        return cls(_START, _START)

    # -- Position ID ---------------------------------------------------------------

    @classmethod
    def from_position_id(cls, text: str) -> Position:
        """Decode gnubg's id: 80 bits, LSB first, opponent's 25 slots then the player's,
        each slot a run of ones (one per checker) closed by a zero.

        >>> Position.from_position_id("4HPwATDgc/ABMA") == Position.initial()
        True
        """
        if len(text) != 14:
            raise InvalidPositionId(text, "a Position ID has 14 characters")
        try:
            key = base64.b64decode(text + "==", validate=True)
        except ValueError:
            raise InvalidPositionId(text, "not base64") from None
        bits = int.from_bytes(key, "little")
        sides: list[list[int]] = [[], []]
        bit = 0
        for side in sides:
            while len(side) < _SIDE_LEN:
                count = 0
                while bit < 80 and bits >> bit & 1:
                    count += 1
                    bit += 1
                if bit >= 80:
                    raise InvalidPositionId(text, "runs past the end of the key")
                bit += 1
                side.append(count)
        try:
            return cls(tuple(sides[1]), tuple(sides[0]))
        except ValueError as exc:
            raise InvalidPositionId(text, str(exc)) from None

    def position_id(self) -> str:
        """Encode as gnubg's 14-character Position ID."""
        bits = 0
        bit = 0
        for side in (self.opponent, self.player):
            for count in side:
                bits |= ((1 << count) - 1) << bit
                bit += count + 1
        return base64.b64encode(bits.to_bytes(10, "little")).decode("ascii")[:14]

    # -- derived facts ------------------------------------------------------------

    def swap(self) -> Position:
        """The same board seen by the other player (valid since this one is: made
        without checking again, as a board is swapped for every board line sent)."""
        swapped = object.__new__(Position)
        _SET_PLAYER(swapped, self.opponent)
        _SET_OPPONENT(swapped, self.player)
        return swapped

    @property
    def player_off(self) -> int:
        return CHECKERS - sum(self.player)

    @property
    def opponent_off(self) -> int:
        return CHECKERS - sum(self.opponent)

    def pips(self) -> tuple[int, int]:
        """Pip counts (player, opponent); a checker on the bar counts 25."""
        return (
            sum(n * (i + 1) for i, n in enumerate(self.player)),
            sum(n * (i + 1) for i, n in enumerate(self.opponent)),
        )

    def __repr__(self) -> str:
        return f"Position.from_position_id({self.position_id()!r})"


_SET_PLAYER = Position.player.__set__  # type: ignore[attr-defined,misc]
_SET_OPPONENT = Position.opponent.__set__  # type: ignore[attr-defined,misc]
