"""Logins, registration and the session's phases, driven through in-memory transports."""

from __future__ import annotations

from fibsd.server.session import REGISTERED

from tests.helpers import START_TIME, FakeClient, FakeServer, make_settings

T = int(START_TIME)


def clip_login(server: FakeServer, name: str, password: str = "secret",
               client: str = "test") -> FakeClient:
    conn = server.connect()
    conn.received()
    conn.send(f"login {client} 1008 {name} {password}")
    conn.lines()
    return conn


def telnet_login(server: FakeServer, name: str, password: str = "secret") -> FakeClient:
    conn = server.connect()
    conn.received()
    conn.send(name)
    conn.send(password)
    conn.received()
    return conn


def test_banner_ends_with_the_login_prompt() -> None:
    client = FakeServer().connect()
    data = client.received()
    assert data.endswith(b"\r\nlogin: ")
    assert b"LOGIN AS guest" in data
    assert b"Tuesday, November 14 22:13:20 UTC   ( Tue Nov 14 22:13:20 2023 UTC )\r\n" in data


def test_clip_login_sequence() -> None:
    server = FakeServer()
    server.register("alice")
    client = server.connect()
    client.received()
    client.send("login test 1008 alice secret")
    lines = client.lines()
    assert lines[0] == ""
    assert lines[1] == f"1 alice {T} 10.0.0.1"
    assert lines[2] == "2 alice 1 1 0 0 0 0 1 1 0 0 1 0 1 1500.00 0 0 0 1 0 UTC"
    assert lines[3] == "3"
    four = lines.index("4")
    assert lines[four + 1] == ""
    assert lines[four + 2:] == [f"5 alice - - 0 0 1500.00 0 0 {T} 10.0.0.1 test -", "6"]
    assert client.prompt() == ""


def test_a_hash_made_at_an_old_cost_is_replaced_at_the_next_login() -> None:
    server = FakeServer()
    server.store.create_user("alice", "plain$secret", T)
    clip_login(server, "alice")
    stored = server.store.get_user("alice")
    assert stored is not None and stored.password_hash.startswith("sha256$")
    assert server.services.passwords.verify("secret", stored.password_hash).result is True


def test_failed_clip_login_just_prompts_again() -> None:
    server = FakeServer()
    server.register("alice")
    client = server.connect()
    client.received()
    client.send("login test 1008 alice wrong")
    assert client.received() == b"\r\nlogin: "
    client.send("login test 1008 nobody secret")
    assert client.received() == b"\r\nlogin: "


def test_telnet_login_turns_echo_off_for_the_password() -> None:
    server = FakeServer()
    server.register("bob")
    client = server.connect()
    client.received()
    client.send("bob")
    assert client.received() == b"\xff\xfb\x01password: "
    client.send("secret")
    data = client.received()
    assert data.startswith(b"\xff\xfc\x01\r\n** User bob authenticated.\r\n"
                           b"** Last login: never\r\n+---")
    assert data.endswith(b"\r\n> ")
    client.send("bye")
    again = server.connect()
    again.received()
    again.send("bob")
    again.received()
    again.send("secret")
    assert b"** Last login: Tue Nov 14 22:13:20 2023 UTC from 10.0.0.1\r\n" in again.received()


def test_failed_telnet_password_gives_echo_back() -> None:
    server = FakeServer()
    server.register("bob")
    client = server.connect()
    client.received()
    client.send("bob")
    client.received()
    client.send("nope")
    assert client.received() == b"\xff\xfc\x01\r\nlogin: "


def test_too_many_failed_logins_close_the_connection() -> None:
    server = FakeServer()
    client = server.connect()
    client.received()
    for _ in range(4):
        client.send("login test 1008 nobody x")
    assert not client.closed
    client.send("login test 1008 nobody x")
    assert client.lines()[-1] == "** Too many failed logins. Closing the connection."
    assert client.closed


def test_others_see_login_and_logout() -> None:
    server = FakeServer()
    server.register("alice")
    server.register("bob")
    alice = clip_login(server, "alice")
    telnet = telnet_login(server, "bob")
    assert alice.lines() == ["7 bob bob logs in.",
                             f"5 bob - - 0 0 1500.00 0 0 {T} 10.0.x.x - -", "6"]
    clip_login(server, "carol_missing")  # a failed login tells nobody anything
    assert alice.lines() == []
    telnet.send("bye")
    assert telnet.lines() == [" " * 29 + "Goodbye.",
                              "Thanks for playing backgammon here. Come back soon!"]
    assert telnet.closed
    assert alice.lines() == ["8 bob bob logs out."]


