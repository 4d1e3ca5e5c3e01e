"""What only the SQLite store promises: pragmas, migrations, all-or-nothing writes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fibsd.store import FinishedMatch, SavedMatch, StoredMessage, UserRecord
from fibsd.store.migrations import MIGRATIONS, SchemaTooNew, migrate_1, schema_version, upgrade
from fibsd.store.sqlite import SQLiteStore


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def fail_on(path: Path, event: str, when: str) -> None:
    """Install a trigger that aborts the statement, to fail a write half-way."""
    conn = raw(path)
    conn.execute(
        f"CREATE TRIGGER injected BEFORE {event} WHEN {when}"
        " BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
    )
    conn.close()


def test_file_store_uses_wal_and_records_its_version(store: SQLiteStore, tmp_path: Path) -> None:
    conn = raw(tmp_path / "fibsd.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [
        (n,) for n in range(1, len(MIGRATIONS) + 1)]
    conn.close()


def test_the_files_directory_is_made(tmp_path: Path) -> None:
    path = tmp_path / "data" / "site" / "fibsd.sqlite"
    SQLiteStore(path).close()
    assert path.is_file()


def test_connection_pragmas(store: SQLiteStore) -> None:
    conn = store._conn
    assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert conn.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL


def test_memory_store_is_fully_migrated(memory_store: SQLiteStore) -> None:
    assert schema_version(memory_store._conn) == len(MIGRATIONS)


def test_an_empty_file_is_version_0_and_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = raw(path)
    conn.execute("PRAGMA user_version = 0")
    assert schema_version(conn) == 0
    conn.close()
    store = SQLiteStore(path)
    store.create_user("alice", "h", 1)
    store.close()
    conn = raw(path)
    assert schema_version(conn) == len(MIGRATIONS)
    conn.close()


def make_version_1(path: Path) -> None:
    """A database as fibsd's first schema left it, with one user and her data."""
    conn = raw(path)
    conn.execute("BEGIN")
    conn.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied INTEGER NOT NULL)"
    )
    migrate_1(conn)
    conn.execute("INSERT INTO schema_version VALUES (1, 0)")
    conn.execute(
        "INSERT INTO users (name, password_hash, created, rating, experience)"
        " VALUES ('alice', 'h', 10, 1612.4, 834)"
    )
    conn.execute("INSERT INTO settings VALUES (1, 'boardstyle', '2')")
    conn.execute("COMMIT")
    conn.close()


def test_a_version_1_database_opens_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    make_version_1(path)
    store = SQLiteStore(path)
    assert store.get_user("alice") == UserRecord(
        "alice", "h", 10, rating=1612.4, experience=834, settings={"boardstyle": "2"}
    )
    store.close()


def add_nicknames(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE users ADD COLUMN nickname TEXT NOT NULL DEFAULT ''")


def test_upgrade_applies_only_the_missing_migrations_in_order(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    make_version_1(path)
    conn = raw(path)
    last = len(MIGRATIONS) + 1
    assert upgrade(conn, (*MIGRATIONS, add_nicknames)) == last
    assert conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall() == [
        (n,) for n in range(1, last + 1)]
    assert conn.execute("SELECT name, nickname FROM users").fetchall() == [("alice", "")]
    conn.close()


def test_a_failing_migration_leaves_the_previous_version(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    make_version_1(path)

    def broken(conn: sqlite3.Connection) -> None:
        add_nicknames(conn)
        raise RuntimeError("migration bug")

    conn = raw(path)
    with pytest.raises(RuntimeError):
        upgrade(conn, (*MIGRATIONS, broken))
    assert schema_version(conn) == len(MIGRATIONS)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(users)")]
    assert "nickname" not in columns
    conn.close()


def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    make_version_1(path)
    conn = raw(path)
    upgrade(conn, (*MIGRATIONS, add_nicknames))
    conn.close()
    with pytest.raises(SchemaTooNew) as caught:
        SQLiteStore(path)
    assert (caught.value.found, caught.value.known) == (len(MIGRATIONS) + 1, len(MIGRATIONS))


def test_settings_write_is_all_or_nothing(store: SQLiteStore, tmp_path: Path) -> None:
    store.create_user("alice", "h", 1)
    store.save_settings("alice", {"ready": "0"})
    fail_on(tmp_path / "fibsd.sqlite", "INSERT ON settings", "NEW.name = 'timezone'")
    with pytest.raises(sqlite3.IntegrityError):
        store.save_settings("alice", {"ready": "1", "boardstyle": "2", "timezone": "UTC"})
    user = store.get_user("alice")
    assert user is not None and user.settings == {"ready": "0"}


def test_finishing_a_match_is_all_or_nothing(store: SQLiteStore, tmp_path: Path) -> None:
    for name in ("alice", "bob"):
        store.create_user(name, "h", 1)
    store.save_match(SavedMatch("alice", "bob", 2, "in play"))
    fail_on(tmp_path / "fibsd.sqlite", "UPDATE ON users", "NEW.name = 'bob'")
    with pytest.raises(sqlite3.IntegrityError):
        store.record_finished_match(
            FinishedMatch("alice", "bob", 3, 3, 0, 5, "r"),
            {"alice": (1510.0, 3), "bob": (1490.0, 3)},
        )
    assert store.finished_matches("alice") == []
    assert store.load_match("alice", "bob") == SavedMatch("alice", "bob", 2, "in play")
    assert store.ratings() == [("alice", 1500.0, 0), ("bob", 1500.0, 0)]


def test_text_is_bound_not_spliced(memory_store: SQLiteStore) -> None:
    name = "o'brien"
    text = "'); DROP TABLE users; --"
    memory_store.create_user(name, text, 1)
    memory_store.save_settings(name, {text: text})
    memory_store.store_message(StoredMessage(text, name, 2, text))
    user = memory_store.get_user(name)
    assert user is not None and user.password_hash == text and user.settings == {text: text}
    assert memory_store.take_messages(name) == [StoredMessage(text, name, 2, text)]


# Migration 4 (issue 19): results belong to accounts; existing ones are back-filled.
VERSION_3_USERS = [("bob", 10), ("alice", 1000)]  # (name, created)
VERSION_3_RESULTS = [("alice", "bob", 500),  # a deleted namesake's: before alice was made
                     ("bob", "alice", 2000), ("ghost", "bob", 600)]


def test_migration_4_gives_each_result_to_the_account_that_played_it(tmp_path: Path) -> None:
    path = tmp_path / "v3.sqlite"
    conn = raw(path)
    assert upgrade(conn, MIGRATIONS[:3]) == 3
    conn.executemany("INSERT INTO users (name, password_hash, created) VALUES (?, 'h', ?)",
                     VERSION_3_USERS)
    conn.executemany(
        "INSERT INTO finished_matches (winner, loser, length, winner_points, loser_points,"
        " finished, record, winner_rating_change, loser_rating_change)"
        " VALUES (?, ?, 1, 1, 0, ?, 'r', 0, 0)", VERSION_3_RESULTS)
    conn.close()
    store = SQLiteStore(path)
    try:
        assert [m.finished for m in store.finished_matches("alice")] == [2000]
        assert [m.finished for m in store.finished_matches("bob")] == [500, 600, 2000]
        assert [m.finished for m in store.finished_matches("ghost")] == [600]
        assert schema_version(store._conn) == len(MIGRATIONS)
        store.delete_user("alice")
        assert [m.finished for m in store.finished_matches("alice")] == [500, 2000]
        store.create_user("alice", "h", 3000)
        assert store.finished_matches("alice") == []
    finally:
        store.close()
