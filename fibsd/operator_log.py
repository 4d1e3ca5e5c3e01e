"""Where the operator's log goes: text for people or JSON lines for machines.

Every part of the server logs with ``twisted.logger``; operator events carry a field
``event`` (``login``, ``registration``, ``match_start`` ... see README, "Logging") so
a JSON-lines reader or a metrics observer can count them without parsing sentences.
``observer`` builds the one observer ``fibsd`` starts logging to; ``LogFile`` is the
``--log-file`` it writes to, opened again on SIGHUP (after logrotate moved it away).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

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


class LogFile:
    """``path`` appended to, line-buffered (a crash loses no event and ``tail -f`` sees
    each at once); ``reopen`` opens the path again, so that after logrotate renamed
    the file the next events go to a new one at the old name."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file = self._open()

    def _open(self) -> IO[str]:
        return open(self.path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (kept open)

    def write(self, text: str) -> Any:
        return self._file.write(text)

    def flush(self) -> None:
        self._file.flush()

    def reopen(self) -> None:
        """Open the path again; raises OSError (the old file then stays in use)."""
        fresh = self._open()
        old, self._file = self._file, fresh
        old.close()
