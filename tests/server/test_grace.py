"""Matches that survive a dropped connection (issue 23, fibsd.server.grace): exact lines
on a fake clock, for a CLIP and a telnet player dropping, back in time or not, and for
what can happen meanwhile (the opponent leaves or drops, the server stops, the player
logs in twice, the limit of held matches).  Every line is checked against the
catalogue (``Table.lines``)."""

from __future__ import annotations

import re
from pathlib import Path

from fibsd.client import events as ev
from fibsd.client.parse import classify
from fibsd.config import load_settings
from fibsd.wire import grace_text
from tests.helpers import FakeServer, make_settings
from tests.server.test_match import NAMES, Table, check_lines, random_rolls

REPO = Path(__file__).resolve().parents[2]
WAITS = "** bob lost the connection; the match waits 60 seconds for bob to log in again."
BACK = "** bob is back; the match goes on."
SAVED = "bob drops connection. The game was saved."


def grace_table(telnet: tuple[str, ...] = (), length: str = "5", **overrides: object) -> Table:
    server = FakeServer(settings=make_settings(**{"pace.drop_grace": 60, **overrides}))
    for name in NAMES:
        server.register(name)
    table = Table([(3, 5), (6, 2)] + random_rolls(6), server=server, telnet=telnet)
    table.start(length)
    table.match.add_watcher(table.user("carol"), "bob")
    table.send("bob", "move 8-3 6-3")
    table.lines()
    return table


def log_in(table: Table, name: str, telnet: bool = False) -> list[str]:
    """``name`` logs in again; the lines after his login block."""
    client = table.server.connect()
    client.received()
    if telnet:
        client.send(name)
        client.send("secret")
    else:
        client.send(f"login test 1008 {name} secret")
    table.clients[name] = client
    lines = client.lines()
    check_lines(lines[3:] if telnet else lines)  # after telnet's prompts
    return lines


def after(lines: list[str], first: str) -> list[str]:
    return lines[lines.index(first):]


def test_a_clip_player_back_in_time_resumes_at_once() -> None:
    table = grace_table()
    table.clients["bob"].close()
    got = table.lines()
    assert got["alice"] == ["8 bob bob drops connection.", WAITS]
    assert got["carol"] == ["8 bob bob drops connection.", WAITS]
    table.server.advance(59)
    table.send("alice", "roll")  # his opponent plays his own turn meanwhile
    table.play_move()
    assert table.lines("alice")[0] == "You roll 6 and 2."
    bob = log_in(table, "bob")
    assert bob[bob.index("5 bob - - 1 0 1500.00 0 0 1700000059 10.0.0.1 test -"):] == [
        "5 bob - - 1 0 1500.00 0 0 1700000059 10.0.0.1 test -", "6",
        "5 bob alice - 1 0 1500.00 0 0 1700000059 10.0.0.1 test -", "6",
        "You are now playing with alice. Your running match was loaded.",
        "", "turn: bob.", "match length: 5", "points for bob: 0", "points for alice: 0",
        table.match.board_lines(table.user("bob"))[0],
        "It's your turn to roll or double."]
    got = table.lines()
    who = ["5 bob - - 1 0 1500.00 0 0 1700000059 10.0.x.x test -", "6",
           "5 bob alice - 1 0 1500.00 0 0 1700000059 10.0.x.x test -", "6"]
    assert got["alice"] == ["7 bob bob logs in.", *who, BACK,
                            *table.match.board_lines(table.user("alice"))]
    assert got["carol"] == ["7 bob bob logs in.", *who, BACK,
                            *table.match.board_lines(table.user("carol"))]
    assert table.server.lobby.graces == {}
    assert table.user("bob").playing == "alice" and table.user("carol").watching == "bob"
    table.server.advance(60)  # the grace's end was called off: nothing is saved or said
    assert table.lines() == {"alice": [], "bob": [], "carol": []}
    table.send("bob", "roll")
    assert table.lines("bob")[0].startswith("You roll ")


def drop_lines(grace: int) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """What alice and carol get at bob's drop, and at the end of the grace."""
    table = grace_table(**{"pace.drop_grace": grace})
    table.server.advance(60 - grace)  # the idle times of the who lines are those of
    table.clients["bob"].close()      # the end of the grace
    at_drop = table.lines()
    table.server.advance(grace)
    at_end = table.lines()
    return at_drop["alice"], at_drop["carol"], at_end


