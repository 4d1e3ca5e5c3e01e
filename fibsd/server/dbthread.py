"""Run every ``Store`` call on one dedicated worker thread.

Why one thread: the store's methods block on disk, so they must stay off the
reactor thread; and with a single worker the calls run exactly in the order they
were made (a ``record_login`` issued before a ``get_user`` is seen by it), and the
store's connection is never used by two threads at once.

Usage, from reactor code::

    db = DatabaseThread(SQLiteStore(path))
    db.start()                      # or db.setServiceParent(app)
    user = await db.get_user("alice")           # any Store method, as a Deferred
    taken = await db.call("name_taken", "bob")  # the same, by name
    await db.stop()                 # finishes queued calls, then closes the store

``stop`` runs after everything already queued, so nothing is left half-written at
shutdown; calls made after it fail with ``DatabaseStopped``.

A store with a ``checkpoint`` method (SQLite's WAL) has it called every
``CHECKPOINT_INTERVAL`` seconds on a second thread of its own: every game action is a
write (``fibsd.server.match``), and a checkpoint on the writing thread, with its copying
and syncing, would hold up every write queued behind it.

Group commit: ``save_match`` calls made one after another (no other call between them)
wait in one batch, handed to the worker at the end of the reactor turn (or before the
next other call) and written by a single job; a store with
``save_matches`` (``fibsd.store.batch``: SQLite and PostgreSQL) commits them in one
transaction, any other store gets them one by one.  Under load, every save queued while the previous batch was
being written goes in the next one: one commit and one hand-off back to the reactor
for a reactor turn's game actions instead of one each.  Each caller's ``Deferred``
still fires only after the commit that holds its write, in the order the calls were
made, with the store's own answer for that write (a failed batch is written again one
by one, so a failure is that write's own).

Outages (a lost, hung or full database): a call that fails with ``WriteFailed`` or
``Unavailable`` marks the database *down*, and so does a call that has run
``stall_ms`` without an answer (a hung server): then every call queued behind it, and
every call made while it still runs, is refused at once with ``DatabaseDown`` (a
``** `` line for the user, never a silent wait), and the callbacks given to ``on_down``
run (the lobby tells the players whose match waits).  A call still running
``statement_timeout_ms`` + 1 s has its connection shut (``store.interrupt``): a stopped
server answers no timeout.  While down, the thread asks the store again (``probe``, a
real write) after 0.25 s, then twice as long each time up to ``retry_max_ms``; the
first that succeeds marks it *up* and fires ``when_up``.  Each outage is logged once,
``database_down`` and ``database_up`` (with how long it lasted and how many calls
failed meanwhile); the failures of single calls (``log_write_failed``) are logged at
most once a minute, the next line counting those left out: a long outage costs a few
log lines, never one (nor a traceback) per action.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from queue import SimpleQueue
from threading import Lock, Thread
from typing import Any, Concatenate, ParamSpec, TypeVar

from twisted.application.service import Service
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.interfaces import IReactorFromThreads
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.store import SavedMatch, Store, Unavailable, WriteFailed

log = Logger()
P = ParamSpec("P")
T = TypeVar("T")

CHECKPOINT_INTERVAL = 1.0  # seconds between two checkpoints of the store
FIRST_PROBE = 0.25  # seconds from an outage to the first probe; then doubled each time
LOG_EVERY = 60.0  # seconds between two logged failures of single calls
INTERRUPT_MARGIN = 1.0  # seconds past the statement timeout before the socket is shut
OUTAGES = (WriteFailed, Unavailable)  # what the database's state, not the call, explains
STORE_METHODS = frozenset(
    name for name in vars(Store) if not name.startswith("_") and name != "close"
)


class _Worker:
    """One daemon thread that runs the calls handed to it, in order, and answers each on
    the reactor.  What Twisted's ``ThreadPool`` of one thread does, without its team, its
    coordinator and its context copy per call: they cost a tenth of the database's CPU
    per game action at full speed (issue 26).  Calls made before ``start`` wait."""

    def __init__(self, reactor: IReactorFromThreads, name: str) -> None:
        self._reactor = reactor
        self._name = name
        self._calls: SimpleQueue[tuple[Callable[[], Any], Callable[[Any], None]] | None] = (
            SimpleQueue())
        self._thread: Thread | None = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        if self._thread is None:
            self._thread = Thread(target=self._serve, name=self._name, daemon=True)
            self._thread.start()

    def call(self, work: Callable[[], Any], answer: Callable[[Any], None]) -> None:
        """Run ``work`` on the thread; ``answer`` gets its result (or ``Failure``) on the
        reactor."""
        self._calls.put((work, answer))

    def defer(self, work: Callable[[], T]) -> Deferred[T]:
        """``work`` on the thread, as a Deferred."""
        done: Deferred[T] = Deferred()
        self.call(work, lambda result: done.errback(result) if isinstance(result, Failure)
                  else done.callback(result))
        return done

    def stop(self) -> None:
        """End the thread once the calls queued so far have run (joined)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._calls.put(None)
            thread.join()

    def _serve(self) -> None:
        while (queued := self._calls.get()) is not None:
            work, answer = queued
            try:
                result = work()
            except BaseException:  # noqa: BLE001 - the caller's answer, as a Failure
                result = Failure()
            self._reactor.callFromThread(answer, result)


