"""The drills of issue 9 that fibsd.server.access answers, with small bounded counts and a
``task.Clock``: password guessing across connections, idle connections that never log in,
mass registration, the name `You`, and whose address others see."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from twisted.internet.address import IPv4Address
from twisted.internet.testing import StringTransport
from twisted.logger import globalLogPublisher

from fibsd.server.protocol import LINGER
from tests.helpers import START_TIME, FakeClient, FakeServer, make_settings
from tests.server.test_social import every_line_is_catalogued  # noqa: F401 (autouse)

T = int(START_TIME)
USED = "** Please use another name. '{}' is already used by someone else."
TOO_MANY = "** Too many connections from your address. Please try again later."
FULL = "** Sorry, the server is full. Please try again later."


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    """The operator events of access control emitted meanwhile."""
    seen: list[dict[str, Any]] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("event") in ("login_failed", "connection_refused", "limit"):
            seen.append({k: event[k] for k in ("event", "limit", "user", "address", "count")
                         if k in event})

    globalLogPublisher.addObserver(observe)
    yield seen
    globalLogPublisher.removeObserver(observe)


def guess(client: FakeClient, name: str = "alice", password: str = "wrong") -> None:
    client.send(f"login test 1008 {name} {password}")


# --- password guessing ------------------------------------------------------------------

def test_failed_logins_are_logged_with_name_and_address(events: list[dict[str, Any]]) -> None:
    server = FakeServer()
    server.register("alice")
    client = server.connect("192.0.2.7")
    client.received()
    guess(client)
    assert client.lines() == [""]
    assert client.prompt() == "login: "
    client.send("bob")
    client.send("nopass")
    assert events == [
        {"event": "login_failed", "user": "alice", "address": "192.0.2.7"},
        {"event": "login_failed", "user": "bob", "address": "192.0.2.7"},
    ]


def test_guessing_from_one_address_is_slowed_across_connections(
        events: list[dict[str, Any]]) -> None:
    """The drill: 20 connections from one address, each guessing as soon as it has an
    answer and reconnecting when closed.  In the first minute 10 guesses are checked, in
    each later minute 2 (login_delay_max 30 s); without the throttle it was ~143 a second."""
    server = FakeServer()
    server.register("alice")
    answered: list[int] = []  # the second by which each guess was answered
    clients: list[FakeClient] = []
    for second in range(182):
        for client in clients:
            data = client.received()
            count = data.count(b"\r\nlogin: ") + data.count(b"Too many failed logins")
            answered += [second] * count
            if count and not client.closed and second < 181:
                guess(client)
        clients = [client for client in clients if not client.closed]
        while len(clients) < 20 and second < 181:
            client = server.connect("198.51.100.9")
            client.received()
            guess(client)
            clients.append(client)
        server.advance(1)
    per_minute = [sum(1 for s in answered if m * 60 < s <= (m + 1) * 60) for m in range(3)]
    assert per_minute == [10, 2, 2]
    failed = [e for e in events if e["event"] == "login_failed"]
    assert len(failed) == len(answered)


def test_the_owner_gets_in_while_his_account_is_attacked() -> None:
    """Failures on an account slow attempts on it from anywhere, but never by more than
    access.account_delay_max (8 s): the attacker cannot lock the owner out."""
    server = FakeServer()
    server.register("alice")
    attackers = [server.connect(f"203.0.113.{n}") for n in range(12)]
    for attacker in attackers:  # 12 guesses at once, from 12 addresses
        guess(attacker)
    owner = server.connect("192.0.2.50")
    owner.received()
    guess(owner, password="secret")
    server.advance(7.9)
    assert owner.received() == b""
    server.advance(0.1)
    assert owner.lines()[1].startswith("1 alice ")
    # A success clears the account's failures: the next login does not wait.
    again = server.connect("192.0.2.51")
    again.received()
    guess(again, password="secret")
    assert again.lines()[1] == "** Warning: You are already logged in."


def test_a_waiting_attempt_abandoned_by_its_connection_frees_its_turn() -> None:
    server = FakeServer()
    server.register("alice")
    throttle = server.services.throttle
    client = server.connect("198.51.100.3")
    for _ in range(4):
        guess(client)  # 4 free failures
    waiting = server.connect("198.51.100.3")
    guess(waiting)  # the fifth failure: free, but sets the next turn 1 s later
    third = server.connect("198.51.100.3")
    guess(third)
    third.received()
    third.close()  # before its turn: not counted as a failure, not left in flight
    server.advance(60)
    record = throttle._addresses["198.51.100.3"]
    assert (record.failures, record.in_flight) == (5, 0)
    assert throttle._accounts["alice"].in_flight == 0


def test_the_five_failures_per_connection_still_close_it(events: list[dict[str, Any]]) -> None:
    server = FakeServer()
    server.register("alice")
    client = server.connect("192.0.2.9")
    client.received()
    for _ in range(5):
        guess(client)
    assert client.lines()[-1] == "** Too many failed logins. Closing the connection."
    assert client.closed
    assert events[-1] == {"event": "limit", "limit": "limits.login_attempts",
                          "address": "192.0.2.9"}


# --- connections ----------------------------------------------------------------------

def test_the_login_prompt_times_out_and_empty_lines_do_not_extend_it(
        events: list[dict[str, Any]]) -> None:
    server = FakeServer()
    client = server.connect("192.0.2.4")
    client.received()
    for _ in range(5):
        server.advance(11)
        client.send("")
    assert client.received() == b"login: " * 5
    server.advance(59 - 55)
    assert not client.closed
    server.advance(1)
    assert client.lines() == ["", "Connection timed out."]
    assert client.closed
    assert events == [{"event": "limit", "limit": "access.login_timeout",
                       "address": "192.0.2.4", "count": 1}]


def test_the_idle_timeout_takes_over_after_login() -> None:
    server = FakeServer()
    server.register("alice")
    client = server.connect()
    server.advance(50)
    guess(client, password="secret")
    server.advance(3599)
    assert not client.closed
    client.send("who count")
    server.advance(3599)
    assert not client.closed
    server.advance(1)
    assert client.closed


def test_connections_not_logged_in_are_capped_per_address(events: list[dict[str, Any]]) -> None:
    server = FakeServer()
    server.register("alice")
    waiting = [server.connect("198.51.100.20") for _ in range(20)]
    refused = server.connect("198.51.100.20")
    assert refused.lines() == [TOO_MANY]
    assert refused.transport.disconnecting
    refused_too = server.connect("198.51.100.20")
    assert refused_too.lines() == [TOO_MANY]
    assert events == [{"event": "connection_refused",  # one event a minute per address
                       "limit": "access.unauthenticated_per_address",
                       "address": "198.51.100.20", "count": 1}]
    other = server.connect("198.51.100.21")
    assert other.prompt().endswith("login: ") and not other.closed
    guess(waiting[0], password="secret")  # a login frees a place for the address
    later = server.connect("198.51.100.20")
    assert not later.closed and later.prompt().endswith("login: ")
    server.advance(59)
    assert server.connect("198.51.100.20").lines() == [TOO_MANY]
    assert len(events) == 1
    server.advance(1)  # the others time out and free theirs
    assert all(client.closed for client in waiting[1:])
    assert not server.connect("198.51.100.20").closed


def test_a_refused_connection_that_takes_nothing_is_dropped_after_the_linger() -> None:
    """Its line is never read (over TLS: the handshake never done): after LINGER
    seconds the socket is dropped, not kept for ever."""
    server = FakeServer()
    for _ in range(20):
        server.connect("198.51.100.20")
    refused = server.factory.buildProtocol(IPv4Address("TCP", "198.51.100.20", 1))
    transport = StringTransport(peerAddress=IPv4Address("TCP", "198.51.100.20", 1))
    refused.makeConnection(transport)  # its socket never closes by itself
    assert transport.value() == (TOO_MANY + "\r\n").encode() and transport.disconnecting
    server.clock.advance(LINGER - 0.1)
    assert not transport.disconnected
    server.clock.advance(0.1)
    assert transport.disconnected  # aborted


def test_an_ipv6_subscribers_64_counts_as_one_address() -> None:
    server = FakeServer()
    for n in range(20):
        server.connect(f"2001:db8:5:6::{n + 1:x}").received()
    refused = server.connect("2001:db8:5:6:ffff::1")
    assert refused.lines() == [TOO_MANY]
    other = server.connect("2001:db8:5:7::1")  # the next /64: someone else
    assert other.prompt().endswith("login: ")


def test_the_global_cap_leaves_logged_in_users_alone(events: list[dict[str, Any]]) -> None:
    server = FakeServer(settings=make_settings(**{"access.max_connections": 3}))
    server.register("alice")
    alice = server.connect("192.0.2.1")
    guess(alice, password="secret")
    idle = [server.connect(f"198.51.100.{n}") for n in range(2)]
    refused = server.connect("198.51.100.9")
    assert refused.lines() == [FULL] and refused.transport.disconnecting
    assert events[-1] == {"event": "connection_refused", "limit": "access.max_connections",
                          "address": "198.51.100.9", "count": 1}
    alice.received()
    alice.send("who count")
    assert alice.lines() == ["There is 1 user logged on."]
    idle[0].close()
    assert not server.connect("198.51.100.9").closed


def test_a_full_server_makes_room_by_closing_the_most_crowded_address(
        events: list[dict[str, Any]]) -> None:
    server = FakeServer(settings=make_settings(**{"access.max_connections": 4}))
    crowd = [server.connect("198.51.100.50") for _ in range(3)]
    single = server.connect("198.51.100.51")
    for client in [*crowd, single]:
        client.received()
    newcomer = server.connect("192.0.2.60")
    assert newcomer.prompt().endswith("login: ") and not newcomer.transport.disconnecting
    assert crowd[0].lines() == ["", FULL] and crowd[0].transport.disconnecting
    assert events[-1] == {"event": "limit", "limit": "access.max_connections",
                          "address": "198.51.100.50", "count": 1}
    again = server.connect("192.0.2.60")  # it would have 2, as many as the crowd
    assert again.lines() == [FULL] and again.transport.disconnecting
    second = server.connect("192.0.2.61")
    assert second.prompt().endswith("login: ")
    assert crowd[1].lines() == ["", FULL]
    third = server.connect("192.0.2.62")  # one each now: no one is more crowded
    assert third.lines() == [FULL] and third.transport.disconnecting
    assert [c.transport.disconnecting for c in [crowd[2], single, newcomer, second]] == [
        False] * 4


# --- registration ---------------------------------------------------------------------

def register(server: FakeServer, name: str, host: str) -> list[str]:
    guest = server.connect(host)
    guest.received()
    guest.send("guest")
    guest.received()
    guest.send(f"name {name}")
    if not guest.received().startswith(b"Your name will be"):
        guest.send(f"name {name}")  # say it again to read the refusal line
        return guest.lines()
    guest.send("secret")
    guest.send("secret")
    return guest.lines()


def test_registration_is_limited_per_address(events: list[dict[str, Any]]) -> None:
    server = FakeServer()
    names = ["ann", "ben", "cid", "dot", "eve"]
    for name in names:
        assert register(server, name, "203.0.113.5")[2] == "You are registered."
    refusal = "** Too many new accounts from your address. Please try again in 60 minutes."
    assert register(server, "fay", "203.0.113.5") == [refusal]
    assert events[-1] == {"event": "limit", "limit": "access.registrations_per_hour",
                          "address": "203.0.113.5", "count": 1}
    assert register(server, "fay", "203.0.113.6")[2] == "You are registered."
    server.advance(3000)
    assert register(server, "gil", "203.0.113.5") == [refusal.replace("60", "10")]
    server.advance(601)
    assert register(server, "gil", "203.0.113.5")[2] == "You are registered."
    assert server.store.get_user("gil") is not None


def test_guests_in_parallel_cannot_pass_the_registration_limit() -> None:
    server = FakeServer(settings=make_settings(**{"access.registrations_per_hour": 1}))
    guests = []
    for name in ("ann", "ben"):
        guest = server.connect("203.0.113.8")
        guest.send("guest")
        guest.send(f"name {name}")
        guest.send("secret")
        guests.append(guest)
    for guest in guests:
        guest.received()
        guest.send("secret")
    assert guests[0].lines()[1] == "You are registered."
    assert guests[1].lines() == [
        "", "** Too many new accounts from your address. Please try again in 60 minutes."]
    assert server.store.get_user("ben") is None


@pytest.mark.parametrize("name", ["You", "you", "YOU", "yOu", "guest", "Guest", "board",
                                  "login", "unlimited", "beginner", "formula", "who", "Help", "tell",
                                  "matrix", "rawwho"])
def test_names_that_clients_or_readers_would_misread_are_refused(name: str) -> None:
    server = FakeServer()
    assert register(server, name, "192.0.2.200") == [USED.format(name)]
    assert server.store.get_user(name) is None


def test_an_old_account_with_a_reserved_name_still_logs_in() -> None:
    server = FakeServer()
    server.register("You")
    client = server.connect()
    client.received()
    guess(client, "You", "secret")
    assert client.lines()[1] == f"1 You {T} 10.0.0.1"


# --- privacy ----------------------------------------------------------------------------

def logged_in(server: FakeServer, name: str, host: str, clip: bool = True) -> FakeClient:
    server.register(name)
    client = server.connect(host)
    if clip:
        guess(client, name, "secret")
    else:
        client.send(name)
        client.send("secret")
    for other in server.clients:
        other.received()
    return client


def test_others_see_a_masked_address_and_the_user_his_own() -> None:
    server = FakeServer()
    alice = logged_in(server, "alice", "203.0.113.77")
    bob = logged_in(server, "bob", "198.51.100.4", clip=False)
    alice.send("rawwho")
    assert alice.lines() == [
        f"5 alice - - 0 0 1500.00 0 0 {T} 203.0.113.77 test -",
        f"5 bob - - 0 0 1500.00 0 0 {T} 198.51.x.x - -", "6"]
    bob.send("who")
    assert bob.lines() == [
        "No  S  username        rating  exp login    idle  from",
        " 1 -   alice          1500.00     0 22:13  0:00 203.0.x.x",
        " 2 -   bob            1500.00     0 22:13  0:00 198.51.100.4"]
    bob.prompt()
    bob.send("whois alice")
    assert bob.lines()[1] == "  Last login:  Tue Nov 14 22:13:20 2023 UTC from 203.0.x.x"
    bob.prompt()
    bob.send("who from 203.0.113")  # a search must not find what is hidden
    assert bob.lines() == ["No  S  username        rating  exp login    idle  from"]
    bob.prompt()
    alice.send("toggle ready")  # the 5 line pushed to all: masked for bob, full for alice
    assert alice.lines()[1:] == [f"5 alice - - 1 0 1500.00 0 0 {T} 203.0.113.77 test -", "6"]
    bob.send("rawwho alice")
    assert bob.lines() == [f"5 alice - - 1 0 1500.00 0 0 {T} 203.0.x.x test -", "6"]
    bob.prompt()
    alice.close()
    bob.received()
    bob.send("whois alice")
    assert bob.lines()[1] == "  Last login:  Tue Nov 14 22:13:20 2023 UTC from 203.0.x.x"


@pytest.mark.parametrize("setting, seen", [("full", "203.0.113.77"), ("hidden", "-")])
def test_the_site_decides_what_others_see(setting: str, seen: str) -> None:
    server = FakeServer(settings=make_settings(**{"privacy.show_addresses": setting}))
    logged_in(server, "alice", "203.0.113.77")
    bob = logged_in(server, "bob", "198.51.100.4")
    bob.send("rawwho alice")
    assert bob.lines() == [f"5 alice - - 0 0 1500.00 0 0 {T} {seen} test -", "6"]


def test_a_successful_login_leaves_no_account_record_behind() -> None:
    """Issue 26: the owner's login clears the account's failures; with no other attempt
    on it under way nothing is left to remember, so an online user holds no record,
    and the next attempt on the account starts at once, as it did when the cleared
    record was kept."""
    server = FakeServer()
    server.register("alice")
    throttle = server.services.throttle
    guesser = server.connect("198.51.100.7")
    for _ in range(3):
        guess(guesser)
    server.advance(60)
    assert throttle._accounts["alice"].failures == 3
    owner = server.connect("192.0.2.1")
    guess(owner, password="secret")
    assert server.lobby.find("alice") is not None
    assert "alice" not in throttle._accounts
    again = server.connect("192.0.2.2")
    again.received()
    guess(again, password="secret")
    assert again.lines()[1] == "** Warning: You are already logged in."
