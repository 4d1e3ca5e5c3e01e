"""A site on PostgreSQL: the ``database`` URL, a server on it, ``fibsd migrate`` from
SQLite (verified), ``fibsd admin`` and ``fibsd backup`` (pg_dump).  Against the
session's private PostgreSQL server (the ``postgres`` fixture)."""

from __future__ import annotations

import contextlib
import io
import shutil
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest
import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol

from fibsd.__main__ import main
from fibsd.config import load_settings
from fibsd.store import (
    AdminAction,
    Ban,
    Departure,
    FinishedMatch,
    SavedMatch,
    Store,
    StoredMessage,
)
from fibsd.store.opening import masked, shown
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import make_settings

pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'fibsd[postgres]'")

import psycopg  # noqa: E402

from fibsd.store.postgres import PostgresStore  # noqa: E402
from fibsd.store.site_copy import ratings_checksum  # noqa: E402


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_the_database_setting_takes_a_url(tmp_path: Path) -> None:
    url = "postgresql://fibsd:secret@db.example.net:5432/fibsd"
    config = tmp_path / "fibsd.toml"
    config.write_text(f'database = "{url}"\n')
    assert load_settings(config, {}).database == url
    assert load_settings(None, {"database": "postgres://u@/x?host=/run"}).database == (
        "postgres://u@/x?host=/run")
    assert load_settings(None, {"database": "x.sqlite"}).database.name == "x.sqlite"
    assert shown(url) == "postgresql://fibsd:***@db.example.net:5432/fibsd"
    assert shown("postgresql://fibsd@/fibsd?host=/run") == "postgresql://fibsd@/fibsd?host=/run"


def test_an_unreachable_postgresql_is_a_clear_error(tmp_path: Path) -> None:
    url = f"postgresql://nobody:pw@/none?host={tmp_path}&connect_timeout=2"
    code, out, err = run("--port", "0", "--database", url)
    assert code == 2
    assert err.startswith(f"fibsd: cannot open the database {shown(url)}: ")
    assert ":pw@" not in err and "Traceback" not in err


def test_passwords_are_masked_in_every_message(tmp_path: Path) -> None:
    """The README's promise, for every command that can print a database URL or a
    driver's error about it: migrate, admin, the server's start, a pg_dump backup."""
    database = tmp_path / "site.sqlite"
    SQLiteStore(database).close()
    refused = "postgresql://fibsd:s3cretpw@127.0.0.1:1/fibsd?connect_timeout=2"
    bad_option = "postgresql://fibsd:s3cretpw@127.0.0.1:1/fibsd?password=0therpw&sslmode=bogus"
    results = []
    for url in (refused, bad_option):
        results.append(run("migrate", "--from", str(database), "--to", url))
        results.append(run("--database", url, "admin", "bans"))
        results.append(run("--port", "0", "--web-port", "0", "--database", url))
    results.append(run("--database", refused, "backup", str(tmp_path / "copy.dump")))
    assert results[0][2].startswith("fibsd: migrate failed, nothing copied: cannot open "
                                    "postgresql://fibsd:***@127.0.0.1:1/fibsd?connect_timeout=2: ")
    assert results[4][2].startswith("fibsd admin: cannot open the database: ")
    for code, out, err in results:
        assert code != 0
        assert "s3cretpw" not in out + err and "0therpw" not in out + err
    assert masked(f"x {bad_option} s3cretpw", bad_option) == (
        "x postgresql://fibsd:***@127.0.0.1:1/fibsd?password=***&sslmode=bogus ***")
    assert masked("p%40ss and p@ss", "postgresql://u:p%40ss@h/db") == "*** and ***"


@pytest_twisted.ensureDeferred
async def test_a_server_on_postgresql_logs_users_in_and_out(postgres_url: str) -> None:
    from fibsd.app import FibsService
    from tests.server.test_app import _Recorder

    store = PostgresStore(postgres_url)
    store.create_user("alice", argon2.using(memory_cost=64, time_cost=1).hash("secret"), 1)
    store.close()
    service = FibsService(make_settings(port=0, interface="127.0.0.1", database=postgres_url),
                          reactor)
    service.startService()
    try:
        port = (await service.listening).getHost().port
        client = _Recorder()
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), client)
        await client.expect(b"login: ")
        assert client.transport is not None
        client.transport.write(b"login test 1008 alice secret\r\n")
        await client.expect(b"\r\n6\r\n")
    finally:
        await service.stopService()
    store = PostgresStore(postgres_url)
    record = store.get_user("alice")
    store.close()
    assert record is not None and record.last_host == "127.0.0.1"
    assert record.last_login is not None and record.last_logout is not None


