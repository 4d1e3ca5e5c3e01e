"""The Twisted side of the client: one CLIP connection, and a factory that can reconnect.

Flow of a connection: wait for the ``login: `` prompt, then either send the
one-line CLIP login ``login <client> 1008 <name> <password>`` or, when asked
to register, go through the guest dialogue (``guest``, ``name <name>``, the
password twice) and hang up after ``You are registered.`` - FIBS then logs the
new user in in telnet mode, which a CLIP client does not want, so the factory
reconnects and logs in with CLIP like Gibbon and KBackgammon do.

Every received line goes through ``parse.LineReader`` and the event goes to the
handler; ``wait_for`` gives a Deferred for the next event of a kind.  Prompts
arrive without a line end, so the receiver looks at the unterminated rest of
its buffer too: when that rest is exactly a known prompt it becomes an event.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, Generic, TypeVar

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IAddress, IConnector, IReactorTCP, IReactorTime
from twisted.internet.protocol import ReconnectingClientFactory, connectionDone
from twisted.logger import Logger
from twisted.protocols.basic import LineReceiver
from twisted.python.failure import Failure

from fibsd.client import events as ev
from fibsd.client.parse import NAME, PROMPTS, LineReader

CLIP_VERSION = 1008
_IAC = re.compile(rb"\xff[\xfb-\xfe].|\xff\xff", re.S)  # telnet option negotiation, dropped
_LINE_END = b"\n"

Handler = Callable[[ev.Event], Any] | object
T = TypeVar("T")


class LoginFailed(Exception):
    """The server answered the CLIP login with a new ``login: `` prompt."""

    def __init__(self, name: str) -> None:
        super().__init__(f"login refused for {name!r}")
        self.name = name


class RegistrationFailed(Exception):
    """The guest dialogue refused the name or the password, or the server answered
    ``guest`` with a new login prompt (it registers no one); ``event`` says why."""

    def __init__(self, name: str, event: ev.Event) -> None:
        super().__init__(f"registration of {name!r} refused: {event!r}")
        self.name = name
        self.event = event


@dataclass(frozen=True)
class Credentials:
    """An account and the client word sent in the CLIP login line (field 11 of CLIP 5)."""

    name: str
    password: str
    client: str = "fibsd-client"

    def __post_init__(self) -> None:
        if not re.fullmatch(NAME, self.name):
            raise ValueError(f"FIBS names are letters and underscores only: {self.name!r}")
        if not self.password or re.search(r"[\s:]", self.password):
            raise ValueError("a password must be non-empty, without blanks or colons (the login line)")
        if not re.fullmatch(r"[!-~]{1,20}", self.client):
            raise ValueError(f"the client word is 1-20 printable characters, no blanks: {self.client!r}")

    def login_line(self) -> str:
        return f"login {self.client} {CLIP_VERSION} {self.name} {self.password}"


class Stage(Enum):
    """How far the login has come."""

    WAIT_PROMPT = "wait for login prompt"
    LOGIN_SENT = "login line sent"
    GUEST = "guest sent, waiting for the '> ' prompt"
    NAME_SENT = "name sent"
    PASSWORD = "password asked"
    REGISTERED = "registered"
    READY = "logged in"


@cache
def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def dispatch(handler: Handler, event: ev.Event) -> None:
    """Call a plain callable with every event; call an object's ``on_<event>`` method.

    An object gets ``on_board(event)`` for a ``Board``, ``on_rolls`` for ``Rolls``
    and so on, and ``on_event(event)`` for events it has no method for.
    """
    if callable(handler):
        handler(event)
        return
    method = getattr(handler, "on_" + _snake(type(event).__name__), None)
    if method is None:
        method = getattr(handler, "on_event", None)
    if method is not None:
        method(event)


class Outcome(Generic[T]):
    """A result many may wait for: each ``wait()`` gets a Deferred of its own, so no waiter
    consumes the result for the others, and a failure nobody waits for is not an error."""

    def __init__(self) -> None:
        self._result: T | Failure | None = None
        self._done = False
        self._waiting: list[Deferred[T]] = []

    @property
    def done(self) -> bool:
        return self._done

    def wait(self) -> Deferred[T]:
        deferred: Deferred[T] = Deferred()
        if self._done:
            self._fire(deferred)
        else:
            self._waiting.append(deferred)
        return deferred

    def succeed(self, value: T) -> None:
        self._settle(value)

    def fail(self, error: Exception | Failure) -> None:
        self._settle(error if isinstance(error, Failure) else Failure(error))

    def _settle(self, result: T | Failure) -> None:
        if self._done:
            return
        self._result, self._done = result, True
        waiting, self._waiting = self._waiting, []
        for deferred in waiting:
            self._fire(deferred)

    def _fire(self, deferred: Deferred[T]) -> None:
        if isinstance(self._result, Failure):
            deferred.errback(self._result)
        else:
            deferred.callback(self._result)  # type: ignore[arg-type]


EventKind = type[ev.Event] | tuple[type[ev.Event], ...]


@dataclass
class _Waiter:
    kind: EventKind
    predicate: Callable[[Any], bool] | None
    deferred: Deferred[Any]


class ClipClientProtocol(LineReceiver):
    """One CLIP connection: logs in (or registers), turns lines into events, sends commands."""

    delimiter = b"\r\n"  # for sending; received lines may end with LF or CR LF
    MAX_LENGTH = 65536
    log = Logger()

    def __init__(
        self,
        credentials: Credentials,
        handler: Handler | None = None,
        *,
        register: bool = False,
        clock: IReactorTime | None = None,
    ) -> None:
        self.credentials = credentials
        self.handler = handler
        self.register = register
        self.clock = clock
        self.stage = Stage.WAIT_PROMPT
        self.reader = LineReader()
        self.unknown_lines: list[str] = []
        self.logged_in: Outcome[ev.Welcome] = Outcome()
        self.registered: Outcome[None] = Outcome()
        self.closed: Outcome[None] = Outcome()
        self._pending = b""
        self._waiters: list[_Waiter] = []
        self._refusal: ev.Event | None = None  # why ``guest`` was answered with a login prompt

    # -- Twisted overrides ---------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        """Split on LF ourselves: LineReceiver hides the unterminated rest, where prompts are."""
        self._pending += data
        *lines, self._pending = self._pending.split(_LINE_END)
        for raw in lines:
            if self._closing():
                return
            self.lineReceived(raw.rstrip(b"\r"))
        if self._closing():
            return
        rest = _IAC.sub(b"", self._pending).decode("latin-1")
        if rest in PROMPTS or rest.endswith("Password: "):
            self._pending = b""
            self._deliver(ev.Prompt(rest))
        elif len(self._pending) > self.MAX_LENGTH:
            self.lineLengthExceeded(self._pending)

    def lineReceived(self, line: bytes) -> None:
        self._deliver(self.reader.feed(_IAC.sub(b"", line).decode("latin-1")))

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.deferred.errback(reason)
        if self.stage is not Stage.REGISTERED:
            self.logged_in.fail(reason)
        self.registered.fail(reason)
        self.closed.succeed(None)

    # -- public API ----------------------------------------------------------------

    def send(self, command: str) -> None:
        """Send one command line (7-bit; other characters become ``?``)."""
        self.sendLine(command.encode("ascii", "replace"))

    def wait_for(
        self,
        kind: EventKind,
        predicate: Callable[[Any], bool] | None = None,
        timeout: float | None = None,
    ) -> Deferred[Any]:
        """A Deferred for the next event of ``kind`` (a class or a tuple of them, as for
        ``isinstance``) that matches ``predicate``, from now on.

        With ``timeout`` it fails with ``defer.TimeoutError`` after that many
        seconds of the protocol's clock; a lost connection fails it too.
        """
        waiter = _Waiter(kind, predicate, Deferred())
        self._waiters.append(waiter)
        if timeout is not None:
            if self.clock is None:
                raise ValueError("a timeout needs the protocol to have a clock")
            waiter.deferred.addTimeout(timeout, self.clock)
        return waiter.deferred

    # -- internals -----------------------------------------------------------------

    def _closing(self) -> bool:
        """Whether we hung up: what the server sent after that is not acted upon."""
        return self.transport is None or bool(getattr(self.transport, "disconnecting", False))

    def _deliver(self, event: ev.Event) -> None:
        if isinstance(event, ev.Unknown):
            self.unknown_lines.append(event.line)
            self.log.warn("unknown line from server: {line!r}", line=event.line)
        if self.handler is not None:  # first, so the handler has seen what a waiter reacts to
            try:
                dispatch(self.handler, event)
            except Exception:  # one failing handler call must not cost the connection
                self.log.failure("handler failed on {event!r}", event=event)
        self._advance(event)
        if not self._waiters:
            return
        self._waiters = [waiter for waiter in self._waiters if not waiter.deferred.called]  # timed out
        for waiter in list(self._waiters):
            if isinstance(event, waiter.kind) and (waiter.predicate is None or waiter.predicate(event)):
                self._waiters.remove(waiter)
                waiter.deferred.callback(event)

    def _advance(self, event: ev.Event) -> None:
        """The login state machine; every other event leaves the stage alone."""
        name = self.credentials.name
        match self.stage, event:
            case Stage.WAIT_PROMPT, ev.Prompt(text="login: "):
                if self.register:
                    self.stage = Stage.GUEST
                    self.send("guest")
                else:
                    self.stage = Stage.LOGIN_SENT
                    self.send(self.credentials.login_line())
            case Stage.LOGIN_SENT, ev.Prompt(text="login: "):
                self._fail(self.logged_in, LoginFailed(name))
            case Stage.LOGIN_SENT, ev.Welcome():
                self.stage = Stage.READY
                self.logged_in.succeed(event)
            case Stage.GUEST, ev.Prompt(text="> "):
                self.stage = Stage.NAME_SENT
                self.send(f"name {name}")
            case Stage.GUEST, ev.Information(kind="registration") | ev.Error():
                self._refusal = event  # e.g. "Your site is not allowed to create new accounts."
            case Stage.GUEST, ev.Prompt(text="login: "):
                self._fail(self.registered, RegistrationFailed(name, self._refusal or event))
            case Stage.NAME_SENT, ev.NameAccepted():
                self.stage = Stage.PASSWORD
            case Stage.NAME_SENT, ev.NameTaken() | ev.Error():
                self._fail(self.registered, RegistrationFailed(name, event))
            case Stage.PASSWORD, ev.Prompt():
                self.send(self.credentials.password)
            case Stage.PASSWORD, ev.PasswordRefused() | ev.Error():
                self._fail(self.registered, RegistrationFailed(name, event))
            case Stage.PASSWORD, ev.Registered():
                self.stage = Stage.REGISTERED
                self.registered.succeed(None)
                self.transport.loseConnection()

    def _fail(self, outcome: Outcome[Any], error: Exception) -> None:
        outcome.fail(error)
        self.transport.loseConnection()


class ClipClientFactory(ReconnectingClientFactory):
    """Builds the connections of one account; reconnects after registering, and optionally always.

    ``connected`` is called with each new protocol before any line arrives, so a
    bot can keep a reference for sending.  ``reconnect`` is the bot option: after
    a lost connection it connects again with growing delays (Twisted's
    ``ReconnectingClientFactory``).  ``first_login`` settles with the protocol of
    the first connection that logs in, or with the reason no login can happen
    (a refused login or registration is final; so is a failed connection unless
    ``reconnect`` is on).  ``protocol`` is the class each connection is built from,
    as in any Twisted factory.
    """

    protocol: type[ClipClientProtocol] = ClipClientProtocol

    def __init__(
        self,
        credentials: Credentials,
        handler: Handler | None = None,
        *,
        register: bool = False,
        reconnect: bool = False,
        clock: IReactorTime | None = None,
        connected: Callable[[ClipClientProtocol], Any] | None = None,
    ) -> None:
        self.credentials = credentials
        self.handler = handler
        self.register = register
        self.reconnect = reconnect
        self.connected = connected
        self.current: ClipClientProtocol | None = None
        self.first_login: Outcome[ClipClientProtocol] = Outcome()
        if clock is not None:
            self.clock = clock

    def buildProtocol(self, addr: IAddress | None) -> ClipClientProtocol:
        protocol = self.protocol(
            self.credentials, self.handler, register=self.register, clock=getattr(self, "clock", None))
        protocol.factory = self
        protocol.registered.wait().addCallbacks(self._registered, self._refused)
        protocol.logged_in.wait().addCallbacks(lambda welcome: self._logged_in(protocol), self._refused)
        self.current = protocol
        if self.connected is not None:
            self.connected(protocol)
        return protocol

    def _registered(self, result: None) -> None:
        self.register = False

    def _logged_in(self, protocol: ClipClientProtocol) -> None:
        self.resetDelay()
        self.first_login.succeed(protocol)

    def _refused(self, failure: Failure) -> None:
        if failure.check(LoginFailed, RegistrationFailed):
            self.stopTrying()
            self.first_login.fail(failure)

    def clientConnectionLost(self, connector: IConnector, reason: Failure) -> None:
        if self.current is not None and self.current.stage is Stage.REGISTERED:
            connector.connect()
        elif self.reconnect and self.continueTrying:
            super().clientConnectionLost(connector, reason)

    def clientConnectionFailed(self, connector: IConnector, reason: Failure) -> None:
        if self.reconnect and self.continueTrying:
            super().clientConnectionFailed(connector, reason)
        else:
            self.first_login.fail(reason)


def connect(
    reactor: IReactorTCP,
    host: str,
    port: int,
    credentials: Credentials,
    handler: Handler | None = None,
    **options: Any,
) -> tuple[ClipClientFactory, Deferred[ClipClientProtocol]]:
    """Connect over TCP; the Deferred fires with the logged-in protocol (options as the factory's).

    The reactor is also the clock of the connection (``wait_for`` timeouts, reconnect delays)
    unless ``clock`` says otherwise.
    """
    options.setdefault("clock", reactor)
    factory = ClipClientFactory(credentials, handler, **options)
    reactor.connectTCP(host, port, factory)
    return factory, factory.first_login.wait()
