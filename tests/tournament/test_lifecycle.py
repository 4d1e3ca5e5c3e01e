"""Sign-up, pairing, a match, a forfeit and the final announcement, line by line, for
telnet and CLIP users (every line checked against protocol/catalogue)."""

from __future__ import annotations

import pytest

from fibsd.rules.dice import ScriptedDice
from tests.helpers import FakeServer, make_settings
from tests.server.test_social import (  # noqa: F401 (the fixture checks the catalogue)
    clip_user,
    every_line_is_catalogued,
    reply,
    telnet_user,
)

CREATE = "admin tournament create --name Cup --format knockout --lengths 1 --max-players 3"


@pytest.fixture
def server() -> FakeServer:
    server = FakeServer(settings=make_settings(admins=["boss"]))
    server.lobby.dice = ScriptedDice([(3, 5)] * 50)
    server.lobby.coin = lambda: 1
    return server


def test_sign_up_pairing_match_forfeit_and_winner(server: FakeServer) -> None:
    boss = telnet_user(server, "boss")
    alice = clip_user(server, "alice")
    bob = telnet_user(server, "bob")
    carol = clip_user(server, "carol")
    dan = clip_user(server, "dan")
    director = server.services.tournaments
    director.start()
    boss.send("tournaments")
    assert reply(boss) == ["tournament: none"]
    boss.send(CREATE)
    assert reply(boss) == ["tournament: 1 created: Cup"]
    dan.send("tournament notify on")
    assert dan.lines() == ["tournament: you will hear who wins every tournament."]
    alice.send("tournament join 1")
    assert alice.lines() == ["tournament: you joined 1, 1/3 players."]
    alice.send("tournament join 1")
    assert alice.lines() == ["** You are in tournament 1 already."]
    alice.send("tournament leave 1")
    assert alice.lines() == ["tournament: you left 1."]
    alice.send("tournament leave 1")
    assert alice.lines() == ["** You are not in tournament 1."]
    alice.send("tournament join 1")
    alice.lines()
    bob.send("tournament join 1")
    assert reply(bob) == ["tournament: you joined 1, 2/3 players."]
    boss.send("tournaments")
    assert reply(boss) == [
        "tournament: 1 open knockout 2/3 players, lengths 1, bots no, start when-full: Cup"]
    carol.send("tournament join 1")  # full: it starts, seeded alice, bob, carol
    assert carol.lines() == [
        "tournament: you joined 1, 3/3 players.",
        "tournament: 1 starts: 3 players, 2 rounds: Cup",
        "tournament: 1 round 1: you meet bob in a 1 point match; start it by 22:18:20 UTC"
        " or lose by forfeit.",
        "bob wants to play a 1 point match with you.", "Type 'join bob' to accept."]
    assert alice.lines() == ["tournament: 1 starts: 3 players, 2 rounds: Cup",
                             "tournament: 1 round 1: you have a bye."]
    assert event(bob) == [
        "tournament: 1 starts: 3 players, 2 rounds: Cup",
        "tournament: 1 round 1: you meet carol in a 1 point match; start it by"
        " 22:18:20 UTC or lose by forfeit."]
    dan.send("tournament join 1")
    assert dan.lines() == ["** Tournament 1 has started; entries and withdrawals are closed."]
    alice.send("tournament leave 1")
    assert alice.lines() == ["** Tournament 1 has started; entries and withdrawals are closed."]
    dan.send("tournament 1")
    assert dan.lines() == [
        "tournament: 1 running knockout 3/3 players, lengths 1, bots no, start when-full: Cup",
        "tournament: round 1: alice has a bye",
        "tournament: round 1: bob v carol (not started)"]
    # carol joins bob's invitation; bob (telnet) is not 'ready' and needs not be
    carol.send("join bob")
    carol.lines(), bob.lines(), dan.lines(), alice.lines(), boss.lines()
    dan.send("tournament 1")
    assert dan.lines()[-1] == "tournament: round 1: bob v carol (now)"
    bob.send("resign n")
    carol.lines()
    carol.send("accept")
    assert carol.lines() == [
        "You accept and win 1 point.", "", "You win the 1 point match 1-0 .",
        "5 carol - - 0 0 1510.00 1 0 1700000000 10.0.0.1 test -", "6",
        "5 bob - - 0 0 1490.00 1 0 1700000000 10.0.x.x - -", "6",
        "tournament: 1 round 2: you meet alice in a 1 point match; start it by 22:18:20 UTC"
        " or lose by forfeit.",
        "alice wants to play a 1 point match with you.", "Type 'join alice' to accept."]
    (pairing,) = [p for p in server.store.tournament_pairings(1) if p.round == 1 and p.second]
    assert (pairing.winner, pairing.forfeit) == ("carol", False)
    assert server.store.finished_match(pairing.match_id).tournament == 1
    # the final: alice (a better seed) logs out; carol is here when the time runs out
    alice.send("bye")
    server.settle()
    for client in (carol, dan, bob, boss):
        client.received()
    server.advance(300)
    assert carol.lines() == [
        "tournament: 1 round 2: you win against alice by forfeit.",
        "tournament: 1 is won by carol: Cup"]
    assert dan.lines() == ["tournament: 1 is won by carol: Cup"]
    assert event(bob) == ["tournament: 1 is won by carol: Cup"]
    boss.received()
    boss.send("tournament 1")
    assert reply(boss) == [
        "tournament: 1 finished knockout 3/3 players, lengths 1, bots no, start when-full: Cup",
        "tournament: round 1: alice has a bye",
        f"tournament: round 1: carol beats bob (match {pairing.match_id})",
        "tournament: round 2: carol beats alice by forfeit",
        "tournament: winner: carol"]


