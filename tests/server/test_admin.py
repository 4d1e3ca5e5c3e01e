"""The administrators' ``admin`` command, conversation by conversation, with exact lines
(in memory: ``FakeServer``); every line an admin conversation produced must be in the
message catalogue.  The database operations again from the command line (``fibsd admin``)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from twisted.logger import globalLogPublisher

from fibsd.__main__ import main
from fibsd.store import AdminAction, SavedMatch
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import FakeClient, FakeServer, cheap_hash, make_settings
from tests.server.test_transcripts import catalogue

START = 1_700_000_000  # FakeServer's clock
SEEN: list[str] = []  # every line these conversations received, for the catalogue test


@pytest.fixture
def server() -> FakeServer:
    fake = FakeServer(settings=make_settings(admins=["root"]))
    for name in ("root", "alice", "bob"):
        fake.register(name)
    return fake


def login(server: FakeServer, name: str, host: str = "10.0.0.1", clip: bool = True) -> FakeClient:
    client = server.connect(host)
    client.received()
    if clip:
        client.send(f"login test 1008 {name} secret")
    else:
        client.send(name)
        client.send("secret")
    client.lines()
    client.prompt()
    for other in server.clients:  # the others' login notices are other tests' business
        if other is not client:
            other.lines()
    return client


def said(client: FakeClient) -> list[str]:
    """The lines received since the last look; a telnet prompt after them is dropped."""
    lines = client.lines()
    client.prompt()
    SEEN.extend(lines)
    return lines


@pytest.fixture
def admin_events() -> Any:
    events: list[dict[str, Any]] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("event") == "admin":
            events.append(event)

    globalLogPublisher.addObserver(observe)
    yield events
    globalLogPublisher.removeObserver(observe)


def test_admin_is_an_unknown_command_to_everyone_else(server: FakeServer) -> None:
    alice = login(server, "alice")
    alice.send("admin alert hello")
    alice.send("adm")
    assert said(alice) == ["** Unknown command: 'admin'", "** Unknown command: 'adm'"]
    alice.send("ad")  # still `address`, as on FIBS
    assert said(alice)[0].startswith("** ")
    alice.send("help")
    assert not any("admin" in line for line in alice.lines())


def test_usage(server: FakeServer) -> None:
    root = login(server, "root")
    root.send("admin")
    root.send("admin frobnicate")
    assert said(root) == [
        "** Usage: admin alert|kick|ban|unban|bans|password|rename|delete|reload|shutdown|log|bot ...",
    ] * 2


def test_alert_reaches_every_user_in_their_mode(server: FakeServer,
                                               admin_events: list[dict[str, Any]]) -> None:
    root = login(server, "root")
    alice = login(server, "alice")
    bob = login(server, "bob", clip=False)
    root.send("admin alert Server restart at noon")
    assert said(root) == ["20 root Server restart at noon"]
    assert said(alice) == ["20 root Server restart at noon"]
    assert said(bob) == ["", "** Alert from root: Server restart at noon"]
    assert [(e["action"], e["admin"], e["detail"]) for e in admin_events] == [
        ("alert", "root", "Server restart at noon")]
    assert server.store.admin_log(5) == [
        AdminAction(START, "root", "alert", "", "Server restart at noon")]


def test_an_admin_s_words_cannot_read_as_a_fibs_event(server: FakeServer) -> None:
    """Issue 21: an admin's words outside a CLIP number go through user_text.shown."""
    root = login(server, "root")
    alice = login(server, "alice")
    bob = login(server, "bob", clip=False)
    root.send("admin alert alice is playing with fire")
    said(root), said(alice)
    assert said(bob) == ["", "** Alert from root: alice is  playing with fire"]
    root.send("admin kick alice bye" + " " * 11 + "Goodbye.")
    assert said(alice) == ["** You were kicked off the server by root: bye" + " " * 10 + "Goodbye."]


