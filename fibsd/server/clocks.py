"""A live match's clocks on the reactor: when decisions start and end, the warnings,
loss on time, the lag allowance and the ``clock`` command (protocol/clock.md).

The arithmetic is ``fibsd.rules.clock``'s; this module only feeds it the reactor's
time and arms the calls.  ``LiveMatch`` calls three hooks: ``charge`` when an action
is about to change the match (the decision under way ends: its time is charged),
``turn`` once the lines of an action have been sent (the decision of whoever must act
now starts: the time a write takes is nobody's), and ``halt`` when the match stops
being played (saved, left, claimed, waiting for the database, finished).

Connection does not matter: a player who dropped (and has a grace period to come back)
is on the clock as if he were there, and loses on time all the same.

Lag: a decision is charged from the moment the server's line was sent to the moment
the answer is read, less an allowance: the quickest answer this player's connection
has given in this match, at most ``clock.lag_allowance_ms`` (that bound until he has
answered once).  A slow link thus pays its round trip once at most, never per decision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from twisted.logger import Logger

from fibsd.rules.clock import ClockSpec, InvalidClock, MatchClock
from fibsd.wire import clock_text

if TYPE_CHECKING:
    from twisted.internet.defer import Deferred
    from twisted.internet.interfaces import IDelayedCall

    from fibsd.config import Clocks
    from fibsd.rules.match import Match
    from fibsd.server.lobby import Lobby
    from fibsd.server.user import Line, OnlineUser

_log = Logger()


def chosen_clock(user: OnlineUser) -> ClockSpec | None:
    """The clock ``user`` invites with: his ``set clock``, else the site's default;
    None when the site has no clocks."""
    settings: Clocks = user.session.settings.clock
    if not settings.enabled:
        return None
    try:
        return ClockSpec.parse(user.variables.get("clock", settings.default))
    except InvalidClock:
        return None


class ClockedMatch(Protocol):
    """What the clocks read of their match, a ``fibsd.server.match.LiveMatch``: named
    here, so that the match builds its clocks without the clocks importing it back."""

    lobby: Lobby
    names: tuple[str, str]
    rules: Match
    paused: bool

    @property
    def is_live(self) -> bool: ...

    def user(self, player: int) -> OnlineUser | None: ...

    def lose_on_time(self, player: int) -> Deferred[None]: ...


class MatchClocks:
    """The clocks of one live match."""

    def __init__(self, match: ClockedMatch, state: MatchClock) -> None:
        self.match = match
        self.state = state
        self._calls: list[IDelayedCall] = []
        # Per player: (the session measured, its quickest answer in seconds).
        self._quickest: dict[int, tuple[Line, float]] = {}

    def _now(self) -> float:
        return self.match.lobby.now()

    def _bound(self) -> float:
        for player in (0, 1):
            user = self.match.user(player)
            if user is not None:
                return user.session.settings.clock.lag_allowance_ms / 1000
        return 0.0

    def _allowance(self, player: int) -> float:
        bound = self._bound()
        user = self.match.user(player)
        measured = self._quickest.get(player)
        if user is None or measured is None or measured[0] is not user.session:
            return bound
        return min(bound, measured[1])

    def charge(self, actor: OnlineUser | None = None) -> None:
        """An action is about to change the match: the decision under way ends now.
        When its player made it (``actor``), the time it took measures his link."""
        state = self.state
        player = state.running
        self._cancel()
        if player is None:
            return
        now = self._now()
        user = self.match.user(player)
        if user is not None and actor is user:
            answer = now - state.since
            known = self._quickest.get(player)
            if known is None or known[0] is not user.session or answer < known[1]:
                self._quickest[player] = (user.session, answer)
        state.stop(now)

    def halt(self) -> None:
        """The match stops being played: charge the decision under way, arm nothing."""
        self.charge()

    def turn(self) -> None:
        """The lines are out: the player who must act now is on the clock."""
        match = self.match
        player = match.rules.to_act
        if player is None or match.paused or not match.is_live:
            self.charge()
            return
        if self.state.running == player and self._calls:
            return  # his decision goes on (a line that asked nothing new)
        self.charge()
        self.state.start(player, self._now(), self._allowance(player))
        self._arm()

    def _arm(self) -> None:
        clock = self.match.lobby.clock
        now = self._now()
        warning = self.state.next_warning()
        if warning is not None:
            at, seconds = warning
            self._calls.append(clock.callLater(max(at - now, 0), self._warn, seconds))
        deadline = self.state.deadline()
        assert deadline is not None
        self._calls.append(clock.callLater(max(deadline - now, 0), self._ran_out))

    def _cancel(self) -> None:
        for call in self._calls:
            if call.active():
                call.cancel()
        self._calls = []

    def _warn(self, seconds: int) -> None:
        player = self.state.running
        if player is None:
            return
        self.state.warning_given(seconds)
        user = self.match.user(player)
        if user is not None:
            user.session.notify(clock_text.reserve_warning(seconds))
        self._cancel()
        self._arm()

    def _ran_out(self) -> None:
        player = self.state.running
        self._calls = []
        if player is None or not self.match.is_live:
            return
        _log.info("{player} loses on time", event="clock", player=self.match.names[player])
        self.match.lose_on_time(player)

    # -- showing them ------------------------------------------------------------------

    def left(self) -> tuple[float, float]:
        now = self._now()
        return (self.state.left(0, now), self.state.left(1, now))

    def lines(self) -> list[str]:
        """The ``clock`` command's answer."""
        state = self.state
        lines = [clock_text.clock_state(state.spec, self.match.names, self.left())]
        if state.running is None:
            lines.append(clock_text.CLOCK_STOPPED)
        else:
            lines.append(clock_text.clock_running(self.match.names[state.running],
                                                  state.delay_left(self._now())))
        return lines

    def board_line(self) -> str:
        """Both clocks, under a telnet ASCII board."""
        return clock_text.board_clocks(self.match.names, self.left(), self.state.running)