def test_a_clip_player_not_back_in_time_gets_fibs_s_lines_at_the_end() -> None:
    """The lines of the grace's end are those a drop without a grace gives (after the
    logout notice, which came at the drop)."""
    alice, carol, _ = drop_lines(0)
    assert alice[:2] == ["8 bob bob drops connection.", SAVED]
    held_alice, held_carol, at_end = drop_lines(60)
    assert held_alice == ["8 bob bob drops connection.", WAITS]
    assert held_carol == ["8 bob bob drops connection.", WAITS]
    assert at_end["alice"] == alice[1:]
    assert at_end["carol"] == carol[1:]
    assert at_end["carol"][-4:-2] == ["", "bob logs out. You're not watching anymore."]


def test_the_grace_ends_to_the_second() -> None:
    table = grace_table()
    table.clients["bob"].close()
    table.lines()
    table.server.advance(59.9)
    assert table.lines("alice") == []
    assert live(table)
    table.server.advance(0.1)
    assert table.lines("alice")[0] == SAVED
    assert not live(table) and table.server.lobby.graces == {}
    saved = table.server.store.load_match("alice", "bob")
    assert saved is not None
    log_in(table, "bob")  # a login after the grace: the match is resumed as on FIBS
    table.send("bob", "invite alice")
    table.lines()
    table.send("alice", "join bob")
    assert table.lines("alice")[0] == "You are now playing with bob. Your running match was loaded."


def live(table: Table) -> bool:
    return table.server.lobby.matches.get("alice") is not None


def test_a_telnet_player_back_in_time() -> None:
    table = grace_table(telnet=("alice", "bob"))
    table.clients["bob"].close()
    assert table.clients["alice"].received() == (
        b"> \r\nbob drops connection.\r\n> \r\n" + WAITS.encode() + b"\r\n> ")
    bob = log_in(table, "bob", telnet=True)
    board = table.match.board_lines(table.user("bob"))[0]
    assert bob[bob.index("You are now playing with alice. Your running match was loaded."):] == [
        "You are now playing with alice. Your running match was loaded.",
        "turn: alice.", "match length: 5", "points for bob: 0", "points for alice: 0", board]
    assert table.clients["bob"].prompt() == "> "
    board = table.match.board_lines(table.user("alice"))[0]
    assert table.clients["alice"].received() == (
        b"\r\nbob logs in.\r\n> \r\n" + BACK.encode() + b"\r\n" + board.encode() + b"\r\n> ")
    table.send("alice", "roll")
    assert table.clients["alice"].lines()[0] == "You roll 6 and 2."


def test_a_telnet_player_not_back_in_time() -> None:
    table = grace_table(telnet=("alice", "bob"))
    table.clients["bob"].close()
    table.clients["alice"].received()
    table.server.advance(60)
    assert table.clients["alice"].received() == b"\r\n" + SAVED.encode() + b"\r\n> "
    assert table.server.store.load_match("alice", "bob") is not None


def test_the_opponent_leaving_the_server_saves_it_as_the_drop() -> None:
    table = grace_table()
    table.clients["bob"].close()
    table.lines()
    table.send("alice", "bye")
    table.server.settle()
    got = table.lines()
    assert got["carol"][:2] == ["", SAVED]  # the drop's lines, then alice's logout
    assert "8 alice alice logs out." in got["carol"]
    assert not live(table) and table.server.lobby.graces == {}
    assert table.server.store.load_match("alice", "bob") is not None


def test_the_opponent_dropping_too_saves_it_as_the_first_drop() -> None:
    table = grace_table()
    table.clients["bob"].close()
    table.lines()
    table.clients["alice"].close()
    got = table.lines()
    assert got["carol"][:2] == ["", SAVED]
    assert not live(table) and table.server.lobby.graces == {}
    log_in(table, "alice")
    assert table.server.lobby.graces == {} and table.user("alice").playing is None


def test_the_opponent_leaving_the_match_ends_it_and_a_late_login_resumes_nothing() -> None:
    table = grace_table()
    table.clients["bob"].close()
    table.lines()
    table.send("alice", "leave")
    assert table.lines("alice")[0] == "** You terminated the game. The game was saved."
    bob = log_in(table, "bob")
    assert not any("running match" in line for line in bob)
    assert table.user("bob").playing is None and table.server.lobby.graces == {}
    table.lines()
    table.server.advance(60)
    assert table.lines() == {"alice": [], "bob": [], "carol": []}


def test_a_shutdown_during_the_grace_saves_the_match() -> None:
    table = grace_table()
    table.clients["bob"].close()
    table.lines()
    table.server.factory.shutdown(table.server.clock)
    table.server.settle()
    alice = table.lines("alice")
    assert alice[0] == SAVED
    assert "** System administrator causes shutdown. FIBS is terminating." in alice
    assert table.server.store.load_match("alice", "bob") is not None
    assert table.server.store.due_departures(2**40) == []  # a shutdown is no one's drop