def test_telnet_users_get_sentences_on_a_fresh_line() -> None:
    server = FakeServer()
    server.register("alice")
    server.register("bob")
    bob = telnet_login(server, "bob")
    alice = clip_login(server, "alice")
    assert bob.received() == b"\r\nalice logs in.\r\n> "
    alice.close()
    assert bob.received() == b"\r\nalice drops connection.\r\n> "


def test_notify_off_hides_login_notices_but_not_who_updates() -> None:
    server = FakeServer()
    server.register("alice")
    server.register("bob")
    alice = clip_login(server, "alice")
    alice.send("toggle notify")
    assert alice.lines() == ["** You won't be notified when new users log in."]
    clip_login(server, "bob")
    assert alice.lines() == [f"5 bob - - 0 0 1500.00 0 0 {T} 10.0.x.x test -", "6"]


def test_second_login_closes_the_old_connection() -> None:
    server = FakeServer()
    for name in ("alice", "bob"):
        server.register(name)
    bob = clip_login(server, "bob")
    old = clip_login(server, "alice")
    bob.lines()
    new = server.connect()
    new.received()
    new.send("login other 1008 alice secret")
    lines = new.lines()
    assert lines[:3] == ["", "** Warning: You are already logged in.", f"1 alice {T} 10.0.0.1"]
    assert old.closed
    assert old.lines() == ["** You logged in again from another connection; closing this one."]
    assert bob.lines() == [
        "8 alice Closed old connection with user alice.",
        "7 alice alice logs in again.",
        f"5 alice - - 0 0 1500.00 0 0 {T} 10.0.x.x other -", "6",
    ]
    assert server.lobby.find("alice").session is new.protocol.session
    new.send("bye")
    assert bob.lines() == ["8 alice alice logs out."]


def test_lines_typed_ahead_wait_for_the_login() -> None:
    server = FakeServer()
    server.register("alice")
    client = server.connect()
    client.send_bytes(b"login test 1008 alice secret\r\nfizzbuzz\r\n")
    lines = client.lines()
    lines = lines[lines.index("login: ") + 1:]
    assert lines[0].startswith("1 alice ")
    assert lines[-2:] == ["6", "** Unknown command: 'fizzbuzz'"]


def test_bare_lf_and_telnet_negotiation_are_accepted() -> None:
    server = FakeServer()
    server.register("alice")
    client = server.connect()
    client.received()
    client.send_bytes(b"\xff\xfd\x03\xff\xfb\x18alice\n")  # DO SGA, WILL TTYPE, then the name
    assert client.received() == b"\xff\xfb\x01password: "
    client.send_bytes(b"\xff\xfd\x01secr")  # DO ECHO, half the password
    client.send_bytes(b"et\n")
    assert b"** User alice authenticated." in client.received()


def test_idle_connection_times_out() -> None:
    server = FakeServer()
    server.register("alice")
    server.register("bob")
    alice = clip_login(server, "alice")
    bob = telnet_login(server, "bob")
    alice.lines()
    server.advance(3599)
    bob.send("")
    server.advance(1)
    assert alice.closed
    assert alice.lines() == ["Connection timed out."]
    assert bob.received() == b"> \r\nConnection with alice timed out.\r\n> "


def test_non_ascii_becomes_question_marks() -> None:
    server = FakeServer()
    server.register("alice")
    client = clip_login(server, "alice")
    client.send_bytes("caf\u00e9\r\n".encode())
    assert client.lines() == ["** Unknown command: 'caf??'"]


def test_a_megabyte_line_is_refused_and_the_session_goes_on() -> None:
    server = FakeServer()
    server.register("alice")
    client = clip_login(server, "alice")
    for _ in range(16):
        client.send_bytes(b"x" * 65536)
    assert client.protocol._lines.pending <= 1024
    client.send_bytes(b"\r\nwho count\r\n")
    assert client.lines() == [
        "** Your line was too long (more than 1024 characters) and was ignored.",
        "There is 1 user logged on.",
    ]


def test_half_a_line_then_hanging_up_is_harmless() -> None:
    server = FakeServer()
    server.register("alice")
    server.register("bob")
    alice = clip_login(server, "alice")
    bob = clip_login(server, "bob")
    alice.lines()
    bob.send_bytes(b"shout hal")
    bob.close()
    assert alice.lines() == ["8 bob bob drops connection."]
    assert server.lobby.find("bob") is None


