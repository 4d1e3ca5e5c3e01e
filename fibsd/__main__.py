"""Start the server: ``fibsd [--config FILE] [--data-dir DIR] [--port N] ...``; or run
one of its operator commands: ``fibsd backup FILE``, ``fibsd admin ...``.

The server options serve ``twistd -n fibsd`` too (through the plugin in
``fibsd/twistd_plugins/``), which calls ``makeService``; twistd then logs with its own
``--logfile``.  Ctrl-C and SIGTERM stop the reactor; the service then says goodbye to
every connection and closes the database.  A second Ctrl-C or SIGTERM while that runs
changes nothing (Twisted would log a ``ReactorNotRunning`` traceback for it);
stragglers are cut off after a grace period.
"""

from __future__ import annotations

import signal
import sqlite3
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from types import FrameType
from typing import IO, Any

from twisted.python import usage
from twisted.python.failure import Failure

from fibsd.admin_cli import AdminOptions, run_admin
from fibsd.config import ConfigError, Settings, load_settings
from fibsd.store import WriteFailed
from fibsd.store.migrations import SchemaTooNew

# What opening an unusable database file raises (a directory that cannot be created,
# a file that is not SQLite, one written by a newer fibsd, one that cannot be written).
DATABASE_ERRORS = (OSError, sqlite3.Error, SchemaTooNew, WriteFailed)


def fibsd_version() -> str:
    return f"fibsd {version('fibsd')}"


def _import_make_service() -> Callable[..., Any]:
    """``fibsd.app.make_service``; a clear exit when the ``server`` extra is missing
    (the base install is the client library only)."""
    try:
        from fibsd.app import make_service
    except ModuleNotFoundError as error:
        if error.name in ("passlib", "argon2"):
            raise SystemExit("fibsd: the server needs its password hashing packages: "
                             "pip install 'fibsd[server]'") from error
        raise
    return make_service


class BackupOptions(usage.Options):
    synopsis = "FILE"
    longdesc = ("Copy the database to FILE (created mode 0600) through SQLite's backup "
                "API; safe while the server runs.")

    def parseArgs(self, target: str) -> None:
        self["target"] = target


class Options(usage.Options):
    synopsis = ("[--config FILE] [--data-dir DIR] [--port N] [--database FILE] "
                "[--interface ADDRESS] [--web-port N] [--log-file FILE] "
                "[--log-format text|json] [--log-level LEVEL] [backup FILE | admin ...]")
    longdesc = ("A FIBS-compatible backgammon server. Settings: the shipped defaults, "
                "then --config (a TOML file with the keys it changes), then these options.")
    optParameters = [
        ["config", "c", None, "TOML configuration file"],
        ["data-dir", None, None, "directory of the database (default ~/.local/share/fibsd)"],
        ["port", "p", None, "TCP port to listen on (default 4321)", int],
        ["database", "d", None, "SQLite database file"],
        ["interface", "i", None, "address to listen on (default 0.0.0.0)"],
        ["web-port", "w", None, "TCP port of the web face (default 8080; 0: none)", int],
        ["log-file", None, None, "append the log to FILE (default: standard output)"],
        ["log-format", None, "text", "text (for people) or json (one JSON object a line)"],
        ["log-level", None, "info", "debug, info, warn, error or critical"],
    ]

    subCommands = [
        ["backup", None, BackupOptions, "copy the database, online"],
        ["admin", None, AdminOptions, "accounts, bans and the admin log, in the database"],
    ]

    def opt_version(self) -> None:
        """Print fibsd's version and exit."""
        print(fibsd_version())
        sys.exit(0)

    def settings(self) -> Settings:
        """The settings these options select; raises ConfigError."""
        config = self["config"]
        overrides = {key: self[key] for key in ("port", "database", "interface")
                     if self[key] is not None}
        if self["data-dir"] is not None:
            overrides["data_dir"] = self["data-dir"]
        if self["web-port"] is not None:
            overrides["web_port"] = self["web-port"]
        return load_settings(Path(config) if config else None, overrides)


def makeService(options: Options) -> Any:
    """The twistd entry point (``twistd -n fibsd``)."""
    if options.subCommand is not None:
        raise SystemExit(f"fibsd: run 'fibsd {options.subCommand} ...' itself, not under twistd")
    make_service = _import_make_service()

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
        from fibsd.operator_log import level_named

        level = level_named(options["log-level"])
    except (usage.UsageError, ValueError) as error:
        print(f"fibsd: {error}\n{options}", file=sys.stderr)
        return 2
    except ConfigError as error:
        print(f"fibsd: configuration error: {error}", file=sys.stderr)
        return 2
    if options.subCommand == "backup":
        return _backup(settings, Path(options.subOptions["target"]))
    if options.subCommand == "admin":
        return run_admin(settings, options.subOptions)
    try:
        log_stream = _log_stream(options["log-file"])
    except OSError as error:
        print(f"fibsd: cannot open the log file: {error}", file=sys.stderr)
        return 2
    return _serve(settings, log_stream, options["log-format"], level)


def _serve(settings: Settings, log_stream: IO[str], log_format: str, level: Any) -> int:
    from twisted.internet import reactor
    from twisted.logger import globalLogBeginner

    from fibsd.operator_log import observer

    make_service = _import_make_service()
    try:
        log_observer = observer(log_stream, log_format, level)
        service = make_service(settings, reactor)
    except ValueError as error:
        print(f"fibsd: {error}", file=sys.stderr)
        return 2
    except DATABASE_ERRORS as error:
        print(_cannot_open(settings, error), file=sys.stderr)
        return 2
    globalLogBeginner.beginLoggingTo([log_observer])
    failed: list[Failure] = []  # the service could not listen (it logs why)
    service.listening.addErrback(failed.append)
    reactor.callWhenRunning(service.startService)  # type: ignore[attr-defined]
    reactor.callWhenRunning(_stop_signals_once)  # type: ignore[attr-defined]
    reactor.addSystemEventTrigger(  # type: ignore[attr-defined]
        "before", "shutdown", service.stopService)
    reactor.run()  # type: ignore[attr-defined]
    return 1 if failed else 0


def _log_stream(path: str | None) -> IO[str]:
    """Standard output, or ``path`` opened for appending, line-buffered, so a crash
    loses no event and ``tail -f`` sees each at once."""
    if path is None:
        return sys.stdout
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (lives as long as the server)


def _backup(settings: Settings, target: Path) -> int:
    from fibsd.store.backup import BackupError, backup

    try:
        pages = backup(settings.database, target)
    except BackupError as error:
        print(f"fibsd: backup failed: {error}", file=sys.stderr)
        return 1
    print(f"fibsd: backed up {settings.database} to {target} ({pages} pages)")
    return 0


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
