"""The presence feed: who-info, login and logout lines held briefly, never reordered."""

from __future__ import annotations

import sys

from twisted.internet.task import Clock

from fibsd.server.feed import SLICE, Feed
from tests.helpers import FakeServer
from tests.server.test_session import clip_login, telnet_login


class Recorder:
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write_held(self, data: bytes) -> None:
        self.writes.append(data)


def test_held_lines_go_out_together_after_the_delay() -> None:
    clock = Clock()
    feed = Feed(clock, 0.1)
    user = Recorder()
    feed.hold(user, b"7 a\r\n")
    feed.hold(user, b"5 a\r\n6\r\n")
    clock.advance(0.099)
    assert user.writes == []
    clock.advance(0.001)
    assert user.writes == [b"7 a\r\n5 a\r\n6\r\n"]
    assert clock.getDelayedCalls() == []


def test_a_zero_delay_writes_at_once() -> None:
    feed = Feed(Clock(), 0)
    user = Recorder()
    feed.hold(user, b"5 a\r\n")
    assert user.writes == [b"5 a\r\n"]
    assert feed.release(user) == b""


def test_release_hands_over_what_is_held_and_forgets_it() -> None:
    clock = Clock()
    feed = Feed(clock, 0.1)
    user, other = Recorder(), Recorder()
    feed.hold(user, b"7 a\r\n")
    feed.hold(other, b"7 a\r\n")
    assert feed.release(user) == b"7 a\r\n"
    assert feed.release(user) == b""
    clock.advance(0.1)
    assert user.writes == []
    assert other.writes == [b"7 a\r\n"]


class Turns:
    """A clock that runs one reactor turn at a time: the calls due, not those they add."""

    def __init__(self) -> None:
        self.clock = Clock()

    def callLater(self, delay: float, function: object, *args: object) -> object:
        return self.clock.callLater(delay, function, *args)

    def turn(self, seconds: float = 0) -> None:
        due = [c for c in self.clock.getDelayedCalls()
               if c.getTime() <= self.clock.seconds() + seconds]
        self.clock.rightNow += seconds
        for call in due:
            self.clock.calls.remove(call)
            call.func(*call.args, **call.kw)


def test_many_recipients_are_written_a_slice_per_reactor_turn() -> None:
    turns = Turns()
    feed = Feed(turns, 0.1)  # type: ignore[arg-type]
    users = [Recorder() for _ in range(2 * SLICE + 1)]
    for user in users:
        feed.hold(user, b"5 a\r\n")
    turns.turn(0.1)
    assert [len(u.writes) for u in users] == [1] * SLICE + [0] * (SLICE + 1)
    users[0].writes.clear()
    feed.hold(users[0], b"5 b\r\n")  # after its turn in this round: the next round
    feed.hold(users[-1], b"5 b\r\n")  # before its turn: goes with it
    turns.turn()
    assert [len(u.writes) for u in users[1:]] == [1] * (2 * SLICE - 1) + [0]
    turns.turn()
    assert users[-1].writes == [b"5 a\r\n5 b\r\n"]
    assert users[0].writes == []
    turns.turn(0.099)
    assert users[0].writes == []
    turns.turn(0.001)
    assert users[0].writes == [b"5 b\r\n"]
    assert turns.clock.getDelayedCalls() == []


def test_flush_writes_everything_now() -> None:
    clock = Clock()
    feed = Feed(clock, 0.1)
    users = [Recorder() for _ in range(SLICE + 5)]
    for user in users:
        feed.hold(user, b"8 a x\r\n")
    feed.flush()
    assert all(u.writes == [b"8 a x\r\n"] for u in users)
    assert clock.getDelayedCalls() == []


# --- through the server ------------------------------------------------------------


def held_server() -> FakeServer:
    server = FakeServer(hold_feed=True)
    for name in ("alice", "bob", "carol"):
        server.register(name)
    return server


