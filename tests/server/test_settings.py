"""toggle, set, address and password through FakeClient, including persistence."""

from __future__ import annotations

from pathlib import Path

import pytest

from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.settings import TOGGLES
from tests.helpers import START_TIME, FakeServer
from tests.server.test_social import (  # noqa: F401 (a fixture)
    _quiet,
    clip_user,
    every_line_is_catalogued,
    reply,
    telnet_user,
)

T = int(START_TIME)
WHO = f"5 alice - - {{ready}} 0 1500.00 0 0 {T} 10.0.0.1 test -"


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


# --- toggle ---------------------------------------------------------------------------

def test_toggle_listing_for_a_clip_user(server):
    alice = clip_user(server, "alice")
    alice.send("toggle")
    assert alice.lines() == [
        "The current settings are:",
        "allowpip        YES",
        "autoboard       YES",
        "autodouble      NO",
        "automove        NO",
        "bell            NO",
        "crawford        YES",
        "double          YES",
        "greedy          NO",
        "moreboards      YES",
        "moves           NO",
        "notify          YES",
        "ratings         NO",
        "ready           NO",
        "report          YES",
        "silent          NO",
        "telnet          NO",
        "wrap            NO",
    ]


def test_telnet_users_have_telnet_on(server):
    ted = telnet_user(server, "ted")
    ted.send("to")
    assert "telnet          YES" in reply(ted)


@pytest.mark.parametrize("name", list(TOGGLES))
def test_each_toggle_flips_with_its_own_sentences(server, name):
    alice = clip_user(server, "alice")
    toggle = TOGGLES[name]
    before = server.lobby.find("alice").toggles[name]
    alice.send(f"toggle {name}")
    alice.send(f"toggle {name}")
    lines = [line for line in alice.lines() if not line.startswith(("5 ", "6"))]
    assert lines == [toggle.confirmation(not before), toggle.confirmation(before)]


def test_the_allowpip_text_keeps_its_missing_word(server):
    alice = clip_user(server, "alice")
    alice.send("toggle allowpip")
    alice.send("toggle allowpip")
    assert alice.lines() == ["** You don't allow the use of the server's 'pip' command.",
                             "** You allow the use the server's 'pip' command."]


def test_several_toggles_prefixes_and_unknown_words(server):
    alice = clip_user(server, "alice")
    alice.send("toggle gr mo bogus autoroll")
    assert alice.lines() == [
        "** Will use automatic greedy bearoffs.",
        "** Don't know how to toggle mo",
        "** Don't know how to toggle bogus",
        "** You won't be asked if you want to double.",
    ]


