"""The session-token part of the ``Store`` contract (fibsd.store.tokens; protocol/web.md,
"Reconnecting"), run against every backend like test_contract.py."""

from __future__ import annotations

from fibsd.store import Store
from tests.store.test_contract import any_store, with_users  # noqa: F401 (a fixture)

GUARD = {"alice": "hash-of-alice", "bob": "hash-of-bob", "nobody": "x"}  # with_users's


def test_a_token_names_its_account_until_it_expires(any_store: Store) -> None:
    with_users(any_store, "alice", "bob")
    any_store.add_token("alice", "h1", now=100, expires=200, keep=5, guard=GUARD["alice"])
    assert any_store.token_user("h1", 199) == "alice"
    assert any_store.token_user("h1", 200) is None
    assert any_store.token_user("h2", 150) is None
    any_store.add_token("alice", "h1", now=300, expires=500, keep=5, guard=GUARD["alice"])  # kept on after a drop
    assert any_store.token_user("h1", 400) == "alice"
    assert any_store.count_tokens() == 1


def test_tokens_are_revoked_one_or_all_and_go_with_their_account(any_store: Store) -> None:
    with_users(any_store, "alice", "bob")
    for number in (1, 2):
        any_store.add_token("alice", f"a{number}", now=100 + number, expires=1000, keep=5, guard=GUARD["alice"])
    any_store.add_token("bob", "b1", now=100, expires=1000, keep=5, guard=GUARD["bob"])
    any_store.revoke_token("a1")
    assert [any_store.token_user(h, 500) for h in ("a1", "a2")] == [None, "alice"]
    any_store.revoke_tokens("alice")
    assert any_store.token_user("a2", 500) is None
    assert any_store.token_user("b1", 500) == "bob"
    any_store.delete_user("bob")
    assert any_store.count_tokens() == 0


def test_an_account_keeps_its_newest_tokens_and_expired_ones_are_purged(
        any_store: Store) -> None:
    with_users(any_store, "alice", "bob")
    any_store.add_token("bob", "old", now=10, expires=20, keep=2, guard=GUARD["bob"])
    for number in range(4):
        any_store.add_token("alice", f"a{number}", now=100 + number, expires=1000, keep=2, guard=GUARD["alice"])
    assert [any_store.token_user(f"a{n}", 500) for n in range(4)] == [None, None, "alice",
                                                                       "alice"]
    assert any_store.count_tokens() == 2  # bob's expired one was purged too
    assert not any_store.add_token("nobody", "x", now=100, expires=1000, keep=2,
                                   guard=GUARD["nobody"])


def test_a_token_is_not_stored_again_once_the_password_changed(any_store: Store) -> None:
    with_users(any_store, "alice")
    assert any_store.add_token("alice", "h1", now=100, expires=200, keep=5, guard="hash-of-alice")
    any_store.set_password_hash("alice", "a-new-hash")
    any_store.revoke_tokens("alice")
    assert not any_store.add_token("alice", "h1", now=150, expires=400, keep=5,
                                   guard="hash-of-alice")  # its session's drop
    assert any_store.token_user("h1", 160) is None and any_store.count_tokens() == 0
