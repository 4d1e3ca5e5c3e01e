"""Password hashes: right and wrong passwords, cost, and where the work runs."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest
import pytest_twisted
from twisted.internet.defer import DeferredList

from fibsd.config import PasswordCost
from fibsd.server import passwords
from fibsd.server.passwords import hash_password, needs_rehash, verify_password

CHEAP = PasswordCost(time_cost=1, memory_kib=8, parallelism=1)


@pytest_twisted.ensureDeferred
async def test_the_right_password_verifies_and_a_wrong_one_does_not() -> None:
    hashed = await hash_password("s3cret pw", CHEAP)
    assert hashed.startswith("$argon2id$v=19$m=8,t=1,p=1$")
    assert "s3cret pw" not in hashed
    assert await verify_password("s3cret pw", hashed) is True
    assert await verify_password("s3cret pX", hashed) is False
    assert await verify_password("", hashed) is False


@pytest_twisted.ensureDeferred
async def test_each_hash_is_salted() -> None:
    first = await hash_password("same", CHEAP)
    second = await hash_password("same", CHEAP)
    assert first != second
    assert await verify_password("same", second) is True


@pytest_twisted.ensureDeferred
async def test_a_stored_value_that_is_no_hash_matches_nothing() -> None:
    assert await verify_password("secret", "secret") is False
    assert await verify_password("", "") is False


@pytest_twisted.ensureDeferred
async def test_cheap_cost_is_fast_enough_for_tests() -> None:
    started = time.perf_counter()
    for _ in range(10):
        await hash_password("secret", CHEAP)
    assert (time.perf_counter() - started) / 10 < 0.005


@pytest_twisted.ensureDeferred
async def test_default_cost_is_argon2id_19_mib_two_passes() -> None:
    hashed = await hash_password("secret")
    assert hashed.startswith("$argon2id$v=19$m=7168,t=5,p=1$")
    assert needs_rehash(hashed) is False
    assert needs_rehash(hashed, CHEAP) is True


@pytest_twisted.ensureDeferred
async def test_hashing_and_checking_run_off_the_reactor_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[int] = []
    real = passwords.argon2

    class Recording:
        @staticmethod
        def using(**settings: Any) -> Any:
            hasher = real.using(**settings)

            class Hasher:
                @staticmethod
                def hash(password: str) -> str:
                    threads.append(threading.get_ident())
                    return str(hasher.hash(password))

            return Hasher

        @staticmethod
        def verify(password: str, hashed: str) -> bool:
            threads.append(threading.get_ident())
            return bool(real.verify(password, hashed))

    monkeypatch.setattr(passwords, "argon2", Recording)
    passwords._hasher.cache_clear()
    try:
        hashed = await hash_password("secret", CHEAP)
        assert await verify_password("secret", hashed) is True
    finally:
        passwords._hasher.cache_clear()
    assert len(threads) == 2
    assert threading.get_ident() not in threads


@pytest_twisted.ensureDeferred
async def test_checks_share_one_worker_per_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """A login burst uses at most one thread per core: each thread that ran argon2
    keeps its memory, and more threads than cores check no faster."""
    threads: set[str] = set()
    verify = passwords._verify

    def recording(password: str, hashed: str) -> bool:
        threads.add(threading.current_thread().name)
        return verify(password, hashed)

    monkeypatch.setattr(passwords, "_verify", recording)
    hashed = await hash_password("secret", CHEAP)
    results = await DeferredList([verify_password("secret", hashed) for _ in range(12)])
    assert [ok for _, ok in results] == [True] * 12
    assert 1 <= len(threads) <= len(os.sched_getaffinity(0))
    assert all(name.startswith("PoolThread-argon2-") for name in threads)
