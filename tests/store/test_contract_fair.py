"""The fair-play part of the ``Store`` contract (departures, abandonments, notices,
reliability; protocol/fair-dice.md), run against every backend like test_contract.py."""

from __future__ import annotations

import pytest

from fibsd.store import Departure, FinishedMatch, SavedMatch, Store, UnknownUser
from tests.store.test_contract import any_store, with_users  # noqa: F401 (a fixture)


def departure(a: str, b: str, dropper: str, left: int, **flags: bool) -> Departure:
    return Departure(a, b, dropper, left, **flags)


def test_departures_are_kept_by_pair_and_come_due(any_store: Store) -> None:
    with_users(any_store, "alice", "bob", "carol")
    any_store.record_departure(departure("bob", "alice", "bob", 100))
    any_store.record_departure(departure("alice", "carol", "carol", 50))
    any_store.record_departure(
        departure("alice", "bob", "alice", 300, counts_now=True))  # replaces bob's
    assert any_store.due_departures(60) == [
        departure("alice", "carol", "carol", 50),
        departure("alice", "bob", "alice", 300, counts_now=True)]
    any_store.offer_resume("alice")
    assert any_store.due_departures(1000) == [
        departure("alice", "carol", "carol", 50, offered=True),
        departure("alice", "bob", "alice", 300, counts_now=True)]
    any_store.clear_departure("carol", "alice")
    assert [d.dropper for d in any_store.due_departures(1000)] == ["alice"]
    with pytest.raises(UnknownUser):
        any_store.record_departure(departure("alice", "ghost", "alice", 1))


def test_counting_an_abandonment_is_one_transaction(any_store: Store) -> None:
    with_users(any_store, "alice", "bob")
    gone = departure("alice", "bob", "bob", 100)
    any_store.record_departure(gone)
    any_store.save_match(SavedMatch("alice", "bob", 90, "left"))
    result = FinishedMatch("alice", "bob", 5, 5, 1, 200, "adjudicated", 2.5, -2.5)
    with pytest.raises(UnknownUser):  # a notice for nobody: nothing is written
        any_store.count_abandonment(gone, result, {"alice": (1502.5, 5)}, {"ghost": "hello"})
    assert any_store.reliability("bob") == (0, 0, 0)
    assert len(any_store.due_departures(1000)) == 1
    any_store.count_abandonment(gone, result, {"alice": (1502.5, 5)},
                            {"bob": "you abandoned", "alice": "bob abandoned"})
    assert any_store.reliability("bob") == (1, 1, 1)
    assert any_store.reliability("alice") == (0, 0, 1)
    assert any_store.reliability("ghost") == (0, 0, 0)
    assert any_store.due_departures(1000) == []
    assert any_store.load_match("alice", "bob") is None
    assert any_store.finished_matches("bob") == [result]
    assert any_store.ratings()[0] == ("alice", 1502.5, 5)
    assert any_store.take_notices("bob") == ["you abandoned"]
    assert any_store.take_notices("bob") == []
    assert any_store.take_notices("ghost") == []
    any_store.count_abandonment(departure("alice", "bob", "alice", 5))
    assert any_store.reliability("alice") == (1, 0, 1)
    assert any_store.take_notices("alice") == ["bob abandoned"]


def test_renaming_a_player_carries_his_departures(any_store: Store) -> None:
    """A departure refers to both names: a rename (``admin rename``) moves it along,
    re-sorting the pair, instead of failing on the reference."""
    with_users(any_store, "alice", "bob", "carol")
    any_store.record_departure(departure("alice", "bob", "bob", 100))
    any_store.record_departure(departure("bob", "carol", "carol", 200, offered=True))
    any_store.rename_user("bob", "zed")
    assert any_store.due_departures(1000) == [
        departure("alice", "zed", "zed", 100),
        departure("carol", "zed", "carol", 200, offered=True)]
