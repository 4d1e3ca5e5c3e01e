"""Where the dice come from: injected, so games are reproducible in tests and replays.

The rules never roll on their own; every call that needs dice takes a ``DiceSource``.
An opening roll uses the same ``roll()`` as any other: its first die is player 0's,
its second player 1's.  Two independent dice are two independent dice, so one kind of
source (and one kind of recorded roll) serves both.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

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


# -- provably fair dice (protocol/fair-dice.md) ------------------------------------------

SEED_BYTES = 32
_ACCEPT_BELOW = 252  # 7 * 36: a byte below it maps onto the 36 outcomes evenly


def commitment(server_seed: bytes) -> str:
    """What the players see before the match: SHA-256 of the server seed, in hex."""
    return hashlib.sha256(server_seed).hexdigest()


def mixed_seed(server_seed: bytes, inviter_text: str, joiner_text: str) -> bytes:
    """The seed a match rolls with: the server's seed keyed over both players' texts
    (UTF-8, joined by one zero byte), so neither side alone chooses the dice."""
    message = inviter_text.encode("utf-8") + b"\x00" + joiner_text.encode("utf-8")
    return hmac.new(server_seed, message, hashlib.sha256).digest()


def seeded_roll(seed: bytes, number: int) -> Dice:
    """Roll ``number`` (0 for the match's first opening roll) of the match with ``seed``."""
    block = 0
    while True:
        message = number.to_bytes(8, "big") + block.to_bytes(4, "big")
        for byte in hmac.new(seed, message, hashlib.sha256).digest():
            if byte < _ACCEPT_BELOW:
                value = byte % 36
                return (value // 6 + 1, value % 6 + 1)
        block += 1


@dataclass
class SeededDice:
    """A match's dice: every roll derived from the seed and the roll counter, so
    anyone can recompute them once ``server_seed`` is revealed.  ``texts`` are the
    inviter's and the joiner's ``diceseed`` texts mixed in at the start."""

    server_seed: bytes
    texts: tuple[str, str] = ("", "")
    next_roll: int = 0
    unseeded: int = 0  # rolls made before the match had a seed (older saved matches)
    # A match that was left or saved goes on under a fresh seed from the roll it had
    # reached (``first_roll``); the seeds before it, revealed when it was saved, are kept
    # as ``earlier``: {"server_seed", "texts", "first_roll", "next_roll"} each.
    first_roll: int = 0
    earlier: tuple[dict[str, Any], ...] = ()
    seed: bytes = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.server_seed) != SEED_BYTES:
            raise ValueError(f"a server seed has {SEED_BYTES} bytes")
        if not 0 <= self.first_roll <= self.next_roll:
            raise ValueError("the roll counter is never negative nor before the seed's first")
        self.seed = mixed_seed(self.server_seed, *self.texts)

    @property
    def used(self) -> bool:
        """Whether a roll was made under this seed (so revealing it shows something)."""
        return self.next_roll > self.first_roll

    def segment(self) -> dict[str, Any]:
        """This seed's part of the match, as ``earlier`` keeps it once revealed."""
        return {"server_seed": self.server_seed.hex(), "texts": list(self.texts),
                "first_roll": self.first_roll, "next_roll": self.next_roll}

    def fresh(self, server_seed: bytes) -> SeededDice:
        """The dice after this seed has been revealed: ``server_seed`` from the next
        roll on, this seed kept among the earlier ones."""
        return SeededDice(server_seed, self.texts, self.next_roll, self.unseeded,
                          self.next_roll, (*self.earlier, self.segment()))

    def with_texts(self, texts: tuple[str, str]) -> SeededDice:
        """The same seed mixed with other texts (before its first roll only)."""
        if self.used:
            raise ValueError("the texts of a seed that has rolled cannot change")
        return SeededDice(self.server_seed, texts, self.next_roll, self.unseeded,
                          self.first_roll, self.earlier)

    @property
    def commitment(self) -> str:
        return commitment(self.server_seed)

    def roll(self) -> Dice:
        roll = seeded_roll(self.seed, self.next_roll)
        self.next_roll += 1
        return roll

    def to_record(self) -> dict[str, Any]:
        data: dict[str, Any] = {"server_seed": self.server_seed.hex(),
                                "texts": list(self.texts), "next_roll": self.next_roll}
        if self.unseeded:
            data["unseeded"] = self.unseeded
        if self.earlier:
            data["first_roll"] = self.first_roll
            data["earlier"] = [dict(segment) for segment in self.earlier]
        return data

    @classmethod
    def from_record(cls, data: Any) -> SeededDice:
        """Raises ValueError for anything that is not such a record."""
        if not isinstance(data, dict):
            raise ValueError("the dice record is not an object")
        texts = data.get("texts")
        counter = data.get("next_roll")
        if (not isinstance(texts, list) or len(texts) != 2
                or not all(isinstance(t, str) for t in texts)):
            raise ValueError("texts must be two strings")
        unseeded = data.get("unseeded", 0)
        first = data.get("first_roll", 0)
        if (type(counter) is not int or type(unseeded) is not int or unseeded < 0
                or type(first) is not int):
            raise ValueError("next_roll, first_roll and unseeded must be integers")
        earlier = data.get("earlier", [])
        if not isinstance(earlier, list) or not all(
                isinstance(segment, dict) and isinstance(segment.get("server_seed"), str)
                for segment in earlier):
            raise ValueError("earlier must be a list of revealed seeds")
        return cls(bytes.fromhex(str(data.get("server_seed"))), (texts[0], texts[1]), counter,
                   unseeded, first, tuple(dict(segment) for segment in earlier))
