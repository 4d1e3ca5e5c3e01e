"""A throwaway PostgreSQL server for the tests: ``initdb`` and ``pg_ctl`` in a temporary
directory, listening only on a Unix socket there, gone when the session ends.

The binaries come from Debian's ``postgresql`` package (``/usr/lib/postgresql/N/bin``)
or from ``PATH``; ``.ci/run`` installs the package, so CI never skips.  PostgreSQL
refuses to run as root, so as root the server runs as the ``postgres`` account (or
``nobody``) and owns its directory.  For the tests durability is switched off
(``fsync=off``): the data is thrown away, and they run faster for it;
``benchmarks/store.py`` starts one with PostgreSQL's defaults (``durable=True``).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class NoPostgres(Exception):
    """No PostgreSQL server can be started here; the message says why."""


def _binaries() -> Path:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    for directory in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(directory, "pg_ctl").exists():
            return Path(directory)
    raise NoPostgres("no PostgreSQL server binaries (initdb, pg_ctl): "
                     "apt-get install postgresql")


def _run_as() -> dict[str, Any]:
    """``subprocess`` arguments to drop root for the server (which refuses root)."""
    if os.getuid() != 0:
        return {}
    for name in ("postgres", "nobody"):
        try:
            account = pwd.getpwnam(name)
        except KeyError:
            continue
        return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
    raise NoPostgres("running as root and there is no postgres or nobody account to run as")


@dataclass
class PostgresServer:
    """A running private server; ``url(name)`` of a database on it."""

    directory: Path
    binaries: Path
    user: str
    run_as: dict[str, Any] = field(default_factory=dict)
    databases: int = 0
    durable: bool = False

    @classmethod
    def start(cls, durable: bool = False) -> PostgresServer:
        binaries = _binaries()
        run_as = _run_as()
        # directly under /tmp: the socket path must be short, and the server's account
        # must reach it (pytest's own temporary directories are private to root)
        directory = Path(tempfile.mkdtemp(prefix="fibsd-pg-"))
        if run_as:
            os.chown(directory, run_as["user"], run_as["group"])
        user = pwd.getpwuid(run_as.get("user", os.getuid())).pw_name
        server = cls(directory, binaries, user, run_as, durable=durable)
        try:
            server._run("initdb", "-D", str(directory / "data"), "-U", user,
                        "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync")
            server.restart()
        except NoPostgres:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return server

    def _run(self, program: str, *args: str) -> None:
        try:
            subprocess.run([str(self.binaries / program), *args], check=True,
                           capture_output=True, text=True, cwd=self.directory,
                           timeout=120, **self.run_as)
        except (OSError, subprocess.SubprocessError) as error:
            detail = getattr(error, "stderr", "") or ""
            log = self.directory / "server.log"
            if log.exists():
                detail += log.read_text(errors="replace")
            raise NoPostgres(f"{program} failed: {error}\n{detail}".strip()) from error

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@/{database}?host={self.directory}"

    def new_database(self) -> str:
        """The URL of a new, empty database of its own."""
        import psycopg

        self.databases += 1
        name = f"fibsd_test_{self.databases}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def _options(self) -> str:
        return (f"-c listen_addresses='' -c unix_socket_directories='{self.directory}'"
                + ("" if self.durable else " -c fsync=off -c synchronous_commit=off"
                   " -c full_page_writes=off"))

    def halt(self) -> None:
        """Stop the server at once (``pg_ctl stop -m immediate``: a crash, for the
        clients), keeping its data for ``restart``."""
        self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", "immediate", "-w",
                  "stop")

    def restart(self) -> None:
        """Start the halted server again on the same data and socket."""
        self._run("pg_ctl", "-D", str(self.directory / "data"), "-l",
                  str(self.directory / "server.log"), "-w", "-t", "60", "-o",
                  self._options(), "start")

    def processes(self) -> list[int]:
        """The postmaster and every process it started (its backends included)."""
        postmaster = int((self.directory / "data" / "postmaster.pid").read_text().split()[0])
        found = [postmaster]
        for stat_file in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat_file.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:
                found.append(int(stat_file.parent.name))
        return found

    def freeze(self) -> None:
        """Hang the server: SIGSTOP to the postmaster and its backends (it accepts
        connections in the kernel, and answers nothing)."""
        self._signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self._signal(signal.SIGCONT)

    def _signal(self, number: int) -> None:
        for pid in self.processes():
            try:
                os.kill(pid, number)
            except ProcessLookupError:  # a backend that ended meanwhile
                pass

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", "immediate", "-w",
                      "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
