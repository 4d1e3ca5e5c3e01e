"""What only the PostgreSQL store promises: its migrations mirror SQLite's, writes are
all-or-nothing, the stored-message cap holds across connections, a lost connection is
opened again.  Run against the session's private server (``postgres`` fixture)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: "
                              "pip install 'fibsd[postgres]'")

from fibsd.store import FinishedMatch, SavedMatch, Unavailable, WriteFailed  # noqa: E402
from fibsd.store import migrations as sqlite_migrations  # noqa: E402
from fibsd.store import postgres_migrations  # noqa: E402
from fibsd.store.migrations import SchemaTooNew  # noqa: E402
from fibsd.store.postgres import PostgresStore  # noqa: E402
from fibsd.store.sqlite import SQLiteStore  # noqa: E402


def raw(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True)


def test_the_migrations_mirror_sqlites_table_for_table(postgres_url: str,
                                                       tmp_path: Path) -> None:
    """``fibsd migrate`` copies by table and column name: the two schemas must agree."""
    assert len(postgres_migrations.MIGRATIONS) == len(sqlite_migrations.MIGRATIONS)
    SQLiteStore(tmp_path / "fibsd.sqlite").close()
    lite = sqlite3.connect(tmp_path / "fibsd.sqlite")
    sqlite_tables = {
        table: [row[1] for row in lite.execute(f'PRAGMA table_info("{table}")')]
        for (table,) in lite.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    lite.close()
    PostgresStore(postgres_url).close()
    with raw(postgres_url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
        ).fetchall()
        versions = conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    postgres_tables: dict[str, list[str]] = {}
    for table, column in rows:
        postgres_tables.setdefault(table, []).append(column)
    assert postgres_tables == sqlite_tables
    assert versions == [(n,) for n in range(1, len(postgres_migrations.MIGRATIONS) + 1)]


def test_the_order_is_sqlites_and_every_sqlite_migration_needs_a_twin() -> None:
    assert [m.__name__ for m in postgres_migrations.MIGRATIONS] == [
        m.__name__ for m in sqlite_migrations.MIGRATIONS]

    def migrate_99(conn: sqlite3.Connection) -> None: ...

    with pytest.raises(ImportError, match="no PostgreSQL version of migrate_99"):
        postgres_migrations._mirror((*sqlite_migrations.MIGRATIONS, migrate_99))


def test_opening_again_applies_nothing_twice(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    store = PostgresStore(postgres_url)
    store.create_user("alice", "h", 1)
    store.close()
    assert PostgresStore(postgres_url).get_user("alice") is not None


def test_a_newer_schema_is_refused(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    with raw(postgres_url) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99, 0)")
    with pytest.raises(SchemaTooNew):
        PostgresStore(postgres_url)


def test_servers_starting_at_once_migrate_once(postgres_url: str) -> None:
    opened: list[PostgresStore] = []
    failures: list[BaseException] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        start.wait()
        try:
            opened.append(PostgresStore(postgres_url))
        except BaseException as error:  # noqa: BLE001 (reported by the assertion)
            failures.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in opened:
        store.close()
    assert failures == [] and len(opened) == 4
    with raw(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM schema_version").fetchone() == (
            len(postgres_migrations.MIGRATIONS),)


def test_finishing_a_match_is_all_or_nothing(postgres_url: str) -> None:
    """The rating update fails half-way (an injected trigger): the result is not kept,
    the saved match stays, neither rating moved."""
    store = PostgresStore(postgres_url)
    for name in ("alice", "bob"):
        store.create_user(name, "h", 1)
    store.save_match(SavedMatch("alice", "bob", 10, "in play"))
    with raw(postgres_url) as conn:
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$")
        conn.execute(
            "CREATE TRIGGER injected BEFORE UPDATE ON users FOR EACH ROW"
            " WHEN (NEW.name = 'bob') EXECUTE FUNCTION refuse()")
    match = FinishedMatch("alice", "bob", 5, 5, 2, 20, "record", 4.5, -4.5)
    with pytest.raises(psycopg.Error, match="injected failure"):
        store.record_finished_match(match, {"alice": (1504.5, 5), "bob": (1495.5, 5)})
    assert store.finished_matches("alice") == []
    assert store.load_match("alice", "bob") == SavedMatch("alice", "bob", 10, "in play")
    assert store.ratings() == [("alice", 1500.0, 0), ("bob", 1500.0, 0)]
    store.close()


def test_a_lost_connection_is_opened_again(postgres_url: str) -> None:
    """The server ends the session (as a PostgreSQL restart would): the call that finds
    it gone fails, as ``Unavailable`` (a read), the next one reconnects."""
    store = PostgresStore(postgres_url)
    store.create_user("alice", "h", 1)
    with raw(postgres_url) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                     " WHERE datname = current_database() AND pid != pg_backend_pid()")
    with pytest.raises(Unavailable, match="terminating connection"):
        store.get_user("alice")
    user = store.get_user("alice")
    assert user is not None and user.name == "alice"
    store.close()


def test_a_database_that_refuses_writes_raises_write_failed(postgres_url: str) -> None:
    """Made read-only under a running store (as a failover to a standby would): writes
    raise ``WriteFailed`` and write nothing, reads go on; opening it fails at once."""
    store = PostgresStore(postgres_url)
    store.create_user("alice", "h", 1)
    with raw(postgres_url) as conn:
        conn.execute("ALTER DATABASE " + conn.info.dbname
                     + " SET default_transaction_read_only = on")
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                     " WHERE datname = current_database() AND pid != pg_backend_pid()")
    with pytest.raises(WriteFailed):  # the connection was lost: nothing written
        store.set_rating("alice", 1600.0, 1)
    with pytest.raises(WriteFailed, match="read-only transaction"):  # reconnected, read-only
        store.set_rating("alice", 1600.0, 1)
    assert store.ratings() == [("alice", 1500.0, 0)]
    store.close()
    with pytest.raises(WriteFailed, match="read-only transaction"):
        PostgresStore(postgres_url)


def test_migration_4_gives_each_result_to_the_account_that_played_it(postgres_url: str) -> None:
    """SQLite's back-fill (tests/store/test_sqlite.py), on PostgreSQL."""
    from tests.store.test_sqlite import VERSION_3_RESULTS, VERSION_3_USERS

    with raw(postgres_url) as conn:
        assert postgres_migrations.upgrade(conn, postgres_migrations.MIGRATIONS[:3]) == 3
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO users (name, password_hash, created) VALUES (%s, 'h', %s)",
                VERSION_3_USERS)
            cursor.executemany(
                "INSERT INTO finished_matches (winner, loser, length, winner_points,"
                " loser_points, finished, record, winner_rating_change, loser_rating_change)"
                " VALUES (%s, %s, 1, 1, 0, %s, 'r', 0, 0)", VERSION_3_RESULTS)
    store = PostgresStore(postgres_url)
    try:
        assert [m.finished for m in store.finished_matches("alice")] == [2000]
        assert [m.finished for m in store.finished_matches("bob")] == [500, 600, 2000]
        assert [m.finished for m in store.finished_matches("ghost")] == [600]
        store.delete_user("alice")
        store.create_user("alice", "h", 3000)
        assert store.finished_matches("alice") == []
    finally:
        store.close()
    with raw(postgres_url) as conn:
        assert conn.execute("SELECT max(version) FROM schema_version").fetchone() == (
            len(postgres_migrations.MIGRATIONS),)
