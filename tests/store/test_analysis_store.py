"""The analysis queue and results (migration 6) behave alike on every store."""

from __future__ import annotations

import pytest

from fibsd.analysis.model import Mark, MatchAnalysis, PlayerSummary
from fibsd.store import FinishedMatch, Store
from tests.store.test_contract import any_store, with_users  # noqa: F401  (fixture)

LEASE = 60.0


def finish(store: Store, finished: int, rated: bool = True, winner: str = "alice",
           loser: str = "bob") -> int:
    ratings = {winner: (1510.0, 1), loser: (1490.0, 1)} if rated else None
    store.record_finished_match(
        FinishedMatch(winner, loser, 1, 1, 0, finished, f"record {finished}"), ratings)
    found = [m.id for m in store.finished_matches(winner)
                                        if m.finished == finished]
    assert found[0] is not None
    return found[0]


def summary(name: str, pr: float | None) -> PlayerSummary:
    return PlayerSummary(name, pr, 4.0, 1.0, 0.5, 0.1, 20, 18, 2, 1, 1, 0)


def result(match_id: int, pr_alice: float, pr_bob: float) -> MatchAnalysis:
    mark = Mark(1, 3, "alice", "checker", 0.125, "bad", "13/7 8/7", "24/18 13/7",
                0.25, 0.125)
    return MatchAnalysis(match_id, "done", 0, None,
                         (summary("alice", pr_alice), summary("bob", pr_bob)),
                         (mark,), 5000.0)


def test_a_match_is_queued_with_its_result_only_when_asked(any_store: Store) -> None:
    store = with_users(any_store, "alice", "bob")
    first = finish(store, 100)
    assert store.analysis(first) is None  # the default queues nothing
    store.queue_analyses("rated", 2)
    unrated = finish(store, 101, rated=False)
    rated = finish(store, 102)
    assert store.analysis(unrated) is None
    queued = store.analysis(rated)
    assert queued == MatchAnalysis(rated, "queued", 2, None, (), (), None)
    store.queue_analyses("all", 0)
    assert store.analysis(finish(store, 103, rated=False)).state == "queued"  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        store.queue_analyses("some", 0)


def test_a_job_is_claimed_once_completed_by_its_holder_only(any_store: Store) -> None:
    store = with_users(any_store, "alice", "bob")
    store.queue_analyses("all", 0)
    match_id = finish(store, 100)
    job = store.claim_analysis(1000.0, LEASE, 3)
    assert job is not None and (job.match_id, job.plies, job.record, job.attempt) == (
        match_id, 0, "record 100", 1)
    assert store.claim_analysis(1001.0, LEASE, 3) is None  # held
    assert store.analysis(match_id).state == "running"  # type: ignore[union-attr]
    # the lease runs out: another worker takes it; the first one's result is refused
    again = store.claim_analysis(1000.0 + LEASE + 1, LEASE, 3)
    assert again is not None and again.attempt == 2 and again.token != job.token
    assert not store.complete_analysis(result(match_id, 5.0, 7.0), job.token)
    assert store.complete_analysis(result(match_id, 5.0, 7.0), again.token)
    assert store.analysis(match_id) == result(match_id, 5.0, 7.0)
    assert not store.complete_analysis(result(match_id, 1.0, 1.0), again.token)
    assert store.analyses_done_after(0) == [(store.analysis_done_mark(), match_id)]


def test_failures_requeue_until_the_attempts_are_spent(any_store: Store) -> None:
    store = with_users(any_store, "alice", "bob")
    store.queue_analyses("all", 1)
    match_id = finish(store, 100)
    job = store.claim_analysis(1000.0, LEASE, 2)
    assert job is not None
    assert store.fail_analysis(match_id, job.token, "gnubg crashed", 2) == "queued"
    assert store.fail_analysis(match_id, job.token, "twice", 2) is None  # not his now
    job = store.claim_analysis(1001.0, LEASE, 2)
    assert job is not None and job.attempt == 2
    assert store.fail_analysis(match_id, job.token, "gnubg crashed", 2) == "failed"
    assert store.claim_analysis(1002.0, LEASE, 2) is None
    failed = store.analysis(match_id)
    assert failed is not None and (failed.state, failed.error) == ("failed", "gnubg crashed")
    # a lost worker: its lease runs out on the last attempt
    other = finish(store, 101)
    store.claim_analysis(2000.0, LEASE, 1)
    assert store.claim_analysis(2000.0 + LEASE + 1, LEASE, 1) is None
    lost = store.analysis(other)
    assert lost is not None and lost.state == "failed"
    assert lost.error == "no result after 1 attempts (the worker was lost or timed out)"
    # given back untried: the attempt does not count
    third = finish(store, 102)
    job = store.claim_analysis(3000.0, LEASE, 1)
    assert job is not None and job.match_id == third
    store.release_analysis(third, job.token)
    job = store.claim_analysis(3001.0, LEASE, 1)
    assert job is not None and job.attempt == 1
    assert store.fail_analysis(third, job.token, "unreadable", 5, final=True) == "failed"
    assert store.analysis_counts() == {"failed": 3}


def test_profile_ladder_and_requests(any_store: Store) -> None:
    store = with_users(any_store, "alice", "bob", "carol")
    ids = [finish(store, 100 + n) for n in range(3)]
    for n, match_id in enumerate(ids):
        store.save_analysis(result(match_id, 4.0 + n, 10.0))
    carol = finish(store, 200, winner="carol", loser="bob")
    store.save_analysis(MatchAnalysis(carol, "done", 2, None,
                                      (summary("carol", 1.0), summary("bob", None)),
                                      (), 6000.0))
    assert [(m, f, s.pr) for m, f, s in store.analyses_of("alice", 2)] == [
        (ids[2], 102.0, 6.0), (ids[1], 101.0, 5.0)]
    assert store.pr_ladder(2, 10) == [("alice", 5.0, 3), ("bob", 10.0, 3)]
    assert store.pr_ladder(1, 1) == [("carol", 1.0, 1)]
    assert store.request_analysis(ids[0], 0, "alice", now=7000.0) == "deep"
    assert store.request_analysis(ids[0], 2, "alice", now=7000.0) == "queued"
    assert store.request_analysis(ids[0], 2, "alice", now=7001.0) == "pending"
    assert store.request_analysis(99999, 2, "alice") == "unknown"
    assert store.analysis(ids[0]).state == "queued"  # type: ignore[union-attr]
    assert store.analysis_requests("alice", 6999.0) == 1
    assert store.analysis_requests("alice", 7000.0) == 0


def test_a_rename_takes_the_summaries_along(any_store: Store) -> None:
    store = with_users(any_store, "alice", "bob")
    match_id = finish(store, 100)
    store.save_analysis(result(match_id, 4.0, 10.0))
    store.rename_user("alice", "alicia")
    assert [s.name for _, _, s in store.analyses_of("alicia", 5)] == ["alicia"]
    assert store.analyses_of("alice", 5) == []
    renamed = store.analysis(match_id)
    assert renamed is not None and renamed.players[0].name == "alicia"
    assert [m.player for m in renamed.marks] == ["alicia"]
