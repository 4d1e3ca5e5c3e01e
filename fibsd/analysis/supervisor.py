"""The server's side of analysis: its worker processes and the "analysis ready" hook.

``AnalysisService`` (a child service of ``fibsd.app.FibsService``) starts
``[analysis] workers`` worker processes (``python -m fibsd.analysis.worker``) at the
lowest priority, restarts one that ends with a growing delay (1 s doubled up to a
minute, back to 1 s once one has run a minute), relays what they say to the server's
log, and stops them with the server (SIGTERM: a job under way is given back; SIGKILL
after ``STOP_GRACE``).  Nothing here blocks: the processes are the reactor's, the
poll is a store call on the database thread.

Every ``poll_ms`` it asks the store for results kept since the last look (by any
worker, on any machine; ``LATE`` says why it looks a little further back) and calls
``on_done(match_id)`` on the reactor thread for each, once:
the face's ready notice hangs there (``FibsService.on_analysis_done``).

``analysis_state`` decides at start whether analysis is on: ``[analysis] matches =
"none"`` turns it off, and so does a server with workers of its own but no gnubg
program (said once in the log); a server with ``workers = 0`` queues jobs for the
workers that run elsewhere.  An in-memory database has no place for other processes:
jobs are queued, no worker is started.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from twisted.application.service import Service
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.protocol import ProcessProtocol
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.analysis.engine import find_gnubg
from fibsd.config import Analysis

log = Logger()
NICE = 19  # the lowest priority: the game's process comes first
RESTART_FIRST = 1.0
RESTART_MAX = 60.0
RAN_LONG = 60.0  # a worker that ran this long before it ended restarts at once
STOP_GRACE = 10.0  # seconds a stopping worker has before it is killed
# PostgreSQL hands out sequence numbers at insert and workers commit in any order: a
# result may become visible below the highest number seen.  Each look reads this many
# below it again (and tells none twice).
LATE = 200


def analysis_state(settings: Analysis, database: str) -> tuple[bool, str]:
    """(whether jobs are queued, why not / how they are done) for the log."""
    if settings.matches == "none":
        return False, "analysis is off ([analysis] matches = \"none\")"
    if settings.workers and find_gnubg(settings.engine) is None:
        return False, (f"analysis is off: no gnubg program ([analysis] engine ="
                       f" {settings.engine!r}); install GNU Backgammon (README)")
    if not settings.workers:
        return True, "analysis jobs are queued for workers run elsewhere (fibsd analyse)"
    if database == ":memory:":
        return True, "analysis jobs are queued; no worker shares an in-memory database"
    return True, f"analysis by {settings.workers} gnubg worker process(es)"


class _Worker(ProcessProtocol):
    def __init__(self, service: AnalysisService, number: int) -> None:
        self.service = service
        self.number = number
        self.ended: Deferred[None] = Deferred()
        self.started = 0.0
        self.killer: Any = None  # the SIGKILL due if a stopping worker lingers
        self._partial = b""

    def errReceived(self, data: bytes) -> None:
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            log.info("{line}", line=line.decode("utf-8", "replace"))

    outReceived = errReceived

    def processEnded(self, reason: Failure) -> None:
        if self.killer is not None and self.killer.active():
            self.killer.cancel()
        self.service.ended(self, reason)
        self.ended.callback(None)


class AnalysisService(Service):
    """The worker processes and the poll for results."""

    def __init__(self, settings: Analysis, database: str, db: Any, reactor: Any,
                 on_done: Callable[[int], None]) -> None:
        self.settings = settings
        self.database = database
        self.db = db
        self.reactor = reactor
        self.on_done = on_done
        self.queueing, self.reason = analysis_state(settings, database)
        self.workers: dict[int, _Worker] = {}
        self.delays: dict[int, float] = {}
        self.pending: dict[int, Any] = {}  # restarts waiting for their delay
        self.seen: int | None = None  # the highest sequence looked at
        self.start = 0  # the highest when the server started
        self.told: set[int] = set()  # sequences told, of the last LATE
        self.poll = LoopingCall(self._poll)
        self.poll.clock = reactor

    def startService(self) -> None:
        super().startService()
        (log.info if self.queueing else log.warn)("fibsd: {reason}", reason=self.reason)
        if not self.queueing:
            return
        if self.database != ":memory:":
            for number in range(self.settings.workers):
                self._spawn(number)
        self.poll.start(self.settings.poll_ms / 1000, now=True).addErrback(
            lambda failure: log.failure("analysis poll stopped", failure))

    def _spawn(self, number: int) -> None:
        self.pending.pop(number, None)
        a = self.settings
        worker = _Worker(self, number)
        worker.started = self.reactor.seconds()
        argv = [sys.executable, "-m", "fibsd.analysis.worker", "--database", self.database,
                "--lease", str(a.lease), "--attempts", str(a.attempts),
                "--time-limit", str(a.time_limit), "--poll", str(a.poll_ms / 1000),
                "--engine", a.engine, "--nice", str(NICE), "--name", f"worker-{number}",
                "--parent", str(os.getpid())]
        self.workers[number] = worker
        self.reactor.spawnProcess(worker, sys.executable, argv, env=dict(os.environ))

    def ended(self, worker: _Worker, reason: Failure) -> None:
        """A worker ended: unless the server stops, start it again after a delay."""
        if self.workers.get(worker.number) is not worker:
            return
        del self.workers[worker.number]
        if not self.running:
            return
        ran = self.reactor.seconds() - worker.started
        delay = RESTART_FIRST if ran >= RAN_LONG else min(
            self.delays.get(worker.number, RESTART_FIRST / 2) * 2, RESTART_MAX)
        self.delays[worker.number] = delay
        log.warn("fibsd: analysis worker {number} ended ({reason}); restarted in {delay} s",
                 number=worker.number, reason=reason.getErrorMessage(), delay=delay)
        self.pending[worker.number] = self.reactor.callLater(delay, self._spawn,
                                                            worker.number)

    def _poll(self) -> Deferred[None]:
        return Deferred.fromCoroutine(self._look())

    async def _look(self) -> None:
        try:
            if self.seen is None:  # results kept before the server started are old news
                self.seen = self.start = await self.db.analysis_done_mark()
            done = await self.db.analyses_done_after(max(self.start, self.seen - LATE))
        except Exception as error:  # the database is down: the next look will do
            log.debug("analysis poll: {error}", error=str(error))
            return
        for sequence, match_id in done:
            if sequence in self.told:
                continue
            self.told.add(sequence)
            try:
                self.on_done(match_id)
            except Exception:
                log.failure("on_analysis_done({match_id})", match_id=match_id)
        if done:
            self.seen = max(self.seen, max(sequence for sequence, _ in done))
        self.told = {sequence for sequence in self.told if sequence > self.seen - LATE}

    def stopService(self) -> Deferred[Any]:
        super().stopService()
        if self.poll.running:
            self.poll.stop()
        for call in self.pending.values():
            if call.active():
                call.cancel()
        self.pending.clear()
        ends = []
        for worker in list(self.workers.values()):
            ends.append(worker.ended)
            _signal(worker, "TERM")
            worker.killer = self.reactor.callLater(STOP_GRACE, _signal, worker, "KILL")
        return DeferredList(ends)


def _signal(worker: _Worker, name: str) -> None:
    try:
        if worker.transport is not None:
            worker.transport.signalProcess(name)
    except Exception:  # ended meanwhile
        pass
