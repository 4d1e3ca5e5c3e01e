"""Who may connect, guess passwords and register, and how fast: fibsd on the open internet.

Ledgers kept in memory per server (but the registrations', in the database), each
bounded in size, all driven by the reactor's clock (``task.Clock`` in the tests):

* ``LoginThrottle`` slows password guessing across connections.  Every login attempt
  waits for its turn in its address's queue: the attempts from one address start one
  after the other, spaced by a delay that doubles with each recent failure (or attempt
  still being checked, beyond ``PARALLEL_FREE``) past a few free ones, up to ``access.login_delay_max``; so an
  address keeps its rate however many connections it opens.  The queue holds at most
  one attempt per connection (the session is busy while its attempt waits).  Attempts
  on one account wait too, but never longer than ``access.account_delay_max``:
  failures on the account slow every guesser, yet an attacker cannot use them to keep
  the owner out.  A success clears the account's failures, never the address's (a
  guesser with an account of his own could otherwise reset his count at will); both
  are forgotten ``access.failure_memory`` seconds after the last failure.  In a
  cluster each node tells the others of its failures (``observers``,
  ``failed_elsewhere``), so the delays grow with the site's failures, not a node's.
* ``RegistrationLimit`` counts the accounts made from each address in the last hour,
  in the database (shared by the nodes of a cluster), not in memory.
* ``RefusalLog`` keeps the refusals themselves from flooding the operator's log.

``shown_host`` and ``mask_host`` are what others see of an address
(``privacy.show_addresses``).

The session and the factory ask; nothing here writes to a connection.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime

from fibsd.config import Access, Settings

# Addresses and names a ledger remembers at most; the oldest are forgotten first, so
# an attacker with very many addresses cannot make the server's memory grow.
MAX_TRACKED = 100_000
# Attempts from one address that may be checked at once before they, too, count towards
# its delay: users of one club or NAT logging in together go through at the speed of
# the password hasher, while a guesser's burst is cut off well before his first minute
# holds 20 guesses (12 at once, then the failures arrive: 15 in the first minute at most,
# tests/server/test_access_ledgers.py).
PARALLEL_FREE = 8


@dataclass(eq=False)
class Attempt:
    """One login attempt: it waits for its turn, runs, and is reported ``done``."""

    address: str
    account: str  # lower case
    go: Callable[[], object] = field(default=lambda: None, repr=False)
    started: bool = False
    cancelled: bool = False
    timer: IDelayedCall | None = field(default=None, repr=False)


@dataclass(eq=False, slots=True)  # one per account and address seen lately
class _Record:
    failures: int = 0
    in_flight: int = 0  # attempts being checked now: they count as failures for the delay
    last_failure: float = 0.0
    next_turn: float = 0.0  # when the next attempt may start
    # An address's queue, made at its first attempt (an account's stays empty: an
    # empty deque is 600 bytes per online user).
    waiting: deque[Attempt] = field(default=cast("deque[Attempt]", ()))
    timer: IDelayedCall | None = None  # serves the queue at next_turn


class LoginThrottle:
    def __init__(self, clock: IReactorTime, limits: Access) -> None:
        self.clock = clock
        self.limits = limits
        self._addresses: OrderedDict[str, _Record] = OrderedDict()
        self._accounts: OrderedDict[str, _Record] = OrderedDict()
        # Told (address, account) of every failure here: the other nodes of a cluster
        # count it too (``failed_elsewhere``).
        self.observers: list[Callable[[str, str], object]] = []

    def delay(self, count: int) -> float:
        """Seconds between turns after ``count`` failures (or attempts in flight).

        >>> from fibsd.config import Access, Settings
        >>> throttle = LoginThrottle(None, Access())  # type: ignore[arg-type]
        >>> [throttle.delay(n) for n in range(3, 12)]
        [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
        """
        free = self.limits.login_free_failures
        if count < free:
            return 0.0
        return float(min(self.limits.login_delay_max, 2 ** min(count - free, 30)))

    def wait_turn(self, attempt: Attempt, go: Callable[[], object]) -> None:
        """Call ``go`` when the attempt's turn comes: now, or from a timer.

        The attempts of one address queue up and start one per delay, whatever the
        number of connections they come from; an attempt abandoned while it waits
        (``cancel``) gives its turn to the next.
        """
        attempt.go = go
        record = self._record(self._addresses, attempt.address)
        if not record.waiting:
            record.waiting = deque()
        record.waiting.append(attempt)
        self._serve(record)

    def cancel(self, attempt: Attempt) -> None:
        """The connection went away before the attempt started: it never counts."""
        if attempt.started or attempt.cancelled:
            return
        attempt.cancelled = True
        if attempt.timer is not None:  # granted, waiting only for the account's delay
            attempt.timer.cancel()
            self.done(attempt, failed=False)

    def done(self, attempt: Attempt, failed: bool) -> None:
        """The attempt was checked (``failed`` or not), or abandoned after its turn."""
        now = self.clock.seconds()
        for ledger, key in ((self._addresses, attempt.address), (self._accounts, attempt.account)):
            record = ledger.get(key)
            if record is None:  # forgotten to make room meanwhile
                continue
            record.in_flight = max(0, record.in_flight - 1)
            if failed:
                record.failures += 1
                record.last_failure = now
        if failed:
            for observer in self.observers:
                observer(attempt.address, attempt.account)
        if not failed and attempt.started:
            account = self._accounts.get(attempt.account)
            if account is not None and account.in_flight == 0:
                # The owner, and no other attempt on the account under way: nothing
                # left to remember (a new record is the same: no failure, no wait), so
                # an online user holds none (issue 26: ~200 bytes each).
                del self._accounts[attempt.account]
            elif account is not None:  # the owner: those before him no longer count
                account.failures = 0
                account.next_turn = now
        address = self._addresses.get(attempt.address)
        if not failed and address is not None:
            # One attempt fewer in flight and no failure more: the next turn may come
            # sooner.  Many users logging in at once from one address (a club, a NAT)
            # then go through as fast as their passwords are checked.
            sooner = now + self.delay(self._address_count(address))
            if sooner < address.next_turn:
                address.next_turn = sooner
                if address.timer is not None and address.timer.active():
                    address.timer.cancel()
                self._serve(address)

    def failed_elsewhere(self, address: str, account: str) -> None:
        """A failure another node of the site saw: it counts here as well, and the next
        attempts from the address and on the account wait as after one of ours, so
        a guesser spread over the nodes by a load balancer is no faster than on one."""
        now = self.clock.seconds()
        for ledger, key in ((self._addresses, address), (self._accounts, account)):
            record = self._record(ledger, key)
            record.failures += 1
            record.last_failure = now
            if ledger is self._addresses:
                wait = self.delay(self._address_count(record))
            else:
                wait = min(self.delay(record.failures + record.in_flight),
                           self.limits.account_delay_max)
            record.next_turn = max(record.next_turn, now + wait)

    def failures(self, address: str) -> int:
        """Recent failures from ``address``."""
        record = self._addresses.get(address)
        return 0 if record is None else record.failures

    def _serve(self, record: _Record) -> None:
        if record.timer is not None and record.timer.active():
            return
        record.timer = None
        while record.waiting:
            if record.timer is not None:  # set by a turn served from within ``go``
                return
            now = self.clock.seconds()
            if now < record.next_turn:
                record.timer = self.clock.callLater(record.next_turn - now, self._serve, record)
                return
            attempt = record.waiting.popleft()
            if attempt.cancelled:
                continue
            account = self._record(self._accounts, attempt.account)
            cap = self.limits.account_delay_max
            extra = min(max(0.0, account.next_turn - now), cap)
            account.next_turn = now + extra + min(
                self.delay(account.failures + account.in_flight), cap)
            record.next_turn = now + extra + self.delay(self._address_count(record))
            record.in_flight += 1
            account.in_flight += 1
            if extra > 0:
                attempt.timer = self.clock.callLater(extra, self._start, attempt)
            else:
                self._start(attempt)
        record.waiting = cast("deque[Attempt]", ())  # emptied: its memory goes back

    @staticmethod
    def _address_count(record: _Record) -> int:
        return record.failures + max(0, record.in_flight - PARALLEL_FREE)

    def _start(self, attempt: Attempt) -> None:
        attempt.started = True
        attempt.timer = None
        attempt.go()

    def _record(self, ledger: OrderedDict[str, _Record], key: str) -> _Record:
        now = self.clock.seconds()
        record = ledger.get(key)
        if record is None:
            record = ledger[key] = _Record()
            while len(ledger) > MAX_TRACKED:
                ledger.popitem(last=False)
        elif (record.in_flight == 0 and not record.waiting and record.next_turn <= now
              and now - record.last_failure >= self.limits.failure_memory):
            record.failures = 0
        ledger.move_to_end(key)
        return record


HOUR = 3600.0


@dataclass
class RegistrationLimit:
    """At most ``per_hour`` new accounts from one network in any hour, counted in the
    database (``Store.reserve_registration``): every node of a cluster counts the same
    registrations, and a restart forgets none.  ``check`` is the early answer (at
    ``name``), ``reserve`` the one that counts (before the password is hashed, so that
    guests registering side by side count too); each fires with None when allowed,
    else the whole minutes to wait (at least 1)."""

    clock: IReactorTime
    per_hour: int
    db: Any  # the database thread: Store methods as Deferreds

    def check(self, network: str) -> Deferred[int | None]:
        now = self.clock.seconds()
        return maybeDeferred(self.db.registrations_since, network, now - HOUR).addCallback(
            lambda made: None if len(made) < self.per_hour
            else self._minutes(made[0] if made else now))

    def reserve(self, network: str) -> Deferred[int | None]:
        return maybeDeferred(self.db.reserve_registration, network, self.clock.seconds(),
                             self.per_hour, HOUR).addCallback(
            lambda oldest: None if oldest is None else self._minutes(oldest))

    def _minutes(self, oldest: float) -> int:
        return max(1, int((oldest + HOUR - self.clock.seconds() + 59) // 60))


class RefusalLog:
    """Keeps refusals from flooding the operator's log: the first refusal of an address
    by a limit is logged at once, later ones at most once a minute, as one event whose
    ``count`` says how many refusals it stands for (so counts made from the log add up).

    >>> from twisted.internet.task import Clock
    >>> clock = Clock()
    >>> log = RefusalLog(clock)
    >>> [log.due("access.max_connections", "192.0.2.1") for _ in range(3)]
    [1, None, None]
    >>> clock.advance(60); log.due("access.max_connections", "192.0.2.1")
    3
    """

    INTERVAL = 60.0

    def __init__(self, clock: IReactorTime) -> None:
        self.clock = clock
        self._seen: OrderedDict[tuple[str, str], tuple[float, int]] = OrderedDict()

    def due(self, limit: str, address: str) -> int | None:
        """The number of refusals to log now (this one included), or None: not yet."""
        now = self.clock.seconds()
        key = (limit, address)
        last, waiting = self._seen.get(key, (now - self.INTERVAL, 0))
        waiting += 1
        if now - last < self.INTERVAL:
            self._seen[key] = (last, waiting)
            return None
        self._seen[key] = (now, 0)
        self._seen.move_to_end(key)
        while len(self._seen) > MAX_TRACKED:
            self._seen.popitem(last=False)
        return waiting


def connection_caps(settings: Settings, open_files: int) -> tuple[int, int]:
    """The caps on open connections of the game ports and of the web port, so that
    both together stay ``access.fd_reserve`` below the process's ``open_files`` limit
    (``RLIMIT_NOFILE``): a flood of one port never leaves the other, the database or
    the logs without a file.  A cap set in the config is kept; left at 0, the web port
    gets a quarter of what is there and the game ports the rest.  A WebSocket player
    counts in both (one file, two ledgers): the sum stays safe.  Without a web port
    (``web_port = 0``) the game ports get it all.

    >>> from fibsd.config import Settings
    >>> connection_caps(Settings(), 1024), connection_caps(Settings(web_port=0), 1024)
    ((720, 240), (960, 240))
    >>> connection_caps(Settings(), -1)
    (786384, 262128)
    """
    if open_files < 0:  # RLIM_INFINITY (not on Linux): as Linux's largest, nr_open
        open_files = 1 << 20
    spare = max(2, open_files - settings.access.fd_reserve)
    web = settings.web.max_connections or max(1, spare // 4)
    game = spare - web if settings.web_port else spare
    return settings.access.max_connections or max(1, game), web


def network(host: str) -> str:
    """What the per-address limits count by: an IPv4 address, or the /64 network of an
    IPv6 address (one subscriber's share: he has all of it to choose from).

    >>> network("203.0.113.45"), network("2001:db8:1:2:aa::7"), network("::ffff:10.1.2.3")
    ('203.0.113.45', '2001:db8:1:2::/64', '10.1.2.3')
    """
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return host


def shown_host(host: str, show_addresses: str) -> str:
    """``host`` as others see it under the site's ``privacy.show_addresses``.

    >>> [shown_host("203.0.113.45", s) for s in ("full", "masked", "hidden")]
    ['203.0.113.45', '203.0.x.x', '-']
    """
    if show_addresses == "full":
        return host
    return mask_host(host) if show_addresses == "masked" else "-"


def mask_host(host: str) -> str:
    """An address as others see it when the site keeps addresses private: enough to tell
    a country or provider apart, never the subscriber.  Never empty and never with a
    blank, since CLIP 5 clients split the line on blanks.

    >>> mask_host("203.0.113.45"), mask_host("2001:db8:1:2::7"), mask_host("-")
    ('203.0.x.x', '2001:db8:x::x', '-')
    """
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # not an IP address ("-" for a connection without one)
        return "-"
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return mask_host(str(address.ipv4_mapped))
    if isinstance(address, ipaddress.IPv4Address):
        first, second, *_ = host.split(".")
        return f"{first}.{second}.x.x"
    groups = address.exploded.split(":")
    return ":".join(group.lstrip("0") or "0" for group in groups[:2]) + ":x::x"