@pytest_twisted.ensureDeferred
async def test_a_match_on_postgresql_is_dropped_kept_through_a_restart_and_finished(
        postgres_url: str) -> None:
    from fibsd.app import FibsService
    from tests.server.test_match_restart import play_drop_restart_and_resume

    store = PostgresStore(postgres_url)
    for name in ("alice", "bob"):
        store.create_user(name, argon2.using(type="ID", memory_cost=64, time_cost=1)
                          .hash("secret"), 1_700_000_000)
    store.close()
    services: list[FibsService] = []
    try:
        await play_drop_restart_and_resume(postgres_url, services)
    finally:
        for service in services:
            if service.running:
                await service.stopService()
    store = PostgresStore(postgres_url)
    try:
        [finished] = store.finished_matches("alice")
        assert store.load_match("alice", "bob") is None
        assert finished.length == 2 and finished.winner_points >= 2
        winner = store.get_user(finished.winner)
        assert winner is not None and winner.experience == 2
    finally:
        store.close()


def a_site(database: Path) -> SQLiteStore:
    store = SQLiteStore(database)
    for n, name in enumerate(("alice", "Bob", "carol", "dave")):
        store.create_user(name, f"hash-{name}", 1000 + n)
    store.record_login("alice", 2000, "host.example.net")
    store.set_address("alice", "alice@example.com")
    store.save_settings("alice", {"boardstyle": "3", "ready": "1"})
    store.save_settings("Bob", {"timezone": "Europe/Sofia"})
    store.store_message(StoredMessage("Bob", "carol", 2500, "see you"))
    store.store_message(StoredMessage("alice", "carol", 2600, "me too"))
    store.save_match(SavedMatch("carol", "alice", 3000, "unfinished"))
    store.record_finished_match(
        FinishedMatch("alice", "Bob", 5, 5, 3, 2900, "rec 1", 4.1234567891, -4.1234567891),
        {"alice": (1504.1234567891, 5), "Bob": (1495.8765432109, 5)})
    store.record_finished_match(FinishedMatch("dave", "alice", 3, 3, 0, 2950, "rec 2"))
    store.create_user("zoe", "hash-zoe", 1100)  # a deleted account's result: nobody's now
    store.record_finished_match(FinishedMatch("zoe", "dave", 1, 1, 0, 2960, "rec 0"))
    store.delete_user("zoe")
    store.add_ban(Ban("name", "Mallory", 100, None, "root", "spam"))
    store.log_admin(AdminAction(100, "root", "ban", "name Mallory", "forever spam"))
    store.count_abandonment(Departure("Bob", "dave", "dave", 3100), notices={"Bob": "gone"})
    store.record_departure(Departure("alice", "carol", "carol", 3200, offered=True))
    store.reserve_registration("192.0.2.1", 3300.5, 5, 3600.0)
    return store


def everything(store: Store) -> list[object]:
    """All a site holds, read through the Store interface."""
    names = [name for name, _, _ in store.ratings()]
    return [store.ratings(), [store.get_user(n) for n in names],
            [store.saved_matches(n) for n in names],
            [(m, m.id) for n in names for m in store.finished_matches(n)],
            store.bans(0), store.admin_log(100),
            [store.count_messages(n) for n in names],
            store.due_departures(10**10), [store.reliability(n) for n in names],
            store.registrations_since("192.0.2.1", 0.0)]


