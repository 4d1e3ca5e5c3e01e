"""Chat and social commands, exact lines for CLIP and telnet users, through FakeClient."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from twisted.internet.testing import StringTransport

from fibsd.store import StoredMessage
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import START_TIME, FakeClient, FakeServer, make_settings
from tests.server.test_transcripts import catalogue
from tests.server.transcript import Tokenizer

T = int(START_TIME)


@pytest.fixture(autouse=True)
def every_line_is_catalogued(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """After each test, every line and prompt any client received must match an entry of
    protocol/catalogue/*.toml: the FakeClient tests reach lines no transcript shows."""
    written: dict[int, Tokenizer] = {}
    tokens = []
    original = StringTransport.write

    def write(transport: StringTransport, data: bytes) -> None:
        tokens.extend(written.setdefault(id(transport), Tokenizer()).feed(data))
        original(transport, data)

    monkeypatch.setattr(StringTransport, "write", write)
    yield
    entries = catalogue()
    unknown = {str(token) for token in tokens
               if not any(prompt == (token.kind == "prompt") and pattern.fullmatch(token.text)
                          for _, pattern, prompt in entries)}
    assert tokens
    assert unknown == set()


def clip_user(server: FakeServer, name: str) -> FakeClient:
    if server.store.get_user(name) is None:
        server.register(name)
    conn = server.connect()
    conn.send(f"login test 1008 {name} secret")
    _quiet(server)
    return conn


def telnet_user(server: FakeServer, name: str) -> FakeClient:
    if server.store.get_user(name) is None:
        server.register(name)
    conn = server.connect()
    conn.send(name)
    conn.send("secret")
    _quiet(server)
    return conn


def _quiet(server: FakeServer) -> None:
    """Forget everything sent so far to every client."""
    for client in server.clients:
        client.received()


def reply(client: FakeClient) -> list[str]:
    """The lines answering a telnet user's command; the prompt must follow."""
    lines = client.lines()
    assert client.prompt() == "> "
    return lines


def event(client: FakeClient) -> list[str]:
    """What an idle telnet user was sent by others: a fresh line, the lines, the prompt."""
    lines = client.lines()
    assert client.prompt() == "> "
    assert lines[0] == ""
    return lines[1:]


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


# --- shout ----------------------------------------------------------------------------

def test_shout_reaches_clip_and_telnet_users_but_not_silent_or_gagging_ones(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    ted = telnet_user(server, "ted")
    silent, gagger = clip_user(server, "silent"), clip_user(server, "gagger")
    silent.send("toggle silent")
    gagger.send("gag alice")
    _quiet(server)
    alice.send("shout Anyone for a 5-pointer?")
    assert alice.lines() == ["17 Anyone for a 5-pointer?"]
    assert bob.lines() == ["13 alice Anyone for a 5-pointer?"]
    assert event(ted) == ["alice shouts: Anyone for a 5-pointer?"]
    assert silent.received() == b""
    assert gagger.received() == b""


def test_telnet_shouter_gets_a_sentence(server):
    ted, bob = telnet_user(server, "ted"), clip_user(server, "bob")
    _quiet(server)
    ted.send("shout hello")
    assert reply(ted) == ["** You shout: hello"]
    assert bob.lines() == ["13 ted hello"]


def test_shout_errors(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    alice.send("shout")
    assert alice.lines() == ["** You can't say nothing."]
    alice.send("shout    ")
    assert alice.lines() == ["** You can't say nothing."]
    alice.send("toggle silent")
    alice.lines()
    alice.send("shout hi")
    assert alice.lines() == ["** Please type 'toggle silent' again before you shout."]
    assert bob.received() == b""


def test_shouting_too_often_is_refused_until_the_bucket_refills(server):
    """shouts_per_minute = 2: two at once, then one every 30 seconds."""
    server = FakeServer(settings=make_settings(**{"limits.shouts_per_minute": 2}))
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    alice.send("shout one")
    alice.send("shout two")
    alice.send("shout three")
    assert alice.lines() == [
        "17 one", "17 two",
        "** Please don't shout so much. Wait a little before you shout again."]
    assert bob.lines() == ["13 alice one", "13 alice two"]
    server.advance(29)
    alice.send("shout four")
    assert alice.lines() == [
        "** Please don't shout so much. Wait a little before you shout again."]
    server.advance(1)  # one token back after 30 seconds
    alice.send("shout four")
    alice.send("shout five")
    assert alice.lines() == [
        "17 four", "** Please don't shout so much. Wait a little before you shout again."]
    assert bob.lines() == ["13 alice four"]


# --- tell -----------------------------------------------------------------------------

def test_tell_between_clip_users(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    alice.send("tell bob Do you want to play a game?")
    assert alice.lines() == ["16 bob Do you want to play a game?"]
    assert bob.lines() == ["12 alice Do you want to play a game?"]


def test_tell_to_and_from_telnet_users(server):
    alice, ted = clip_user(server, "alice"), telnet_user(server, "ted")
    alice.send("t ted  two  blanks kept inside")
    assert alice.lines() == ["16 ted two  blanks kept inside"]
    assert event(ted) == ["alice tells: two  blanks kept inside"]
    ted.send("tell alice hi")
    assert reply(ted) == ["** You tell alice: hi"]
    assert alice.lines() == ["12 ted hi"]


def test_tell_completes_unique_prefixes_but_tellx_does_not(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    clip_user(server, "bobby")
    _quiet(server)
    alice.send("tell bobb hi")
    assert alice.lines() == ["16 bobby hi"]
    alice.send("tell bo hi")
    assert alice.lines() == ["** There is no one called bo."]
    alice.send("tellx bobb hi")
    assert alice.lines() == ["** There is no one called bobb."]
    alice.send("tellx bob hi")
    assert alice.lines() == ["16 bob hi"]
    assert bob.lines() == ["12 alice hi"]


def test_tell_errors_and_special_cases(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    alice.send("tell")
    alice.send("tell bob")
    alice.send("tell zed hi")
    alice.send("tell alice note to self")
    assert alice.lines() == [
        "** please give a name as an argument.",
        "** You can't say nothing.",
        "** There is no one called zed.",
        "You say to yourself: note to self",
    ]
    assert bob.received() == b""


def test_gags_stop_tells_both_ways(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    bob.send("gag alice")
    bob.lines()
    alice.send("tell bob hi")
    assert alice.lines() == ["** bob won't listen to you."]
    bob.send("tell alice hi")
    assert bob.lines() == ["** You can't talk if you won't listen."]
    assert alice.received() == b""


def test_telling_an_away_user_delivers_and_shows_the_away_message(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    bob.send("away gone fishing")
    _quiet(server)
    alice.send("tell bob hi")
    assert alice.lines() == ["16 bob hi", "bob is away: gone fishing"]
    assert bob.lines() == ["12 alice hi"]


def test_an_away_message_cannot_read_as_a_fibs_event(server):
    """Issue 21: a user's words outside a CLIP number keep every word but no phrase a
    client pattern looks for anywhere in a line (protocol/chat.md)."""
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    bob.send("away x" + " " * 11 + "Goodbye.")
    _quiet(server)
    alice.send("tell bob hi")
    assert alice.lines() == ["16 bob hi", "bob is away: x" + " " * 10 + "Goodbye."]
    bob.send("back")
    bob.send("away carol is watching you.")
    _quiet(server)
    alice.send("away")
    assert alice.lines() == ["The following users are away:",
                             "bob is away: carol  is watching you."]


def test_telnet_chat_cannot_read_as_a_fibs_event(server):
    alice, ted = clip_user(server, "alice"), telnet_user(server, "ted")
    alice.send("tell ted bob makes the first move. The game was saved.")
    assert alice.lines() == ["16 ted bob makes the first move. The game was saved."]
    assert event(ted) == ["alice tells: bob makes  the first move. The  game was saved."]
    ted.send("tell alice x is playing with y")
    assert reply(ted) == ["** You tell alice: x is  playing with y"]
    assert alice.lines() == ["12 ted x is playing with y"]


# --- say, kibitz, whisper -------------------------------------------------------------

def test_say_kibitz_whisper_outside_a_game(server):
    alice = clip_user(server, "alice")
    alice.send("say hi")
    alice.send("s hi")
    alice.send("kibitz hi")
    alice.send("whisper hi")
    assert alice.lines() == [
        "** You're not playing.",
        "** You're not playing.",
        "** You're not watching or playing.",
        "** You're not watching or playing.",
    ]


def _game(server: FakeServer) -> tuple[FakeClient, FakeClient, FakeClient, FakeClient]:
    """alice plays bob, carl watches bob; dora is elsewhere."""
    clients = tuple(clip_user(server, n) for n in ("alice", "bob", "carl", "dora"))
    lobby = server.lobby
    lobby.find("alice").playing = "bob"
    lobby.find("bob").playing = "alice"
    lobby.find("carl").watching = "bob"
    return clients  # type: ignore[return-value]


def test_say_goes_to_the_opponent_despite_a_gag(server):
    alice, bob, carl, dora = _game(server)
    bob.send("gag alice")
    bob.lines()
    alice.send("say good luck")
    assert alice.lines() == ["16 bob good luck"]
    assert bob.lines() == ["12 alice good luck"]
    alice.send("say")
    assert alice.lines() == ["** You can't say nothing."]
    assert carl.received() == dora.received() == b""


def test_kibitz_reaches_players_and_watchers_and_counts_them(server):
    alice, bob, carl, dora = _game(server)
    carl.send("kibitz nice roll")
    assert carl.lines() == ["19 nice roll", "** 2 users heard you."]
    assert alice.lines() == ["15 carl nice roll"]
    assert bob.lines() == ["15 carl nice roll"]
    assert dora.received() == b""
    alice.send("k thanks")
    assert alice.lines() == ["19 thanks", "** 2 users heard you."]


def test_whisper_reaches_only_watchers(server):
    alice, bob, carl, dora = _game(server)
    alice.send("whisper psst")
    assert alice.lines() == ["18 psst", "** 1 user heard you."]
    assert carl.lines() == ["14 alice psst"]
    assert bob.received() == dora.received() == b""
    carl.send("wh psst")
    assert carl.lines() == ["18 psst", "** 0 users heard you."]
    carl.send("whisper")
    assert carl.lines() == ["** You can't say nothing."]


def test_game_chat_for_telnet_users(server):
    alice, bob, carl, dora = _game(server)
    ted = telnet_user(server, "ted")
    server.lobby.find("ted").watching = "alice"
    _quiet(server)
    ted.send("kibitz hey")
    assert reply(ted) == ["** You kibitz: hey", "** 3 users heard you."]
    ted.send("whisper ho")
    assert reply(ted) == ["** You whisper: ho", "** 1 user heard you."]
    alice.send("whisper psst")
    alice.send("say to bob")
    assert event(ted) == ["alice whispers: psst"]
    carl.send("kibitz hm")
    assert event(ted) == ["carl kibitzes: hm"]


# --- message --------------------------------------------------------------------------

def test_message_to_a_logged_in_user_arrives_at_once(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    ted = telnet_user(server, "ted")
    alice.send("message bob see you at 10pm")
    assert alice.lines() == ["10 bob"]
    assert bob.lines() == [f"9 alice {T} see you at 10pm"]
    ted.send("message alice hi")
    assert reply(ted) == ["Message delivered to alice."]
    assert alice.lines() == [f"9 ted {T} hi"]
    alice.send("message ted back")
    assert event(ted) == ["Message from alice: back"]


def test_message_to_an_absent_user_is_kept_until_the_next_login(server):
    server.register("bob")
    alice = clip_user(server, "alice")
    alice.send("message bob first")
    server.advance(5)
    alice.send("message bob second")
    assert alice.lines() == ["11 bob", "11 bob"]
    bob = server.connect()
    bob.send("login test 1008 bob secret")
    lines = bob.lines()
    six = lines.index("6")
    assert lines[six + 1:] == [
        "There are messages for you:", f"9 alice {T} first", f"9 alice {T + 5} second"]
    bob.send("message")
    assert bob.lines() == ["** There are no messages for you."]


def test_stored_messages_for_telnet_users_and_across_a_restart(tmp_path: Path):
    database = tmp_path / "fibsd.sqlite"
    server = FakeServer(store=SQLiteStore(database))
    server.register("ted")
    alice = clip_user(server, "alice")
    alice.send("message ted kept")
    assert alice.lines() == ["11 ted"]
    server.factory.shutdown(server.clock)
    server.settle()
    server.store.close()
    server = FakeServer(store=SQLiteStore(database))
    ted = server.connect()
    ted.send("ted")
    ted.send("secret")
    lines = ted.lines()
    assert lines[-2:] == ["There are messages for you:", "Message from alice: kept"]
    assert ted.prompt() == "> "


def test_message_errors(server):
    alice = clip_user(server, "alice")
    alice.send("message bob")
    alice.send("message zed hello")
    alice.send("message")
    assert alice.lines() == [
        "** usage: message <user> <text>",
        "** Don't know user zed",
        "** There are no messages for you.",
    ]


def test_bare_message_shows_what_is_stored(server):
    alice = clip_user(server, "alice")
    server.store.store_message(StoredMessage("bob", "alice", T - 60, "late one"))
    alice.send("message")
    assert alice.lines() == ["There are messages for you:", f"9 bob {T - 60} late one"]


def test_a_full_mailbox_refuses_more_messages():
    server = FakeServer(settings=make_settings(**{"limits.max_messages": 2}))
    server.register("bob")
    alice = clip_user(server, "alice")
    for text in ("one", "two", "three"):
        alice.send(f"message bob {text}")
    assert alice.lines() == [
        "11 bob", "11 bob", "** Too many messages are waiting for bob. Try again later."]
    assert server.store.count_messages("bob") == 2


# --- waitfor --------------------------------------------------------------------------

def test_waitfor_tells_both_sides_when_the_user_arrives(server):
    server.register("bob")
    alice, carl = clip_user(server, "alice"), telnet_user(server, "carl")
    alice.send("waitfor")
    alice.send("waitfor alice")
    alice.send("waitfor carl")
    alice.send("waitfor zed")
    alice.send("waitfor bob")
    alice.send("waitfor bob")
    alice.send("waitfor")
    assert alice.lines() == [
        "** You aren't waiting for anyone.",
        "** You can't wait for yourself.",
        "** carl is already logged in.",
        "** Don't know user zed",
        "** Waiting for bob to log in.",
        "** Waiting for bob to log in.",
        "** Waiting for: bob",
    ]
    carl.send("waitfor bob")
    assert reply(carl) == ["** Waiting for bob to log in."]
    bob = server.connect()
    bob.send("login test 1008 bob secret")
    assert bob.lines()[-2:] == ["alice is waiting for you to log in.",
                                "carl is waiting for you to log in."]
    assert alice.lines()[-1] == "** FINALLY!!! bob logs in"
    assert "** FINALLY!!! bob logs in" in event(carl)
    alice.send("waitfor")
    assert alice.lines() == ["** You aren't waiting for anyone."]


def test_waiting_ends_when_the_waiter_logs_out(server):
    server.register("bob")
    alice = clip_user(server, "alice")
    alice.send("waitfor bob")
    alice.close()
    bob = server.connect()
    bob.send("login test 1008 bob secret")
    assert "alice is waiting for you to log in." not in bob.lines()


# --- gag and blind --------------------------------------------------------------------

def test_gag_toggles_and_lists(server):
    alice = clip_user(server, "alice")
    clip_user(server, "bob")
    clip_user(server, "carl")
    _quiet(server)
    alice.send("gag")
    alice.send("gag alice")
    alice.send("gag zed")
    alice.send("gag carl")
    alice.send("gag bo")
    alice.send("gag")
    alice.send("gag bob")
    alice.send("gag")
    assert alice.lines() == [
        "** You don't gag anyone.",
        "** You talk too much, don't you?",
        "** There is no one called zed.",
        "** You gag carl.",
        "** You gag bob.",
        "** Gagged users: bob, carl",
        "** You ungag bob.",
        "** Gagged users: carl",
    ]


def test_blind_toggles_and_lists(server):
    alice = clip_user(server, "alice")
    clip_user(server, "bob")
    _quiet(server)
    for line in ("blind", "blind alice", "blind zed", "blind bob", "blind", "blind bob"):
        alice.send(line)
    assert alice.lines() == [
        "** You don't blind anyone.",
        "** You can't read this message now, can you?",
        "** There is no one called zed.",
        "** You blind bob.",
        "** Blinded users: bob",
        "** You unblind bob.",
    ]


def test_one_users_gag_and_blind_leave_the_others_lists(server):
    """Issue 26: users share the empty gag and blind lists until they gag or blind
    someone; a change replaces the user's own list, never the shared one."""
    alice, bob, carl = (clip_user(server, name) for name in ("alice", "bob", "carl"))
    _quiet(server)
    alice.send("gag bob")
    alice.send("blind carl")
    carl.send("gag alice")
    bob.send("gag")
    bob.send("blind")
    carl.send("blind")
    assert alice.lines() == ["** You gag bob.", "** You blind carl."]
    assert bob.lines() == ["** You don't gag anyone.", "** You don't blind anyone."]
    assert carl.lines() == ["** You gag alice.", "** You don't blind anyone."]
    assert server.lobby.find("bob").gagged == frozenset()
    assert server.lobby.find("carl").gagged == {"alice"}


def test_gags_and_blinds_end_when_either_side_logs_out(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    alice.send("gag bob")
    alice.send("blind bob")
    bob.close()
    _quiet(server)
    alice.send("gag")
    alice.send("blind")
    assert alice.lines() == ["** You don't gag anyone.", "** You don't blind anyone."]
    bob = clip_user(server, "bob")
    alice.send("gag bob")
    alice.lines()
    alice.close()
    alice = clip_user(server, "alice")
    alice.send("gag")
    assert alice.lines() == ["** You don't gag anyone."]


# --- away, back, wave -----------------------------------------------------------------

def test_away_and_back_push_who_info(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    ted = telnet_user(server, "ted")
    _quiet(server)
    alice.send("away")
    assert alice.lines() == ["None of the users is away."]
    alice.send("away  lunch, back at 2")
    assert alice.lines() == [
        "You're away. Please type 'back'",
        f"5 alice - - 0 1 1500.00 0 0 {T} 10.0.0.1 test -", "6"]
    assert bob.lines() == [f"5 alice - - 0 1 1500.00 0 0 {T} 10.0.x.x test -", "6"]
    assert ted.received() == b""
    ted.send("away")
    assert reply(ted) == ["The following users are away:", "alice is away: lunch, back at 2"]
    alice.send("back")
    assert alice.lines() == [
        "Welcome back.", f"5 alice - - 0 0 1500.00 0 0 {T} 10.0.0.1 test -", "6"]
    assert bob.lines() == [f"5 alice - - 0 0 1500.00 0 0 {T} 10.0.x.x test -", "6"]
    alice.send("back")
    assert alice.lines() == ["** You're not away."]


def test_wave_twice_logs_out(server):
    alice, bob = clip_user(server, "alice"), clip_user(server, "bob")
    ted = telnet_user(server, "ted")
    _quiet(server)
    alice.send("wave")
    assert alice.lines() == ["You wave goodbye."]
    assert bob.lines() == ["alice waves goodbye."]
    assert event(ted) == ["alice waves goodbye."]
    alice.send("wave")
    lines = alice.lines()
    assert lines[:2] == ["You wave goodbye again and log out.", " " * 29 + "Goodbye."]
    assert alice.closed
    assert bob.lines() == ["alice waves goodbye again.", "8 alice alice logs out."]
