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
wait in one batch, written by a single job of the worker; a store with
``save_matches`` (``fibsd.store.batch``: SQLite and PostgreSQL) commits them in one
transaction, any other store gets them one by one.  Under load, every save queued while the previous batch was
being written goes in the next one: one commit and one hand-off back to the reactor
for a reactor turn's game actions instead of one each.  Each caller's ``Deferred``
still fires only after the commit that holds its write, in the order the calls were
made, with the store's own answer for that write (a failed batch is written again one
by one, so a failure is that write's own).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from threading import Lock, Thread
from typing import Any, Concatenate, ParamSpec, TypeVar

from twisted.application.service import Service
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.interfaces import IReactorFromThreads
from twisted.internet.task import LoopingCall
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

from fibsd.store import SavedMatch, Store, WriteFailed

log = Logger()
P = ParamSpec("P")
T = TypeVar("T")

CHECKPOINT_INTERVAL = 1.0  # seconds between two checkpoints of the store
STORE_METHODS = frozenset(
    name for name in vars(Store) if not name.startswith("_") and name != "close"
)


class _SaveBatch:
    """``save_match`` calls waiting for one job of the worker.  Open to more saves
    until the worker takes it (``closed``, under the thread's lock) or another call is
    queued behind it."""

    def __init__(self) -> None:
        self.saves: list[SavedMatch] = []
        self.waiters: list[Deferred[None]] = []
        self.closed = False

    def answer(self, outcomes: list[BaseException | None] | Failure) -> None:
        """Fire each waiter, in order, with its own write's outcome."""
        for index, waiter in enumerate(self.waiters):
            outcome = outcomes if isinstance(outcomes, Failure) else outcomes[index]
            if outcome is None:
                waiter.callback(None)
            elif isinstance(outcome, Failure):  # the job itself broke: nothing is known
                waiter.errback(outcome)
            else:
                waiter.errback(Failure(outcome, type(outcome), outcome.__traceback__))


class DatabaseStopped(Exception):
    """A store call was made after the database thread was told to stop."""


def log_write_failed(failure: Failure, what: str, **fields: str) -> None:
    """Log the operator event ``write_failed`` for a store write that did not happen.

    A refusal of the database (``WriteFailed``: disk full, read-only file) is an
    operating condition, logged as an error with its message; anything else is a
    bug, logged with its traceback.  One that comes after the database stopped (a
    rehash finishing during shutdown) is expected and only noted."""
    if failure.check(DatabaseStopped):
        log.warn("Store call {what} came after the database stopped", what=what,
                 event="write_failed", **fields)
    elif failure.check(WriteFailed):
        log.error("Store call {what} failed: {error}", what=what, event="write_failed",
                  error=failure.getErrorMessage(), **fields)
    else:
        log.failure("Store call {what} failed", failure, what=what, event="write_failed",
                    **fields)


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

    def __init__(self, store: Store, reactor: IReactorFromThreads | None = None) -> None:
        if reactor is None:
            from twisted.internet import reactor as global_reactor

            reactor = global_reactor  # type: ignore[assignment]
        self._store = store
        self._reactor: IReactorFromThreads = reactor  # type: ignore[assignment]
        self._pool = ThreadPool(minthreads=1, maxthreads=1, name="fibsd-database")
        # A daemon worker: ``stop()`` drains every queued write before shutdown, so the
        # flag only matters for a thread that was never stopped (a crashed start, a test),
        # which would otherwise keep the interpreter from exiting.
        self._pool.threadFactory = partial(Thread, daemon=True)  # type: ignore[assignment]
        self._stopping = False
        self._finished = False
        self._waiters: list[Deferred[None]] = []
        self._batch: _SaveBatch | None = None  # the open batch of saves, if any
        self._batch_lock = Lock()
        checkpoint = getattr(store, "checkpoint", None)
        self._checkpoints: LoopingCall | None = None
        self._checkpoint_pool = ThreadPool(minthreads=1, maxthreads=1,
                                           name="fibsd-database-checkpoint")
        self._checkpoint_pool.threadFactory = partial(  # type: ignore[assignment]
            Thread, daemon=True)
        if callable(checkpoint):
            self._checkpoints = LoopingCall(self._checkpoint, checkpoint)
            self._checkpoints.clock = reactor  # type: ignore[assignment]

    def start(self) -> None:
        """Start the worker; calls made before this wait in the queue."""
        self._pool.start()
        if self._checkpoints is not None and not self._checkpoints.running:
            self._checkpoint_pool.start()
            self._checkpoints.start(CHECKPOINT_INTERVAL, now=False)

    def _checkpoint(self, checkpoint: Callable[[], None]) -> Deferred[None]:
        """One checkpoint on its own thread; the loop waits for it before the next."""
        running = deferToThreadPool(self._reactor, self._checkpoint_pool, checkpoint)
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
        self._batch = None  # a save made after this call must not be written before it
        return deferToThreadPool(
            self._reactor, self._pool, function, self._store, *args, **kwargs
        )

    def call(self, method: str, *args: Any, **kwargs: Any) -> Deferred[Any]:
        """Call the store method named ``method`` on the worker thread."""
        if method not in STORE_METHODS:
            raise AttributeError(method)
        if method == "save_match" and len(args) == 1 and not kwargs:
            return self._save(args[0])
        return self.run(lambda store: getattr(store, method)(*args, **kwargs))

    def _save(self, saved: SavedMatch) -> Deferred[None]:
        """``save_match``, in the open batch or in a new one queued behind every call
        made so far."""
        if self._stopping:
            return fail(DatabaseStopped())
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
            written = deferToThreadPool(self._reactor, self._pool, self._write_batch, batch)
            written.addBoth(batch.answer)
        return waiter

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
            self._stopping = True
            if self._checkpoints is not None and self._checkpoints.running:
                self._checkpoints.stop()
            # Joins a checkpoint under way, so none runs when the store closes.
            self._checkpoint_pool.stop()
            if not self._pool.started:
                self._pool.start()  # never started: still close the store
            closing = deferToThreadPool(self._reactor, self._pool, self._store.close)
            closing.addBoth(self._finish)
        return waiter

    def _finish(self, result: None | Failure) -> None:
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