def test_binary_garbage_gets_answers_not_a_crash() -> None:
    server = FakeServer()
    server.register("alice")
    client = clip_login(server, "alice")
    client.send_bytes(bytes(range(256)) * 4 + b"\r\n")  # the final IAC eats the CR
    lines = client.lines()
    assert lines and all(line.startswith("** Unknown command: '") for line in lines)
    client.send("who count")
    assert client.lines() == ["There is 1 user logged on."]


def test_guest_registration_then_login() -> None:
    server = FakeServer()
    guest = server.connect()
    guest.received()
    guest.send("guest")
    lines = guest.lines()
    assert lines[0] == "Welcome to FIBS. You just logged in as guest."
    assert lines[-1] == "ONE USERNAME PER PERSON ONLY!!!"
    assert guest.prompt() == "> "
    guest.send("name Carol_B")
    assert guest.received() == (
        b"Your name will be Carol_B\r\n"
        b"Type in no password and hit Enter/Return if you want to change it now.\r\n"
        b"\xff\xfb\x01Please give your password: ")
    guest.send("abc")
    assert guest.received() == (b"\r\nMinimal password length is 4 characters.\r\n"
                                b"Please give your password: ")
    guest.send("pass:word")
    assert guest.received() == (b"\r\nYour password may not contain ':'\r\n"
                                b"Please give your password: ")
    guest.send("hunter")
    assert guest.received() == b"\r\nPlease retype your password: "
    guest.send("hunted")
    assert guest.received() == (b"\r\n** The two passwords were not identical. "
                                b"Please give them again. Password: ")
    guest.send("hunter")
    assert guest.received() == b"\r\nPlease retype your password: "
    guest.send("hunter")
    data = guest.received()
    walkthrough = "".join(f"{line}\r\n" for line in REGISTERED).encode()
    assert walkthrough.startswith(b"You are registered.\r\n"
                                  b"Type 'help beginner' to get started.\r\n\r\n"
                                  b"Your first match, step by step:\r\n"
                                  b"  set boardstyle 2 ")
    assert data.startswith(b"\xff\xfc\x01\r\n" + walkthrough
                           + b"** User Carol_B authenticated.\r\n")
    assert data.endswith(b"> ")
    assert server.store.get_user("Carol_B") is not None
    other = server.connect()
    other.received()
    other.send("login test 1008 Carol_B hunter")
    assert other.lines()[2].startswith("1 Carol_B ")


def test_registration_name_rules() -> None:
    server = FakeServer()
    server.register("Alice")
    guest = server.connect()
    guest.received()
    guest.send("guest")
    guest.received()
    used = "** Please use another name. '{}' is already used by someone else."
    for typed, reply in [
        ("name r2d2", "** Your name may only contain letters and the underscore character _ ."),
        ("name two words", "** Your name may only contain letters and the underscore "
                           "character _ ."),
        ("name", "** Your name may only contain letters and the underscore character _ ."),
        ("name " + "a" * 21, "** Please use a name with at most 20 characters."),
        ("name alice", used.format("alice")),
        ("name GUEST", used.format("GUEST")),
    ]:
        guest.send(typed)
        assert guest.lines() == [reply], typed
        assert guest.prompt() == "> "


def test_empty_password_goes_back_to_choosing_a_name() -> None:
    server = FakeServer()
    guest = server.connect()
    guest.received()
    guest.send("guest")
    guest.send("name dave")
    guest.received()
    guest.send("")
    assert guest.received() == (b"\xff\xfc\x01\r\n** No password given. "
                                b"Please choose a new name\r\n> ")
    guest.send("Name dave")  # `name` must be typed in full, in lower case
    assert guest.lines()[0] == "Welcome to FIBS. You just logged in as guest."
    guest.send("bye")
    assert guest.closed


def test_a_login_line_with_fields_missing_fails_like_a_wrong_password() -> None:
    server = FakeServer()
    server.register("alice")
    client = server.connect()
    client.received()
    client.send("login test 1008 alice")
    assert client.received() == b"\r\nlogin: "
    client.send("login test")
    assert client.received() == b"\r\nlogin: "
    client.send("login test 1008 alice secret")
    assert client.lines()[1] == f"1 alice {T} 10.0.0.1"


