"""Drive the server with bytes, without sockets or a running reactor.

``FakeServer`` builds the real protocol factory over an in-memory SQLite store whose
calls answer at once, a cheap stand-in for argon2 and a ``task.Clock``.  Each
``FakeClient`` is one connection on a ``StringTransport``::

    server = FakeServer()
    alice = server.connect()
    alice.send("login test 1008 alice secret")
    assert alice.lines()[1].startswith("1 alice ")
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from collections.abc import Callable
from typing import Any

from twisted.internet.address import IPv4Address
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from fibsd.app import build_services
from fibsd.config import Settings, load_settings
from fibsd.server.protocol import FibsFactory, FibsProtocol
from fibsd.store import Store
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.input import WILL_ECHO, WONT_ECHO

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "config" / "fibsd.toml"
START_TIME = 1_700_000_000.0


class ImmediateDatabase:
    """The DatabaseThread interface (``db.<store method>(...) -> Deferred``), run inline."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __getattr__(self, method: str) -> Any:
        function = getattr(self.store, method)

        def call(*args: Any, **kwargs: Any) -> Deferred[Any]:
            try:
                return succeed(function(*args, **kwargs))
            except Exception as error:  # handed to the caller's errback, as the thread does
                return fail(error)

        return call

    def call(self, method: str, *args: Any, **kwargs: Any) -> Deferred[Any]:
        return getattr(self, method)(*args, **kwargs)

    def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Deferred[Any]:
        try:
            return succeed(function(self.store, *args, **kwargs))
        except Exception as error:  # as the thread does
            return fail(error)

    def when_up(self) -> Deferred[None]:
        """The thread's answer while it knows of no outage (a write fails on its own)."""
        return succeed(None)


def cheap_hash(password: str) -> str:
    return "sha256$" + hashlib.sha256(password.encode()).hexdigest()


class CheapPasswords:
    """A fast, deterministic hasher for in-memory tests (never used by the server).

    ``plain$<password>`` stands for a hash made at an outdated cost: it verifies, and
    ``needs_rehash`` asks for it to be replaced.
    """

    def hash(self, password: str) -> Deferred[str]:
        return succeed(cheap_hash(password))

    def verify(self, password: str, password_hash: str) -> Deferred[bool]:
        return succeed(password_hash in (cheap_hash(password), "plain$" + password))

    def needs_rehash(self, password_hash: str) -> bool:
        return not password_hash.startswith("sha256$")


def make_settings(**overrides: Any) -> Settings:
    """The repository's config/fibsd.toml with dotted-key overrides; the web face is
    off unless asked for (a test that wants it listens on a port of its own choosing,
    never on the shared default 8080), and so are the resident bots and the analysis
    workers (a test that wants them says ``bots.enabled`` or sets ``analysis.workers``).
    A dropped connection saves its match at once, as on FIBS (``pace.drop_grace = 0``),
    unless a test asks for the grace (tests/server/test_grace.py)."""
    return load_settings(CONFIG, {"web_port": 0, "bots.enabled": False, "analysis.workers": 0,
                                  "pace.drop_grace": 0,
                                  **overrides})


class FakeServer:
    """A server on in-memory transports.  Each input and clock step ends by letting the
    presence feed go, as if its delay had passed; ``hold_feed=True`` leaves that to
    the clock (the feed's own tests)."""

    def __init__(self, store: Store | None = None, settings: Settings | None = None,
                 hold_feed: bool = False) -> None:
        self.hold_feed = hold_feed
        self.clock = Clock()
        self.clock.advance(START_TIME)
        self.store = store if store is not None else SQLiteStore(":memory:")
        self.settings = settings or make_settings()
        self.db = ImmediateDatabase(self.store)
        self.services = build_services(self.settings, self.db, CheapPasswords(), self.clock)
        self.factory = FibsFactory(self.services, self.settings.limits.max_line_length)
        self.clients: list[FakeClient] = []
        self._port = 40000

    @property
    def lobby(self) -> Any:
        return self.services.lobby

    def connect(self, host: str = "10.0.0.1") -> FakeClient:
        self._port += 1
        client = FakeClient(self, IPv4Address("TCP", host, self._port))
        self.clients.append(client)
        return client

    def settle(self) -> None:
        """Finish closings the server asked for (StringTransport only records them),
        then let the presence feed go, as its delay would."""
        for client in self.clients:
            client.finish_close()
        if not self.hold_feed:
            self.services.lobby.feed.flush()

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        self.settle()

    def register(self, name: str, password: str = "secret") -> None:
        """Create an account directly in the store."""
        self.store.create_user(name, cheap_hash(password), int(self.clock.seconds()))


class FakeClient:
    def __init__(self, server: FakeServer, peer: IPv4Address) -> None:
        self.server = server
        self.transport = StringTransport(peerAddress=peer)
        self.protocol: FibsProtocol = server.factory.buildProtocol(peer)
        self.protocol.makeConnection(self.transport)
        self.closed = False
        self._pending = b""

    def send_bytes(self, data: bytes) -> None:
        self.protocol.dataReceived(data)
        self.server.settle()

    def send(self, line: str) -> None:
        self.send_bytes(line.encode("latin-1") + b"\r\n")

    def received(self) -> bytes:
        """Every byte sent to this client since the last call."""
        data = self._pending + self.transport.value()
        self.transport.clear()
        self._pending = b""
        return data

    def lines(self) -> list[str]:
        """Complete lines received since the last call (telnet bytes removed); an
        unterminated prompt at the end stays for ``prompt()``."""
        data = self._pending + self.transport.value()
        self.transport.clear()
        *complete, rest = data.split(b"\r\n")
        self._pending = rest
        return [_text(line) for line in complete]

    def prompt(self) -> str:
        """The unterminated text at the end of the output (e.g. ``"> "``), consumed."""
        self.lines()
        rest, self._pending = self._pending, b""
        return _text(rest)

    def close(self) -> None:
        """The client hangs up."""
        self.finish_close()
        if not self.closed:
            self.closed = True
            self.protocol.connectionLost()
            self.server.settle()

    def finish_close(self) -> None:
        if self.transport.disconnecting and not self.closed:
            self.closed = True
            self.protocol.connectionLost()


def strip_echo(raw: bytes) -> bytes:
    """``raw`` without the telnet echo switches sent around password prompts."""
    return raw.replace(WILL_ECHO, b"").replace(WONT_ECHO, b"")


def _text(raw: bytes) -> str:
    return strip_echo(raw).decode("ascii")


class Waits:
    """What a loopback test waits for: conditions checked whenever something arrives
    (``poke``), each failing after ``limit`` seconds instead of hanging the suite."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.waiters: list[tuple[Callable[[], bool], Deferred[None]]] = []

    def poke(self) -> None:
        for waiter in list(self.waiters):
            if waiter in self.waiters and waiter[0]():
                self.waiters.remove(waiter)
                waiter[1].callback(None)

    def until(self, done: Callable[[], bool], what: Callable[[], str]) -> Deferred[None]:
        """Fires once ``done()``; fails with ``what()`` after ``limit`` seconds."""
        from twisted.internet import reactor

        deferred: Deferred[None] = Deferred()
        if done():
            deferred.callback(None)
            return deferred
        waiter = (done, deferred)
        self.waiters.append(waiter)

        def too_late() -> None:
            if waiter in self.waiters:
                self.waiters.remove(waiter)
                deferred.errback(AssertionError(f"waited {self.limit}s for {what()}"))

        call = reactor.callLater(self.limit, too_late)  # type: ignore[attr-defined]
        deferred.addBoth(lambda result: (call.active() and call.cancel(), result)[1])
        return deferred
