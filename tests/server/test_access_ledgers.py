"""The ledgers of fibsd.server.access on their own, with a ``task.Clock``."""

from __future__ import annotations

import resource

import pytest

from twisted.internet.defer import Deferred
from twisted.internet.task import Clock

from fibsd.config import Access
from fibsd.server.access import (
    Attempt, LoginThrottle, RefusalLog, RegistrationLimit, mask_host, network, shown_host)
from fibsd.server.commands import FIBS_WORDS, command_words
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.input import RESERVED_NAMES
from tests.helpers import REPO, FakeServer


def test_the_throttle_starts_one_attempt_per_delay_from_one_address() -> None:
    clock = Clock()
    throttle = LoginThrottle(clock, Access())
    started: list[tuple[int, float]] = []
    attempts = [Attempt("203.0.113.1", f"user{n}") for n in range(9)]
    for number, attempt in enumerate(attempts):
        def go(number: int = number, attempt: Attempt = attempt) -> None:
            started.append((number, clock.seconds()))
            throttle.done(attempt, failed=True)
        throttle.wait_turn(attempt, go)
    throttle.cancel(attempts[6])  # abandoned while waiting: its turn goes to the next
    for _ in range(40):
        clock.advance(1)
    assert started == [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 1), (7, 3), (8, 7)]
    assert throttle.failures("203.0.113.1") == 8
    other: list[float] = []
    throttle.wait_turn(Attempt("203.0.113.2", "x"), lambda: other.append(clock.seconds()))
    assert other == [40]  # another address does not wait


def test_many_logins_at_once_from_one_address_go_through_as_they_succeed() -> None:
    clock = Clock()
    throttle = LoginThrottle(clock, Access())
    started: list[int] = []
    attempts = [Attempt("192.0.2.1", f"user{n}") for n in range(20)]
    for number, attempt in enumerate(attempts):
        throttle.wait_turn(attempt, lambda number=number: started.append(number))
    assert started == list(range(13))  # 8 in flight for free, 4 free, the 13th: 1 s
    for attempt in attempts:  # each login succeeds in turn, the clock standing still
        throttle.done(attempt, failed=False)
    assert started == list(range(20))
    assert throttle.failures("192.0.2.1") == 0


@pytest.mark.parametrize("accounts, expected", [(1, [10, 2, 2]), (20, [15, 2, 2])])
def test_a_burst_of_guesses_checked_in_parallel_gets_fewer_than_20_a_minute(
        accounts: int, expected: list[int]) -> None:
    """20 connections guess at once (on one account, or each on another); each guess
    fails 50 ms after it starts (the hasher) and its connection guesses again at once."""
    clock = Clock()
    throttle = LoginThrottle(clock, Access())
    started: list[float] = []

    def guess(number: int) -> None:
        attempt = Attempt("198.51.100.1", f"user{number % accounts}")

        def go() -> None:
            started.append(clock.seconds())
            clock.callLater(0.05, lambda: (throttle.done(attempt, failed=True), guess(number)))

        throttle.wait_turn(attempt, go)

    for number in range(20):
        guess(number)
    for _ in range(1800):
        clock.advance(0.1)
    per_minute = [sum(1 for t in started if m * 60 <= t < (m + 1) * 60) for m in range(3)]
    assert per_minute == expected


def test_an_account_under_attack_delays_its_attempts_by_at_most_the_cap() -> None:
    clock = Clock()
    throttle = LoginThrottle(clock, Access())
    for n in range(30):
        attempt = Attempt(f"198.51.100.{n}", "alice")
        throttle.wait_turn(attempt, lambda: None)
        throttle.done(attempt, failed=True)
    owner = Attempt("192.0.2.1", "alice")
    went: list[float] = []
    throttle.wait_turn(owner, lambda: went.append(clock.seconds()))
    clock.advance(7.9)
    assert went == []
    clock.advance(0.1)
    assert went == [8.0]


def test_registration_limit_forgets_after_an_hour() -> None:
    clock = Clock()
    store = SQLiteStore(":memory:")
    limit = RegistrationLimit(clock, 2, store)  # a store answers as its thread would

    def answer(d: Deferred[int | None]) -> int | None:
        found: list[int | None] = []
        d.addCallback(found.append)
        return found[0]

    assert answer(limit.reserve("a")) is None
    clock.advance(10)
    assert answer(limit.reserve("a")) is None
    assert (answer(limit.check("a")), answer(limit.check("b"))) == (60, None)
    assert answer(limit.reserve("a")) == 60
    clock.advance(3590)
    assert answer(limit.check("a")) is None
    store.close()


def test_masks() -> None:
    assert [mask_host(h) for h in ("203.0.113.77", "::ffff:198.51.100.4", "2001:db8:0:1::5",
                                   "::1", "-", "")] == [
        "203.0.x.x", "198.51.x.x", "2001:db8:x::x", "0:0:x::x", "-", "-"]
    assert shown_host("::1", "hidden") == "-"


def test_the_global_cap_defaults_below_the_open_file_limit() -> None:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert FakeServer().factory.max_connections == soft - 64


def test_the_reserved_words_are_the_documented_ones() -> None:
    """protocol/access.md lists the keywords and FIBS's command words; a command fibsd
    adds is reserved too (command_words), as the page says."""
    text = (REPO / "protocol" / "access.md").read_text()
    listed = text.split("<!-- reserved names -->")[1].split("<!-- end -->")[0]
    words = sorted(w.strip("`,.") for w in listed.split() if w.strip("`,."))
    assert words == sorted(RESERVED_NAMES | FIBS_WORDS)
    assert FIBS_WORDS <= command_words()


def test_refusals_are_logged_once_a_minute_per_address_and_limit() -> None:
    clock = Clock()
    log = RefusalLog(clock)
    assert [log.due("access.max_connections", "192.0.2.1") for _ in range(3)] == [1, None, None]
    assert log.due("access.max_connections", "192.0.2.2") == 1
    assert log.due("access.login_timeout", "192.0.2.1") == 1
    clock.advance(59.9)
    assert log.due("access.max_connections", "192.0.2.1") is None
    clock.advance(0.1)
    assert log.due("access.max_connections", "192.0.2.1") == 4  # with the 3 held back
    assert log.due("access.max_connections", "192.0.2.1") is None


def test_limits_count_an_ipv6_64_as_one_address() -> None:
    assert [network(h) for h in ("203.0.113.45", "2001:db8:1:2:aa::7", "2001:db8:1:2::1",
                                 "::ffff:10.1.2.3", "-")] == [
        "203.0.113.45", "2001:db8:1:2::/64", "2001:db8:1:2::/64", "10.1.2.3", "-"]
