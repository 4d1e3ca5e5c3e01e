"""Start the server: ``fibsd [--config FILE] [--port N] [--database FILE]``.

The same options serve ``twistd -n fibsd`` (through the plugin in
``fibsd/twistd_plugins/``), which calls ``makeService``.  Ctrl-C and SIGTERM stop the
reactor; the service then says goodbye to every connection and closes the database.
A second Ctrl-C or SIGTERM while that runs changes nothing (Twisted would log a
``ReactorNotRunning`` traceback for it); stragglers are cut off after a grace period.
"""

from __future__ import annotations

import signal
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from twisted.python import usage
from twisted.python.failure import Failure

from fibsd.config import ConfigError, Settings, load_settings
from fibsd.store import WriteFailed
from fibsd.store.migrations import SchemaTooNew

# What opening an unusable database file raises (a directory that cannot be created,
# a file that is not SQLite, one written by a newer fibsd, one that cannot be written).
DATABASE_ERRORS = (OSError, sqlite3.Error, SchemaTooNew, WriteFailed)

# The configuration next to the package in a source checkout (the README's run command).
SOURCE_CONFIG = Path(__file__).resolve().parent.parent / "config" / "fibsd.toml"


class Options(usage.Options):
    synopsis = "[--config FILE] [--port N] [--database FILE] [--interface ADDRESS]"
    longdesc = ("A FIBS-compatible backgammon server. Without --config it reads "
                f"{SOURCE_CONFIG} when that file exists, else built-in defaults.")
    optParameters = [
        ["config", "c", None, "TOML configuration file"],
        ["port", "p", None, "TCP port to listen on (default 4321)", int],
        ["database", "d", None, "SQLite database file"],
        ["interface", "i", None, "address to listen on (default 0.0.0.0)"],
    ]

    def settings(self) -> Settings:
        """The settings these options select; raises ConfigError."""
        config = self["config"]
        path = Path(config) if config else (SOURCE_CONFIG if SOURCE_CONFIG.is_file() else None)
        overrides = {key: self[key] for key in ("port", "database", "interface")
                     if self[key] is not None}
        return load_settings(path, overrides)


def makeService(options: Options) -> Any:
    """The twistd entry point (``twistd -n fibsd``)."""
    from fibsd.app import make_service

    try:
        settings = options.settings()
        service = make_service(settings)
    except ConfigError as error:
        raise SystemExit(f"fibsd: configuration error: {error}") from error
    except DATABASE_ERRORS as error:
        raise SystemExit(_cannot_open(settings, error)) from error
    # The service logs a failure to listen and stops the reactor; nothing else waits.
    service.listening.addErrback(lambda failure: None)
    service.reactor.callWhenRunning(_stop_signals_once)
    return service


def main(argv: list[str] | None = None) -> int:
    options = Options()
    try:
        options.parseOptions(sys.argv[1:] if argv is None else argv)
        settings = options.settings()
    except usage.UsageError as error:
        print(f"fibsd: {error}\n{options}", file=sys.stderr)
        return 2
    except ConfigError as error:
        print(f"fibsd: configuration error: {error}", file=sys.stderr)
        return 2

    from twisted.internet import reactor
    from twisted.logger import globalLogBeginner, textFileLogObserver

    from fibsd.app import make_service

    try:
        service = make_service(settings, reactor)
    except DATABASE_ERRORS as error:
        print(_cannot_open(settings, error), file=sys.stderr)
        return 2
    globalLogBeginner.beginLoggingTo([textFileLogObserver(sys.stdout)])
    failed: list[Failure] = []  # the service could not listen (it logs why)
    service.listening.addErrback(failed.append)
    reactor.callWhenRunning(service.startService)  # type: ignore[attr-defined]
    reactor.callWhenRunning(_stop_signals_once)  # type: ignore[attr-defined]
    reactor.addSystemEventTrigger(  # type: ignore[attr-defined]
        "before", "shutdown", service.stopService)
    reactor.run()  # type: ignore[attr-defined]
    return 1 if failed else 0


def _cannot_open(settings: Settings, error: Exception) -> str:
    hint = " (the server must be able to write the file and its directory)"
    if isinstance(error, WriteFailed):
        return f"fibsd: cannot write the database {settings.database}: {error}{hint}"
    if not isinstance(error, sqlite3.OperationalError):
        hint = ""
    return f"fibsd: cannot open the database {settings.database}: {error}{hint}"


def _stop_signals_once() -> None:
    """Wrap the reactor's Ctrl-C and SIGTERM handlers (installed by now) so that only the
    first such signal reaches them."""
    for number in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(number)
        if callable(handler):
            signal.signal(number, _first_only(handler))


def _first_only(handler: Callable[[int, FrameType | None], Any]) -> Callable[..., None]:
    def handle(number: int, frame: FrameType | None) -> None:
        for each in (signal.SIGINT, signal.SIGTERM):
            signal.signal(each, signal.SIG_IGN)
        handler(number, frame)

    return handle


if __name__ == "__main__":
    sys.exit(main())
