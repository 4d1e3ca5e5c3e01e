"""Password hashing with argon2id, off the reactor thread.

argon2 is slow and memory-hard on purpose, so a hash or a check costs tens of
milliseconds of CPU: both run in worker threads (not the database thread, which must
stay free for short queries), so a burst of logins never stalls play.  The workers
are a pool of their own, one thread per core: more threads would not check faster,
and each thread that ever ran argon2 keeps its memory (glibc's per-thread malloc
arenas hold the argon2 blocks), so the reactor's pool of ten cost some 200 MB of
RSS after a login burst.  Only hashes are stored; the cost parameters travel inside each hash, so
raising the configured cost affects new hashes and ``needs_rehash`` tells the
server which old ones to replace at the next successful login.

passlib loads its argon2 backend lazily, at the first hash or check, and that loading
is not thread-safe: two workers loading it at once fail ("failed to replace lazy
loader"), so a burst of registrations just after a start lost some of them.  Every
worker call first makes sure the backend is loaded, under a lock, and the server loads
it at start (``warm_up``) in the pool, so the first registration does not wait for it.
"""

from __future__ import annotations

import os
from functools import lru_cache
from threading import Lock
from typing import Any

from passlib.hash import argon2
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

from fibsd.config import PasswordCost

DEFAULT_COST = PasswordCost()

_pool: ThreadPool | None = None
_loading = Lock()
_loaded = False


def _workers() -> ThreadPool:
    """The argon2 pool, started on first use and stopped with the reactor."""
    global _pool
    if _pool is None:
        from twisted.internet import reactor

        _pool = ThreadPool(minthreads=0, maxthreads=len(os.sched_getaffinity(0)),
                           name="argon2")
        _pool.start()
        reactor.addSystemEventTrigger("during", "shutdown", _pool.stop)
    return _pool


def _in_pool(function: Any, *args: Any) -> Deferred[Any]:
    from twisted.internet import reactor

    return deferToThreadPool(reactor, _workers(), function, *args)


def _load_backend() -> None:
    """Load passlib's argon2 backend once, whichever worker comes first (the others
    wait for it; after that, a flag read)."""
    global _loaded
    if _loaded:
        return
    with _loading:
        if not _loaded:
            from passlib.hash import argon2 as handler  # the real one, even in tests

            handler.get_backend()
            _loaded = True


def warm_up() -> Deferred[None]:
    """Load the argon2 backend in the pool now (at the server's start)."""
    return _in_pool(_load_backend)


@lru_cache(maxsize=8)
def _hasher(cost: PasswordCost) -> Any:
    return argon2.using(
        type="ID",
        time_cost=cost.time_cost,
        memory_cost=cost.memory_kib,
        parallelism=cost.parallelism,
    )


def _hash(hasher: Any, password: str) -> str:
    _load_backend()
    return str(hasher.hash(password))


def _verify(password: str, hashed: str) -> bool:
    _load_backend()
    try:
        return bool(argon2.verify(password, hashed))
    except ValueError:  # not an argon2 hash at all: no password matches it
        return False


def hash_password(password: str, cost: PasswordCost = DEFAULT_COST) -> Deferred[str]:
    """A new salted argon2id hash of ``password``, computed in a worker thread."""
    return _in_pool(_hash, _hasher(cost), password)


def hash_password_now(password: str, cost: PasswordCost = DEFAULT_COST) -> str:
    """``hash_password`` on the calling thread: for ``fibsd admin``, which has no reactor."""
    return str(_hasher(cost).hash(password))


def verify_password(password: str, hashed: str) -> Deferred[bool]:
    """Whether ``password`` matches ``hashed``, checked in a worker thread."""
    return _in_pool(_verify, password, hashed)


def verify_password_now(password: str, hashed: str) -> bool:
    """``verify_password`` on the calling thread (the resident bots' accounts, prepared
    on the database thread or by ``fibsd bots``)."""
    return _verify(password, hashed)


def needs_rehash(hashed: str, cost: PasswordCost = DEFAULT_COST) -> bool:
    """Whether ``hashed`` was made with other parameters than ``cost`` (cheap)."""
    return bool(_hasher(cost).needs_update(hashed))
