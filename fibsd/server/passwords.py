"""Password hashing with argon2id, off the reactor thread.

argon2 is slow and memory-hard on purpose, so a hash or a check costs tens of
milliseconds of CPU: both run in the reactor's thread pool (not the database
thread, which must stay free for short queries), so a burst of logins never stalls
play.  Only hashes are stored; the cost parameters travel inside each hash, so
raising the configured cost affects new hashes and ``needs_rehash`` tells the
server which old ones to replace at the next successful login.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from passlib.hash import argon2
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread

from fibsd.config import PasswordCost

DEFAULT_COST = PasswordCost()


@lru_cache(maxsize=8)
def _hasher(cost: PasswordCost) -> Any:
    return argon2.using(
        type="ID",
        time_cost=cost.time_cost,
        memory_cost=cost.memory_kib,
        parallelism=cost.parallelism,
    )


def _verify(password: str, hashed: str) -> bool:
    try:
        return bool(argon2.verify(password, hashed))
    except ValueError:  # not an argon2 hash at all: no password matches it
        return False


def hash_password(password: str, cost: PasswordCost = DEFAULT_COST) -> Deferred[str]:
    """A new salted argon2id hash of ``password``, computed in a worker thread."""
    return deferToThread(_hasher(cost).hash, password)


def verify_password(password: str, hashed: str) -> Deferred[bool]:
    """Whether ``password`` matches ``hashed``, checked in a worker thread."""
    return deferToThread(_verify, password, hashed)


def needs_rehash(hashed: str, cost: PasswordCost = DEFAULT_COST) -> bool:
    """Whether ``hashed`` was made with other parameters than ``cost`` (cheap)."""
    return bool(_hasher(cost).needs_update(hashed))
