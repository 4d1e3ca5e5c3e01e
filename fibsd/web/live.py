"""Live boards: ``/live/<player>/events``, a Server-Sent Events stream of the board a
watcher of ``player`` sees.

One timer for all viewers: every ``interval`` seconds, for each player somebody views,
the lobby view gives the watcher's ``board:`` line; when it differs from the last one
sent, it is drawn once and written to every viewer of that player.  So the cost per
game action does not grow with the number of viewers' connections beyond one write
each, and nothing in the server has to know about the web.  The timer runs only while
someone views.  At most ``limit`` streams are open at once (``web_live_viewers``),
and at most ``per_address`` from one address (``[web] live_per_address``), so that
one address cannot take them all; a comment line every ``KEEPALIVE`` seconds finds
connections that went away.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.web.server import Request

_log = Logger()

KEEPALIVE = 15.0  # seconds between comment lines


def sse_event(data: str) -> bytes:
    """One ``message`` event; each line of ``data`` is a ``data:`` line."""
    lines = data.splitlines() or [""]
    return ("".join(f"data: {line}\n" for line in lines) + "\n").encode("utf-8")


class LiveBoards:
    def __init__(self, clock: IReactorTime, board_line: Callable[[str], str | None],
                 render: Callable[[str, str | None], str], limit: int,
                 per_address: int, interval: float = 0.2) -> None:
        self._clock = clock
        self._board_line = board_line
        self._render = render  # (player, board line or None) -> the HTML fragment
        self.limit = limit
        self.per_address = per_address
        self._by_address: dict[str, int] = {}
        self.interval = interval
        self._viewers: dict[str, list[Request]] = {}
        self._last: dict[str, str | None] = {}
        self._loop: LoopingCall | None = None
        self._since_keepalive = 0.0

    @property
    def count(self) -> int:
        return sum(len(requests) for requests in self._viewers.values())

    def full(self, address: str) -> str | None:
        """The limit that refuses ``address`` another stream now (its key), or None."""
        if self._by_address.get(address, 0) >= self.per_address:
            return "web.live_per_address"
        if self.count >= self.limit:
            return "web_live_viewers"
        return None

    def open(self, player: str, request: Request, address: str) -> bool:
        """Start a stream for ``request`` from ``address``; False (nothing written) when
        all are taken, or all ``address`` may have (``full`` says which)."""
        if self.full(address) is not None:
            return False
        self._by_address[address] = self._by_address.get(address, 0) + 1
        request.setHeader(b"content-type", b"text/event-stream; charset=utf-8")
        request.setHeader(b"cache-control", b"no-cache")
        request.setHeader(b"x-accel-buffering", b"no")
        request.write(b"retry: 2000\n\n")
        line = self._board_line(player)
        request.write(sse_event(self._render(player, line)))
        viewers = self._viewers.setdefault(player, [])
        if not viewers:
            self._last[player] = line
        viewers.append(request)
        request.notifyFinish().addBoth(self._gone, player, request, address)
        if self._loop is None:
            self._loop = LoopingCall(self._tick)
            self._loop.clock = self._clock
            self._loop.start(self.interval, now=False).addErrback(
                lambda failure: _log.failure("live boards stopped", failure))
        return True

    def _gone(self, _: Any, player: str, request: Request, address: str) -> None:
        left = self._by_address.pop(address) - 1
        if left:
            self._by_address[address] = left
        viewers = self._viewers.get(player, [])
        if request in viewers:
            viewers.remove(request)
        if not viewers:
            self._viewers.pop(player, None)
            self._last.pop(player, None)
        if not self._viewers and self._loop is not None:
            self._loop.stop()
            self._loop = None

    def _tick(self) -> None:
        self._since_keepalive += self.interval
        keepalive = self._since_keepalive >= KEEPALIVE
        if keepalive:
            self._since_keepalive = 0.0
        for player, viewers in list(self._viewers.items()):
            line = self._board_line(player)
            if line != self._last.get(player):
                self._last[player] = line
                data = sse_event(self._render(player, line))
            elif keepalive:
                data = b": keepalive\n\n"
            else:
                continue
            for request in list(viewers):
                request.write(data)

    def close_all(self) -> None:
        """End every stream (shutdown)."""
        for viewers in list(self._viewers.values()):
            for request in list(viewers):
                transport = request.transport
                request.finish()
                if transport is not None:
                    transport.loseConnection()
