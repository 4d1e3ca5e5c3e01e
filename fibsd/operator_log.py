"""Where the operator's log goes: text for people or JSON lines for machines.

Every part of the server logs with ``twisted.logger``; operator events carry a field
``event`` (``login``, ``registration``, ``match_start`` ... see README, "Logging") so
a JSON-lines reader or a metrics observer can count them without parsing sentences.
``observer`` builds the one observer ``fibsd`` starts logging to.
"""

from __future__ import annotations

from typing import IO

from twisted.logger import (
    FilteringLogObserver,
    ILogObserver,
    InvalidLogLevelError,
    LogLevel,
    LogLevelFilterPredicate,
    jsonFileLogObserver,
    textFileLogObserver,
)

FORMATS = ("text", "json")
LEVELS = tuple(level.name for level in LogLevel.iterconstants())


def level_named(name: str) -> LogLevel:
    """The level called ``name`` (debug, info, warn, error, critical); ValueError else."""
    try:
        return LogLevel.levelWithName(name.lower())
    except InvalidLogLevelError:
        raise ValueError(f"--log-level must be one of {', '.join(LEVELS)}, not {name!r}") from None


def observer(stream: IO[str], form: str, level: LogLevel) -> ILogObserver:
    """Events at ``level`` or above, written to ``stream`` as ``form`` ("text": one
    line per event with time and source; "json": one JSON object per line, every
    field of the event included)."""
    if form == "json":
        # recordSeparator="" leaves plain newline-ended lines (JSON Lines), not RFC 7464.
        written = jsonFileLogObserver(stream, recordSeparator="")
    elif form == "text":
        written = textFileLogObserver(stream)
    else:
        raise ValueError(f"--log-format must be one of {', '.join(FORMATS)}, not {form!r}")
    return FilteringLogObserver(written, [LogLevelFilterPredicate(defaultLogLevel=level)])
