"""Start the server: ``fibsd [--config FILE] [--data-dir DIR] [--port N] ...``; or run
one of its operator commands: ``fibsd backup FILE``, ``fibsd admin ...``,
``fibsd migrate --from FILE --to URL``, ``fibsd analyse [--database URL]`` (an
analysis worker).

The server options serve ``twistd -n fibsd`` too (through the plugin in
``fibsd/twistd_plugins/``), which calls ``makeService``; twistd then logs with its own
``--logfile``.  Ctrl-C and SIGTERM stop the reactor; the service then says goodbye to
every connection and closes the database.  A second Ctrl-C or SIGTERM while that runs
changes nothing (Twisted would log a ``ReactorNotRunning`` traceback for it);
stragglers are cut off after a grace period.  SIGHUP reloads what can change without a
restart (``FibsService.reload``: the log file, MOTD, help, bans, TLS certificate).
"""

from __future__ import annotations

import os
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
from fibsd.tournament.cli import TournamentOptions, run_tournament
from fibsd.config import ConfigError, Settings, load_settings
from fibsd.server.tls import TlsError
from fibsd.store import WriteFailed
from fibsd.store.migrations import SchemaTooNew
from fibsd.store.opening import DatabaseUnavailable, is_postgres_url, masked, shown

# What opening an unusable database raises (a directory that cannot be created, a file
# that is not SQLite, one written by a newer fibsd, one that cannot be written, a
# PostgreSQL server that refuses).
# FIBSD_BOTS=off starts the server without its resident bots whatever the configuration
# says: for a quick start while debugging, and for test suites that start many servers.
NO_BOTS_VARIABLE = "FIBSD_BOTS"
DATABASE_ERRORS = (OSError, sqlite3.Error, SchemaTooNew, WriteFailed, DatabaseUnavailable)


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


class _Options(usage.Options):
    """Twisted's options, but ``--version`` (which Twisted gives every subcommand too)
    names fibsd, not Twisted."""

    def opt_version(self) -> None:
        """Print fibsd's version and exit."""
        print(fibsd_version())
        sys.exit(0)


class BackupOptions(_Options):
    synopsis = "FILE"
    longdesc = ("Copy the database to FILE (created mode 0600) through SQLite's backup "
                "API; safe while the server runs. A PostgreSQL database is dumped with "
                "pg_dump (custom format: restore with pg_restore).")

    def parseArgs(self, target: str) -> None:
        self["target"] = target


class MigrateOptions(_Options):
    synopsis = "--from FILE --to postgresql://user@host/db"
    longdesc = ("Copy a site's SQLite database into a new, empty PostgreSQL database, "
                "verified (the rows of every table and a checksum of the ratings). "
                "Stop the server first.")
    optParameters = [
        ["from", None, None, "the SQLite database file"],
        ["to", None, None, "the PostgreSQL database's URL"],
    ]

    def postOptions(self) -> None:
        if not self["from"] or not self["to"]:
            raise usage.UsageError("migrate needs --from FILE and --to URL")
        if not is_postgres_url(self["to"]):
            raise usage.UsageError("--to must be a postgresql:// URL")


class AnalyseOptions(_Options):
    synopsis = "[--database URL] [--once] [--name NAME]"
    longdesc = ("Run one analysis worker (protocol/analysis.md): take the analysis jobs of "
                "finished matches from the database's queue and have GNU Backgammon do "
                "them, with the [analysis] settings. Any number may run, on any machines, "
                "against one PostgreSQL database. SIGTERM stops it (a job under way is "
                "given back).")
    optParameters = [["database", "d", None, "the database (default: the configured one)"],
                     ["name", None, "", "the worker's name in its log lines"]]
    optFlags = [["once", None, "stop once no job is due"]]


class _AdminOptions(_Options, AdminOptions):
    pass


class _TournamentOptions(_Options, TournamentOptions):
    pass


class BotsOptions(_Options):
    longdesc = ("Run the site's resident bots ([bots] of the configuration) here, without "
                "the server: their accounts are prepared in the configured database, and "
                "they connect to [bots] server (default this machine) until Ctrl-C or "
                "SIGTERM. Run the server itself with [bots] enabled = false then.")