class _SaveBatch:
    """``save_match`` calls waiting for one job of the worker.  Open to more saves
    until the worker takes it (``closed``, under the thread's lock) or another call is
    queued behind it."""

    def __init__(self) -> None:
        self.saves: list[SavedMatch] = []
        self.waiters: list[Deferred[None]] = []
        self.closed = False

    def answer(self, outcomes: list[BaseException | None] | Failure) -> None:
        """Fire each waiter, in order, with its own write's outcome.  A batch answered
        without being written (refused: the database hangs) takes no more saves."""
        self.closed = True
        for index, waiter in enumerate(self.waiters):
            outcome = outcomes if isinstance(outcomes, Failure) else outcomes[index]
            if outcome is None:
                waiter.callback(None)
            elif isinstance(outcome, Failure):  # the job itself broke: nothing is known
                waiter.errback(outcome)
            else:
                waiter.errback(Failure(outcome, type(outcome), outcome.__traceback__))


class _Job:
    """One call handed to the worker.  ``started`` and ``refused`` change under the
    thread's job lock: the worker starts a job, or the watchdog refuses it, never both."""

    def __init__(self, work: Callable[[], Any], probe: bool = False) -> None:
        self.work = work
        self.probe = probe  # the thread's own question while the database is down
        self.deferred: Deferred[Any] = Deferred()
        self.started: float | None = None
        self.refused = False
        self.interrupted = False


class DatabaseStopped(Exception):
    """A store call was made after the database thread was told to stop."""


class DatabaseDown(Unavailable):
    """A call refused without being run: the database is hung (a call before it has had
    no answer for ``stall_ms``)."""


@dataclass
class _Limit:
    """At most one log line per ``LOG_EVERY`` seconds; ``left_out`` counts the rest."""

    last: float = float("-inf")
    left_out: int = 0

    def due(self) -> int | None:
        """The count of lines left out since the last one, if one may be logged now."""
        now = time.monotonic()
        if now - self.last < LOG_EVERY:
            self.left_out += 1
            return None
        self.last, left_out, self.left_out = now, self.left_out, 0
        return left_out


_FAILURES: defaultdict[str, _Limit] = defaultdict(_Limit)  # "outage" and "bug"


def log_write_failed(failure: Failure, what: str, **fields: str) -> None:
    """Log the operator event ``write_failed`` for a store call that did not happen.

    A refusal of the database (``WriteFailed``: disk full, read-only file, lost or hung
    server; ``Unavailable`` for a read) is an operating condition, logged as an error with
    its message; anything else is a bug, logged with its traceback.  Either kind is
    logged at most once a minute (``left_out``: how many were not), as an outage makes
    every call fail.  One that comes after the database stopped (a rehash finishing
    during shutdown) is expected and only noted."""
    if failure.check(DatabaseStopped):
        log.warn("Store call {what} came after the database stopped", what=what,
                 event="write_failed", **fields)
        return
    outage = failure.check(*OUTAGES) is not None
    left_out = _FAILURES["outage" if outage else "bug"].due()
    if left_out is None:
        return
    if outage:
        log.error("Store call {what} failed: {error}", what=what,
                  event="write_failed", error=failure.getErrorMessage(), left_out=left_out,
                  **fields)
    else:
        log.failure("Store call {what} failed", failure, what=what,
                    event="write_failed", left_out=left_out, **fields)


