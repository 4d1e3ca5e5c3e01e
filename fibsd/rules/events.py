"""Everything that happens in a match, as frozen values.

Each rules action returns a tuple of these, in the order they happened; the wire layer
turns each into every audience's lines.  Players are the match's indices 0 and 1 (who
invited and who joined, as the server decides), never names or colours: colours swap
every game and belong to the wire layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum

from fibsd.rules.play import Play


class WinKind(IntEnum):
    """How much a game is worth per cube point; also what a resignation offers."""

    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


class EndReason(Enum):
    BORNE_OFF = "borne-off"
    DROPPED = "dropped"  # a double (or instant redouble) was rejected
    RESIGNED = "resigned"  # a resignation was accepted


@dataclass(frozen=True, slots=True)
class GameStarted:
    """``number`` counts from 1; ``score`` is the match score before this game."""

    number: int
    crawford: bool
    score: tuple[int, int]


@dataclass(frozen=True, slots=True)
class OpeningRoll:
    """One die each: ``dice[0]`` is player 0's, ``dice[1]`` player 1's.  Equal dice are
    a tie and another ``OpeningRoll`` follows; otherwise ``winner`` moves first, playing
    both dice."""

    dice: tuple[int, int]

    @property
    def tie(self) -> bool:
        return self.dice[0] == self.dice[1]

    @property
    def winner(self) -> int | None:
        if self.tie:
            return None
        return 0 if self.dice[0] > self.dice[1] else 1


@dataclass(frozen=True, slots=True)
class CubeAutoDoubled:
    """An opening tie doubled the cube (``autodouble``, unlimited matches only)."""

    value: int


@dataclass(frozen=True, slots=True)
class Rolled:
    """``playable`` is how many dice the roll lets the player use (0 to 4)."""

    player: int
    dice: tuple[int, int]
    playable: int


@dataclass(frozen=True, slots=True)
class CannotMove:
    """The roll has no legal play; the turn has passed to the other player."""

    player: int
    dice: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Moved:
    """``play`` is seen from the mover (``play.result`` not swapped); ``automatic`` marks
    a play the server made for the player (forced move, greedy bear-off)."""

    player: int
    play: Play
    automatic: bool = False


@dataclass(frozen=True, slots=True)
class Doubled:
    """``value`` is what the cube will show if the double is taken."""

    player: int
    value: int


@dataclass(frozen=True, slots=True)
class Redoubled:
    """An instant redouble (beaver, raccoon, otter, ...): the doubled player takes at
    ``value`` instead of accepting, and the other player must now answer.  ``count`` is
    1 for a beaver, 2 for a raccoon, and so on."""

    player: int
    value: int
    count: int


@dataclass(frozen=True, slots=True)
class DoubleAccepted:
    """``player`` took; the cube now shows ``value`` and belongs to ``player``."""

    player: int
    value: int


@dataclass(frozen=True, slots=True)
class DoubleRejected:
    """``player`` dropped; a ``GameWon`` for the other player follows."""

    player: int


@dataclass(frozen=True, slots=True)
class ResignOffered:
    """``points`` is ``kind`` times the cube: what the opponent wins by accepting."""

    player: int
    kind: WinKind
    points: int


@dataclass(frozen=True, slots=True)
class ResignAccepted:
    """``player`` accepted the other's resignation; a ``GameWon`` for ``player`` follows."""

    player: int
    points: int


@dataclass(frozen=True, slots=True)
class ResignRejected:
    """``player`` refused the other's resignation; the game goes on where it stopped."""

    player: int


@dataclass(frozen=True, slots=True)
class GameWon:
    winner: int
    points: int
    kind: WinKind
    reason: EndReason


@dataclass(frozen=True, slots=True)
class MatchWon:
    """``score`` is the final score, indexed by player (it may exceed the length)."""

    winner: int
    score: tuple[int, int]


Event = (
    GameStarted
    | OpeningRoll
    | CubeAutoDoubled
    | Rolled
    | CannotMove
    | Moved
    | Doubled
    | Redoubled
    | DoubleAccepted
    | DoubleRejected
    | ResignOffered
    | ResignAccepted
    | ResignRejected
    | GameWon
    | MatchWon
)
