"""Lines for every CLIP user (who-info, logins, logouts, match reports), held briefly.

Each login, logout and who-info change goes to every CLIP user.  Written at once, that
is one send per user per change: a burst of logins costs a number of system calls that
grows with the square of the users, and a match start with thousands online keeps the
reactor from answering moves for tens of milliseconds.  The feed holds these lines per
recipient for up to ``delay`` seconds, then writes each recipient's held lines in one
piece, a slice of recipients per reactor turn, so game commands are answered in between.

Nothing is reordered: anything else a session writes first takes what the feed holds
for it (``release``), so each client receives its lines in the order they were made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from twisted.internet.interfaces import IDelayedCall, IReactorTime

# Recipients written per reactor turn: about 5 ms of sends.
SLICE = 200


class Recipient(Protocol):
    def write_held(self, data: bytes) -> None: ...


class Feed:
    def __init__(self, clock: IReactorTime, delay: float) -> None:
        self.clock = clock
        self.delay = delay
        # Per recipient what it holds: the one piece held (a broadcast's bytes, shared
        # by every recipient), or a list once there are more (issue 26: a login's
        # fan-out makes no object per recipient).
        self._held: dict[Recipient, bytes | list[bytes]] = {}
        self._round: list[Recipient] = []  # still to write in this round, in reverse
        self._call: IDelayedCall | None = None

    def hold(self, recipient: Recipient, data: bytes) -> None:
        """Send ``data`` to ``recipient`` within ``delay`` seconds (or at the next round,
        if its round has passed), after what it holds."""
        held = self._held.get(recipient)
        if isinstance(held, list):
            held.append(data)
        elif held is not None:
            self._held[recipient] = [held, data]
        elif self.delay <= 0:
            recipient.write_held(data)
        else:
            self._held[recipient] = data
            if self._call is None:
                self._call = self.clock.callLater(self.delay, self._flush)

    def release(self, recipient: Recipient) -> bytes:
        """What the feed holds for ``recipient``, now no longer held (the caller
        writes it, or drops it when the connection is gone)."""
        held = self._held.pop(recipient, None)
        if held is None:
            return b""
        return held if isinstance(held, bytes) else b"".join(held)

    def flush(self) -> None:
        """Write everything held now, in one go (the in-memory test server, as if the
        delay had passed)."""
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None
        self._round = []
        for recipient in list(self._held):
            recipient.write_held(self.release(recipient))
        self._held = {}

    def _flush(self) -> None:
        """Write one slice of this round's recipients (those holding lines when it
        began); the rest on the next turns.  Lines held after a recipient's turn wait
        for the next round, ``delay`` after this one ends: under a stream of changes
        each user still gets one write per round, not one per change."""
        self._call = None
        if not self._round:
            self._round = list(self._held)[::-1]
        for _ in range(min(SLICE, len(self._round))):
            recipient = self._round.pop()
            data = self.release(recipient)
            if data:
                recipient.write_held(data)
        if self._round:
            self._call = self.clock.callLater(0, self._flush)
        elif self._held:
            self._call = self.clock.callLater(self.delay, self._flush)
        else:
            # An emptied dict keeps the table it grew to (a login burst's); a new one
            # is empty.
            self._held = {}