def test_kick(server: FakeServer, admin_events: list[dict[str, Any]]) -> None:
    root = login(server, "root")
    alice = login(server, "alice")
    root.send("admin kick alice flooding")
    assert said(alice) == ["** You were kicked off the server by root: flooding"]
    assert alice.closed
    assert said(root) == ["** alice was kicked off the server.", "8 alice alice logs out."]
    root.send("admin kick alice")
    assert said(root) == ["** alice is not logged in."]
    assert [(e["action"], e["target"]) for e in admin_events] == [("kick", "alice")]
    assert server.store.admin_log(5)[0].detail == "flooding"


def test_ban_a_name_for_a_while_then_unban(server: FakeServer) -> None:
    root = login(server, "root")
    alice = login(server, "alice")
    root.send("admin ban alice 30m cheating")
    assert said(alice) == ["** You are banned from this server until Tue Nov 14 22:43:20 2023 UTC."]
    assert alice.closed
    assert said(root) == [
        "** Banned name alice until Tue Nov 14 22:43:20 2023 UTC, by root: cheating",
        "8 alice alice logs out."]
    again = server.connect()
    again.received()
    again.send("login test 1008 alice secret")
    assert said(again) == ["", "** You are banned from this server until "
                               "Tue Nov 14 22:43:20 2023 UTC."]
    assert again.closed
    server.advance(1800)  # expired
    assert login(server, "alice").protocol.session.user is not None
    root.lines()
    root.send("admin unban alice")
    assert said(root) == ["** Lifted the ban on alice."]
    root.send("admin unban alice")
    assert said(root) == ["** There is no ban on alice."]


def test_ban_an_address_forever_refuses_logins_and_guests(server: FakeServer) -> None:
    root = login(server, "root")
    bob = login(server, "bob", host="10.0.0.66")
    root.send("admin ban 10.0.0.66")
    assert said(bob) == ["** You are banned from this server."]
    assert said(root) == ["** Banned address 10.0.0.66 until lifted, by root",
                          "8 bob bob logs out."]
    guest = server.connect("10.0.0.66")
    guest.received()
    guest.send("guest")
    assert said(guest) == ["", "** You are banned from this server."]
    assert guest.closed
    elsewhere = login(server, "bob", host="10.0.0.67")
    assert elsewhere.protocol.session.user is not None


def test_ban_refuses_what_is_neither_a_name_nor_an_address(server: FakeServer) -> None:
    root = login(server, "root")
    root.send("admin ban bob7")
    root.send("admin ban")
    assert said(root) == [
        "** 'bob7' is neither a user name nor an address.",
        "** Usage: admin ban <name|address> [<n>m|<n>h|<n>d|forever] [reason]"]


def test_bans_lists_the_bans_in_force(server: FakeServer) -> None:
    root = login(server, "root")
    root.send("admin bans")
    assert said(root) == ["** No bans."]
    root.send("admin ban mallory forever spam")
    root.send("admin ban 192.168.1.9 30m")
    root.lines()
    root.send("admin bans")
    assert said(root) == [
        "** Bans:",
        "** name mallory until lifted, by root: spam",
        "** address 192.168.1.9 until Tue Nov 14 22:43:20 2023 UTC, by root"]


def test_password_reset(server: FakeServer, admin_events: list[dict[str, Any]]) -> None:
    root = login(server, "root")
    root.send("admin password alice n3w-pass")
    assert said(root) == ["** Changed the password of alice."]
    assert server.store.get_user("alice").password_hash == cheap_hash("n3w-pass")
    root.send("admin password nobody n3w-pass")
    root.send("admin password alice no")
    assert said(root) == [
        "** There is no user nobody.",
        "** A password needs 4 characters or more, no blank and no colon."]
    assert all("n3w-pass" not in str(e) for e in admin_events)
    assert "n3w-pass" not in repr(server.store.admin_log(10))


