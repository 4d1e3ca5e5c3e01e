"""Starting, watching and stopping the resident bots' processes.

Each ``Seat`` runs as one ``fibsd-bot`` process (``python -m fibsd.client.bot``,
the interpreter of the server), and a gnubg bot also has a ``gnubg -t`` process of its
own, set to its strength and listening on a loopback port for that bot alone (gnubg
serves one connection at a time).  A ``Keeper`` keeps one process alive:

* a process that ends is started again after ``restart_min_seconds``, then twice as
  long after each further short run, up to ``restart_max_seconds``; a run of
  ``stable_seconds`` starts the count again;
* its state is logged once per change (event ``resident_bot``, field ``state``):
  ``running`` when first started, ``restarting`` after one exit, ``crash-looping``
  when a restarted process ends again before it is stable (nothing more is logged
  while it keeps crashing), ``running`` again once a run is stable, ``stopped``.  The
  last line the process wrote goes with ``restarting`` and ``crash-looping``;
* ``stop`` sends SIGTERM, then SIGKILL to a process still there after
  ``STOP_SECONDS``.

The bot's own log lines go to the server's log at the info level while it is not
crash-looping (each prefixed with its account name); gnubg's output is dropped.
"""

from __future__ import annotations

import os
import re
from collections import deque
import shutil
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.defer import Deferred, DeferredList, succeed
from twisted.internet.error import ProcessDone, ProcessExitedAlready
from twisted.internet.interfaces import IDelayedCall, IReactorProcess, IReactorTime
from twisted.internet.protocol import ProcessProtocol
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.config import Bots
from fibsd.residents.accounts import Seat
from fibsd.residents.levels import describe, gnubg_commands

log = Logger()
STOP_SECONDS = 5.0
MAX_LINE = 300  # of a process's output kept for the log
_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT[0-9:.+-]+ ")  # the bot's own log time: ours comes first


@dataclass(frozen=True)
class Program:
    """One process to keep running: its name in the log, its command line and what is
    written to its standard input (kept open: gnubg quits at its end)."""

    name: str
    argv: tuple[str, ...]
    stdin: bytes = b""
    output: bool = True  # forward its output lines to the log


def find_gnubg(configured: str) -> str | None:
    if configured:
        return shutil.which(configured) or (configured if os.access(configured, os.X_OK)
                                            else None)
    return shutil.which("gnubg") or shutil.which("gnubg", path="/usr/games")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def programs(seat: Seat, host: str, port: int, gnubg: str | None) -> list[Program]:
    """The processes a seat needs: gnubg first (for the gnubg brain), then the bot."""
    bot = seat.bot
    argv = [sys.executable, "-m", "fibsd.client.bot", "--server", host, "--port", str(port),
            "--name", seat.account, "--password-file", str(seat.password_file),
            "--lengths", ",".join(map(str, bot.lengths)), "--brain", bot.brain]
    found: list[Program] = []
    if bot.brain == "gnubg":
        assert gnubg is not None
        gnubg_port = free_port()
        commands = [*gnubg_commands(bot.strength), f"external 127.0.0.1:{gnubg_port}"]
        found.append(Program(f"{seat.account} (gnubg)", (gnubg, "-t", "-q"),
                             "".join(f"{line}\n" for line in commands).encode(), output=False))
        argv += ["--gnubg-host", "127.0.0.1", "--gnubg-port", str(gnubg_port)]
    found.append(Program(seat.account, tuple(argv)))
    return found


class _Process(ProcessProtocol):
    def __init__(self, keeper: Keeper) -> None:
        self.keeper = keeper
        self.ended: Deferred[None] = Deferred()
        self._partial = b""

    def connectionMade(self) -> None:
        program = self.keeper.program
        if program.stdin:
            assert self.transport is not None
            self.transport.write(program.stdin)

    def outReceived(self, data: bytes) -> None:
        self._lines(data)

    def errReceived(self, data: bytes) -> None:
        self._lines(data)

    def _lines(self, data: bytes) -> None:
        *lines, self._partial = (self._partial + data).split(b"\n")
        self._partial = self._partial[-MAX_LINE:]
        for raw in lines:
            line = _STAMP.sub("", raw.decode("utf-8", "replace").rstrip())[:MAX_LINE]
            if line:
                self.keeper.output(line)

    def processEnded(self, reason: Failure) -> None:
        self.keeper.ended(self, reason)
        self.ended.callback(None)