def test_migrate_copies_a_site_verified(tmp_path: Path, postgres_url: str) -> None:
    database = tmp_path / "fibsd.sqlite"
    source = a_site(database)
    checksum = ratings_checksum(source.ratings())
    expected = everything(source)
    source.close()
    code, out, err = run("migrate", "--from", str(database), "--to", postgres_url)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "admin_log: 1 rows", "analysis_done: 0 rows", "bans: 1 rows",
        "finished_matches: 3 rows", "registrations: 1 rows", "tournaments: 0 rows",
        "users: 4 rows", "analyses: 0 rows", "departures: 1 rows", "messages: 2 rows",
        "notices: 1 rows", "saved_matches: 1 rows", "session_tokens: 0 rows",
        "settings: 3 rows", "tournament_entries: 0 rows", "tournament_pairings: 0 rows",
        "analysis_players: 0 rows",
        f"ratings checksum {checksum}: equal",
        f"fibsd: copied {database} to {postgres_url}, verified"]
    owners = "SELECT id, winner_id, loser_id FROM finished_matches ORDER BY id"
    with sqlite3.connect(database) as lite, psycopg.connect(postgres_url) as conn:
        # each result keeps its accounts (issue 19), not just its names
        assert conn.execute(owners).fetchall() == lite.execute(owners).fetchall()
    copied = PostgresStore(postgres_url)
    try:
        assert everything(copied) == expected
        assert copied.take_messages("carol") == [StoredMessage("Bob", "carol", 2500, "see you"),
                                                 StoredMessage("alice", "carol", 2600, "me too")]
        assert copied.take_notices("Bob") == ["gone"]
        # the copied ids go on: new rows get new numbers
        copied.create_user("erin", "h", 5000)
        copied.record_finished_match(FinishedMatch("erin", "alice", 1, 1, 0, 6000, "rec 3"))
        ids = [m.id for m in copied.finished_matches("alice")]
        assert len(set(ids)) == 3 and ids[-1] == max(ids)
    finally:
        copied.close()


def test_migrate_refuses_a_database_that_is_not_empty(tmp_path: Path,
                                                      postgres_url: str) -> None:
    database = tmp_path / "fibsd.sqlite"
    a_site(database).close()
    target = PostgresStore(postgres_url)
    target.create_user("zed", "h", 1)
    target.close()
    code, out, err = run("migrate", "--from", str(database), "--to", postgres_url)
    assert (code, out) == (1, "")
    assert err == ("fibsd: migrate failed, nothing copied: the PostgreSQL database is not "
                   "empty (table users has rows): migrate copies into a new database only\n")
    target = PostgresStore(postgres_url)
    assert target.ratings() == [("zed", 1500.0, 0)]
    target.close()


def test_migrate_needs_both_ends(tmp_path: Path, postgres_url: str) -> None:
    assert run("migrate", "--from", str(tmp_path / "x.sqlite"))[0] == 2
    code, _, err = run("migrate", "--from", str(tmp_path / "none.sqlite"), "--to", postgres_url)
    assert (code, err) == (1, "fibsd: migrate failed, nothing copied: no database at "
                              f"{tmp_path / 'none.sqlite'}\n")


def test_admin_works_on_postgresql(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.create_user("bob", "h", 1)
    store.close()
    code, out, err = run("--database", postgres_url, "admin", "ban", "bob", "forever", "abuse")
    assert (code, out, err) == (0, "Banned name bob until lifted, by console: abuse\n", "")
    assert run("--database", postgres_url, "admin", "rename", "bob", "Robert") == (
        0, "Renamed bob to Robert.\n", "")
    store = PostgresStore(postgres_url)
    try:
        assert store.get_user("Robert") is not None
        assert [a.action for a in store.admin_log(10)] == ["ban", "rename"]
    finally:
        store.close()


@pytest.mark.skipif(shutil.which("pg_dump") is None or shutil.which("pg_restore") is None,
                    reason="pg_dump/pg_restore are not installed: apt-get install postgresql")
def test_backup_of_postgresql_is_a_pg_dump(tmp_path: Path, postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    store.create_user("alice", "h", 1)
    store.close()
    target = tmp_path / "site.dump"
    code, out, err = run("--database", postgres_url, "backup", str(target))
    assert (code, err) == (0, "")
    assert out == (f"fibsd: backed up {postgres_url} to {target} with pg_dump "
                   "(restore into an empty database with pg_restore)\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    listing = subprocess.run(["pg_restore", "--list", str(target)], capture_output=True,
                             text=True, check=True).stdout
    assert "TABLE DATA public users" in listing
    assert run("--database", postgres_url, "backup", str(target))[0] == 1  # never overwrites