def test_rename(server: FakeServer) -> None:
    root = login(server, "root")
    server.store.save_match(SavedMatch("alice", "bob", START, "{}"))
    root.send("admin rename alice Zoe")
    assert said(root) == ["** Renamed alice to Zoe."]
    assert server.store.load_match("Zoe", "bob") is not None
    bob = login(server, "bob")
    root.send("admin rename Zoe bob")
    root.send("admin rename Zoe root")
    root.send("admin rename Zoe x7")
    root.send("admin rename nobody Somebody")
    root.send("admin rename root Boss")
    root.send("admin rename bob Zoe")  # taken: bob is not kicked for nothing
    assert said(root) == [
        "** bob is logged in: 'admin kick bob' first.",
        "** root is logged in: 'admin kick root' first.",
        "** 'x7' cannot be a user name (letters and _ only, not guest).",
        "** There is no user nobody.",
        "** root is logged in: 'admin kick root' first.",
        "** The name Zoe is taken."]
    assert said(bob) == []
    root.send("admin rename bob Bobby")  # online: kicked first (issue 19)
    assert said(bob) == ["** You were kicked off the server by root: account renamed to Bobby"]
    assert said(root) == ["** bob was kicked off the server.", "8 bob bob logs out.",
                          "** Renamed bob to Bobby."]
    assert server.lobby.find("bob") is None and server.store.get_user("Bobby") is not None
    root.send("admin rename Zoe BOBBY")
    assert said(root) == ["** The name BOBBY is taken."]


def test_delete(server: FakeServer) -> None:
    root = login(server, "root")
    root.send("admin delete alice")
    assert said(root) == ["** Deleted the account alice."]
    assert server.store.get_user("alice") is None
    bob = login(server, "bob")
    root.lines()
    root.send("admin delete root")
    root.send("admin delete alice")
    assert said(root) == ["** root is logged in: 'admin kick root' first.",
                          "** There is no user alice."]
    root.send("admin delete bob")  # online: kicked first (issue 19)
    assert said(bob) == ["** You were kicked off the server by root: account deleted"]
    assert said(root) == ["** bob was kicked off the server.", "8 bob bob logs out.",
                          "** Deleted the account bob."]
    assert server.lobby.find("bob") is None and server.store.get_user("bob") is None


def test_reload_reads_the_motd_again(server: FakeServer, tmp_path: Path) -> None:
    motd = tmp_path / "motd.txt"
    motd.write_text("Old news.\n")
    fake = FakeServer(settings=make_settings(admins=["root"], motd=str(motd)))
    fake.register("root")
    root = login(fake, "root", clip=False)
    motd.write_text("Fresh news.\n")
    root.send("admin reload")
    assert said(root) == [f"** Reloaded the MOTD; help texts are read from "
                          f"{fake.settings.help_dir} at each use."]
    root.prompt()
    root.send("motd")
    assert "|  Fresh news." + " " * 55 + "|" in said(root)


def test_reload_warns_of_a_missing_help_directory(tmp_path: Path) -> None:
    fake = FakeServer(settings=make_settings(admins=["root"], help_dir=str(tmp_path / "none")))
    fake.register("root")
    root = login(fake, "root")
    root.send("admin reload")
    assert said(root) == [
        f"** The help directory {tmp_path / 'none'} is missing: 'help <topic>' finds no text.",
        f"** Reloaded the MOTD; help texts are read from {tmp_path / 'none'} at each use."]


def test_shutdown_counts_down_for_everyone_then_stops(server: FakeServer) -> None:
    stopped: list[bool] = []
    server.services.stop = lambda: stopped.append(True)
    root = login(server, "root")
    alice = login(server, "alice", clip=False)
    root.send("admin shutdown 65 new version")
    line = "** The server will shut down in {} seconds (new version)."
    assert said(root) == [line.format(65)]
    assert said(alice) == ["", line.format(65)]
    server.advance(5)
    assert said(alice) == ["", line.format(60)]
    server.advance(30)
    assert said(alice) == ["", line.format(30)]
    server.advance(29)
    assert said(alice) == ["", line.format(10), "> ", line.format(5)]
    assert not stopped
    server.advance(1)
    assert stopped == [True]


def test_shutdown_cancel(server: FakeServer) -> None:
    stopped: list[bool] = []
    server.services.stop = lambda: stopped.append(True)
    root = login(server, "root")
    alice = login(server, "alice")
    root.send("admin shutdown 20")
    root.send("admin shutdown cancel")
    assert said(alice) == ["** The server will shut down in 20 seconds.",
                           "** The shutdown was cancelled."]
    server.advance(60)
    assert not stopped and alice.lines() == []
    root.lines()
    root.send("admin shutdown cancel")
    root.send("admin shutdown soon")
    assert said(root) == [
        "** No shutdown is under way.",
        "** Usage: admin shutdown <seconds, 1 to 86400> [reason] | cancel"]