def test_a_crash_during_the_grace_loses_nothing() -> None:
    """The match was written at its last action: a new server on the same store (all
    in memory lost, as after SIGKILL) resumes it by invite and join."""
    table = grace_table()
    record = table.match.to_record()
    table.clients["bob"].close()
    table.lines()
    assert table.server.store.load_match("alice", "bob").record == record
    restarted = Table([(6, 2)], server=FakeServer(store=table.server.store,
                                                  settings=table.server.settings))
    restarted.send("alice", "invite bob")  # both still ready: the toggle was saved
    restarted.lines()
    restarted.send("bob", "join alice")
    assert restarted.lines("bob")[0] == "You are now playing with alice. Your running match was loaded."
    assert restarted.match.rules.position == table.match.rules.position


def test_logging_in_twice_during_the_grace() -> None:
    table = grace_table()
    table.clients["bob"].close()
    table.lines()
    first = log_in(table, "bob")
    assert "You are now playing with alice. Your running match was loaded." in first
    table.lines()
    second = log_in(table, "bob")
    assert second[1] == "** Warning: You are already logged in."
    assert "You are now playing with alice. Your running match was loaded." not in second
    assert second[-1] == table.match.board_lines(table.user("bob"))[0]  # as any second login
    got = table.lines()
    assert BACK not in got["alice"] and table.server.lobby.graces == {}
    table.send("alice", "roll")
    assert table.lines("bob")[1] == "alice rolls 6 and 2."


def test_held_matches_are_bounded() -> None:
    table = grace_table(**{"pace.max_held": 1})
    other = {}
    for name in ("dave", "erin"):
        table.server.register(name)
        other[name] = table.server.connect()
        other[name].send(f"login test 1008 {name} secret")
        other[name].send("toggle ready")
    other["dave"].send("invite erin 1")
    other["erin"].send("join dave")
    table.lines()
    other["dave"].lines()
    table.clients["bob"].close()
    other["erin"].close()
    assert table.lines("alice")[:3] == ["8 bob bob drops connection.", WAITS,
                                        "8 erin erin drops connection."]
    dave = other["dave"].lines()
    assert dave[:2] == ["8 bob bob drops connection.", "8 erin erin drops connection."]
    assert dave[2] == "erin drops connection. The game was saved."  # at once: the limit
    assert list(table.server.lobby.graces) == ["bob"]


def test_a_match_won_meanwhile_is_rated_with_the_absent_player() -> None:
    table = grace_table(length="1")
    table.send("alice", "roll")
    table.play_move()
    table.send("bob", "resign n")
    table.lines()
    table.clients["bob"].close()
    table.lines()
    table.send("alice", "accept")
    table.lines()
    assert not live(table)
    bob, alice = (table.server.store.get_user(name) for name in ("bob", "alice"))
    assert bob.rating < 1500 < alice.rating and bob.experience == 1
    assert table.server.store.load_match("alice", "bob") is None
    table.server.advance(59)
    bob = log_in(table, "bob")  # told what happened while he was away
    assert bob[-1] == "** Your 1-point match with alice ended while you were away: alice won 1-0."
    assert table.user("bob").playing is None and table.server.lobby.graces == {}
    table.lines()
    table.server.advance(1)
    assert table.lines() == {"alice": [], "bob": [], "carol": []}


def test_the_watchers_of_a_player_not_back_stop_watching_even_without_a_match() -> None:
    table = grace_table(length="1")
    table.send("alice", "roll")
    table.play_move()
    table.send("bob", "resign n")
    table.lines()
    table.clients["bob"].close()
    table.send("alice", "accept")
    table.lines()
    table.server.advance(60)  # nothing left to save: his watchers stop watching
    assert table.lines("carol")[:2] == ["", "bob logs out. You're not watching anymore."]


def test_no_grace_in_fibs_s_profile() -> None:
    settings = load_settings(REPO / "config" / "pure-fibs.toml", {})
    assert settings.pace.drop_grace == 0
    table = grace_table(**{"pace.drop_grace": 0})
    table.clients["bob"].close()
    assert table.lines("alice")[:2] == ["8 bob bob drops connection.", SAVED]
    assert table.server.lobby.graces == {}


def test_the_new_lines_match_no_stock_client_pattern() -> None:
    patterns = [re.compile(line.split("\t", 1)[1]) for line in
                (REPO / "tests" / "data" / "client_patterns.txt").read_text().splitlines()
                if line and not line.startswith("#")]
    for line in (grace_text.match_waits_for("bob", 60), grace_text.is_back("bob"),
                 grace_text.ended_meanwhile(5, "alice", "alice", (5, 2))):
        assert [p.pattern for p in patterns if p.search(line)] == [], line
        assert classify(line) == ev.Error(line[3:])  # as every `** ` notice
