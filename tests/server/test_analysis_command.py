"""``analysis [number] [deeper]`` and the ready notice over in-memory transports, for
CLIP and telnet users, against a store whose analyses were planted with its own
``save_analysis``: exact lines, every state, every refusal, the per-user limit of
deeper requests, ``set analysis off``.  Every line sent must be in the catalogue."""

from __future__ import annotations

import pytest

from fibsd.analysis.model import MatchAnalysis
from fibsd.server.analysis_notice import tell_ready
from fibsd.store import FinishedMatch
from tests.helpers import FakeServer, make_settings
from tests.server.test_social import (  # noqa: F401 (the fixture checks the catalogue)
    clip_user,
    every_line_is_catalogued,
    event,
    reply,
    telnet_user,
)
from tests.web.analysis_records import planted
from tests.web.records import finished_match

FINISHED = 1_700_000_000  # 2023-11-14 22:13:20 UTC


def stored(server: FakeServer, seed: int, players: tuple[str, str], finished: int) -> FinishedMatch:
    server.store.record_finished_match(finished_match(seed, 3, players, finished, cube=0.3))
    (match,) = [m for m in server.store.finished_matches(players[0]) if m.finished == finished]
    return match


@pytest.fixture
def server() -> FakeServer:
    server = FakeServer(settings=make_settings(**{"analysis.deeper_per_day": 2}))
    for name in ("alice", "bob", "carol"):
        server.register(name)
    return server


def test_analysis_prints_the_summaries_and_the_worst_decisions(server: FakeServer) -> None:
    match = stored(server, 7, ("alice", "bob"), FINISHED)
    result = planted(match.id or 0, match.record, plies=2)
    server.store.save_analysis(result)
    carol = clip_user(server, "carol")
    carol.send(f"analysis {match.id}")
    worst = sorted((m for m in result.marks if m.error > 0), key=lambda m: -m.error)
    assert [m.error for m in worst] == [0.25, 0.1, 0.05, 0.03]
    first, second, cube, doubtful = worst
    assert carol.lines() == [
        f"Analysis of match #{match.id}, alice - bob, 3 point match, 2-ply:",
        "  alice: PR 6.50, checker error rate 4.50, cube error rate 1.50, luck rate +0.25,"
        " 20 decisions (1 doubtful, 1 bad, 1 very bad)",
        "  bob: PR 12.25, checker error rate 5.50, cube error rate 1.50, luck rate -0.25,"
        " 21 decisions (0 doubtful, 1 bad, 0 very bad)",
        "Worst decisions (4):",
        f"  game 1, alice, checker play: {first.played}; best {first.best}; lost 0.250 (very bad)",
        f"  game 1, bob, checker play: {second.played}; best {second.best}; lost 0.100 (bad)",
        "  game 1, alice, cube action: double; best no double; lost 0.050 (bad)",
        f"  game 2, alice, checker play: {doubtful.played}; best {doubtful.best};"
        " lost 0.030 (doubtful)",
    ]
    alice = telnet_user(server, "alice")
    alice.send("analysis")  # her last match
    assert reply(alice)[0] == f"Analysis of match #{match.id}, alice - bob, 3 point match, 2-ply:"
    alice.send(f"an #{match.id}")
    assert len(reply(alice)) == 8


def test_a_match_without_a_result_says_where_it_is(server: FakeServer) -> None:
    never = stored(server, 7, ("alice", "bob"), FINISHED)
    queued = stored(server, 8, ("alice", "bob"), FINISHED + 1)
    running = stored(server, 9, ("alice", "bob"), FINISHED + 2)
    failed = stored(server, 10, ("bob", "alice"), FINISHED + 3)
    store = server.store
    store.save_analysis(MatchAnalysis(queued.id or 0, "queued", 2, None, (), (), None))
    store.save_analysis(MatchAnalysis(running.id or 0, "running", 2, None, (), (), None))
    store.save_analysis(MatchAnalysis(failed.id or 0, "failed", 2,
                                      "gnubg says:\nno such\tfile", (), (), None))
    bob = clip_user(server, "bob")
    for match, line in [
        (never, f"** Match #{never.id} is not analysed."),
        (queued, f"** Match #{queued.id} waits for its analysis."),
        (running, f"** Match #{running.id} is being analysed now."),
        (failed, f"** The analysis of match #{failed.id} failed: gnubg says: no such file."),
    ]:
        bob.send(f"analysis {match.id}")
        assert bob.lines() == [line]


@pytest.mark.parametrize(("line", "answer"), [
    ("analysis 1 2", "** usage: analysis [match number] [deeper]"),
    ("analysis x", "** usage: analysis [match number] [deeper]"),
    ("analysis 0", "** usage: analysis [match number] [deeper]"),
    ("analysis 99999999999999999999", "** usage: analysis [match number] [deeper]"),
    ("analysis 77", "** There is no finished match #77."),
    ("analysis 77 deeper", "** There is no finished match #77."),
    ("analysis", "** carol has no finished matches."),
    ("analysis deeper", "** carol has no finished matches."),
])
def test_refusals(server: FakeServer, line: str, answer: str) -> None:
    carol = clip_user(server, "carol")
    carol.send(line)
    assert carol.lines() == [answer]


