"""The client connection driven through an in-memory transport: login, registration, events."""

from __future__ import annotations

from typing import Any

import pytest
from twisted.internet import defer, task
from twisted.internet.error import ConnectionDone
from twisted.internet.error import ConnectionRefusedError
from twisted.internet.testing import MemoryReactorClock, StringTransport
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.client import events as ev
from fibsd.client.protocol import (
    ClipClientFactory,
    ClipClientProtocol,
    Credentials,
    LoginFailed,
    Outcome,
    RegistrationFailed,
    Stage,
    connect,
    dispatch,
)

ALICE = Credentials("alice", "secret", client="testclient")
BANNER = b"\r\n            _______   _\r\nFriday, July 03 18:04:27 MEST   ( Fri Jul  3 16:04:27 2020 UTC )\r\n"
LOGIN_BLOCK = (
    b"\r\n1 alice 1593791615 host.example.net\r\n"
    b"2 alice 1 1 0 0 0 0 1 1 0 0 1 0 1 1500.00 0 0 0 1 0 UTC\r\n"
    b"3\r\n+----+\r\n|  news  |\r\n+----+\r\n\r\n4\r\n\r\n"
    b"5 alice - - 0 0 1500.00 0 0 1593791615 host.example.net testclient -\r\n6\r\n"
)


class Connection:
    """A protocol on a StringTransport; ``sent()`` reads and clears what the client wrote."""

    def __init__(self, credentials: Credentials = ALICE, **options: Any) -> None:
        self.events: list[ev.Event] = []
        self.protocol = ClipClientProtocol(credentials, self.events.append, **options)
        self.transport = StringTransport()
        self.protocol.makeConnection(self.transport)

    def receive(self, data: bytes) -> None:
        self.protocol.dataReceived(data)

    def sent(self) -> list[str]:
        data = self.transport.value().decode("ascii")
        self.transport.clear()
        return data.split("\r\n")[:-1]


def result_of(deferred: defer.Deferred[Any]) -> Any:
    results: list[Any] = []
    deferred.addBoth(results.append)
    assert results, "the Deferred has not fired"
    return results[0]


def test_clip_login() -> None:
    conn = Connection()
    conn.receive(BANNER + b"login: ")
    assert conn.sent() == ["login testclient 1008 alice secret"]
    assert conn.protocol.stage is Stage.LOGIN_SENT
    conn.receive(LOGIN_BLOCK)
    welcome = ev.Welcome("alice", 1593791615, "host.example.net")
    assert result_of(conn.protocol.logged_in.wait()) == welcome
    assert conn.protocol.stage is Stage.READY
    assert conn.events == [
        ev.Empty(),
        ev.Banner("            _______   _"),
        ev.Banner("Friday, July 03 18:04:27 MEST   ( Fri Jul  3 16:04:27 2020 UTC )"),
        ev.Prompt("login: "),
        ev.Empty(),
        welcome,
        ev.OwnInfo(name="alice", allowpip=True, autoboard=True, autodouble=False, automove=False, away=False,
                   bell=False, crawford=True, double=True, experience=0, greedy=False, moreboards=True,
                   moves=False, notify=True, rating=1500.0, ratings=False, ready=False, redoubles=0,
                   report=True, silent=False, timezone="UTC"),
        ev.MotdStart(), ev.MotdLine("+----+"), ev.MotdLine("|  news  |"), ev.MotdLine("+----+"), ev.MotdLine(""),
        ev.MotdEnd(), ev.Empty(),
        ev.WhoInfo("alice", None, None, False, False, 1500.0, 0, 0, 1593791615, "host.example.net",
                   "testclient", None),
        ev.WhoEnd(),
    ]
    assert conn.protocol.unknown_lines == []


def test_prompt_split_across_reads_and_lf_only_lines() -> None:
    conn = Connection()
    conn.receive(b"WELCOME\nlog")
    assert conn.sent() == []
    conn.receive(b"in: ")
    assert conn.sent() == ["login testclient 1008 alice secret"]
    assert conn.events == [ev.Banner("WELCOME"), ev.Prompt("login: ")]


def test_failed_login_is_a_second_prompt() -> None:
    conn = Connection()
    conn.receive(b"login: ")
    conn.sent()
    conn.receive(b"\r\nlogin: ")
    failure = result_of(conn.protocol.logged_in.wait())
    assert isinstance(failure, Failure) and failure.check(LoginFailed)
    assert failure.value.name == "alice"
    assert conn.transport.disconnecting


