"""What a bot reads from the server about matches it could play: the ``show saved``
listing, the refusals of ``invite``, and the match lengths it accepts.

Pure functions over line texts and option values, so ``fibsd.client.bot`` keeps to
decisions and these rules can be tested alone.  The refusal texts are FIBS's and
fibsd's (protocol/catalogue/between.toml, chat.toml); a server that words a refusal
otherwise gets the transient treatment (retried with backoff, then given up).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

UNLIMITED = 0  # the length of an unlimited match, as the bot keeps lengths

_SAVED_LINE = re.compile(r"^(?P<mark>\*\*| \*|  )(?P<name>[A-Za-z_]+) +(?P<length>[0-9]+|unlimited)"
                         r" +(?P<own>[0-9]+) +- +(?P<other>[0-9]+)$")
_SAVED_COUNT = re.compile(r"^(?P<name>[A-Za-z_]+) has (?:no|[0-9]+) saved games?\.$")


@dataclass(frozen=True)
class SavedMatch:
    """One line of ``show saved``: the opponent, whether he is logged in, the length and score."""

    opponent: str
    online: bool
    length: int  # UNLIMITED for an unlimited match
    own: int
    other: int

    def kind(self) -> str:
        return "unlimited match" if self.length == UNLIMITED else f"{self.length} point match"

    def describe(self) -> str:
        return f"{self.kind()} ({self.own}-{self.other})"


def saved_line(text: str) -> SavedMatch | None:
    """A ``show saved`` entry (``**bob      5     0 -  1``); None for the header and others."""
    found = _SAVED_LINE.match(text)
    if found is None:
        return None
    length = found["length"]
    return SavedMatch(found["name"], found["mark"] != "  ",
                      UNLIMITED if length == "unlimited" else int(length),
                      int(found["own"]), int(found["other"]))


def saved_count_of(text: str) -> str | None:
    """The name in ``<name> has <n> saved games.`` (the bot's end mark for the listing)."""
    found = _SAVED_COUNT.match(text)
    return found["name"] if found else None


def warning_length(text: str) -> int | None:
    """The saved match's length from ``WARNING: Don't accept ... the saved 5 point match!``."""
    found = re.search(r"saved (?:([0-9]+) point|unlimited) match", text)
    if found is None:
        return None
    return int(found[1]) if found[1] else UNLIMITED


class Refusal(Enum):
    """What an ``invite`` refusal means for the bot."""

    FINAL = "final"  # this length will never be accepted (experience, range, syntax)
    NO_SAVED = "no saved match"  # a resume asked for a match that is not there
    PLAYING = "we are playing"  # the server says we play: our state was stale
    LATER = "later"  # the invitee is away, busy, not ready, offline: try again later


_REFUSALS: tuple[tuple[re.Pattern[str], Refusal], ...] = (
    (re.compile(r"^You're not experienced enough"), Refusal.FINAL),
    (re.compile(r"^The second argument to 'invite'"), Refusal.FINAL),
    (re.compile(r"^You can't invite yourself"), Refusal.FINAL),
    (re.compile(r"^There's no saved match with "), Refusal.NO_SAVED),
    (re.compile(r"^You are already playing"), Refusal.PLAYING),
    (re.compile(r"is refusing games\.$|is already playing with someone else\.$"
                r"|^There is no one called |^Error: can't find player |won't listen to you\.$"
                r"|is not reading; |^Please wait |^The match waits |^Use 'toggle ready' first"
                r"|^Sorry, the server's database is not available"),
     Refusal.LATER),
)


def invite_refusal(text: str) -> Refusal | None:
    """Which refusal of ``invite`` an ``** ...`` line is (its text without ``** ``), if any."""
    for pattern, refusal in _REFUSALS:
        if pattern.search(text):
            return refusal
    return None


def lost_join_race(text: str) -> bool:
    """The answer to a ``join`` sent while the other side's join of our own invitation
    was starting the match: ``You can't play two games at once``, ``<name> didn't invite
    you.`` (our invitation was used up by that start)."""
    return text == "You can't play two games at once" or text.endswith(" didn't invite you.")


def try_again_later(text: str) -> bool:
    """fibsd's answer to a command that needs its database while the database is away
    (protocol/play.md): ``show saved`` is asked again later."""
    return text.startswith("Sorry, the server's database is not available")


def parse_lengths(text: str) -> frozenset[int] | None:
    """``--lengths``: ``any``, or a comma list of lengths, ranges and ``unlimited``
    (``1-7,11,unlimited``); None means any length the server allows."""
    text = text.strip().lower()
    if text == "any":
        return None
    lengths: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if part == "unlimited":
            lengths.add(UNLIMITED)
            continue
        found = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", part)
        if found is None:
            raise ValueError(f"not a length, a range or 'unlimited': {part!r}")
        low = int(found[1])
        high = int(found[2]) if found[2] else low
        if not 1 <= low <= high:
            raise ValueError(f"lengths start at 1 and a range goes upwards: {part!r}")
        lengths.update(range(low, high + 1))
    return frozenset(lengths)


def describe_lengths(lengths: frozenset[int]) -> str:
    """``1-7, 11 and unlimited`` for a tell: runs of lengths as ranges."""
    numbers = sorted(length for length in lengths if length != UNLIMITED)
    parts: list[tuple[int, int]] = []
    for number in numbers:
        if parts and parts[-1][1] == number - 1:
            parts[-1] = (parts[-1][0], number)
        else:
            parts.append((number, number))
    words = [f"{low}" if low == high else f"{low}-{high}" for low, high in parts]
    words = [f"{word} point" for word in words]
    if UNLIMITED in lengths:
        words.append("unlimited")
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
