"""Match clocks: a reserve per player and a delay per decision (protocol/clock.md).

Pure arithmetic on times passed in (seconds, any epoch): nothing here reads the wall
clock, so a test drives it with plain numbers and the server with its reactor's time.

* A ``ClockSpec`` is what a user chooses with ``set clock DELAY+RESERVE``: the delay
  each decision gets free, and the reserve per match point (a 7-point match at 2 min a
  point gives each player 14 minutes).  An unlimited match counts as
  ``UNLIMITED_POINTS`` points.
* A ``MatchClock`` runs for one player at a time, the one who must decide (roll or
  double, move, answer a double, answer a resignation).  A decision starts when the
  server's line asking for it is sent; when it ends, the time it took, less the
  connection's lag allowance, is charged: first against the delay, only the rest
  against the reserve (a Bronstein or US delay: unused delay is not banked).
* The clock is stopped while nobody decides (between games, while a write waits for the
  database, while the match is saved).  Its record holds only the reserves: a running
  decision is not written, so a match restored after a crash resumes with the reserves
  of its last stored action, and no time the server was down is ever charged.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fibsd.rules.events import WinKind
from fibsd.rules.game import Phase

if TYPE_CHECKING:
    from fibsd.rules.events import Event
    from fibsd.rules.match import Match

# The points an unlimited match's reserve is counted for (protocol/clock.md).
UNLIMITED_POINTS = 5
# The longest delay and the largest reserve per point a user may choose, in seconds.
MAX_DELAY = 600
MAX_PER_POINT = 3600
# Reserve left, in seconds, at which the player on the clock is warned.
WARNINGS = (60, 10)

_PART = re.compile(r"^([0-9]{1,4})([sm])$")


class InvalidClock(ValueError):
    """``set clock`` text that is not ``off`` nor ``<n>s|m+<n>s|m`` within the limits."""


def _seconds(part: str) -> int:
    found = _PART.match(part)
    if found is None:
        raise InvalidClock(part)
    number = int(found.group(1))
    return number * 60 if found.group(2) == "m" else number


def _shown(seconds: int) -> str:
    return f"{seconds // 60}m" if seconds and seconds % 60 == 0 else f"{seconds}s"


@dataclass(frozen=True)
class ClockSpec:
    delay: int  # seconds free per decision
    per_point: int  # seconds of reserve per match point

    @classmethod
    def parse(cls, text: str) -> ClockSpec | None:
        """``12s+2m`` -> ClockSpec(12, 120); ``off`` -> None; raises InvalidClock.

        >>> ClockSpec.parse("12s+2m"), ClockSpec.parse("OFF")
        (ClockSpec(delay=12, per_point=120), None)
        """
        text = text.strip().lower()
        if text == "off":
            return None
        delay_text, plus, reserve_text = text.partition("+")
        if not plus:
            raise InvalidClock(text)
        spec = cls(_seconds(delay_text), _seconds(reserve_text))
        if spec.delay > MAX_DELAY or not 1 <= spec.per_point <= MAX_PER_POINT:
            raise InvalidClock(text)
        return spec

    def text(self) -> str:
        """The canonical ``set clock`` text: ``ClockSpec(12, 120).text() == "12s+2m"``."""
        return f"{_shown(self.delay)}+{_shown(self.per_point)}"

    def reserve(self, length: int) -> int:
        """Each player's reserve at the start of a match of ``length`` (0: unlimited)."""
        return self.per_point * (length or UNLIMITED_POINTS)


def format_spec(spec: ClockSpec | None) -> str:
    return "off" if spec is None else spec.text()


