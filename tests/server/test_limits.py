"""Limits on what one user can make the server spend (issue 9's drills, small and
bounded): command rates, unsent output, typed-ahead input, stored messages, match
lengths, gags on invitations, help topics and what an error puts in the log."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from twisted.internet.defer import Deferred
from twisted.logger import globalLogPublisher

from fibsd.server import commands
from tests.helpers import FakeServer, ImmediateDatabase, make_settings
from tests.server.test_match import Table, random_rolls
from tests.server.test_social import (  # noqa: F401  (the fixture applies to this module)
    _quiet,
    clip_user,
    every_line_is_catalogued,
    reply,
    telnet_user,
)


def limited(**limits: int) -> FakeServer:
    return FakeServer(settings=make_settings(**{f"limits.{k}": v for k, v in limits.items()}))


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    """Every log event emitted during the test."""
    seen: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(seen.append)
    yield seen
    globalLogPublisher.removeObserver(seen.append)


def limit_events(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(e["limit"], e.get("user")) for e in events if e.get("event") == "limit"]


# --- rates ----------------------------------------------------------------------------

def test_tells_beyond_the_bucket_are_refused_and_it_refills(events):
    """The drill sent 400,000 tells; here 3 a minute: 3 at once, then one per 20 s."""
    server = limited(tells_per_minute=3)
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    for n in range(5):
        alice.send(f"tell bob hello {n}")
    assert alice.lines() == [
        "16 bob hello 0", "16 bob hello 1", "16 bob hello 2",
        "** Please don't tell so much. Wait a little before you tell again.",
        "** Please don't tell so much. Wait a little before you tell again."]
    assert bob.lines() == ["12 alice hello 0", "12 alice hello 1", "12 alice hello 2"]
    assert limit_events(events) == [("limits.tells_per_minute", "alice")]  # once per run
    server.advance(19)
    alice.send("tell bob later")
    assert alice.lines() == [
        "** Please don't tell so much. Wait a little before you tell again."]
    server.advance(1)
    alice.send("tellx bob later")
    assert alice.lines() == ["16 bob later"]
    assert bob.lines() == ["12 alice later"]


def test_logging_in_again_does_not_refill_the_bucket():
    server = limited(tells_per_minute=1)
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    alice.send("tell bob one")
    alice.close()
    alice = clip_user(server, "alice")
    alice.send("tell bob two")
    assert alice.lines() == [
        "** Please don't tell so much. Wait a little before you tell again."]


@pytest.mark.parametrize(("key", "line", "refusal"), [
    ("messages_per_minute", "message bob see you",
     "** Please wait a little before you use 'message' again."),
    ("aways_per_minute", "away lunch", "** Please wait a little before you use 'away' again."),
    ("toggles_per_minute", "toggle bell",
     "** Please wait a little before you use 'toggle' again."),
    ("sets_per_minute", "set pagelength 20",
     "** Please wait a little before you use 'set' again."),
    ("invites_per_minute", "invite bob 1", "** Please wait for your last invitation to be accepted."),
])
def test_each_limited_command_refuses_the_use_past_its_bucket(key, line, refusal):
    server = limited(**{key: 1})
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    for name in ("alice", "bob"):
        server.lobby.find(name).set_toggles({"ready": True})
    alice.send(line)
    first = alice.lines()
    assert first and refusal not in first
    alice.send(line)
    assert alice.lines() == [refusal]


def test_listings_are_not_limited():
    server = limited(toggles_per_minute=1, sets_per_minute=1, aways_per_minute=1,
                     messages_per_minute=1)
    alice = clip_user(server, "alice")
    for _ in range(3):
        for line in ("toggle", "set", "away", "message", "set pagelength"):
            alice.send(line)
    assert not any(line.startswith("** Please") for line in alice.lines())


def test_say_kibitz_and_whisper_have_their_own_buckets():
    server = limited(says_per_minute=1, kibitzes_per_minute=1, whispers_per_minute=1)
    for name in ("alice", "bob", "carol"):
        server.register(name)
    table = Table([(3, 5)] + random_rolls(7), server=server)
    table.start("1")
    table.send("carol", "watch alice")
    table.lines()
    table.send("alice", "say hi")
    table.send("alice", "say again")
    assert table.lines("alice") == [
        "16 bob hi", "** Please don't say so much. Wait a little before you say again."]
    table.send("alice", "kibitz gl")
    table.send("alice", "kibitz again")
    assert table.lines("alice") == [
        "19 gl", "** 2 users heard you.",
        "** Please don't kibitz so much. Wait a little before you kibitz again."]
    table.send("carol", "whisper nice")
    table.send("carol", "whisper again")
    assert table.lines("carol") == [
        "18 nice", "** 0 users heard you.",
        "** Please don't whisper so much. Wait a little before you whisper again."]


# --- unsent output --------------------------------------------------------------------

def test_a_target_that_does_not_read_gets_nothing_more_and_is_cut_at_the_cap(events):
    """bob never reads: past half of max_output alice's tells are refused; bob's own
    commands then fill it and the connection is closed, without holding more."""
    server = limited(max_output=65536, tells_per_minute=1000)
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    carol = clip_user(server, "carol")
    text = "x" * 900
    delivered = 0
    while True:
        alice.send(f"tell bob {text}")
        got = alice.lines()
        if got == ["** bob is not reading; your message was not delivered."]:
            break
        assert got == [f"16 bob {text}"]
        delivered += 1
    # Each tell is "12 alice " + 900 letters + CR LF = 911 bytes; refused past 32 KiB.
    assert delivered == 32768 // 911 + 1
    assert len(bob.transport.value()) == delivered * 911
    carol.send("message bob hi")
    assert carol.lines() == ["** bob is not reading; your message was not delivered."]
    _quiet_but(server, bob)
    while not bob.transport.disconnecting:
        bob.protocol.dataReceived(b"help\r\n")
        assert len(bob.transport.value()) <= 65536
    server.settle()
    assert bob.closed
    assert alice.lines() == ["8 bob bob drops connection."]
    assert ("limits.max_output", "bob") in limit_events(events)


def _quiet_but(server: FakeServer, keep: Any) -> None:
    for client in server.clients:
        if client is not keep:
            client.received()


def test_a_kibitz_leaves_out_watchers_who_do_not_read():
    server = limited(max_output=65536, kibitzes_per_minute=1000)
    for name in ("alice", "bob", "carol"):
        server.register(name)
    table = Table([(3, 5)] + random_rolls(8), server=server)
    table.start("1")
    table.send("carol", "watch alice")
    table.lines()
    carol = table.clients.pop("carol")  # stops reading
    text = "y" * 900
    heard = []
    for _ in range(40):
        table.send("alice", f"kibitz {text}")
        heard.append(table.lines("alice")[-1])
    assert heard[0] == "** 2 users heard you."
    assert heard[-1] == "** 1 user heard you."
    assert len(carol.transport.value()) < 65536 // 2 + 1000


# --- typed-ahead input ------------------------------------------------------------------

class HeldDatabase(ImmediateDatabase):
    """Answers at once, except ``take_messages`` while ``held``: that waits for release()."""

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        self.waiting: list[Deferred[Any]] = []
        self.held = False

    def __getattr__(self, method: str) -> Any:
        call = super().__getattr__(method)
        if method != "take_messages":
            return call

        def held(*args: Any) -> Deferred[Any]:
            if not self.held:
                return call(*args)
            d: Deferred[Any] = Deferred()
            self.waiting.append(d)
            return d.addCallback(lambda _: self.store.take_messages(*args))

        return held

    def release(self) -> None:
        self.held = False
        for d in self.waiting:
            d.callback(None)


def test_300_lines_typed_ahead_while_the_database_works_are_all_answered():
    server = FakeServer()
    server.db = HeldDatabase(server.store)
    server.services.db = server.db
    alice = telnet_user(server, "alice")
    server.db.held = True
    alice.send_bytes(b"message\r\n" + b"".join(b"tell nobody %d\r\n" % n for n in range(300)))
    assert alice.transport.producerState == "paused"  # no more reading meanwhile
    assert alice.lines() == []
    server.db.release()
    lines = alice.lines()
    assert lines[0] == "** There are no messages for you."
    assert [line.removeprefix("> ") for line in lines[1:]] == [
        "** There is no one called nobody." for _ in range(300)]
    assert alice.prompt() == "> "
    assert alice.transport.producerState == "producing"


# --- stored messages ----------------------------------------------------------------------

def test_message_to_a_full_mailbox_is_refused():
    server = limited(max_messages=2)
    server.register("bob")
    alice = clip_user(server, "alice")
    for n in range(3):
        alice.send(f"message bob note {n}")
    assert alice.lines() == ["11 bob", "11 bob",
                             "** Too many messages are waiting for bob. Try again later."]
    assert server.store.count_messages("bob") == 2


# --- match length ------------------------------------------------------------------------

@pytest.mark.parametrize("length", ["100", "5000000", "0", "00"])
def test_match_lengths_outside_the_maximum_are_refused(length):
    server = FakeServer(settings=make_settings(rated_experience=0))
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    for user in (alice, bob):
        user.send("toggle ready")
    _quiet(server)
    alice.send(f"invite bob {length}")
    assert alice.lines() == [
        "** The second argument to 'invite' has to be a number from 1 to 99 "
        "or the word 'unlimited'"]
    assert bob.lines() == []
    alice.send("invite bob 99")
    assert alice.lines() == ["** You invited bob to a 99 point match."]
    alice.send("invite bob unlimited")
    assert alice.lines() == ["** You invited bob to an unlimited match."]


def test_the_maximum_is_configurable():
    server = FakeServer(settings=make_settings(**{"rated_experience": 0,
                                                  "limits.max_match_length": 5}))
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    for user in (alice, bob):
        user.send("toggle ready")
    _quiet(server)
    alice.send("invite bob 6")
    assert alice.lines() == [
        "** The second argument to 'invite' has to be a number from 1 to 5 "
        "or the word 'unlimited'"]


def test_a_match_between_extreme_ratings_finishes_and_rates():
    """The drill's 41,255.72 against 1500 raised OverflowError at the match end."""
    server = FakeServer()
    for name in ("alice", "bob", "carol"):
        server.register(name)
    server.store.set_rating("alice", 1e300, 2**62)
    server.store.set_rating("bob", 1500.0, 0)
    table = Table([(3, 5)] + random_rolls(9), server=server)
    table.start("1")
    table.send("alice", "resign n")
    table.send("bob", "accept")
    table.lines()
    assert "alice" not in server.lobby.matches
    bob = server.store.get_user("bob")
    alice = server.store.get_user("alice")
    assert (bob.rating, bob.experience) == (1500.0 + 20.0, 1)  # the underdog won: P = 1
    assert alice.rating == 1e300 and alice.experience == 2**62 + 1