def event(client):
    from tests.server.test_social import event as social_event
    return social_event(client)


def test_full_two_at_once_and_a_deleted_player(server: FakeServer) -> None:
    boss = telnet_user(server, "boss")
    alice = clip_user(server, "alice")
    bob = clip_user(server, "bob")
    carol = telnet_user(server, "carol")
    server.services.tournaments.start()
    boss.send("admin tournament create --name Duel --format knockout --lengths 3"
              " --max-players 2")
    assert reply(boss) == ["tournament: 1 created: Duel"]
    boss.send("admin tournament create --name Other --format swiss --lengths 1 --rounds 2")
    assert reply(boss) == ["tournament: 2 created: Other"]
    boss.send("admin tournament create --name X --format cup --lengths 1")
    assert reply(boss) == [
        "** Tournament not created: the format is knockout, swiss or roundrobin."]
    boss.send("admin tournament")
    assert reply(boss) == [
        "** Usage: admin tournament create --name NAME --format knockout|swiss|roundrobin"
        " --lengths 5,5,7 [--rounds N] [--max-players N] [--start when-full|TIME] [--bots]"
        " [--clock 12s+2m]"]
    carol.send("tournament join 2")
    assert reply(carol) == ["tournament: you joined 2, 1/256 players."]
    carol.send("tournament join 1")
    assert reply(carol) == ["** You are in tournament 2; one tournament at a time."]
    for line, answer in (("tournament join 7", "** There is no tournament 7."),
                         ("tournament 7", "** There is no tournament 7."),
                         ("tournament frobnicate", "** There is no tournament frobnicate.")):
        carol.send(line)
        assert reply(carol) == [answer]
    carol.send("tournament")
    assert reply(carol) == ["** Usage: tournaments, tournament <id>, tournament join <id>,"
                            " tournament leave <id>, tournament notify on|off."]
    alice.send("tournament join 1")
    bob.send("tournament join 1")  # full: the duel starts, bob invited by alice
    alice.lines(), bob.lines(), carol.received()
    boss.send("admin delete bob")  # kicked and gone: he loses by forfeit at the deadline
    boss.received()
    assert alice.lines() == ["8 bob bob logs out."]
    server.advance(299)
    assert alice.lines() == []
    server.advance(1)
    assert alice.lines() == ["tournament: 1 round 1: you win against bob by forfeit.",
                             "tournament: 1 is won by alice: Duel"]
    carol.send("tournament 1")
    assert reply(carol)[-2:] == ["tournament: round 1: alice beats bob by forfeit",
                                 "tournament: winner: alice"]


def test_a_bot_account_enters_only_where_bots_may(server: FakeServer) -> None:
    """The account flag is wt-resident's (issue 24) ``OnlineUser.bot``; set by hand here."""
    boss = telnet_user(server, "boss")
    robot = clip_user(server, "robot")
    boss.send("admin tournament create --name Humans --format knockout --lengths 1")
    boss.send("admin tournament create --name Open --format knockout --lengths 1 --bots")
    boss.received()
    server.lobby.find("robot").bot = True
    robot.send("tournament join 1")
    assert robot.lines() == ["** Tournament 1 is for humans only."]
    robot.send("tournament join 2")
    assert robot.lines() == ["tournament: you joined 2, 1/256 players."]
    boss.send("tournaments")
    assert reply(boss) == [
        "tournament: 1 open knockout 0/256 players, lengths 1, bots no, start when-full: Humans",
        "tournament: 2 open knockout 1/256 players, lengths 1, bots yes, start when-full: Open"]