class Options(_Options):
    synopsis = ("[--config FILE] [--data-dir DIR] [--port N] [--database FILE] "
                "[--interface ADDRESS] [--web-port N] [--cluster URL] [--log-file FILE] "
                "[--log-format text|json] [--log-level LEVEL] "
                "[backup FILE | admin ... | migrate ... | analyse ... | tournament create ... "
                "| bots]")
    longdesc = ("A FIBS-compatible backgammon server. Settings: the shipped defaults, "
                "then --config (a TOML file with the keys it changes), then these options.")
    optParameters = [
        ["config", "c", None, "TOML configuration file"],
        ["data-dir", None, None, "directory of the database (default ~/.local/share/fibsd)"],
        ["port", "p", None, "TCP port to listen on (default 4321)", int],
        ["database", "d", None, "SQLite database file, or a postgresql:// URL"],
        ["interface", "i", None, "address to listen on (default 0.0.0.0)"],
        ["web-port", "w", None, "TCP port of the web face (default 8080; 0: none)", int],
        ["cluster", None, None, "join the cluster on this Redis broker (redis://host:port/db)"],
        ["log-file", None, None, "append the log to FILE (default: standard output)"],
        ["log-format", None, "text", "text (for people) or json (one JSON object a line)"],
        ["log-level", None, "info", "debug, info, warn, error or critical"],
    ]

    subCommands = [
        ["backup", None, BackupOptions, "copy the database, online"],
        ["admin", None, _AdminOptions, "accounts, bans and the admin log, in the database"],
        ["migrate", None, MigrateOptions, "copy a SQLite site into PostgreSQL, verified"],
        ["analyse", None, AnalyseOptions, "run an analysis worker (GNU Backgammon)"],
        ["tournament", None, _TournamentOptions, "create a tournament, print its number"],
        ["bots", None, BotsOptions, "run the resident bots of the configuration, here"],
    ]

    def settings(self) -> Settings:
        """The settings these options select; raises ConfigError."""
        config = self["config"]
        overrides = {key: self[key] for key in ("port", "database", "interface")
                     if self[key] is not None}
        if self["data-dir"] is not None:
            overrides["data_dir"] = self["data-dir"]
        if self["web-port"] is not None:
            overrides["web_port"] = self["web-port"]
        if self["cluster"] is not None:
            overrides["cluster.url"] = self["cluster"]
        if os.environ.get(NO_BOTS_VARIABLE, "").lower() == "off":
            overrides["bots.enabled"] = False
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
    except TlsError as error:
        raise SystemExit(f"fibsd: {error}") from error
    except DATABASE_ERRORS as error:
        raise SystemExit(_cannot_open(settings, error)) from error
    except ValueError as error:  # a file the settings name cannot be used (a cluster secret)
        raise SystemExit(f"fibsd: {error}") from error
    # The service logs a failure to listen and stops the reactor; nothing else waits.
    service.listening.addErrback(lambda failure: None)
    service.tls_listening.addErrback(lambda failure: None)
    service.reactor.callWhenRunning(_stop_signals_once)
    # twistd's own log file is rotated by twistd (SIGUSR1); the rest reloads here.
    service.reactor.callWhenRunning(_reload_on_hangup, service, None)
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
    if options.subCommand == "tournament":
        return run_tournament(settings, options.subOptions)
    if options.subCommand == "migrate":
        return _migrate(Path(options.subOptions["from"]), options.subOptions["to"])
    if options.subCommand == "analyse":
        return _analyse(settings, options.subOptions)
    try:
        log_stream = _log_stream(options["log-file"])
    except OSError as error:
        print(f"fibsd: cannot open the log file: {error}", file=sys.stderr)
        return 2
    if options.subCommand == "bots":
        return _bots(settings, log_stream, options["log-format"], level)
    return _serve(settings, log_stream, options["log-format"], level)


def _bots(settings: Settings, log_stream: IO[str], log_format: str, level: Any) -> int:
    from twisted.logger import globalLogBeginner

    from fibsd.operator_log import observer
    from fibsd.residents.service import run_bots

    globalLogBeginner.beginLoggingTo([observer(log_stream, log_format, level)])
    try:
        return run_bots(settings)
    except DATABASE_ERRORS as error:
        print(_cannot_open(settings, error), file=sys.stderr)
        return 2


def _serve(settings: Settings, log_stream: IO[str], log_format: str, level: Any) -> int:
    from twisted.internet import reactor
    from twisted.logger import globalLogBeginner

    from fibsd.operator_log import observer

    make_service = _import_make_service()
    try:
        log_observer = observer(log_stream, log_format, level)
        service = make_service(settings, reactor)
    except (ValueError, TlsError) as error:
        print(f"fibsd: {error}", file=sys.stderr)
        return 2
    except DATABASE_ERRORS as error:
        print(_cannot_open(settings, error), file=sys.stderr)
        return 2
    globalLogBeginner.beginLoggingTo([log_observer])
    failed: list[Failure] = []  # the service could not listen (it logs why)
    service.listening.addErrback(failed.append)
    service.tls_listening.addErrback(failed.append)
    reactor.callWhenRunning(service.startService)  # type: ignore[attr-defined]
    reactor.callWhenRunning(_stop_signals_once)  # type: ignore[attr-defined]
    reactor.callWhenRunning(  # type: ignore[attr-defined]
        _reload_on_hangup, service, getattr(log_stream, "reopen", None))
    reactor.addSystemEventTrigger(  # type: ignore[attr-defined]
        "before", "shutdown", service.stopService)
    reactor.run()  # type: ignore[attr-defined]
    return 1 if failed else 0


