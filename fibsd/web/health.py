"""``/healthz``: whether this server answers and its database does, for load balancers
and service managers.

Cheap whatever the rate of asking: one probe of the database (a read by primary key
on the database thread) at a time, its answer kept for ``FRESH`` seconds and shared by
everyone who asked meanwhile; a probe not answered within ``TIMEOUT`` seconds counts
as a database that does not answer.
"""

from __future__ import annotations

from twisted.internet.defer import Deferred, succeed
from twisted.internet.interfaces import IReactorTime

from fibsd.web.sources import Archive

FRESH = 1.0
TIMEOUT = 5.0


class Health:
    def __init__(self, archive: Archive, clock: IReactorTime) -> None:
        self.archive = archive
        self.clock = clock
        self._answer = False
        self._when = float("-inf")
        self._waiting: list[Deferred[bool]] | None = None  # a probe is out

    def check(self) -> Deferred[bool]:
        """True when the database answered a probe within the last ``FRESH`` seconds."""
        if self._waiting is None and self.clock.seconds() - self._when < FRESH:
            return succeed(self._answer)
        answer: Deferred[bool] = Deferred()
        if self._waiting is None:
            self._waiting = []
            probe = self.archive.get_user("")  # no such account: one index lookup
            probe.addTimeout(TIMEOUT, self.clock)
            probe.addCallbacks(lambda _: True, lambda _: False).addCallback(self._answered)
        self._waiting.append(answer)
        return answer

    def _answered(self, ok: bool) -> None:
        self._answer, self._when = ok, self.clock.seconds()
        waiting, self._waiting = self._waiting or [], None
        for answer in waiting:
            answer.callback(ok)
