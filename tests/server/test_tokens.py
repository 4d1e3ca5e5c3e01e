"""Web session tokens (fibsd.server.tokens; protocol/web.md, "Reconnecting"), in memory:
asked for on a WebSocket session only, used instead of the password, counted by the
login throttle, revoked by ``bye`` and by a new password, kept on by a drop, bounded per
account.  A session stands for a WebSocket one with ``session.web = True`` (what
``FibsWebSocket.onOpen`` sets; tests/web/test_reconnect.py goes over a real one)."""

from __future__ import annotations

import hashlib

from tests.helpers import FakeClient, FakeServer, make_settings

TOKEN_LINE = "token: "


def server(**overrides: object) -> FakeServer:
    made = FakeServer(settings=make_settings(**{"pace.token_lifetime": 600,
                                                "pace.tokens_per_user": 2, **overrides}))
    made.register("alice")
    return made


def connect(made: FakeServer, web: bool = True) -> FakeClient:
    client = made.connect()
    assert client.protocol.session is not None
    client.protocol.session.web = web
    client.received()
    return client


def log_in(made: FakeServer, password: str = "secret", *, ask: bool = True,
           web: bool = True) -> tuple[FakeClient, list[str]]:
    client = connect(made, web)
    client.send(f"login fibsd-web 1008 alice {password}" + (" token" if ask else ""))
    return client, client.lines()


def token_of(lines: list[str]) -> str:
    [line] = [line for line in lines if line.startswith(TOKEN_LINE)]
    return line[len(TOKEN_LINE):]


def test_a_web_login_that_asks_gets_one_line_with_a_token_stored_hashed() -> None:
    made = server()
    _, lines = log_in(made)
    assert lines[-2] == "6" and lines[-1].startswith(TOKEN_LINE)  # after the login block
    secret = token_of(lines)
    assert len(secret) == 43
    assert made.store.token_user(hashlib.sha256(secret.encode()).hexdigest(),
                                 int(made.clock.seconds())) == "alice"
    assert made.store.token_user(secret, int(made.clock.seconds())) is None  # not in clear


def test_no_token_unless_asked_nor_on_telnet_or_clip_connections() -> None:
    made = server()
    _, lines = log_in(made, ask=False)
    assert not any(line.startswith(TOKEN_LINE) for line in lines)
    _, lines = log_in(made, web=False)  # the game port: the sixth word means nothing
    assert not any(line.startswith(TOKEN_LINE) for line in lines)
    assert made.store.count_tokens() == 0
    _, lines = log_in(server(**{"pace.token_lifetime": 0}))  # tokens off
    assert not any(line.startswith(TOKEN_LINE) for line in lines)


def test_a_token_logs_in_again_after_a_drop_but_not_elsewhere() -> None:
    made = server()
    first, lines = log_in(made)
    secret = token_of(lines)
    first.close()  # a drop keeps it
    again, lines = log_in(made, f"token:{secret}", ask=False)
    assert lines[1].startswith("1 alice ") and not any(l.startswith(TOKEN_LINE) for l in lines)
    again.close()
    _, lines = log_in(made, f"token:{secret}", ask=False, web=False)  # not on the game port
    assert made.lobby.find("alice") is None


def test_bye_revokes_the_token() -> None:
    made = server()
    client, lines = log_in(made)
    secret = token_of(lines)
    client.send("bye")
    made.settle()
    assert made.store.count_tokens() == 0
    _, lines = log_in(made, f"token:{secret}", ask=False)
    assert made.lobby.find("alice") is None


def test_a_new_password_revokes_every_token() -> None:
    made = server()
    old, lines = log_in(made)
    first = token_of(lines)
    old.close()
    client, lines = log_in(made)
    client.send("password secret:another:another")
    assert client.lines() == ["Password changed."]
    assert made.store.count_tokens() == 0
    client.close()  # its drop does not store its token again
    assert made.store.count_tokens() == 0
    _, lines = log_in(made, f"token:{first}", ask=False)
    assert made.lobby.find("alice") is None


def test_a_token_expires_after_its_lifetime_and_a_drop_keeps_it_that_long() -> None:
    made = server()
    client, lines = log_in(made)
    secret = token_of(lines)
    made.advance(3000)  # a session longer than the lifetime...
    client.close()  # ...keeps its token from its drop on
    made.advance(599)
    client, _ = log_in(made, f"token:{secret}", ask=False)
    assert made.lobby.find("alice") is not None
    client.send("bye")
    made.settle()
    client, lines = log_in(made)
    secret = token_of(lines)
    client.close()
    made.advance(600)
    log_in(made, f"token:{secret}", ask=False)
    assert made.lobby.find("alice") is None


def test_wrong_tokens_count_as_failed_logins() -> None:
    made = server()
    client = connect(made)
    for _ in range(4):
        client.send("login fibsd-web 1008 alice token:guess")
        assert client.lines() == [""] and client.prompt() == "login: "
    client.send("login fibsd-web 1008 alice token:guess")
    assert client.lines() == ["", "** Too many failed logins. Closing the connection."]


def test_an_account_holds_a_bounded_number_of_tokens() -> None:
    made = server()
    secrets = []
    for _ in range(3):
        made.advance(1)
        client, lines = log_in(made)
        secrets.append(token_of(lines))
    assert made.store.count_tokens() == 2
    client.close()
    log_in(made, f"token:{secrets[0]}", ask=False)  # the oldest went
    assert made.lobby.find("alice") is None


def test_a_reconnection_that_replaces_a_half_open_connection_keeps_the_token() -> None:
    """The server may not have seen the drop yet: the token's login replaces the old
    connection, which must not revoke what the new one holds."""
    made = server()
    _, lines = log_in(made)
    secret = token_of(lines)
    again, lines = log_in(made, f"token:{secret}", ask=False)
    assert lines[1] == "** Warning: You are already logged in."
    made.settle()
    again.close()
    log_in(made, f"token:{secret}", ask=False)
    assert made.lobby.find("alice") is not None


def test_an_administrator_s_new_password_revokes_the_tokens_of_a_connected_session() -> None:
    """The connected session forgets its token; and should it not, its drop could not
    store it again: the store checks the password hash it logged in with."""
    made = server(admins=("root",))
    made.register("root")
    client, lines = log_in(made)
    secret = token_of(lines)
    admin = made.connect()
    admin.send("login test 1008 root secret")
    admin.lines()
    admin.send("admin password alice newsecret")
    assert admin.lines() == ["** Changed the password of alice."]
    assert made.store.count_tokens() == 0
    client.close()
    assert made.store.count_tokens() == 0
    log_in(made, f"token:{secret}", ask=False)
    assert made.lobby.find("alice") is None