def _log_stream(path: str | None) -> IO[str] | Any:
    """Standard output, or ``path`` opened for appending (``LogFile``: line-buffered,
    opened again on SIGHUP)."""
    if path is None:
        return sys.stdout
    from fibsd.operator_log import LogFile

    return LogFile(Path(path))


def _backup(settings: Settings, target: Path) -> int:
    from fibsd.store.backup import BackupError, backup

    if is_postgres_url(settings.database):
        return _pg_dump(str(settings.database), target)
    try:
        pages = backup(settings.database, target, _BackupProgress())
    except BackupError as error:
        print(f"fibsd: backup failed: {error}", file=sys.stderr)
        return 1
    print(f"fibsd: backed up {settings.database} to {target} ({pages} pages)")
    return 0


class _BackupProgress:
    """Prints how far a backup is, at every tenth of it (a large site takes seconds)."""

    def __init__(self) -> None:
        self.shown = -1

    def __call__(self, copied: int, total: int) -> None:
        tenth = copied * 10 // max(total, 1)
        if tenth > self.shown:
            self.shown = tenth
            print(f"fibsd: backup {tenth * 10}% ({copied} of {total} pages)", flush=True)


def _pg_dump(url: str, target: Path) -> int:
    """A PostgreSQL database is backed up by PostgreSQL's own tool, while it runs."""
    import shutil
    import subprocess

    if shutil.which("pg_dump") is None:
        print("fibsd: the database is PostgreSQL: back it up with pg_dump "
              f"(pg_dump --format=custom --file={target} '{shown(url)}'), which is not "
              "installed here (Debian: apt-get install postgresql-client)", file=sys.stderr)
        return 1
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as error:
        print(f"fibsd: backup failed: cannot create {target}: {error.strerror}",
              file=sys.stderr)
        return 1
    done = subprocess.run(["pg_dump", "--format=custom", f"--file={target}", url],
                          capture_output=True, text=True)
    if done.returncode != 0:
        target.unlink(missing_ok=True)
        print(f"fibsd: backup failed: pg_dump: {masked(done.stderr.strip(), url)}",
              file=sys.stderr)
        return 1
    print(f"fibsd: backed up {shown(url)} to {target} with pg_dump "
          "(restore into an empty database with pg_restore)")
    return 0


def _analyse(settings: Settings, options: AnalyseOptions) -> int:
    from fibsd.analysis.worker import WorkerSettings, run

    a = settings.analysis
    worker = WorkerSettings(float(a.lease), a.attempts, float(a.time_limit),
                            a.poll_ms / 1000, a.engine)
    return run(str(options["database"] or settings.database), worker,
               once=bool(options["once"]), name=options["name"])


def _migrate(source: Path, target: str) -> int:
    try:
        from fibsd.store.site_copy import CopyError, copy_site
    except ImportError:
        print("fibsd: PostgreSQL needs psycopg: pip install 'fibsd[postgres]'", file=sys.stderr)
        return 1
    try:
        copied = copy_site(source, target)
    except (CopyError, *DATABASE_ERRORS) as error:
        print(f"fibsd: migrate failed, nothing copied: {masked(str(error), target)}",
              file=sys.stderr)
        return 1
    for table, rows in copied.rows.items():
        print(f"{table}: {rows} rows")
    print(f"ratings checksum {copied.ratings_checksum}: equal")
    print(f"fibsd: copied {source} to {shown(target)}, verified")
    return 0


def _cannot_open(settings: Settings, error: Exception) -> str:
    hint = " (the server must be able to write the file and its directory)"
    if is_postgres_url(settings.database) or not isinstance(error, sqlite3.OperationalError):
        hint = ""
    reason = masked(str(error), settings.database)
    if isinstance(error, WriteFailed):
        return f"fibsd: cannot write the database {shown(settings.database)}: {reason}{hint}"
    return f"fibsd: cannot open the database {shown(settings.database)}: {reason}{hint}"


def _reload_on_hangup(service: Any, reopen_log: Callable[[], None] | None) -> None:
    """SIGHUP reloads (``FibsService.reload``) instead of ending the process.  The
    handler only schedules it: the reactor thread does the work, between two events."""
    def hangup(number: int, frame: FrameType | None) -> None:
        service.reactor.callFromThread(service.reload, reopen_log)

    signal.signal(signal.SIGHUP, hangup)


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
