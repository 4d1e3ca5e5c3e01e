"""Who may connect, guess passwords and register, and how fast: fibsd on the open internet.

Three ledgers, each kept in memory per server and bounded in size, all driven by the
reactor's clock (``task.Clock`` in the tests):

* ``LoginThrottle`` slows password guessing across connections.  Every login attempt
  takes a turn: the attempts from one address are spaced out, one after the other, by a
  delay that doubles with each recent failure (or attempt still being checked) past a few
  free ones, up to ``access.login_delay_max``; so an address keeps its rate however many
  connections it opens.  Attempts on one account wait too, but never longer than
  ``access.account_delay_max``: failures on the account slow every guesser, yet an
  attacker cannot use them to keep the owner out.  A success clears the account's
  failures, never the address's (a guesser with an account of his own could otherwise
  reset his count at will); both are forgotten ``access.failure_memory`` seconds after
  the last failure.
* ``RegistrationLimit`` counts the accounts made from each address in the last hour.
* ``mask_host`` is what others see of an address when the site keeps addresses private.

The session asks; nothing here writes to a connection.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from twisted.internet.interfaces import IReactorTime

from fibsd.config import Access

# Addresses and names a ledger remembers at most; the oldest are forgotten first, so
# an attacker with very many addresses cannot make the server's memory grow.
MAX_TRACKED = 100_000


@dataclass
class _Record:
    failures: int = 0
    in_flight: int = 0  # attempts being checked now: they count as failures for the delay
    last_failure: float = 0.0
    next_turn: float = 0.0  # when the next attempt may be checked


@dataclass(frozen=True)
class Attempt:
    """One login attempt's place in the queue: check it after ``wait`` seconds, then
    report the outcome with ``LoginThrottle.done``."""

    address: str
    account: str
    wait: float


class LoginThrottle:
    def __init__(self, clock: IReactorTime, limits: Access) -> None:
        self.clock = clock
        self.limits = limits
        self._addresses: OrderedDict[str, _Record] = OrderedDict()
        self._accounts: OrderedDict[str, _Record] = OrderedDict()

    def delay(self, count: int) -> float:
        """Seconds between turns after ``count`` failures (or attempts in flight).

        >>> from fibsd.config import Access
        >>> throttle = LoginThrottle(None, Access())  # type: ignore[arg-type]
        >>> [throttle.delay(n) for n in range(3, 12)]
        [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
        """
        free = self.limits.login_free_failures
        if count < free:
            return 0.0
        return float(min(self.limits.login_delay_max, 2 ** min(count - free, 30)))

    def begin(self, address: str, account: str) -> Attempt:
        """Take a turn for an attempt on ``account`` from ``address``."""
        now = self.clock.seconds()
        by_address = self._record(self._addresses, address, now)
        by_account = self._record(self._accounts, account.lower(), now)
        start = max(now, by_address.next_turn)
        by_address.next_turn = start + self.delay(by_address.failures + by_address.in_flight)
        account_start = min(max(now, by_account.next_turn), now + self.limits.account_delay_max)
        by_account.next_turn = account_start + min(
            self.delay(by_account.failures + by_account.in_flight),
            self.limits.account_delay_max)
        by_address.in_flight += 1
        by_account.in_flight += 1
        return Attempt(address, account.lower(), max(start, account_start) - now)

    def done(self, attempt: Attempt, failed: bool) -> None:
        """The attempt was checked (or abandoned: ``failed`` False)."""
        now = self.clock.seconds()
        for ledger, key in ((self._addresses, attempt.address), (self._accounts, attempt.account)):
            record = ledger.get(key)
            if record is None:  # forgotten to make room meanwhile
                continue
            record.in_flight = max(0, record.in_flight - 1)
            if failed:
                record.failures += 1
                record.last_failure = now
        if not failed:
            account = self._accounts.get(attempt.account)
            if account is not None:
                account.failures = 0

    def failures(self, address: str) -> int:
        """Recent failures from ``address`` (for the log)."""
        record = self._addresses.get(address)
        return 0 if record is None else record.failures

    def _record(self, ledger: OrderedDict[str, _Record], key: str, now: float) -> _Record:
        record = ledger.get(key)
        if record is None:
            record = ledger[key] = _Record()
            while len(ledger) > MAX_TRACKED:
                ledger.popitem(last=False)
        elif (record.in_flight == 0 and record.next_turn <= now
              and now - record.last_failure >= self.limits.failure_memory):
            record.failures = 0
        ledger.move_to_end(key)
        return record


@dataclass
class RegistrationLimit:
    """At most ``per_hour`` new accounts from one address in any hour."""

    clock: IReactorTime
    per_hour: int
    _made: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict)

    def allowed(self, address: str) -> bool:
        return len(self._recent(address)) < self.per_hour

    def wait_minutes(self, address: str) -> int:
        """Whole minutes until the address may register again (at least 1)."""
        recent = self._recent(address)
        if not recent:
            return 1
        return max(1, int((recent[0] + 3600 - self.clock.seconds() + 59) // 60))

    def record(self, address: str) -> None:
        self._recent(address).append(self.clock.seconds())
        self._made.move_to_end(address)
        while len(self._made) > MAX_TRACKED:
            self._made.popitem(last=False)

    def _recent(self, address: str) -> deque[float]:
        made = self._made.setdefault(address, deque())
        cutoff = self.clock.seconds() - 3600
        while made and made[0] <= cutoff:
            made.popleft()
        return made


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
