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
from tests.helpers import FakeClient, FakeServer, make_settings
from tests.server.test_match import NAMES, Table, check_lines, random_rolls

REPO = Path(__file__).resolve().parents[2]
WAITS = "** bob lost the connection; the match waits 60 seconds for bob to log in again."
BACK = "** bob is back; the match goes on."
SAVED = "bob drops connection. The game was saved."


def grace_table(telnet: tuple[str, ...] = (), **overrides: object) -> Table:
    server = FakeServer(settings=make_settings(**{"pace.drop_grace": 60, **overrides}))
    for name in NAMES:
        server.register(name)
    table = Table([(3, 5), (6, 2)] + random_rolls(6), server=server, telnet=telnet)
    table.start("5")
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
    check_lines(lines)
    return lines


def after(lines: list[str], first: str) -> list[str]:
    return lines[lines.index(first):]


def test_a_clip_player_back_in_time_resumes_at_once() -> None:
    table = grace_table()
    table.clients["bob"].close()
    got = table.lines()
    assert got["alice"] == ["8 bob bob drops connection.", WAITS]
    assert got["carol"] == ["8 bob bob drops connection.", WAITS]
    assert table.server.store.load_match("alice", "bob") is not None  # the last action's
    table.server.advance(59)
    table.send("alice", "roll")  # his opponent plays his own turn meanwhile
    table.play_move()
    got = table.lines()
    assert got["alice"][0].startswith("You roll 6 and 2.") or got["alice"]
    bob = log_in(table, "bob")
    resumed = after(bob, "You are now playing with alice. Your running match was loaded.")
    assert resumed[:6] == ["You are now playing with alice. Your running match was loaded.",
                           "", "turn: bob.", "match length: 5", "points for bob: 0",
                           "points for alice: 0"]
    assert resumed[6].startswith("board:You:alice:5:0:0:")
    assert resumed[7:] == ["It's your turn to roll or double."]
    assert "5 bob alice - 1 0 1500.00 0 0" in " ".join(bob)
    got = table.lines()
    assert got["alice"][0] == "7 bob bob logs in."
    assert got["alice"][-2:][0] == BACK and got["alice"][-1].startswith("board:You:bob:5:")
    assert got["carol"][-2] == BACK and got["carol"][-1].startswith("board:bob:alice:5:")
    assert table.server.lobby.graces == {}
    assert table.user("bob").playing == "alice" and table.user("carol").watching == "bob"
    table.server.advance(60)  # the grace's end is cancelled: nothing is saved or said
    assert table.lines() == {"alice": [], "bob": [], "carol": []}
    table.send("bob", "roll")
    assert table.lines("bob")[0].startswith("You roll ")
