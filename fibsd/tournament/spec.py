"""What creates a tournament, read from the same words in the game and in the shell.

``admin tournament create --name "Spring Cup" --format knockout --lengths 5,5,7`` and
``fibsd tournament create --name ...`` take the same options (quotes group a name of
several words); ``parse_create`` checks every value and raises ``SpecError`` with the
reason a player is shown.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import datetime, timezone

from fibsd.rules.clock import ClockSpec, InvalidClock
from fibsd.tournament.pairing import FORMATS

_CLOCK = re.compile(r"[0-9]{1,4}s\+[0-9]{1,4}m")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 '_.-]{0,39}")
MAX_ROUNDS = 20
MAX_LENGTH = 99


class SpecError(ValueError):
    """A create request that cannot be honoured; the message says why."""


@dataclass(frozen=True)
class Spec:
    name: str
    fmt: str
    lengths: tuple[int, ...]
    rounds: int | None
    max_players: int
    start_at: int | None  # None: when full
    bots: bool
    clock: str


def parse_create(text: str | list[str], max_players: int) -> Spec:
    """The tournament ``text`` asks for (``max_players``: the site's limit)."""
    try:
        words = shlex.split(text) if isinstance(text, str) else list(text)
    except ValueError as error:
        raise SpecError(f"unbalanced quotes ({error})") from error
    options: dict[str, str] = {}
    bots = False
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--bots":
            bots = True
            i += 1
            continue
        key = word[2:] if word.startswith("--") else ""
        if key not in ("name", "format", "lengths", "rounds", "max-players", "start",
                       "clock") or i + 1 >= len(words):
            raise SpecError(f"unknown or incomplete option {word!r}")
        options[key] = words[i + 1]
        i += 2
    for needed in ("name", "format", "lengths"):
        if needed not in options:
            raise SpecError(f"--{needed} is missing")
    name = options["name"].strip()
    if not _NAME.fullmatch(name):
        raise SpecError("a name is 1 to 40 letters, digits, blanks and ' _ . -")
    fmt = options["format"].lower()
    if fmt not in FORMATS:
        raise SpecError("the format is knockout, swiss or roundrobin")
    try:
        lengths = tuple(int(n) for n in options["lengths"].split(","))
    except ValueError as error:
        raise SpecError("lengths are points per round, as 5,5,7") from error
    if not lengths or len(lengths) > MAX_ROUNDS or any(not 1 <= n <= MAX_LENGTH for n in lengths):
        raise SpecError(f"lengths are 1 to {MAX_ROUNDS} numbers from 1 to {MAX_LENGTH}")
    rounds = _number(options, "rounds", 1, MAX_ROUNDS)
    if fmt == "swiss" and rounds is None:
        raise SpecError("a Swiss tournament needs --rounds")
    if fmt != "swiss" and rounds is not None:
        raise SpecError("--rounds is for Swiss tournaments")
    players = _number(options, "max-players", 2, max_players)
    start_at = _start(options.get("start", "when-full"))
    clock = options.get("clock", "")
    if clock and not _CLOCK.fullmatch(clock):
        raise SpecError("a clock is a delay and a reserve, as 12s+2m")
    try:
        ClockSpec.parse(clock or "off")  # within the bounds ``set clock`` keeps
    except InvalidClock:
        raise SpecError("a clock is a delay and a reserve, as 12s+2m") from None
    return Spec(name, fmt, lengths, rounds, players or max_players, start_at, bots, clock)


def _number(options: dict[str, str], key: str, low: int, high: int) -> int | None:
    if key not in options:
        return None
    try:
        value = int(options[key])
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise SpecError(f"--{key} is a number from {low} to {high}")
    return value


def _start(value: str) -> int | None:
    """``when-full``, a Unix time, or a UTC time as 2026-11-27T03:00."""
    if value in ("when-full", "full"):
        return None
    if value.isdigit():
        return int(value)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as error:
        raise SpecError("--start is when-full, a Unix time or a UTC time as"
                        " 2026-11-27T03:00") from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp())


def start_text(start_at: int | None) -> str:
    """How ``tournaments`` shows the start: ``when-full`` or ``2026-11-27T03:00Z``."""
    if start_at is None:
        return "when-full"
    return datetime.fromtimestamp(start_at, timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