def test_registration_through_the_guest_dialogue() -> None:
    conn = Connection(register=True)
    conn.receive(BANNER + b"login: ")
    assert conn.sent() == ["guest"]
    conn.receive(b"\r\nWelcome to FIBS. You just logged in as guest.\r\nPlease register before using this server:\r\n"
                 b"\r\nType 'name <username>'.\r\n\r\nONE USERNAME PER PERSON ONLY!!!\r\n> ")
    assert conn.sent() == ["name alice"]
    conn.receive(b"Your name will be alice\r\nType in no password and hit Enter/Return if you want to change it now.\r\n"
                 b"\xff\xfb\x01Please give your password: ")
    assert conn.sent() == ["secret"]
    conn.receive(b"\r\nPlease retype your password: ")
    assert conn.sent() == ["secret"]
    assert not conn.protocol.registered.done
    conn.receive(b"\r\n\xff\xfc\x01You are registered.\r\nType 'help beginner' to get started.\r\n> ")
    assert result_of(conn.protocol.registered.wait()) is None
    assert conn.protocol.stage is Stage.REGISTERED
    assert conn.transport.disconnecting
    assert ev.GuestWelcome("FIBS") in conn.events and ev.OneUsername() in conn.events
    assert ev.NameAccepted("alice") in conn.events and ev.Registered() in conn.events
    assert conn.events.count(ev.Prompt("> ")) == 1  # the final one came after the hang-up
    assert conn.protocol.unknown_lines == []


@pytest.mark.parametrize(("reply", "expected"), [
    (b"** Please use another name. 'alice' is already used by someone else.\r\n> ", ev.NameTaken("alice")),
    (b"** Your name may only contain letters and the underscore character _ .\r\n> ",
     ev.Error("Your name may only contain letters and the underscore character _ .")),
])
def test_registration_refused_name(reply: bytes, expected: ev.Event) -> None:
    conn = Connection(register=True)
    conn.receive(b"login: ")
    conn.receive(b"ONE USERNAME PER PERSON ONLY!!!\r\n> ")
    conn.receive(reply)
    failure = result_of(conn.protocol.registered.wait())
    assert failure.check(RegistrationFailed) and failure.value.event == expected
    assert conn.transport.disconnecting


def test_registration_refused_password() -> None:
    conn = Connection(Credentials("alice", "abc"), register=True)
    conn.receive(b"login: ")
    conn.receive(b"> ")
    conn.receive(b"Your name will be alice\r\nPlease give your password: ")
    conn.receive(b"\r\nMinimal password length is 4 characters.\r\nPlease give your password: ")
    failure = result_of(conn.protocol.registered.wait())
    assert failure.value.event == ev.PasswordRefused("Minimal password length is 4 characters.")
    assert conn.sent() == ["guest", "name alice", "abc"]


def logged_in(**options: Any) -> Connection:
    conn = Connection(**options)
    conn.receive(b"login: " + LOGIN_BLOCK)
    conn.sent()
    conn.events.clear()
    return conn


def test_send_and_wait_for_with_predicate() -> None:
    conn = logged_in()
    conn.protocol.send("roll")
    assert conn.sent() == ["roll"]
    rolled = conn.protocol.wait_for(ev.Rolls, lambda e: e.player == ev.YOU)
    conn.receive(b"bob rolls 3 and 1.\r\n")
    assert not rolled.called
    conn.receive(b"You roll 6 and 4.\r\nPlease move 2 pieces.\r\n")
    assert result_of(rolled) == ev.Rolls(ev.YOU, 6, 4)
    assert conn.events == [ev.Rolls("bob", 3, 1), ev.Rolls(ev.YOU, 6, 4), ev.PleaseMove(2)]


def test_send_is_seven_bit() -> None:
    conn = logged_in()
    conn.protocol.send("tell bob caf\u00e9")
    assert conn.sent() == ["tell bob caf?"]


def test_wait_for_timeout_uses_the_clock() -> None:
    clock = task.Clock()
    conn = logged_in(clock=clock)
    waiting = conn.protocol.wait_for(ev.Board, timeout=5)
    clock.advance(5)
    assert result_of(waiting).check(defer.TimeoutError)
    conn.receive(b"board:You:bob:1:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:0:0:0:0:1:1:1:0"
                 b":1:-1:0:25:0:0:0:0:0:0:0:0\r\n")
    assert isinstance(conn.events[-1], ev.Board)


def test_connection_lost_fails_waiters_and_fires_closed() -> None:
    conn = logged_in()
    waiting = conn.protocol.wait_for(ev.Invitation)
    conn.protocol.connectionLost(Failure(ConnectionDone()))
    assert result_of(waiting).check(ConnectionDone)
    assert result_of(conn.protocol.closed.wait()) is None


def test_unknown_lines_are_counted() -> None:
    conn = logged_in()
    conn.receive(b"bob frobnicates.\r\n6\r\n")
    assert conn.protocol.unknown_lines == ["bob frobnicates."]
    assert conn.events == [ev.Unknown("bob frobnicates."), ev.WhoEnd()]


def test_dispatch_to_handler_methods() -> None:
    class Bot:
        def __init__(self) -> None:
            self.seen: list[tuple[str, ev.Event]] = []

        def on_rolls(self, event: ev.Rolls) -> None:
            self.seen.append(("rolls", event))

        def on_you_double(self, event: ev.YouDouble) -> None:
            self.seen.append(("you_double", event))

        def on_event(self, event: ev.Event) -> None:
            self.seen.append(("other", event))

    bot = Bot()
    for event in (ev.Rolls("bob", 1, 2), ev.YouDouble("bob"), ev.WhoEnd()):
        dispatch(bot, event)
    assert bot.seen == [("rolls", ev.Rolls("bob", 1, 2)), ("you_double", ev.YouDouble("bob")),
                        ("other", ev.WhoEnd())]