def test_an_invitation_set_up_twice_meanwhile_is_sent_once(server: FakeServer) -> None:
    """The database answers later than at once (as the database thread does): the round's
    pairing and the look right after it both ask for the pair's saved match; the
    invitee still reads the invitation once."""
    from twisted.internet.defer import Deferred

    waiting: list[Deferred] = []
    store = server.store

    def load_match(a: str, b: str) -> Deferred:
        d: Deferred = Deferred()
        waiting.append(d)
        d.addCallback(lambda _: store.load_match(a, b))
        return d

    server.db.load_match = load_match  # type: ignore[attr-defined]
    boss = telnet_user(server, "boss")
    alice = clip_user(server, "alice")
    bob = clip_user(server, "bob")
    server.services.tournaments.start()
    boss.send("admin tournament create --name Duel --format knockout --lengths 1"
              " --max-players 2")
    alice.send("tournament join 1")
    bob.send("tournament join 1")
    server.advance(1)  # a look while the first answer is still on its way
    assert len(waiting) == 2
    for d in waiting:
        d.callback(None)
    got = [line for line in bob.lines() if "wants to play" in line]
    assert got == ["alice wants to play a 1 point match with you."]


def test_a_banned_better_seed_loses_when_neither_comes(server: FakeServer) -> None:
    """Neither player comes: the better seed would go through, but a banned account
    loses (the forfeit rules, protocol/tournaments.md)."""
    from fibsd.store import Ban

    store = server.store
    watcher = telnet_user(server, "carol")  # who reads the draw at the end
    for name in ("alice", "bob"):
        server.register(name)
    store.create_tournament(name="Duel", fmt="knockout", lengths=[1], rounds=None,
                            max_players=2, start_at=None, bots=False, clock="",
                            created=1_700_000_000)
    for name in ("alice", "bob"):
        store.join_tournament(1, name, 1500.0, 1_700_000_000)
    server.services.tournaments.start()
    server.advance(1)
    assert [(p.first, p.second) for p in store.tournament_pairings(1)] == [("alice", "bob")]
    store.add_ban(Ban("name", "alice", 1_700_000_000, None, "console"))
    server.advance(300)
    (pairing,) = store.tournament_pairings(1)
    assert (pairing.winner, pairing.forfeit) == ("bob", True)
    assert store.tournament(1).winner == "bob"
    watcher.received()
    watcher.send("tournament 1")
    assert reply(watcher)[-2:] == ["tournament: round 1: bob beats alice by forfeit",
                                   "tournament: winner: bob"]


def test_the_limits_on_tournaments_and_players() -> None:
    server = FakeServer(settings=make_settings(admins=["boss"], **{
        "tournaments.max_open": 1, "tournaments.max_players": 4}))
    boss = telnet_user(server, "boss")
    boss.send("admin tournament create --name Big --format knockout --lengths 1"
              " --max-players 5")
    assert reply(boss) == ["** Tournament not created: --max-players is a number from 2 to 4."]
    boss.send("admin tournament create --name One --format knockout --lengths 1")
    assert reply(boss) == ["tournament: 1 created: One"]
    boss.send("admin tournament create --name Two --format knockout --lengths 1")
    assert reply(boss) == ["** Tournament not created: 1 tournaments are open or running."]
    boss.send("tournaments")
    assert reply(boss) == [
        "tournament: 1 open knockout 0/4 players, lengths 1, bots no, start when-full: One"]


def test_a_tournament_with_a_clock_plays_its_matches_on_it(server: FakeServer) -> None:
    boss = telnet_user(server, "boss")
    alice = clip_user(server, "alice")
    bob = clip_user(server, "bob")
    server.services.tournaments.start()
    boss.send("admin tournament create --name Blitz --format knockout --lengths 3"
              " --max-players 2 --clock 12s+2m")
    assert reply(boss) == ["tournament: 1 created: Blitz"]
    alice.send("tournament join 1")
    alice.lines()
    bob.send("tournament join 1")
    assert bob.lines()[-3:] == [
        "alice wants to play a 3 point match with you.", "Type 'join alice' to accept.",
        "** With a clock: 12 seconds of delay a decision and 6:00 of reserve each."]
    bob.send("join alice")
    (live,) = {id(m): m for m in server.lobby.matches.values()}.values()
    assert live.tournament == (1, 1)
    assert live.clocks is not None
    assert (live.clocks.state.spec.delay, live.clocks.state.spec.per_point) == (12, 120)


def test_a_clock_out_of_bounds_is_refused(server: FakeServer) -> None:
    boss = telnet_user(server, "boss")
    boss.send("admin tournament create --name Blitz --format knockout --lengths 3"
              " --clock 9999s+2m")
    assert reply(boss) == ["** Tournament not created: a clock is a delay and a reserve,"
                           " as 12s+2m."]
