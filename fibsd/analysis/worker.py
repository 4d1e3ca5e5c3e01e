"""An analysis worker: a process of its own that takes jobs from the store's queue,
has gnubg analyse each match and keeps the result (protocol/analysis.md).

The server starts ``[analysis] workers`` of them (``fibsd.analysis.supervisor``); a site
on PostgreSQL may run more anywhere with ``fibsd analyse --database URL``: they pull
jobs (``claim_analysis``, ``FOR UPDATE SKIP LOCKED`` there), so none is done twice.

A job is one try: the record exported as ``.mat`` (``fibsd.wire.mat``), gnubg run on
it (``engine``) and its answer read against the record (``reading``), all within
``time_limit`` seconds (an alarm cuts off even fibsd's own part, for a record made to
be slow).  The result is kept only under the job's lease; a try that fails is counted
and the job queued again, until ``attempts`` tries made it ``failed`` with the last
reason.  A record fibsd itself cannot export, or that gnubg reads as another match,
fails at once: trying again would read it the same way.

The database may go away while a worker holds a job: each store call is tried again,
with a growing pause, for as long as the lease lasts (then the job is someone else's
again); asking for the next job waits for the database the same way.  SIGTERM or
SIGINT stops the worker: a job under way is given back untried and gnubg killed.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from fibsd.analysis.engine import EngineFailed, find_gnubg, run_gnubg
from fibsd.analysis.model import AnalysisJob, MatchAnalysis
from fibsd.analysis.reading import Mismatch, read_analysis
from fibsd.rules.errors import InvalidRecord
from fibsd.store import Store, Unavailable, WriteFailed
from fibsd.web.replay import UnreadableRecord, replay
from fibsd.wire.mat import mat_text

T = TypeVar("T")
PAUSE_FIRST = 0.5  # seconds before a store call is tried again; doubled each time
PAUSE_MAX = 30.0
LEASE_MARGIN = 0.9  # a job's time limit stays below this share of its lease


class JobTimeout(Exception):
    """The job ran past its time limit (the alarm)."""


class Stopping(BaseException):
    """SIGTERM or SIGINT: give the job back and stop."""


@dataclass(frozen=True)
class WorkerSettings:
    lease: float = 900.0
    attempts: int = 3
    time_limit: float = 600.0
    poll: float = 2.0
    engine: str = "gnubg"


class Worker:
    """Takes and does jobs one at a time on ``store`` (a store of its own: the worker
    is a process of its own)."""

    def __init__(self, store: Store, settings: WorkerSettings, program: str,
                 log: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.settings = settings
        self.program = program
        self.log = log
        self.clock = clock
        self.done = 0  # results kept
        self.failed = 0  # tries that failed

    def serve(self, once: bool = False, orphaned: Callable[[], bool] = lambda: False) -> None:
        """Do jobs until stopped (``once``: until the queue has none due; ``orphaned``:
        until the server that started this worker is gone)."""
        while not orphaned():
            job = self._patiently(lambda: self.store.claim_analysis(
                self.clock(), self.settings.lease, self.settings.attempts), None)
            if job is None:
                if once:
                    return
                time.sleep(self.settings.poll)
                continue
            self.work(job)

    def work(self, job: AnalysisJob) -> None:
        """One try of ``job``, its outcome kept (or the job given back, when stopping)."""
        started = time.monotonic()
        limit = min(self.settings.time_limit, self.settings.lease * LEASE_MARGIN)
        lease_end = time.monotonic() + self.settings.lease
        try:
            with _alarm(limit):
                outcome: MatchAnalysis | tuple[str, bool] = self.analyse(job, limit)
        except JobTimeout:
            outcome = (f"the analysis took longer than {limit:g} s", False)
        except Stopping:
            self._patiently(lambda: self.store.release_analysis(job.match_id, job.token),
                            lease_end)
            raise
        seconds = time.monotonic() - started
        if isinstance(outcome, MatchAnalysis):
            kept = self._patiently(lambda: self.store.complete_analysis(outcome, job.token),
                                   lease_end)
            self.done += bool(kept)
            self.log(f"match {job.match_id}: analysed at {job.plies} plies in {seconds:.2f} s"
                     + ("" if kept else " (not kept: the job is no longer this worker's)"))
            return
        reason, final = outcome
        self.failed += 1
        state = self._patiently(lambda: self.store.fail_analysis(
            job.match_id, job.token, reason, self.settings.attempts, final), lease_end)
        self.log(f"match {job.match_id}: try {job.attempt} failed ({reason});"
                 f" now {state or 'not this worker'}'s")

    def analyse(self, job: AnalysisJob, limit: float) -> MatchAnalysis | tuple[str, bool]:
        """The analysis, or (the reason it failed, whether trying again is useless)."""
        try:
            shown = replay(job.record)
            mat = mat_text(job.record, match_id=job.match_id)
        except (UnreadableRecord, InvalidRecord, ValueError, KeyError, TypeError) as error:
            return (f"the record cannot be exported: {error}", True)
        try:
            data = run_gnubg(self.program, mat, job.plies, limit)
        except EngineFailed as error:
            return (str(error), False)
        try:
            return read_analysis(data, shown, job.match_id, job.plies, self.clock())
        except Mismatch as error:
            return (f"gnubg cannot read the match: {error}", True)
        except (KeyError, TypeError, ValueError, IndexError) as error:
            return (f"gnubg's analysis cannot be read: {error!r}", True)

    def _patiently(self, call: Callable[[], T], until: float | None) -> T | None:
        """``call()``, tried again while the database is away, until ``until``
        (monotonic; None: for ever).  None if it never went through."""
        pause = PAUSE_FIRST
        while True:
            try:
                return call()
            except (WriteFailed, Unavailable, OSError) as error:
                if until is not None and time.monotonic() + pause > until:
                    self.log(f"database unavailable ({error}); the job is left to its lease")
                    return None
                self.log(f"database unavailable ({error}); trying again in {pause:g} s")
                time.sleep(pause)
                pause = min(pause * 2, PAUSE_MAX)


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """``JobTimeout`` in the main thread after ``seconds`` (nothing elsewhere: a test
    may run a worker in a thread, with gnubg's own time limit alone)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise JobTimeout()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _stop(signum: int, frame: Any) -> None:
    raise Stopping()


def _die_with(parent: int) -> Callable[[], bool]:
    """SIGTERM when ``parent`` dies (Linux's parent-death signal), and a check for it
    between jobs elsewhere: a worker never outlives the server that started it."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # gone before the signal was asked for
        raise Stopping()
    return lambda: os.getppid() != parent


def run(database: str, settings: WorkerSettings, *, once: bool = False, nice: int = 0,
        name: str = "", parent: int = 0) -> int:
    """A worker process's life: open the store, do jobs until stopped."""
    label = name or f"{socket.gethostname()}:{os.getpid()}"

    def log(text: str) -> None:
        print(f"fibsd analyse [{label}]: {text}", file=sys.stderr, flush=True)

    if nice:
        os.nice(nice)
    program = find_gnubg(settings.engine)
    if program is None:
        log(f"no gnubg program ([analysis] engine = {settings.engine!r}): analysis is off")
        return 3
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        orphaned = _die_with(parent) if parent else (lambda: False)
        store = _open(database, log)
    except Stopping:
        return 0
    worker = Worker(store, settings, program, log)
    try:
        worker.serve(once=once, orphaned=orphaned)
    except Stopping:
        log("stopped")
    finally:
        store.close()
    return 0


def _open(database: str, log: Callable[[str], None]) -> Store:
    """The store, waited for while the database is away at start."""
    from fibsd.store.opening import DatabaseUnavailable, open_store

    pause = PAUSE_FIRST
    while True:
        try:
            return open_store(database)
        except (WriteFailed, Unavailable, DatabaseUnavailable, OSError) as error:
            log(f"database unavailable ({error}); trying again in {pause:g} s")
        time.sleep(pause)
        pause = min(pause * 2, PAUSE_MAX)


def main(argv: list[str] | None = None) -> int:
    """``python -m fibsd.analysis.worker --database URL ...``: what the server runs for
    each of its workers (``fibsd analyse`` is the operator's form, from the config)."""
    parser = argparse.ArgumentParser(prog="fibsd-analysis-worker", description=__doc__)
    parser.add_argument("--database", required=True)
    defaults = WorkerSettings()
    parser.add_argument("--lease", type=float, default=defaults.lease)
    parser.add_argument("--attempts", type=int, default=defaults.attempts)
    parser.add_argument("--time-limit", type=float, default=defaults.time_limit)
    parser.add_argument("--poll", type=float, default=defaults.poll)
    parser.add_argument("--engine", default=defaults.engine)
    parser.add_argument("--nice", type=int, default=0)
    parser.add_argument("--name", default="")
    parser.add_argument("--parent", type=int, default=0,
                        help="stop when this process (the server) is gone")
    parser.add_argument("--once", action="store_true",
                        help="stop once no job is due (tests, benchmarks, cron)")
    args = parser.parse_args(argv)
    settings = WorkerSettings(args.lease, args.attempts, args.time_limit, args.poll,
                              args.engine)
    return run(args.database, settings, once=args.once, nice=args.nice, name=args.name,
               parent=args.parent)


if __name__ == "__main__":
    sys.exit(main())