# --- gag and invitations -------------------------------------------------------------------

def test_a_gagged_user_cannot_invite_and_learns_only_what_tell_would_say():
    server = FakeServer()
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    for user in (alice, bob):
        user.send("toggle ready")
    bob.send("gag alice")
    _quiet(server)
    for _ in range(100):
        alice.send("invite bob 1")
    assert alice.lines() == ["** bob won't listen to you."] * 100
    assert bob.received() == b""
    alice.send("tell bob hi")
    assert alice.lines() == ["** bob won't listen to you."]
    bob.send("join alice")
    assert bob.lines() == ["** alice didn't invite you."]


# --- help and the log ----------------------------------------------------------------------

def test_help_with_any_topic_answers_and_logs_nothing(events):
    server = FakeServer()
    alice = telnet_user(server, "alice")
    for topic in ("a" * 252, "b" * 1000, "../../etc/passwd", "x" * 64, "tell"):
        alice.send(f"help {topic}")
        lines = reply(alice)
        if topic == "tell":
            assert lines[0] != "** No help available on 'tell'."
        else:
            assert lines == [f"** No help available on '{topic}'."]
    assert [e for e in events if e.get("log_failure") is not None] == []


def test_an_unexpected_error_logs_a_bounded_text(events, monkeypatch):
    """An error whose message quotes a 1000-character line logs at most 200 of them."""

    def boom(session: Any, rest: str) -> None:
        raise ValueError(f"cannot use {rest!r}")

    monkeypatch.setitem(commands.COMMANDS, "boom", commands.Command("boom", boom))
    server = FakeServer()
    alice = telnet_user(server, "alice")
    alice.send("boom " + "z" * 1000)
    assert reply(alice) == ["** Sorry, the server could not complete that command."]
    (failure,) = [e["log_failure"] for e in events if e.get("log_failure") is not None]
    text = failure.getTraceback()
    assert "z" * 200 not in text and "z" * 150 in text
    assert "ValueError" in text
