"""Every line about match clocks (protocol/clock.md); none exists on FIBS.

The lines are ``** `` messages (shown by every client as a server message) or start
with ``clock:`` (no client pattern starts so); none holds a phrase a client looks for
anywhere in a line (``wants to play``, ``Type 'join``, ``rolls``, ``moves``, ``wins``,
``doubles``, ``resign``...).  tests/wire/test_clock_text.py checks each against the
patterns of the FIBS protocol reference.
"""

from __future__ import annotations

from fibsd.rules.clock import ClockSpec, format_duration

# `set clock`: the variable's texts follow FIBS's ``Value of '<name>' ...`` lines.
CLOCK_USAGE = "** Valid arguments are 'off' or a delay and a reserve per point, like '12s+2m'."
CLOCK_REQUIRED = "** Rated matches need a clock on this server: type 'set clock 12s+2m'."
NO_CLOCK = "** This match has no clock."


def clock_set(spec: ClockSpec | None) -> str:
    return f"Value of 'clock' set to {'off' if spec is None else spec.text()}."


def clock_value(spec: ClockSpec | None) -> str:
    return f"Value of 'clock' is {'off' if spec is None else spec.text()}"


def invitation_clock(spec: ClockSpec, reserve: float) -> str:
    """The line after FIBS's invitation line: the clock a join agrees to."""
    return (f"** With a clock: {spec.delay} seconds of delay a decision and "
            f"{format_duration(reserve)} of reserve each.")


def clock_state(spec: ClockSpec, names: tuple[str, str], left: tuple[float, float]) -> str:
    """The ``clock`` command's first line: the spec, then each player's reserve."""
    return (f"clock: {spec.text()} {names[0]} {format_duration(left[0])} "
            f"{names[1]} {format_duration(left[1])}")


def clock_running(name: str, delay_left: float) -> str:
    return f"clock: running for {name}, {format_duration(delay_left)} of delay left"


CLOCK_STOPPED = "clock: stopped"


def reserve_warning(seconds: int) -> str:
    return f"** Your clock: {seconds} seconds of reserve left."


YOU_LOST_ON_TIME = "** Your clock ran out: you lose on time."


def lost_on_time(name: str) -> str:
    return f"** The clock of {name} ran out: {name} loses on time."


def board_clocks(names: tuple[str, str], left: tuple[float, float], running: int | None) -> str:
    """The line under a telnet ASCII board while a clock runs (never for CLIP boards)."""
    marks = ["*" if running == i else " " for i in (0, 1)]
    return (f"    clock: {names[0]} {format_duration(left[0])}{marks[0]}  "
            f"{names[1]} {format_duration(left[1])}{marks[1]}")