def test_log_shows_the_stored_actions(server: FakeServer) -> None:
    root = login(server, "root")
    root.send("admin log")
    assert said(root) == ["** The admin log is empty."]
    root.send("admin ban mallory")
    root.send("admin unban mallory")
    root.lines()
    root.send("admin log 5")
    assert said(root) == ["** Admin log:",
                          "** Tue Nov 14 22:13:20 2023 UTC root ban name mallory forever",
                          "** Tue Nov 14 22:13:20 2023 UTC root unban name mallory"]


def test_every_admin_line_is_catalogued() -> None:
    assert SEEN
    entries = catalogue()
    unknown = sorted({line for line in SEEN
                      if not any(prompt == (line == "> ") and pattern.fullmatch(line)
                                 for _, pattern, prompt in entries)})
    assert unknown == []


# `fibsd admin`: the database operations from the command line


def run(database: Path, *words: str, stdin: str = "") -> tuple[int, str, str]:
    import contextlib
    import sys

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--database", str(database), "admin", *words])
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def test_the_command_line_administers_the_database(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    for name in ("alice", "bob"):
        store.create_user(name, "h", 1)
    store.add_token("alice", "token-hash", 1, 2**40, 5, "h")  # a web session token
    store.close()
    code, out, err = run(database, "ban", "bob", "7d", "abuse")
    assert (code, err) == (0, "")
    assert out.startswith("Banned name bob until ") and out.endswith(", by console: abuse\n")
    code, out, _ = run(database, "bans")
    assert code == 0 and out.startswith("Bans:\nname bob until ") and out.endswith(
        ", by console: abuse\n")
    assert run(database, "unban", "bob") == (0, "Lifted the ban on bob.\n", "")
    assert run(database, "unban", "bob") == (1, "", "fibsd admin: There is no ban on bob.\n")
    assert run(database, "password", "alice", stdin="s3cret-x\n") == (
        0, "Changed the password of alice.\n", "")
    store = SQLiteStore(database)
    assert store.count_tokens() == 0  # a new password revokes the tokens
    store.close()
    assert run(database, "rename", "alice", "Alicia") == (0, "Renamed alice to Alicia.\n", "")
    assert run(database, "delete", "bob") == (0, "Deleted the account bob.\n", "")
    assert run(database, "delete", "bob") == (1, "", "fibsd admin: There is no user bob.\n")
    code, _, err = run(database, "kick", "Alicia")
    assert code == 1 and err.startswith("fibsd admin: 'kick' needs the running server")
    code, out, _ = run(database, "log")
    lines = out.splitlines()
    assert (code, lines[0], len(lines)) == (0, "Admin log:", 6)
    assert [line.split(" UTC ", 1)[1] for line in lines[2:]] == [
        "console unban name bob", "console password alice", "console rename alice Alicia",
        "console delete bob"]
    assert lines[1].split(" UTC ", 1)[1].startswith("console ban name bob until ")
    store = SQLiteStore(database)
    try:
        from passlib.hash import argon2

        assert argon2.verify("s3cret-x", store.get_user("Alicia").password_hash)
        assert store.get_user("bob") is None
        assert [a.action for a in store.admin_log(10)] == [
            "ban", "unban", "password", "rename", "delete"]
        assert all(a.admin == "console" for a in store.admin_log(10))
    finally:
        store.close()


def test_the_command_line_needs_an_existing_database(tmp_path: Path) -> None:
    database = tmp_path / "none.sqlite"
    assert run(database, "bans") == (1, "", f"fibsd admin: no database at {database}\n")
    assert not database.exists()


def test_a_missing_help_directory_is_a_warning_at_start(tmp_path: Path) -> None:
    warnings: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(warnings.append)
    try:
        FakeServer(settings=make_settings(help_dir=str(tmp_path / "gone")))
    finally:
        globalLogPublisher.removeObserver(warnings.append)
    [warning] = [e for e in warnings if e.get("log_namespace") == "fibsd.app"]
    assert warning["log_level"].name == "warn"
    assert warning["problem"] == (
        f"The help directory {tmp_path / 'gone'} is missing: 'help <topic>' finds no text.")


@pytest.mark.parametrize("command", ["delete alice", "rename alice Zoe"])
def test_an_account_changed_mid_match_is_kicked_first_and_leaves_no_ghost(
        command: str) -> None:
    """Issue 19: the player is kicked, his match saved under his account before the
    change; no session plays on for an account that is gone, nothing is logged as an
    error, and a newcomer who registers the deleted name starts afresh."""
    from fibsd.store import FinishedMatch
    from tests.server.test_match import Table

    server = FakeServer(settings=make_settings(admins=["root"]))
    for name in ("root", "alice", "bob", "carol"):
        server.register(name)
    server.store.record_finished_match(FinishedMatch("alice", "bob", 1, 1, 0, START, "r"))
    errors: list[dict[str, Any]] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("log_level") is not None and event["log_level"].name in (
                "error", "critical"):
            errors.append(event)

    globalLogPublisher.addObserver(observe)
    try:
        table = Table([(3, 5), (6, 2)], server=server)
        root = login(server, "root")
        table.start("5")
        table.send("bob", "move 8-3 6-3")
        table.lines()
        root.lines()
        root.send(f"admin {command}")
        got = table.lines()
        said_root = said(root)
    finally:
        globalLogPublisher.removeObserver(observe)
    assert errors == []
    reason = "account deleted" if command.startswith("delete") else "account renamed to Zoe"
    assert got["alice"] == [f"** You were kicked off the server by root: {reason}"]
    assert got["bob"][:2] == ["8 alice alice logs out.", "alice logs out. The game was saved."]
    done = "** Deleted the account alice." if command.startswith("delete") else (
        "** Renamed alice to Zoe.")
    assert [said_root[0], said_root[1], said_root[-1]] == [
        "** alice was kicked off the server.", "8 alice alice logs out.", done]
    assert server.lobby.find("alice") is None and "alice" not in server.lobby.matches
    assert server.lobby.find("bob").playing is None
    assert server.store.get_user("alice") is None
    if command.startswith("rename"):
        assert server.store.load_match("Zoe", "bob") is not None  # kept, under the new name
        assert [m.winner for m in server.store.finished_matches("Zoe")] == ["Zoe"]
        return
    assert server.store.saved_matches("bob") == []
    server.register("alice")  # a newcomer takes the name
    assert server.store.finished_matches("alice") == []
    assert server.store.saved_matches("alice") == []
    assert [m.winner for m in server.store.finished_matches("bob")] == ["alice"]


def test_the_command_line_refuses_to_change_an_account_logged_in(tmp_path: Path) -> None:
    """Issue 19: the shell cannot reach the server's sessions, so it does not rename or
    delete an account the database shows logged in (a ghost session would go on)."""
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    for name in ("alice", "bob"):
        store.create_user(name, "h", 1)
    store.record_login("alice", 1_700_000_000, "10.0.0.1")
    store.record_login("bob", 1_700_000_000, "10.0.0.2")
    store.record_logout("bob", 1_700_000_000)  # the same second: logged out
    store.close()
    refusal = ("fibsd admin: alice is logged in (since Tue Nov 14 22:13:20 2023 UTC): type "
               "'admin {0} alice ...' in the server (it kicks him first); if no server is "
               "running, add --force (fibsd admin --force {0} ...)\n")
    assert run(database, "delete", "alice") == (1, "", refusal.format("delete"))
    assert run(database, "rename", "alice", "Zoe") == (1, "", refusal.format("rename"))
    assert run(database, "rename", "bob", "Bobby") == (0, "Renamed bob to Bobby.\n", "")
    assert run(database, "--force", "delete", "alice") == (0, "Deleted the account alice.\n", "")
    store = SQLiteStore(database)
    try:
        assert [a.action for a in store.admin_log(10)] == ["rename", "delete"]
    finally:
        store.close()
