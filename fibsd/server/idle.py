"""The idle timeout of every logged-in session, on one timer.

Each session's own ``DelayedCall``, reset at every command, was about 500 bytes of an
idle user (issue 26).  Every session has the same timeout, so the sessions in the order
of their last activity are also in the order of their deadlines: a dict kept in that
order (a session moved to its end at each command) and one timer for its first entry
time out each session exactly when its own timer would have.  A deadline earlier than
the last one (the wall clock set back) puts the dict back in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from twisted.internet.interfaces import IDelayedCall, IReactorTime


class Idle(Protocol):
    def timed_out(self) -> None: ...


class IdleDeadlines:
    def __init__(self, clock: IReactorTime) -> None:
        self.clock = clock
        self._due: dict[Idle, float] = {}  # in the order of the deadlines
        self._call: IDelayedCall | None = None

    def restart(self, session: Idle, timeout: float) -> None:
        """``session`` times out ``timeout`` seconds from now, unless restarted."""
        deadline = self.clock.seconds() + timeout
        self._due.pop(session, None)
        in_order = not self._due or deadline >= next(reversed(self._due.values()))
        self._due[session] = deadline
        if not in_order:
            self._due = dict(sorted(self._due.items(), key=lambda item: item[1]))
        if self._call is None or not in_order:
            self._arm()

    def forget(self, session: Idle) -> None:
        """No deadline for ``session`` any more (it left, or the timeout is off); the
        timer, if it was this session's, finds nothing due and waits for the next, or
        stops when no session is left."""
        if self._due.pop(session, None) is not None and not self._due:
            self._due = {}  # not the table the busiest hour grew
            self._arm()

    def _arm(self) -> None:
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None
        if self._due:
            first = next(iter(self._due.values()))
            self._call = self.clock.callLater(max(0.0, first - self.clock.seconds()),
                                              self._expire)

    def _expire(self) -> None:
        self._call = None
        now = self.clock.seconds()
        while self._due:
            session, deadline = next(iter(self._due.items()))
            if deadline > now:
                break
            del self._due[session]
            session.timed_out()
        if not self._due:
            self._due = {}  # not the table the busiest hour grew
        if self._call is None:
            self._arm()
