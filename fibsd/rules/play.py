"""Moves and plays: the values that move generation produces and notation parses.

Points are in the mover's own numbering: 1..24, with ``BAR_POINT`` (25) for a checker
entering from the bar and ``OFF_POINT`` (0) for one borne off.
"""

from __future__ import annotations

from dataclasses import dataclass

from fibsd.rules.position import Position

BAR_POINT = 25
OFF_POINT = 0


@dataclass(frozen=True, slots=True, order=True)
class Move:
    """One checker moving one die's distance (a hit sends an opposing blot to the bar)."""

    src: int
    dst: int
    hit: bool = False

    @property
    def pips(self) -> int:
        return self.src - self.dst


@dataclass(frozen=True, slots=True)
class Play:
    """A whole turn: the single moves in the order made, and where they lead.

    ``result`` is still seen from the mover's side (not swapped).
    """

    moves: tuple[Move, ...]
    result: Position
