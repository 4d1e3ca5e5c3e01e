"""OnlineUser's cached CLIP 5 line and the lobby's index of watchers."""

from __future__ import annotations

from fibsd.wire import clip
from tests.helpers import FakeServer
from tests.server.test_social import clip_user


def test_the_cached_who_line_follows_every_field_and_the_idle_time() -> None:
    server = FakeServer()
    clip_user(server, "alice")
    clip_user(server, "bob")
    user = server.lobby.find("alice")

    def fresh() -> str:
        now = server.clock.seconds()
        return clip.format_who_info(user.who_info(now))

    def cached() -> str:
        return user.clip_who_line(server.clock.seconds())

    assert cached() == fresh() == (
        f"5 alice - - 0 0 1500.00 0 0 {user.login_time} 10.0.x.x test -")
    server.advance(75)
    assert cached() == fresh()
    assert " 1500.00 0 75 " in cached()
    changes = [
        lambda: user.set_toggles({"ready": True}),
        lambda: setattr(user, "away", "lunch"),
        lambda: setattr(user, "watching", "bob"),
        lambda: setattr(user, "playing", "bob"),
        lambda: setattr(user, "rating", 1612.345),
        lambda: setattr(user, "experience", 3),
        lambda: setattr(user, "address", "alice@example.org"),
        lambda: setattr(user, "playing", None),
        lambda: setattr(user, "away", None),
    ]
    for change in changes:
        before = cached()
        change()
        assert cached() == fresh() != before
    assert cached() == (f"5 alice - bob 1 0 1612.35 3 75 {user.login_time} "
                        "10.0.x.x test alice@example.org")


def test_the_watcher_index_forgets_users_who_leave_or_stop() -> None:
    server = FakeServer()
    clip_user(server, "alice")
    carol_client = clip_user(server, "carol")
    dave_client = clip_user(server, "dave")
    lobby = server.lobby
    carol, dave = lobby.find("carol"), lobby.find("dave")
    carol.watching = dave.watching = "alice"
    assert lobby.watchers_of("alice") == [carol, dave]
    dave.watching = None
    assert lobby.watchers_of("alice") == [carol]
    carol_client.close()
    server.settle()
    assert lobby.watchers_of("alice") == []
    assert lobby._watchers == {}
    dave_client.close()


def test_the_report_index_follows_toggle_and_logout() -> None:
    server = FakeServer()
    alice_client = clip_user(server, "alice")
    clip_user(server, "bob")
    lobby = server.lobby
    alice, bob = lobby.find("alice"), lobby.find("bob")
    assert lobby.reporting() == [alice, bob]  # report is on for new accounts
    alice_client.send("toggle report")
    assert lobby.reporting() == [bob]
    alice_client.send("toggle report")
    assert lobby.reporting() == [bob, alice]
    alice_client.close()
    server.settle()
    assert lobby.reporting() == [bob]
    assert list(lobby._reporting) == [bob]


def test_an_idle_user_holds_no_attribute_dict_nor_empty_queues() -> None:
    """Issue 26: what thousands of idle users each hold.  The user's fields are slots
    (no per-user ``__dict__``), still weakly referable (``wave`` keeps a WeakSet), and
    neither the connection's nor the session's line queue, nor the login throttle's
    queues, keep an empty deque (600 bytes each) while nothing waits."""
    import weakref
    from collections import deque

    server = FakeServer()
    conn = clip_user(server, "alice")
    user = server.lobby.find("alice")
    assert not hasattr(user, "__dict__")
    assert weakref.ref(user)() is user
    assert not isinstance(conn.protocol._pending, deque)
    assert not hasattr(conn.protocol._lines, "__dict__")  # the line splitter's slots
    assert not hasattr(conn.protocol._telnet, "__dict__")
    assert not isinstance(user.session._queue, deque)
    throttle = server.services.throttle
    assert throttle._addresses
    for ledger in (throttle._addresses, throttle._accounts):
        assert not any(isinstance(r.waiting, deque) for r in ledger.values())


def test_idle_users_share_their_settings_and_hold_no_per_user_leftovers() -> None:
    """Issue 26, round 3: two idle users with the same settings hold one toggles and one
    variables mapping, no dice counts (made at the first roll), the one empty gag and
    blind list, and not the account's stored record (settings text, password hash)."""
    server = FakeServer()
    clip_user(server, "alice")
    clip_user(server, "bob")
    alice, bob = server.lobby.find("alice"), server.lobby.find("bob")
    assert alice.toggles is bob.toggles and alice.variables is bob.variables
    assert alice._rolls_seen is None and bob._rolls_seen is None
    assert alice.invitations_seen is None  # made at the first invitation
    assert alice.client == "test" and alice.client is bob.client
    assert alice.gagged is bob.gagged and alice.blinded is bob.blinded
    assert not hasattr(alice, "record")
    assert alice.created == server.store.get_user("alice").created
