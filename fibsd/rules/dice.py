"""Where the dice come from: injected, so games are reproducible in tests and replays.

The rules never roll on their own; every call that needs dice takes a ``DiceSource``.
An opening roll uses the same ``roll()`` as any other: its first die is player 0's,
its second player 1's.  Two independent dice are two independent dice, so one kind of
source (and one kind of recorded roll) serves both.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Protocol

Dice = tuple[int, int]


class DiceSource(Protocol):
    def roll(self) -> Dice:
        """Two independent dice, each 1..6, in the order rolled."""
        ...


class SystemDice:
    """Dice from the operating system's CSPRNG, so no player can predict them."""

    def roll(self) -> Dice:
        return (secrets.randbelow(6) + 1, secrets.randbelow(6) + 1)

    def __repr__(self) -> str:
        return "SystemDice()"


class DiceExhausted(LookupError):
    """A scripted source was asked for more rolls than it was given."""

    def __init__(self, used: int) -> None:
        super().__init__(f"all {used} scripted rolls are used up")
        self.used = used


class ScriptedDice:
    """Rolls given in advance, handed out in order: for tests and for replaying a record.

    >>> dice = ScriptedDice([(3, 1), (6, 6)])
    >>> dice.roll(), dice.roll(), dice.remaining
    ((3, 1), (6, 6), 0)
    """

    def __init__(self, rolls: Iterable[Dice]) -> None:
        self._rolls: list[Dice] = []
        for roll in rolls:
            pair = tuple(roll)
            if len(pair) != 2 or any(type(d) is not int or not 1 <= d <= 6 for d in pair):
                raise ValueError(f"not a roll of two dice 1..6: {roll!r}")
            self._rolls.append((pair[0], pair[1]))
        self._next = 0

    def roll(self) -> Dice:
        if self._next >= len(self._rolls):
            raise DiceExhausted(self._next)
        roll = self._rolls[self._next]
        self._next += 1
        return roll

    @property
    def remaining(self) -> int:
        return len(self._rolls) - self._next

    def __repr__(self) -> str:
        return f"ScriptedDice({self._rolls[self._next:]!r})"