@dataclass(eq=False)
class Keeper:
    """Keeps one program running, with backoff, logging each change of state once."""

    program: Program
    reactor: IReactorProcess
    clock: IReactorTime
    bots: Bots
    state: str = "new"
    failures: int = 0  # short runs in a row
    # the last restarts' waits (the log says only when the state changes)
    delays: deque[float] = field(default_factory=lambda: deque(maxlen=100))
    last_line: str = ""
    process: _Process | None = None
    _pending: IDelayedCall | None = None
    _stable: IDelayedCall | None = None
    _stopping: bool = False

    def start(self) -> None:
        self._pending = None
        protocol = _Process(self)
        self.process = protocol
        env = dict(os.environ)
        env.pop("FIBSD_BOT_PASSWORD", None)  # never another bot's password
        self.reactor.spawnProcess(protocol, self.program.argv[0], list(self.program.argv),
                                  env=env)
        if self.state == "new":
            self._set("running", pid=self._pid())
        self._stable = self.clock.callLater(self.bots.stable_seconds, self._stable_run)

    def _pid(self) -> int | None:
        transport = self.process.transport if self.process is not None else None
        return getattr(transport, "pid", None)

    def _stable_run(self) -> None:
        self._stable = None
        self.failures = 0
        if self.state != "running":
            self._set("running", pid=self._pid())

    def output(self, line: str) -> None:
        self.last_line = line
        if self.program.output and self.state != "crash-looping":
            log.info("{bot}: {line}", bot=self.program.name, line=line, event="resident_bot_log")

    def ended(self, process: _Process, reason: Failure) -> None:
        if process is not self.process:
            return
        self.process = None
        if self._stable is not None:
            if self._stable.active():
                self._stable.cancel()
            self._stable = None
            self.failures += 1
        else:
            self.failures = 1
        if self._stopping:
            return
        delay = min(float(self.bots.restart_max_seconds),
                    self.bots.restart_min_seconds * 2.0 ** (self.failures - 1))
        self.delays.append(delay)
        status = ("exited normally" if reason.check(ProcessDone)
                  else reason.getErrorMessage().rstrip("."))
        if self.failures == 1:
            self._set("restarting", status=status, delay=delay, line=self.last_line)
        elif self.state != "crash-looping":
            self._set("crash-looping", status=status, delay=delay, line=self.last_line)
        self._pending = self.clock.callLater(delay, self.start)

    def _set(self, state: str, **fields: Any) -> None:
        self.state = state
        texts = {
            "running": "resident bot {bot} running (pid {pid})",
            "restarting": "resident bot {bot} {status}; starting it again in {delay:.0f} s"
                          " (its last line: {line})",
            "crash-looping": "resident bot {bot} keeps ending ({status}): starting it again "
                             "with waits doubling up to {cap} s; logged again when it runs "
                             "for {stable} s (its last line: {line})",
            "stopped": "resident bot {bot} stopped",
        }
        emit = log.info if state in ("running", "stopped") else log.warn
        emit(texts[state], event="resident_bot", bot=self.program.name, state=state,
             cap=self.bots.restart_max_seconds, stable=self.bots.stable_seconds, **fields)

    def stop(self) -> Deferred[None]:
        """End the process (SIGTERM, then SIGKILL) and start it no more."""
        self._stopping = True
        for call in (self._pending, self._stable):
            if call is not None and call.active():
                call.cancel()
        self._pending = self._stable = None
        process = self.process
        if process is None:
            if self.state != "stopped":
                self._set("stopped")
            return succeed(None)
        self._signal(process, "TERM")
        killer = self.clock.callLater(STOP_SECONDS, self._signal, process, "KILL")

        def ended(_: object) -> None:
            if killer.active():
                killer.cancel()
            self._set("stopped")

        return process.ended.addCallback(ended)

    @staticmethod
    def _signal(process: _Process, signal_name: str) -> None:
        try:
            if process.transport is not None:
                process.transport.signalProcess(signal_name)  # type: ignore[attr-defined]
        except ProcessExitedAlready:
            pass


class Supervisor:
    """The resident bots' processes: started once the game port listens, stopped first
    when the server stops."""

    def __init__(self, bots: Bots, reactor: Any, clock: IReactorTime | None = None,
                 make_programs: Callable[[Seat, str, int, str | None], Sequence[Program]]
                 = programs) -> None:
        self.bots = bots
        self.reactor = reactor
        self.clock = clock if clock is not None else reactor
        self.make_programs = make_programs
        self.keepers: dict[str, Keeper] = {}

    def start(self, seats: Sequence[Seat], port: int) -> None:
        host = self.bots.server or "127.0.0.1"
        port = self.bots.port or port
        gnubg = find_gnubg(self.bots.gnubg)
        without = [seat.account for seat in seats if seat.bot.brain == "gnubg"] if gnubg is None else []
        if without:
            log.warn("resident bots {bots} not started: gnubg is not installed (apt-get "
                     "install gnubg, or [bots] gnubg names it)", bots=", ".join(without),
                     event="resident_bot", state="not-started")
        for seat in seats:
            if seat.account in without:
                continue
            log.info("resident bot {bot}: {strength}, match lengths {lengths}, on {host}:{port}",
                     bot=seat.account, strength=describe(seat.bot),
                     lengths=",".join(map(str, seat.bot.lengths)), host=host, port=port)
            for program in self.make_programs(seat, host, port, gnubg):
                keeper = Keeper(program, self.reactor, self.clock, self.bots)
                self.keepers[program.name] = keeper
                keeper.start()

    def stop(self) -> Deferred[Any]:
        return DeferredList([keeper.stop() for keeper in self.keepers.values()])