def test_toggle_ready_pushes_who_info_to_clip_users(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    ted = telnet_user(server, "ted")
    _quiet(server)
    alice.send("toggle ready")
    assert alice.lines() == ["** You're now ready to invite or join someone.",
                             WHO.format(ready=1), "6"]
    assert bob.lines() == [WHO.format(ready=1).replace("10.0.0.1", "10.0.x.x"), "6"]
    assert ted.received() == b""
    alice.send("toggle ready")
    assert alice.lines() == ["** You're now refusing to play with someone.",
                             WHO.format(ready=0), "6"]


def test_toggle_silent_stops_hearing_shouts(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    bob.send("toggle silent")
    assert bob.lines() == ["** You won't hear what other players shout."]
    alice.send("shout hi")
    assert bob.received() == b""


# --- set ------------------------------------------------------------------------------

def test_set_listing_and_single_values(server):
    alice = clip_user(server, "alice")
    alice.send("set")
    alice.send("set board")
    alice.send("set sortwho")
    assert alice.lines() == [
        "Settings of variables:",
        "boardstyle: 3",
        "linelength: 0",
        "pagelength: 0",
        "redoubles:  none",
        "sortwho:    login",
        "timezone:   UTC",
        "Value of 'boardstyle' is 3",
        "Value of 'sortwho' is login",
    ]


def test_set_changes_values(server):
    ted = telnet_user(server, "ted")
    for line, answer in [
        ("set boardstyle 2", "Value of 'boardstyle' set to 2."),
        ("set linelength 80", "Value of 'linelength' set to 80."),
        ("set pagelength 0", "Value of 'pagelength' set to 0."),
        ("set redoubles none", "Value of 'redoubles' set to 'none'."),
        ("set redoubles unlimited", "Value of 'redoubles' set to 'unlimited'."),
        ("set redoubles 42", "Value of 'redoubles' set to 42."),
        ("set sort rating", "Value of 'sortwho' set to rating."),
        ("set timezone Europe/Sofia", "Value of 'timezone' set to Europe/Sofia."),
    ]:
        ted.send(line)
        assert reply(ted) == [answer]
    ted.send("set")
    assert reply(ted)[1:] == ["boardstyle: 2", "linelength: 80", "pagelength: 0",
                              "redoubles:  42", "sortwho:    rating", "timezone:   Europe/Sofia"]


def test_one_users_changes_leave_every_other_users_settings(server):
    """Issue 26: users whose settings are equal share one read-only mapping; each writer
    (toggle, set, set clock, a game's start resetting double/greedy/moves) replaces the
    changed user's mapping, so nothing leaks into the others', and a direct write fails."""
    alice, bob, carol = (clip_user(server, name) for name in ("alice", "bob", "carol"))
    users = {name: server.lobby.find(name) for name in ("alice", "bob", "carol")}
    assert users["alice"].toggles is users["carol"].toggles
    assert users["alice"].variables is users["carol"].variables
    with pytest.raises(TypeError):
        users["alice"].toggles["bell"] = True  # type: ignore[index]
    with pytest.raises(TypeError):
        users["alice"].variables.update(boardstyle="1")  # type: ignore[attr-defined]
    carol.send("toggle")
    carol_toggles = carol.lines()
    carol.send("set")
    carol_variables = carol.lines()
    for client in (alice, bob, carol):
        client.send("toggle greedy")  # all three share greedy on
    for client in (alice, bob):
        client.send("toggle ready bell")
        client.send("set boardstyle 1")
        client.send("set timezone Europe/Berlin")
        client.send("set clock 12s+2m")
    carol.send("toggle greedy")  # carol's greedy off again: her listing as before
    _quiet(server)
    alice.send("invite bob 1")
    bob.send("join alice")
    _quiet(server)
    assert not users["alice"].toggles["greedy"] and not users["bob"].toggles["greedy"]
    carol.send("toggle")
    assert carol.lines() == carol_toggles
    carol.send("set")
    assert carol.lines() == carol_variables
    assert "clock" not in users["carol"].variables
    assert users["alice"].variables["clock"] == users["bob"].variables["clock"]
    assert users["alice"].variables["boardstyle"] == "1"


def test_set_errors(server):
    alice = clip_user(server, "alice")
    for line in ("set colour", "set boardstyle 4", "set linelength 1000", "set pagelength x",
                 "set redoubles 0", "set sortwho age"):
        alice.send(line)
    assert alice.lines() == [
        "** Invalid argument. Type 'help set'.",
        "** Valid arguments are the numbers 1 to 3.",
        "** Valid arguments are the numbers 0 to 999. Use 0 for no linelength.",
        "** Valid arguments are the numbers 0 to 999. Use 0 for no pagelength.",
        "** Valid arguments are 'none', 'unlimited' and the numbers 1 to 99.",
        "** Unknown value 'age'. Try 'login', 'name', 'rating' or 'rrating'.",
    ]
    alice.send("set timezone Mars/Olympus")
    lines = alice.lines()
    assert lines[0] == "** Can't find timezone 'Mars/Olympus'. Try one of:"
    assert "UTC" in " ".join(lines[1:]).split()
    alice.send("set")
    assert alice.lines()[1:] == ["boardstyle: 3", "linelength: 0", "pagelength: 0",
                                 "redoubles:  none", "sortwho:    login", "timezone:   UTC"]


def test_toggles_and_variables_survive_a_restart(tmp_path: Path):
    database = tmp_path / "fibsd.sqlite"
    server = FakeServer(store=SQLiteStore(database))
    alice = clip_user(server, "alice")
    alice.send("toggle ready ratings")
    alice.send("set redoubles 3")
    alice.send("set timezone Europe/Sofia")
    server.factory.shutdown(server.clock)
    server.settle()
    server.store.close()
    server = FakeServer(store=SQLiteStore(database))
    alice = server.connect()
    alice.received()
    alice.send("login test 1008 alice secret")
    assert alice.lines()[2] == "2 alice 1 1 0 0 0 0 1 1 0 0 1 0 1 1500.00 1 1 3 1 0 Europe/Sofia"
    alice.send("set redoubles")
    assert alice.lines() == ["Value of 'redoubles' is 3"]


# --- address --------------------------------------------------------------------------

def test_address_is_set_pushed_and_kept(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    _quiet(server)
    alice.send("address alice@example.org extra words")
    who = f"5 alice - - 0 0 1500.00 0 0 {T} 10.0.0.1 test alice@example.org"
    assert alice.lines() == ["Your email address is 'alice@example.org'.", who, "6"]
    assert bob.lines() == [who.replace("10.0.0.1", "10.0.x.x"), "6"]
    assert server.store.get_user("alice").address == "alice@example.org"


def test_address_errors(server):
    alice = clip_user(server, "alice")
    alice.send("address")
    alice.send("address http://foobar")
    alice.send("address nobody")
    assert alice.lines() == [
        "** You didn't give your address.",
        "** 'http://foobar' is not an email address.",
        "** 'nobody' is not an email address.",
    ]
    assert server.store.get_user("alice").address == ""


# --- password -------------------------------------------------------------------------

def test_password_change_then_login_with_the_new_one(server):
    alice = clip_user(server, "alice")
    alice.send("password secret:newpass:newpass")
    assert alice.lines() == ["Password changed."]
    alice.close()
    again = server.connect()
    again.received()
    again.send("login test 1008 alice secret")
    assert again.received() == b"\r\nlogin: "
    again.send("login test 1008 alice newpass")
    assert again.lines()[1].startswith("1 alice ")


USAGE = ["** usage: password <old password>:<new password>:<new password>",
         "** NOTE: The character between the passwords is now a colon!"]


@pytest.mark.parametrize("line, answer", [
    ("password", USAGE),
    ("password secret newpass newpass", USAGE),
    ("password secret:newpass", USAGE),
    ("password secret:a:b:c", USAGE),
    ("password secret::", USAGE),
    ("password wrong:newpass:newpass", ["** Sorry. Old password not correct."]),
    ("password secret:newpass:newpasx", ["** Please give your new password twice."]),
    ("password secret:abc:abc", ["** Minimal password length is 4 characters."]),
    ("password secret:new pass:new pass", ["** Your password may not contain blanks."]),
])
def test_password_refusals_keep_the_old_password(server, line, answer):
    ted = telnet_user(server, "ted")
    ted.send(line)
    assert reply(ted) == answer
    ted.send("password secret:still:still")
    assert reply(ted) == ["Password changed."]