def test_a_login_reaches_clip_users_after_the_delay_in_one_piece() -> None:
    server = held_server()
    alice = clip_login(server, "alice")
    server.advance(1)
    alice.received()
    clip_login(server, "bob")
    assert alice.received() == b""
    server.advance(0.1)
    assert alice.received() == (b"7 bob bob logs in.\r\n"
                                b"5 bob - - 0 0 1500.00 0 0 1700000001 10.0.x.x test -\r\n6\r\n")


def test_a_direct_line_takes_the_held_lines_first() -> None:
    server = held_server()
    alice = clip_login(server, "alice")
    server.advance(1)
    alice.received()
    bob = clip_login(server, "bob")
    bob.send("tell alice hi")
    assert alice.lines() == ["7 bob bob logs in.",
                             "5 bob - - 0 0 1500.00 0 0 1700000001 10.0.x.x test -", "6",
                             "12 bob hi"]
    server.advance(0.1)
    assert alice.received() == b""


def test_telnet_users_are_told_at_once() -> None:
    server = held_server()
    alice = telnet_login(server, "alice")
    clip_login(server, "bob")
    assert alice.lines() == ["", "bob logs in."]


def test_a_user_who_leaves_drops_what_was_held_for_him() -> None:
    server = held_server()
    alice = clip_login(server, "alice")
    server.advance(1)
    bob = clip_login(server, "bob")
    alice.close()
    assert server.lobby.feed.release(alice.protocol.session) == b""
    server.advance(0.1)
    assert bob.lines() == ["8 alice alice drops connection."]


def test_a_match_report_waits_behind_the_who_info_it_follows() -> None:
    server = held_server()
    alice, bob, carol = (clip_login(server, name) for name in ("alice", "bob", "carol"))
    alice.send("toggle ready")
    bob.send("toggle ready")
    alice.send("invite bob 1")
    server.advance(1)
    carol.lines()
    bob.send("join alice")
    assert carol.lines() == []
    server.advance(0.1)
    assert carol.lines() == [
        "5 alice bob - 1 0 1500.00 0 1 1700000000 10.0.x.x test -", "6",
        "5 bob alice - 1 0 1500.00 0 0 1700000000 10.0.x.x test -", "6",
        "", "alice and bob start a 1 point match."]


def test_the_held_table_shrinks_back_once_everything_is_written() -> None:
    """Issue 26: a dict emptied by ``pop`` keeps its grown table; the feed starts a new
    one when a round (or a flush) has written everything."""
    clock = Clock()
    feed = Feed(clock, 0.1)
    users = [Recorder() for _ in range(3 * SLICE)]
    for user in users:
        feed.hold(user, b"7 a\r\n")
    clock.advance(0.1)  # the round's three slices (the fake clock runs them at once)
    assert all(user.writes == [b"7 a\r\n"] for user in users)
    assert sys.getsizeof(feed._held) == sys.getsizeof({})
    for user in users:
        feed.hold(user, b"5 a\r\n")
    feed.flush()
    assert sys.getsizeof(feed._held) == sys.getsizeof({})
    assert all(user.writes == [b"7 a\r\n", b"5 a\r\n"] for user in users)


def test_a_broadcast_held_for_many_makes_no_object_per_recipient() -> None:
    """Issue 26: what a recipient holds is the broadcast's own bytes until a second
    piece comes; a login's fan-out to thousands leaves no per-recipient garbage."""
    clock = Clock()
    feed = Feed(clock, 0.1)
    users = [Recorder() for _ in range(5)]
    login = b"7 erin erin logs in.\r\n5 erin - - 0 0 1500.00 0 0 1 x - -\r\n6\r\n"
    for user in users:
        feed.hold(user, login)
    assert all(feed._held[user] is login for user in users)
    feed.hold(users[0], b"5 ann - - 1 0 1500.00 0 0 1 x - -\r\n6\r\n")
    assert feed.release(users[1]) is login
    clock.advance(0.1)
    assert users[0].writes == [login + b"5 ann - - 1 0 1500.00 0 0 1 x - -\r\n6\r\n"]
    assert users[1].writes == [] and all(user.writes[0] is login for user in users[2:])