class FakeConnector:
    def __init__(self) -> None:
        self.connects = 0

    def connect(self) -> None:
        self.connects += 1

    def stopConnecting(self) -> None:
        pass


def test_factory_reconnects_after_registering_then_logs_in() -> None:
    built: list[ClipClientProtocol] = []
    factory = ClipClientFactory(ALICE, register=True, connected=built.append)
    connector = FakeConnector()
    first = factory.buildProtocol(None)
    first.makeConnection(StringTransport())
    for chunk in (b"login: ", b"> ", b"Your name will be alice\r\nPlease give your password: "):
        first.dataReceived(chunk)
    first.dataReceived(b"Please retype your password: ")
    first.dataReceived(b"You are registered.\r\n")
    first.connectionLost(Failure(ConnectionDone()))
    factory.clientConnectionLost(connector, Failure(ConnectionDone()))
    assert connector.connects == 1
    second = factory.buildProtocol(None)
    transport = StringTransport()
    second.makeConnection(transport)
    second.dataReceived(b"login: ")
    assert transport.value() == b"login testclient 1008 alice secret\r\n"
    assert built == [first, second] and factory.current is second


def test_factory_reconnects_only_when_asked() -> None:
    clock = task.Clock()
    connector = FakeConnector()
    quiet = ClipClientFactory(ALICE)
    quiet.buildProtocol(None)
    quiet.clientConnectionLost(connector, Failure(ConnectionDone()))
    assert connector.connects == 0
    eager = ClipClientFactory(ALICE, reconnect=True, clock=clock)
    eager.buildProtocol(None)
    eager.clientConnectionLost(connector, Failure(ConnectionDone()))
    clock.advance(eager.maxDelay)
    assert connector.connects == 1


def test_a_failing_handler_is_logged_and_the_connection_goes_on() -> None:
    seen: list[ev.Event] = []

    def handler(event: ev.Event) -> None:
        seen.append(event)
        if isinstance(event, ev.Rolls):
            raise RuntimeError("bug in the bot")

    protocol = ClipClientProtocol(ALICE, handler)
    logged: list[dict[str, Any]] = []
    protocol.log = Logger(observer=logged.append)
    transport = StringTransport()
    protocol.makeConnection(transport)
    protocol.dataReceived(b"bob rolls 3 and 1.\r\n6\r\n")
    assert seen == [ev.Rolls("bob", 3, 1), ev.WhoEnd()]
    assert not transport.disconnecting
    assert [entry["log_failure"].check(RuntimeError) for entry in logged] == [RuntimeError]


def test_outcome_gives_every_waiter_the_result() -> None:
    outcome: Outcome[int] = Outcome()
    early = outcome.wait()
    outcome.succeed(7)
    outcome.fail(ValueError("too late"))  # the first result stays
    assert (result_of(early), result_of(outcome.wait())) == (7, 7)


def test_credentials_refuse_what_the_login_line_cannot_carry() -> None:
    with pytest.raises(ValueError):
        Credentials("bob2", "secret")
    with pytest.raises(ValueError):
        Credentials("bob", "two words")
    with pytest.raises(ValueError):
        Credentials("bob", "a:b")
    assert Credentials("bob_b", "pw").login_line() == "login fibsd-client 1008 bob_b pw"


def test_connect_fires_with_the_logged_in_protocol() -> None:
    reactor = MemoryReactorClock()
    factory, ready = connect(reactor, "127.0.0.1", 4321, ALICE)
    host, port, used, _, _ = reactor.tcpClients[0]
    assert (host, port, used) == ("127.0.0.1", 4321, factory)
    protocol = factory.buildProtocol(None)
    protocol.makeConnection(StringTransport())
    assert not ready.called
    protocol.dataReceived(b"login: " + LOGIN_BLOCK)
    assert result_of(ready) is protocol


def test_connect_fails_when_the_login_is_refused_even_with_reconnect() -> None:
    reactor = MemoryReactorClock()
    factory, ready = connect(reactor, "127.0.0.1", 4321, ALICE, reconnect=True, clock=reactor)
    protocol = factory.buildProtocol(None)
    protocol.makeConnection(StringTransport())
    protocol.dataReceived(b"login: ")
    protocol.dataReceived(b"\r\nlogin: ")
    assert result_of(ready).check(LoginFailed)
    connector = FakeConnector()
    factory.clientConnectionLost(connector, Failure(ConnectionDone()))
    reactor.advance(factory.maxDelay)
    assert connector.connects == 0


def test_connect_fails_when_the_server_is_not_there() -> None:
    reactor = MemoryReactorClock()
    factory, ready = connect(reactor, "127.0.0.1", 4321, ALICE)
    factory.clientConnectionFailed(FakeConnector(), Failure(ConnectionRefusedError()))
    assert result_of(ready).check(ConnectionRefusedError)