def test_commands_before_login_are_names() -> None:
    server = FakeServer()
    client = server.connect()
    client.received()
    client.send("who")
    assert client.received() == b"\xff\xfb\x01password: "
    client.send("x")
    assert client.received() == b"\xff\xfc\x01\r\nlogin: "


def test_guest_is_refused_when_registration_is_off() -> None:
    server = FakeServer(settings=make_settings(registration=False))
    guest = server.connect()
    guest.received()
    guest.send("guest")
    assert guest.received() == b"Your site is not allowed to create new accounts.\r\nlogin: "


def test_a_full_server_refuses_further_logins() -> None:
    server = FakeServer(settings=make_settings(**{"limits.max_users": 1}))
    server.register("alice")
    server.register("bob")
    clip_login(server, "alice")
    late = server.connect()
    late.received()
    late.send("login test 1008 bob secret")
    assert late.lines() == ["", "** Sorry, the server is full. Please try again later."]
    assert late.closed
    again = clip_login(server, "alice")  # the same account may still take over
    assert not again.closed


def test_bang_bang_repeats_the_last_command_but_not_chat() -> None:
    server = FakeServer()
    server.register("alice")
    client = clip_login(server, "alice")
    client.send("!!")
    assert client.lines() == ["** Unknown command: '!!'"]
    client.send("who count")
    client.send("!!")
    assert client.lines() == ["There is 1 user logged on."] * 2
    client.send("shout hello")
    client.send("!!")
    assert client.lines() == ["17 hello", "There is 1 user logged on."]


def test_stored_messages_follow_the_login_block() -> None:
    from fibsd.store import StoredMessage

    server = FakeServer()
    server.register("alice")
    server.register("bob")
    server.store.store_message(StoredMessage("bob", "alice", 1_600_000_000, "see you at 10"))
    server.store.store_message(StoredMessage("bob", "alice", 1_600_000_001, "or 11"))
    client = server.connect()
    client.received()
    client.send("login test 1008 alice secret")
    assert client.lines()[-4:] == ["6", "There are messages for you:",
                                   "9 bob 1600000000 see you at 10", "9 bob 1600000001 or 11"]
    telnet = server.connect()
    server.store.store_message(StoredMessage("alice", "bob", 1_600_000_002, "hi"))
    telnet.received()
    telnet.send("bob")
    telnet.send("secret")
    assert telnet.lines()[-2:] == ["There are messages for you:", "Message from alice: hi"]
    assert telnet.prompt() == "> "
    assert server.store.take_messages("alice") == []


def test_whois_of_someone_who_left() -> None:
    server = FakeServer()
    server.register("alice")
    server.register("bob")
    bob = clip_login(server, "bob")
    server.advance(90)
    bob.send("bye")
    alice = clip_login(server, "alice")
    alice.send("whois bob")
    assert alice.lines() == [
        "Information about bob:",
        "  Last login:  Tue Nov 14 22:13:20 2023 UTC from 10.0.x.x",
        "  Last logout: Tue Nov 14 22:14:50 2023 UTC",
        "  Not logged in right now.",
        "  Rating: 1500.00 Experience: 0",
        "  No email address.",
        "  Abandoned matches: 0 of 0 (reliability 100%).",
    ]


def test_a_failing_command_is_answered_and_the_session_goes_on() -> None:
    from twisted.internet.defer import fail

    from fibsd.server import commands

    def broken(session: object, rest: str) -> None:
        raise RuntimeError("boom")

    def broken_later(session: object, rest: str) -> object:
        return fail(RuntimeError("boom later"))

    commands.COMMANDS["zzbroken"] = commands.Command("zzbroken", broken)
    commands.COMMANDS["zzlater"] = commands.Command("zzlater", broken_later)
    try:
        server = FakeServer()
        server.register("alice")
        client = telnet_login(server, "alice")
        for word in ("zzbroken", "zzlater"):
            client.send(word)
            assert client.received() == (
                b"** Sorry, the server could not complete that command.\r\n> ")
        client.send("who count")
        assert client.received() == b"There is 1 user logged on.\r\n> "
    finally:
        del commands.COMMANDS["zzbroken"], commands.COMMANDS["zzlater"]


