"""What FIBS clients and bots rely on (issue 10), exact lines at a fixed clock for CLIP
and telnet users: time and date, whois dates in the user's time zone, stat, about,
who <name> for someone absent, and the join race window of a changed invitation."""

from __future__ import annotations

import pytest

from fibsd.server.commands.play import JOIN_RACE_WINDOW
from tests.helpers import FakeServer
from tests.server.test_social import (  # noqa: F401 (the fixture checks the catalogue)
    clip_user,
    every_line_is_catalogued,
    reply,
    telnet_user,
)

# START_TIME, 1_700_000_000: Tuesday 14 November 2023, 22:13:20 UTC.
UTC_TIME = "Tuesday, November 14 22:13:20 UTC   ( Tue Nov 14 22:13:20 2023 UTC )"
STOCKHOLM_TIME = "Tuesday, November 14 23:13:20 CET   ( Tue Nov 14 22:13:20 2023 UTC )"


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


def test_time_and_date_for_clip_and_telnet_users(server: FakeServer) -> None:
    alice = clip_user(server, "alice")
    bob = telnet_user(server, "bob")
    alice.send("time")
    assert alice.lines() == [UTC_TIME]
    bob.send("date")
    assert reply(bob) == [UTC_TIME]
    bob.send("set timezone Europe/Stockholm")
    assert reply(bob) == ["Value of 'timezone' set to Europe/Stockholm."]
    bob.send("time")
    assert reply(bob) == [STOCKHOLM_TIME]


def test_whois_dates_follow_the_readers_time_zone(server: FakeServer) -> None:
    alice = clip_user(server, "alice")
    clip_user(server, "bob")
    alice.send("whois bob")
    assert alice.lines()[1] == "  Last login:  Tue Nov 14 22:13:20 2023 UTC from 10.0.x.x"
    alice.send("set timezone Europe/Stockholm")
    alice.lines()
    alice.send("whois bob")
    assert alice.lines()[1] == "  Last login:  Tue Nov 14 23:13:20 2023 CET from 10.0.x.x"


def test_version_about_and_stat(server: FakeServer) -> None:
    alice = clip_user(server, "alice")
    bob = telnet_user(server, "bob")
    server.register("carol")
    alice.send("version")
    assert alice.lines() == ["fibsd version 0.1.0, a FIBS-compatible backgammon server (CLIP 1008)."]
    bob.send("stat")
    assert reply(bob) == ["3 registered users.", "Users logged in: 2", "Matches being played: 0"]
    alice.send("about")
    about = alice.lines()
    assert len(about) == 5 and about[0].startswith("This is fibsd")
    assert not any(line[:1].isdigit() or line.startswith("*") for line in about)


def test_who_count_of_one_and_who_for_someone_absent(server: FakeServer) -> None:
    alice = clip_user(server, "alice")
    alice.send("who count")
    assert alice.lines() == ["There is 1 user logged on."]
    alice.send("who zed")
    assert alice.lines() == ["** There is no one called zed."]
    bob = telnet_user(server, "bob")
    bob.send("who count")
    assert reply(bob) == ["There are 2 users logged on."]


def _ready(server: FakeServer) -> tuple[object, object]:
    alice = clip_user(server, "alice")
    bob = clip_user(server, "bob")
    for user in (alice, bob):
        user.send("toggle ready")
    server.settle()
    for user in (alice, bob):
        user.lines()
    return alice, bob


@pytest.mark.parametrize("elapsed", [0.0, JOIN_RACE_WINDOW - 0.1])
def test_a_join_inside_the_race_window_is_asked_again(server: FakeServer,
                                                      elapsed: float) -> None:
    alice, bob = _ready(server)
    alice.send("invite bob 3")
    alice.send("invite bob 1")
    server.settle()
    alice.lines()
    bob.lines()
    server.advance(elapsed)
    bob.send("join alice")
    assert bob.lines() == ["** alice changed the invitation: it is now to a 1 point match. "
                           "Type 'join alice' again to accept.",
                           "alice wants to play a 1 point match with you.",
                           "Type 'join alice' to accept."]
    bob.send("join alice")
    assert bob.lines()[0] == "** You are now playing a 1 point match with alice"


def test_a_join_after_the_race_window_starts_the_match(server: FakeServer) -> None:
    alice, bob = _ready(server)
    alice.send("invite bob 3")
    alice.send("invite bob 1")
    server.settle()
    alice.lines()
    bob.lines()
    server.advance(JOIN_RACE_WINDOW)
    bob.send("join alice")
    assert bob.lines()[0] == "** You are now playing a 1 point match with alice"


def test_a_telnet_player_logging_in_again_is_shown_the_match_and_his_prompt(
        server: FakeServer) -> None:
    from fibsd.rules.dice import ScriptedDice

    server.lobby.dice = ScriptedDice([(3, 1)])
    server.lobby.coin = lambda: 0  # alice, the inviter, plays O
    alice = clip_user(server, "alice")
    bob = telnet_user(server, "bob")
    alice.send("toggle ready")
    bob.send("toggle ready")
    bob.send("set boardstyle 2")
    alice.send("invite bob 5")
    bob.send("join alice")
    alice.send("move 8-5 6-5")
    server.settle()
    for client in (alice, bob):
        client.received()
    again = server.connect()
    again.received()  # the banner
    again.send("bob")
    assert again.received().endswith(b"password: ")
    again.send("secret")
    lines = again.lines()
    assert again.prompt() == "> "
    assert lines[:2] == ["", "** Warning: You are already logged in."]
    start = lines.index("turn: bob.")
    assert lines[start:start + 4] == ["turn: bob.", "match length: 5", "points for bob: 0",
                                      "points for alice: 0"]
    assert lines[start + 4].startswith("   +")  # the ASCII board of boardstyle 2
    assert lines[-1] == "It's your turn to roll or double."
    assert bob.closed