def test_a_deeper_analysis_of_ones_own_match_within_the_daily_limit(server: FakeServer) -> None:
    matches = [stored(server, seed, ("alice", "bob"), FINISHED + seed) for seed in (7, 8, 9)]
    for match in matches:
        server.store.save_analysis(planted(match.id or 0, match.record, plies=2))
    carol = clip_user(server, "carol")
    carol.send(f"analysis {matches[0].id} deeper")
    assert carol.lines() == ["** You may ask a deeper analysis of your own matches only."]
    alice = clip_user(server, "alice")
    first, second, third = (m.id for m in matches)
    alice.send(f"analysis {first} deeper")
    assert alice.lines() == [
        f"Match #{first} will be analysed again at 3-ply; you will be told when it is ready."]
    stored_job = server.store.analysis(first or 0)
    assert stored_job is not None and (stored_job.state, stored_job.plies) == ("queued", 3)
    alice.send(f"analysis {first} deeper")  # waiting already: not counted
    assert alice.lines() == [f"** Match #{first} waits for its analysis."]
    alice.send(f"analysis {first}")
    assert alice.lines() == [f"** Match #{first} waits for its analysis."]
    alice.send("analysis deeper")  # her last match: the third
    assert alice.lines() == [
        f"Match #{third} will be analysed again at 3-ply; you will be told when it is ready."]
    alice.send(f"analysis {second} deeper")  # the limit is 2 a day
    assert alice.lines() == ["** You may ask 2 deeper analyses a day. Please wait."]
    assert server.store.analysis(second or 0).plies == 2  # type: ignore[union-attr]
    # The count is the store's: logging in again does not reset it; a day later it has.
    alice.close()
    alice = clip_user(server, "alice")
    alice.send(f"analysis {second} deeper")
    assert alice.lines() == ["** You may ask 2 deeper analyses a day. Please wait."]
    alice.close()
    server.advance(86400)
    alice = clip_user(server, "alice")
    alice.send(f"analysis {second} deeper")
    assert alice.lines() == [(
        f"Match #{second} will be analysed again at 3-ply; you will be told when it is ready.")]


def test_an_analysis_at_the_depth_asked_already_is_not_queued_again(server: FakeServer) -> None:
    match = stored(server, 7, ("alice", "bob"), FINISHED)
    server.store.save_analysis(planted(match.id or 0, match.record, plies=3))
    bob = clip_user(server, "bob")
    bob.send(f"analysis {match.id} deeper")
    assert bob.lines() == [f"** Match #{match.id} is already analysed at 3-ply or deeper."]


def test_no_deeper_analysis_where_analysis_is_off() -> None:
    server = FakeServer(settings=make_settings(**{"analysis.matches": "none"}))
    server.register("alice")
    match = stored(server, 7, ("alice", "bob"), FINISHED)
    alice = clip_user(server, "alice")
    alice.send(f"analysis {match.id} deeper")
    assert alice.lines() == ["** Analysis is off on this server."]
    assert server.store.analysis(match.id or 0) is None


def test_the_ready_notice_reaches_online_players_unless_they_set_it_off(
        server: FakeServer) -> None:
    match = stored(server, 7, ("alice", "bob"), FINISHED)
    alice = telnet_user(server, "alice")
    bob = clip_user(server, "bob")
    carol = clip_user(server, "carol")
    notice = f"Analysis ready: match #{match.id}, alice - bob. Type 'analysis {match.id}' to read it."
    tell_ready(server.lobby, server.db, match.id or 0)
    assert event(alice) == [notice]
    assert bob.lines() == [notice]
    assert carol.lines() == []
    bob.send("set analysis off")
    assert bob.lines() == ["Value of 'analysis' set to off."]
    bob.send("set analysis")
    assert bob.lines() == ["Value of 'analysis' is off"]
    bob.send("set analysis maybe")
    assert bob.lines() == ["** Valid arguments are 'on' and 'off'."]
    bob.send("set")
    assert bob.lines()[1:] == ["boardstyle: 3", "linelength: 0", "pagelength: 0",
                               "redoubles:  none", "sortwho:    login", "timezone:   UTC"]
    tell_ready(server.lobby, server.db, match.id or 0)
    assert bob.lines() == []
    assert event(alice) == [notice]
    # kept between logins
    bob.close()
    bob = clip_user(server, "bob")
    tell_ready(server.lobby, server.db, match.id or 0)
    assert bob.lines() == []
    bob.send("set analysis on")
    bob.lines()
    tell_ready(server.lobby, server.db, match.id or 0)
    assert bob.lines() == [notice]
    alice.lines()
    tell_ready(server.lobby, server.db, 12345)  # no such match: nobody told
    assert bob.lines() == [] and alice.lines() == []
