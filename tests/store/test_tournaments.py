"""The tournament tables on every store: entries, rounds, results in the transaction of
the finished match, forfeits, the lease."""

from __future__ import annotations

import pytest

from fibsd.store import FinishedMatch, SavedMatch
from fibsd.store.tournaments import (
    ALREADY,
    ELSEWHERE,
    FULL,
    JOINED,
    LEFT,
    NO_TOURNAMENT,
    NOT_ENTERED,
    STARTED,
    PairingRecord,
)
from tests.store.test_contract import any_store  # noqa: F401 - the fixture


def make(store, **kw):
    spec = dict(name="Cup", fmt="knockout", lengths=[1, 3], rounds=None, max_players=3,
                start_at=None, bots=True, clock="", created=100)
    spec.update(kw)
    return store.create_tournament(**spec)


def test_entries_and_their_refusals(any_store):
    store = any_store
    for name in ("ann", "bob", "cid", "dan"):
        store.create_user(name, "h", 1)
    cup = make(store)
    other = make(store, name="Plate")
    assert store.join_tournament(cup, "ann", 1500.0, 1) == JOINED
    assert store.join_tournament(cup, "ann", 1500.0, 2) == ALREADY
    assert store.join_tournament(other, "ann", 1500.0, 2) == ELSEWHERE
    assert store.join_tournament(999, "ann", 1500.0, 2) == NO_TOURNAMENT
    assert store.join_tournament(cup, "bob", 1600.0, 3) == JOINED
    assert store.join_tournament(cup, "cid", 1400.0, 4) == JOINED
    assert store.join_tournament(cup, "dan", 1400.0, 5) == FULL
    assert store.leave_tournament(cup, "dan") == NOT_ENTERED
    assert store.leave_tournament(cup, "cid") == LEFT
    assert store.entered_tournament("cid") is None
    assert store.entered_tournament("ann") == cup
    assert store.tournament_entries(cup) == [("ann", 1500.0), ("bob", 1600.0)]
    assert store.start_tournament(cup, [("bob", 1600.0), ("ann", 1500.0)],
                                  [("bob", "ann", None)], now=10, deadline=70)
    assert not store.start_tournament(cup, [], [], now=11, deadline=71)
    assert store.join_tournament(cup, "dan", 1400.0, 12) == STARTED
    assert store.leave_tournament(cup, "ann") == STARTED
    assert store.tournament(cup).state == "running"
    assert store.tournament_entries(cup) == [("bob", 1600.0), ("ann", 1500.0)]
    assert [t.id for t in store.tournaments(("running",))] == [cup]


def test_the_open_limit_counts_in_the_transaction(any_store):
    assert make(any_store, limit=1) is not None
    assert make(any_store, limit=1) is None
    assert make(any_store, limit=2) is not None


def test_a_result_moves_its_pairing_in_the_same_transaction(any_store):
    store = any_store
    for name in ("ann", "bob"):
        store.create_user(name, "h", 1)
    cup = make(store)
    store.join_tournament(cup, "ann", 1500.0, 1)
    store.join_tournament(cup, "bob", 1500.0, 1)
    store.start_tournament(cup, [("ann", 1500.0), ("bob", 1500.0)], [("ann", "bob", None)],
                           now=10, deadline=70)
    store.save_match(SavedMatch("ann", "bob", 11, "{}"))
    result = FinishedMatch("bob", "ann", 1, 1, 0, 20, "{}", 2.0, -2.0, tournament=cup,
                           tournament_round=1)
    # an unknown account in the ratings rolls back the result and the pairing together
    with pytest.raises(KeyError):
        store.record_finished_match(result, new_ratings={"nobody": (1.0, 1)})
    assert store.tournament_pairings(cup)[0].winner is None
    store.record_finished_match(result, new_ratings={"bob": (1502.0, 1), "ann": (1498.0, 1)})
    (pairing,) = store.tournament_pairings(cup)
    assert pairing == PairingRecord(1, 0, "ann", "bob", "bob", False, pairing.match_id, 70)
    stored = store.finished_match(pairing.match_id)
    assert (stored.tournament, stored.tournament_round) == (cup, 1)
    assert store.tournament_of_match(pairing.match_id) == (cup, 1)
    # the same pair's later casual match does not touch the tournament
    store.record_finished_match(FinishedMatch("ann", "bob", 1, 1, 0, 30, "{}"))
    assert store.tournament_pairings(cup)[0].winner == "bob"
    assert store.finish_tournament(cup, "bob", 40)
    assert not store.finish_tournament(cup, "bob", 41)
    assert store.tournament(cup).winner == "bob"


def test_forfeit_and_rounds_in_order(any_store):
    store = any_store
    for name in ("ann", "bob", "cid", "dan"):
        store.create_user(name, "h", 1)
    cup = make(store, max_players=4)
    for name in ("ann", "bob", "cid", "dan"):
        store.join_tournament(cup, name, 1500.0, 1)
    store.start_tournament(cup, [(n, 1500.0) for n in ("ann", "bob", "cid", "dan")],
                           [("ann", "dan", None), ("bob", "cid", None)], now=10, deadline=70)
    store.save_match(SavedMatch("ann", "dan", 11, "{}"))
    assert not store.add_round(cup, 2, [("ann", "bob", None)], 80, 140)  # round 1 open
    assert store.record_forfeit(cup, 1, 0, "ann")
    assert not store.record_forfeit(cup, 1, 0, "dan")  # decided already
    assert not store.record_forfeit(cup, 1, 1, "ann")  # not a player of it
    assert store.load_match("ann", "dan") is None
    assert store.record_forfeit(cup, 1, 1, "cid")
    assert not store.add_round(cup, 3, [("ann", "cid", None)], 80, 140)
    assert store.add_round(cup, 2, [("ann", "cid", None)], 80, 140)
    assert not store.add_round(cup, 2, [("ann", "cid", None)], 80, 140)
    assert [(p.round, p.winner, p.forfeit) for p in store.tournament_pairings(cup)] == [
        (1, "ann", True), (1, "cid", True), (2, None, False)]


def test_the_lease_passes_only_once_it_runs_out(any_store):
    cup = make(any_store)
    assert any_store.take_lease(cup, "node-a", now=0, until=30)
    assert not any_store.take_lease(cup, "node-b", now=10, until=40)
    assert any_store.take_lease(cup, "node-a", now=20, until=50)
    assert any_store.take_lease(cup, "node-b", now=51, until=80)
    assert not any_store.take_lease(cup, "node-a", now=52, until=82)


def test_a_renamed_player_keeps_his_place(any_store):
    store = any_store
    for name in ("ann", "bob"):
        store.create_user(name, "h", 1)
    cup = make(store, max_players=2)
    for name in ("ann", "bob"):
        store.join_tournament(cup, name, 1500.0, 1)
    store.start_tournament(cup, [("ann", 1500.0), ("bob", 1500.0)], [("ann", "bob", None)],
                           now=10, deadline=70)
    store.rename_user("bob", "bert")
    assert store.tournament_entries(cup) == [("ann", 1500.0), ("bert", 1500.0)]
    assert [(p.first, p.second) for p in store.tournament_pairings(cup)] == [("ann", "bert")]
    assert store.entered_tournament("bert") == cup