def unattended(deferred: Deferred[T], what: str, **fields: str) -> Deferred[T | None]:
    """A store write nobody waits for the answer to: a failure is logged
    (``log_write_failed``) instead of lost."""
    return deferred.addErrback(log_write_failed, what, **fields)


class DatabaseThread(Service):
    """Owns one ``Store`` and runs each call to it, in order, on its own thread.

    Every ``Store`` method except ``close`` is available as an attribute that
    takes the same arguments and returns a ``Deferred`` of the result (or of the
    exception the store raised, such as ``NameTaken``).
    """

    def __init__(self, store: Store, reactor: IReactorFromThreads | None = None, *,
                 stall_ms: int = 2000, retry_max_ms: int = 2000,
                 statement_timeout_ms: int = 5000) -> None:
        if reactor is None:
            from twisted.internet import reactor as global_reactor

            reactor = global_reactor  # type: ignore[assignment]
        self._store = store
        self._reactor: IReactorFromThreads = reactor  # type: ignore[assignment]
        # A daemon worker: ``stop()`` drains every queued write before shutdown, so the
        # flag only matters for a thread that was never stopped (a crashed start, a test),
        # which would otherwise keep the interpreter from exiting.
        self._pool = _Worker(self._reactor, "fibsd-database")
        self._stopping = False
        self._finished = False
        self._waiters: list[Deferred[None]] = []
        self._batch: _SaveBatch | None = None  # the open batch of saves, if any
        self._unsent: _SaveBatch | None = None  # the open batch, not yet handed over
        self._batch_lock = Lock()
        # Outages (see the module's docstring).
        self._stall = stall_ms / 1000
        self._retry_max = retry_max_ms / 1000
        self._deadline = statement_timeout_ms / 1000 + INTERRUPT_MARGIN
        self._queue: deque[_Job] = deque()  # calls handed to the worker, not yet answered
        self._job_lock = Lock()  # a job is either started by the worker or refused, once
        self._running: _Job | None = None
        self._hung: _Job | None = None  # the running call that stalled, until it answers
        self._down_since: float | None = None
        self._failed_while_down = 0
        self._next_probe = FIRST_PROBE
        self._probe_call: Any = None
        self._up_waiters: list[Deferred[None]] = []
        self._down_callbacks: list[Callable[[], None]] = []
        self._watchdog = LoopingCall(self._watch)
        self._watchdog.clock = reactor  # type: ignore[assignment]
        checkpoint = getattr(store, "checkpoint", None)
        self._checkpoints: LoopingCall | None = None
        self._checkpoint_pool = _Worker(self._reactor, "fibsd-database-checkpoint")
        if callable(checkpoint):
            self._checkpoints = LoopingCall(self._checkpoint, checkpoint)
            self._checkpoints.clock = reactor  # type: ignore[assignment]

    def start(self) -> None:
        """Start the worker; calls made before this wait in the queue."""
        self._pool.start()
        if not self._watchdog.running:
            self._watchdog.start(min(self._stall / 4, 0.25), now=False)
        if self._checkpoints is not None and not self._checkpoints.running:
            self._checkpoint_pool.start()
            self._checkpoints.start(CHECKPOINT_INTERVAL, now=False)

    def _checkpoint(self, checkpoint: Callable[[], None]) -> Deferred[None]:
        """One checkpoint on its own thread; the loop waits for it before the next."""
        running = self._checkpoint_pool.defer(checkpoint)
        return running.addErrback(
            lambda failure: log.failure("Checkpointing the database failed", failure))

    def run(
        self,
        function: Callable[Concatenate[Store, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> Deferred[T]:
        """Call ``function(store, *args, **kwargs)`` on the worker thread."""
        if self._stopping:
            return fail(DatabaseStopped())
        if self._hung is not None:
            return self._refuse()
        self._hand_over()  # the saves made before this call go first
        self._batch = None  # a save made after this call must not be written before it
        return self._submit(partial(function, self._store, *args, **kwargs))

    def _submit(self, work: Callable[[], Any], probe: bool = False) -> Deferred[Any]:
        """Queue ``work`` for the worker; its Deferred fires with its answer, or with
        ``DatabaseDown`` if the database hangs before the worker gets to it."""
        job = _Job(work, probe)
        self._queue.append(job)
        self._pool.call(partial(self._perform, job), partial(self._answered, job=job))
        return job.deferred

    def _perform(self, job: _Job) -> Any:
        """On the worker: run ``job`` unless it was refused meanwhile."""
        with self._job_lock:
            if job.refused:
                return None
            job.started = time.monotonic()
            self._running = job
        try:
            return job.work()
        finally:
            self._running = None

    def _answered(self, result: Any, job: _Job) -> None:
        """On the reactor: a job is through; the database's state follows its answer."""
        self._queue.remove(job)
        if self._hung is job:
            self._hung = None
        if job.refused:
            return
        outcomes = result if isinstance(result, list) else [result]
        for outcome in outcomes:
            error = outcome.value if isinstance(outcome, Failure) else outcome
            if isinstance(error, OUTAGES) and not job.probe:
                if self._went_down(str(error).strip() or type(error).__name__):
                    self._tell_down()
                break
        if isinstance(result, Failure):
            job.deferred.errback(result)
        else:
            job.deferred.callback(result)

    def _refuse(self) -> Deferred[Any]:
        self._failed_while_down += 1
        return fail(DatabaseDown("the database does not answer"))

    # -- outages ---------------------------------------------------------------------------

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def on_down(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` (on the reactor) each time the database goes down."""
        self._down_callbacks.append(callback)

    def when_up(self) -> Deferred[None]:
        """Fires at once while the database is up, else once a probe finds it back."""
        if not self.down:
            return succeed(None)
        waiter: Deferred[None] = Deferred()
        self._up_waiters.append(waiter)
        return waiter

    def _watch(self) -> None:
        """The watchdog: a call without an answer for ``stall_ms`` is a hung database
        (refuse what waits behind it); past the statement deadline, shut its socket."""
        job = self._running
        if job is None or job.started is None:
            return
        ran = time.monotonic() - job.started
        if ran >= self._stall and self._hung is not job:
            self._hung = job
            new = self._went_down(f"no answer for {ran:.1f} s")
            with self._job_lock:
                waiting = [other for other in self._queue
                           if other is not job and other.started is None and not other.refused]
                for other in waiting:
                    other.refused = True
            for other in waiting:
                self._failed_while_down += 1
                other.deferred.errback(DatabaseDown("the database does not answer"))
            if new:
                self._tell_down()
        if ran >= self._deadline and not job.interrupted:
            job.interrupted = True
            interrupt = getattr(self._store, "interrupt", None)
            if callable(interrupt):
                interrupt()

    def _went_down(self, reason: str) -> bool:
        """Count a failure; True when it starts an outage (then ``_tell_down``)."""
        self._failed_while_down += 1
        if self.down:
            return False
        self._down_since = time.monotonic()
        self._failed_while_down = 1
        self._next_probe = FIRST_PROBE
        log.error("The database is down: {reason}", event="database_down", reason=reason)
        self._schedule_probe()
        return True

    def _tell_down(self) -> None:
        for callback in list(self._down_callbacks):
            callback()

    def _schedule_probe(self) -> None:
        if self._stopping or self._probe_call is not None:
            return
        delay, self._next_probe = self._next_probe, min(self._next_probe * 2, self._retry_max)
        self._probe_call = self._reactor.callLater(  # type: ignore[attr-defined]
            delay, self._probe)

    def _probe(self) -> None:
        self._probe_call = None
        if self._stopping or not self.down:
            return
        if self._hung is not None:  # the hung call holds the worker: ask again later
            self._schedule_probe()
            return
        probe = getattr(self._store, "probe", None)
        self._submit(probe if callable(probe) else (lambda: None), probe=True).addCallbacks(
            self._came_up, lambda _: self._schedule_probe())

    def _came_up(self, _: object) -> None:
        if self._down_since is None:
            return
        seconds = time.monotonic() - self._down_since
        self._down_since = None
        log.info("The database is back after {seconds:.1f} s ({failed} calls failed"
                 " meanwhile)", event="database_up", seconds=seconds,
                 failed=self._failed_while_down)
        waiters, self._up_waiters = self._up_waiters, []
        for waiter in waiters:
            waiter.callback(None)

    def call(self, method: str, *args: Any, **kwargs: Any) -> Deferred[Any]:
        """Call the store method named ``method`` on the worker thread."""
        if method not in STORE_METHODS:
            raise AttributeError(method)
        if method == "save_match" and len(args) == 1 and not kwargs:
            return self._save(args[0])
        return self.run(lambda store: getattr(store, method)(*args, **kwargs))

    def save_match(self, saved: SavedMatch) -> Deferred[None]:
        """``Store.save_match`` (made at every game action): straight to the open batch,
        without the lookup and closure of the other methods (``__getattr__``)."""
        return self._save(saved)

    def _save(self, saved: SavedMatch) -> Deferred[None]:
        """``save_match``, in the open batch or in a new one queued behind every call
        made so far."""
        if self._stopping:
            return fail(DatabaseStopped())
        if self._hung is not None:
            return self._refuse()
        waiter: Deferred[None] = Deferred()
        with self._batch_lock:
            batch = self._batch
            if batch is None or batch.closed:
                batch = None
            else:
                batch.saves.append(saved)
                batch.waiters.append(waiter)
        if batch is None:
            batch = self._batch = _SaveBatch()
            batch.saves.append(saved)
            batch.waiters.append(waiter)
            # Handed to the worker at the end of this reactor turn, with every save the
            # turn's other commands make: one hand-off (and one wake-up of the worker,
            # which contends with the reactor for the interpreter) for them all.
            self._unsent = batch
            self._reactor.callLater(0, self._hand_over)  # type: ignore[attr-defined]
        return waiter

    def _hand_over(self) -> None:
        """Queue the batch of saves not yet handed to the worker, if any."""
        batch, self._unsent = self._unsent, None
        if batch is None:
            return
        if self._hung is not None:  # made before the database hung: refused like a call
            self._failed_while_down += 1
            batch.answer(Failure(DatabaseDown("the database does not answer")))
            return
        self._submit(partial(self._write_batch, batch)).addBoth(batch.answer)

    def _write_batch(self, batch: _SaveBatch) -> list[BaseException | None]:
        """On the worker: close ``batch`` to further saves and write it."""
        with self._batch_lock:
            batch.closed = True
        save_matches = getattr(self._store, "save_matches", None)
        if callable(save_matches):
            outcomes: list[BaseException | None] = save_matches(batch.saves)
            return outcomes
        outcomes = []
        for saved in batch.saves:
            try:
                self._store.save_match(saved)
            except Exception as error:  # the caller gets it, as from any store call
                outcomes.append(error)
            else:
                outcomes.append(None)
        return outcomes

    def __getattr__(self, method: str) -> Callable[..., Deferred[Any]]:
        if method not in STORE_METHODS:
            raise AttributeError(method)
        return lambda *args, **kwargs: self.call(method, *args, **kwargs)

    def stop(self) -> Deferred[None]:
        """Let queued calls finish, close the store, end the thread.

        Fires once the store is closed (with the error if closing failed); a
        second call waits for the same end.
        """
        if self._finished:
            return succeed(None)
        waiter: Deferred[None] = Deferred()
        self._waiters.append(waiter)
        if not self._stopping:
            self._hand_over()  # the saves of this reactor turn are written before closing
            self._stopping = True  # the watchdog goes on: a hung call must not hang the stop
            if self._probe_call is not None and self._probe_call.active():
                self._probe_call.cancel()
            if self._checkpoints is not None and self._checkpoints.running:
                self._checkpoints.stop()
            # Joins a checkpoint under way, so none runs when the store closes.
            self._checkpoint_pool.stop()
            if not self._pool.started:
                self._pool.start()  # never started: still close the store
            closing = self._pool.defer(self._store.close)
            closing.addBoth(self._finish)
        return waiter

    def _finish(self, result: None | Failure) -> None:
        if self._watchdog.running:
            self._watchdog.stop()
        self._pool.stop()  # the worker is idle now: this join is immediate
        self._finished = True
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if isinstance(result, Failure):
                waiter.errback(result)
            else:
                waiter.callback(None)

    # twisted.application.service.IService

    def startService(self) -> None:
        super().startService()
        self.start()

    def stopService(self) -> Deferred[None]:
        super().stopService()
        return self.stop()
