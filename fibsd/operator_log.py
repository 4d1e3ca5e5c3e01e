"""Where the operator's log goes: text for people or JSON lines for machines.

Every part of the server logs with ``twisted.logger``; operator events carry a field
``event`` (``login``, ``registration``, ``match_start`` ... see README, "Logging") so
a JSON-lines reader or a metrics observer can count them without parsing sentences.
``observer`` builds the one observer ``fibsd`` starts logging to.

When a listening port cannot accept because the process is out of files (``EMFILE``),
Twisted logs a line for every socket it closes to recover, one for every turn of the
reactor while it lasts, and a traceback when it cannot take back its spare file: a
flood of connections would become a flood of the log.  ``AcceptErrors`` turns them
into one ``accept_failed`` event a minute at most (``count``: the lines it stands
for); Twisted goes on accepting once files are free again.  fibsd's connection caps
(protocol/access.md) keep this from happening with the limits it computes itself.
"""

from __future__ import annotations

import time
from typing import IO, Any

from twisted.logger import (
    FilteringLogObserver,
    ILogFilterPredicate,
    ILogObserver,
    InvalidLogLevelError,
    LogLevel,
    LogLevelFilterPredicate,
    Logger,
    PredicateResult,
    jsonFileLogObserver,
    textFileLogObserver,
)
from zope.interface import implementer

_log = Logger()

FORMATS = ("text", "json")
# Where Twisted logs a listening port's failures to accept, and what they say.
ACCEPT_NAMESPACES = ("twisted.internet.tcp.Port", "twisted.internet.tcp._FileDescriptorReservation")
ACCEPT_WORDS = ("EMFILE", "Could not accept new connection")
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
    return FilteringLogObserver(written, [AcceptErrors(),
                                          LogLevelFilterPredicate(defaultLogLevel=level)])


@implementer(ILogFilterPredicate)
class AcceptErrors:
    """Twisted's lines about a port that cannot accept, as one ``accept_failed`` event
    a minute at most (the first at once).

    >>> errors = AcceptErrors()
    >>> line = {"log_namespace": "twisted.internet.tcp.Port", "log_time": 0.0,
    ...         "log_format": "EMFILE recovery: Closed socket from {address}"}
    >>> [errors(line).name for _ in range(3)], errors.waiting
    (['no', 'no', 'no'], 2)
    >>> errors({**line, "log_time": 60.0}).name, errors.waiting
    ('no', 0)
    >>> errors({"log_namespace": "fibsd.app", "log_format": "EMFILE"}).name
    'maybe'
    """

    INTERVAL = 60.0

    def __init__(self) -> None:
        self.last: float | None = None  # when the last event was logged
        self.waiting = 0  # lines since then

    def __call__(self, event: dict[str, Any]) -> PredicateResult:
        if (event.get("log_namespace") not in ACCEPT_NAMESPACES
                or not any(word in str(event.get("log_format") or "") for word in ACCEPT_WORDS)):
            return PredicateResult.maybe
        self.waiting += 1
        now = float(event.get("log_time", time.time()))
        if self.last is None or now - self.last >= self.INTERVAL:
            self.last, count, self.waiting = now, self.waiting, 0
            _log.warn("the server could not accept connections ({error}: out of open "
                      "files or memory; {count} since the last report)",
                      event="accept_failed", error=event.get("acceptError", "EMFILE"),
                      count=count)
        return PredicateResult.no