@dataclass
class MatchClock:
    """Both players' reserves and the decision under way, if any."""

    spec: ClockSpec
    reserves: list[float]
    running: int | None = None  # the player deciding
    since: float = 0.0  # when his decision started
    allowance: float = 0.0  # his connection's lag allowance for this decision
    warned: int = 0  # how many of ``WARNINGS`` he has been given in this decision

    @classmethod
    def new(cls, spec: ClockSpec, length: int) -> MatchClock:
        reserve = float(spec.reserve(length))
        return cls(spec, [reserve, reserve])

    def start(self, player: int, now: float, allowance: float = 0.0) -> None:
        """``player``'s decision starts now (a running one of the same player goes on)."""
        if self.running == player:
            return
        self.stop(now)
        self.running, self.since, self.allowance, self.warned = player, now, allowance, 0

    def stop(self, now: float) -> float:
        """The decision under way ends now: charge it; returns the reserve it used."""
        if self.running is None:
            return 0.0
        player, self.running = self.running, None
        used = min(self._reserve_used(now), self.reserves[player])
        self.reserves[player] -= used
        return used

    def _reserve_used(self, now: float) -> float:
        return max(0.0, now - self.since - self.allowance - self.spec.delay)

    def left(self, player: int, now: float) -> float:
        """``player``'s reserve as of ``now`` (his running decision charged so far)."""
        if self.running != player:
            return self.reserves[player]
        return max(0.0, self.reserves[player] - self._reserve_used(now))

    def delay_left(self, now: float) -> float:
        """What is left of the running decision's delay."""
        if self.running is None:
            return 0.0
        return max(0.0, self.spec.delay + self.allowance - (now - self.since))

    def deadline(self) -> float | None:
        """When the running player's reserve reaches zero, if nobody acts."""
        if self.running is None:
            return None
        return self.since + self.allowance + self.spec.delay + self.reserves[self.running]

    def next_warning(self) -> tuple[float, int] | None:
        """(when, seconds left) of the next warning due in the running decision."""
        deadline = self.deadline()
        if deadline is None or self.running is None:
            return None
        for index in range(self.warned, len(WARNINGS)):
            if self.reserves[self.running] >= WARNINGS[index]:
                return deadline - WARNINGS[index], WARNINGS[index]
        return None

    def warning_given(self, seconds: int) -> None:
        self.warned = WARNINGS.index(seconds) + 1

    # -- the record ---------------------------------------------------------------------

    def to_record(self) -> dict[str, Any]:
        """The spec and the reserves (whole milliseconds): never a running decision."""
        return {"delay": self.spec.delay, "per_point": self.spec.per_point,
                "reserves_ms": [math.ceil(r * 1000) for r in self.reserves]}

    @classmethod
    def from_record(cls, data: Any) -> MatchClock:
        """Raises ValueError for a record that is not a clock."""
        try:
            spec = ClockSpec(int(data["delay"]), int(data["per_point"]))
            reserves = [int(data["reserves_ms"][0]) / 1000, int(data["reserves_ms"][1]) / 1000]
        except (KeyError, IndexError, TypeError) as error:
            raise ValueError(f"bad clock record: {error!r}") from error
        if spec.delay < 0 or spec.per_point < 1 or min(reserves) < 0:
            raise ValueError("bad clock record: negative times")
        return cls(spec, reserves)


def format_duration(seconds: float) -> str:
    """Whole seconds as ``m:ss`` (``h:mm:ss`` from an hour): ``format_duration(75) == "1:15"``.
    Rounded up, so a reserve shown as 0:00 has run out."""
    whole = math.ceil(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def forfeit_game(match: Match, player: int) -> tuple[Event, ...]:
    """``player`` ran out of time and a site scores that as the game lost at the cube's
    value (``clock.on_timeout = "game"``): made of the rules' own actions, so the record
    replays it.  A double he had to answer is dropped; otherwise (a resignation he had
    to answer is refused first) he resigns a single game and his opponent accepts."""
    events: tuple[Event, ...] = ()
    if match.phase is Phase.DOUBLE_OFFERED:
        return match.reject(player)
    if match.phase is Phase.RESIGN_OFFERED:
        events += match.reject(player)
    events += match.resign(player, WinKind.SINGLE)
    return events + match.accept(1 - player)