def test_input_waiting_for_a_slow_login_is_bounded() -> None:
    from twisted.internet.defer import Deferred

    server = FakeServer()
    pending: Deferred[object] = Deferred()
    server.services.db = type("Slow", (), {"get_user": lambda self, name: pending})()
    client = server.connect()
    client.received()
    client.send_bytes(b"login test 1008 alice secret\r\n" + b"who\r\n" * 10_000)
    session = client.protocol.session
    assert session is not None and len(session._queue) == 100
    client.close()
    pending.callback(None)  # the answer comes after the hang-up: nothing happens
    assert client.received() == b""


def test_a_client_that_does_not_read_stops_being_served() -> None:
    server = FakeServer()
    server.register("alice")
    client = clip_login(server, "alice")
    protocol = client.protocol
    assert client.transport.producer is protocol and client.transport.streaming
    protocol.pauseProducing()  # what Twisted does when the send buffer is full
    assert client.transport.producerState == "paused"
    client.send_bytes(b"who count\r\n" * 3)
    assert client.lines() == []
    protocol.resumeProducing()
    assert client.lines() == ["There is 1 user logged on."] * 3


def test_help_lists_the_commands_and_shows_topics() -> None:
    server = FakeServer()
    server.register("alice")
    client = clip_login(server, "alice")
    client.send("help")
    lines = client.lines()
    assert lines[0] == "Commands:"
    assert all(not line.startswith(("*", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"))
               for line in lines)
    words = " ".join(lines[1:-2]).split()
    assert {"bye", "help", "quit", "rawwho", "show", "who", "whois"} <= set(words)
    client.send("help whoi")  # an abbreviation finds the topic
    assert client.lines()[0] == "whois <name>"
    client.send("help ../../etc/passwd")
    assert client.lines() == ["** No help available on '../../etc/passwd'."]
    client.send("motd")
    assert client.lines()[:2] == ["3", "+" + "-" * 68 + "+"]


def test_a_clip_login_lists_everyone_as_they_are_now() -> None:
    """The who list a login receives is kept for the current second (Lobby.who_lines):
    a change, a login or a logout within that second must show, and the idle times
    must move on with the clock."""
    server = FakeServer()
    for name in ("alice", "bob", "carol", "dave", "erin", "fred"):
        server.register(name)
    alice = clip_login(server, "alice")
    clip_login(server, "bob")

    def who(name: str) -> list[str]:
        conn = server.connect()
        conn.received()
        conn.send(f"login test 1008 {name} secret")
        lines = conn.lines()
        start = lines.index("4") + 2  # after the MOTD block and its empty line
        return [line.split(" 1500.00 ")[0] + " " + line.split(" ")[8] if line != "6" else line
                for line in lines[start:lines.index("6", start) + 1]]

    assert who("carol") == ["5 alice - - 0 0 0", "5 bob - - 0 0 0", "5 carol - - 0 0 0", "6"]
    alice.send("toggle ready")
    assert who("dave") == ["5 alice - - 1 0 0", "5 bob - - 0 0 0", "5 carol - - 0 0 0",
                           "5 dave - - 0 0 0", "6"]
    server.lobby.find("bob").session.connection.close()
    server.settle()
    assert who("erin") == ["5 alice - - 1 0 0", "5 carol - - 0 0 0", "5 dave - - 0 0 0",
                           "5 erin - - 0 0 0", "6"]
    server.advance(5)
    assert who("fred") == ["5 alice - - 1 0 5", "5 carol - - 0 0 5", "5 dave - - 0 0 5",
                           "5 erin - - 0 0 5", "5 fred - - 0 0 0", "6"]


def test_the_kept_who_list_grows_in_pieces_and_lists_everyone_in_order(monkeypatch) -> None:
    """Issue 26: a login adds its line to the kept list's last piece, or starts a new
    piece past ``WHO_PIECE`` bytes (not a copy of the whole list per login); the next
    login still receives every line in login order."""
    from fibsd.server import lobby as lobby_module

    monkeypatch.setattr(lobby_module, "WHO_PIECE", 60)
    server = FakeServer()
    names = ["alice", "bob", "carol", "dave", "erin", "fred", "gina"]
    for name in names:
        server.register(name)
    for name in names[:-1]:
        clip_login(server, name)
    assert len(server.lobby._who_lines[1]) >= 3
    conn = server.connect()
    conn.received()
    conn.send("login test 1008 gina secret")
    lines = conn.lines()
    start = lines.index("4") + 2
    listed = lines[start:lines.index("6", start)]
    assert [line.split(" ")[1] for line in listed] == names
    assert listed[:-1] == [u.clip_who_line(server.clock.seconds())
                           for u in server.lobby.users()][:-1]
