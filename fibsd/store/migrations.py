"""The SQLite schema, as numbered migrations applied in order.

Rule 1: a migration that has shipped is never edited; a schema change is a new
function appended to ``MIGRATIONS``.
Rule 2: migration N runs in the same transaction as the ``schema_version`` row that
records it, so a database is always at exactly one known version.
Version 0 is a database without the ``schema_version`` table (a new, empty file).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence

Migration = Callable[[sqlite3.Connection], None]


class SchemaTooNew(Exception):
    """The database was written by a newer fibsd than this one."""

    def __init__(self, found: int, known: int) -> None:
        super().__init__(f"database schema version {found} is newer than {known}")
        self.found = found
        self.known = known


def migrate_1(conn: sqlite3.Connection) -> None:
    """Accounts, their settings and lists, stored messages, saved and finished matches."""
    for statement in (
        """CREATE TABLE users (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            password_hash TEXT NOT NULL,
            created INTEGER NOT NULL,
            last_login INTEGER,
            last_host TEXT,
            last_logout INTEGER,
            rating REAL NOT NULL DEFAULT 1500.0,
            experience INTEGER NOT NULL DEFAULT 0,
            address TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE UNIQUE INDEX users_name_nocase ON users (name COLLATE NOCASE)",
        "CREATE INDEX users_rating ON users (rating DESC, experience DESC)",
        """CREATE TABLE settings (
            user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (user_id, name)
        ) WITHOUT ROWID""",
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            recipient_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            sender TEXT NOT NULL,
            sent INTEGER NOT NULL,
            text TEXT NOT NULL
        )""",
        "CREATE INDEX messages_recipient ON messages (recipient_id, sent, id)",
        """CREATE TABLE saved_matches (
            player_a TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
            player_b TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
            saved INTEGER NOT NULL,
            record TEXT NOT NULL,
            PRIMARY KEY (player_a, player_b),
            CHECK (player_a <= player_b)
        ) WITHOUT ROWID""",
        "CREATE INDEX saved_matches_b ON saved_matches (player_b)",
        """CREATE TABLE finished_matches (
            id INTEGER PRIMARY KEY,
            winner TEXT NOT NULL,
            loser TEXT NOT NULL,
            length INTEGER NOT NULL,
            winner_points INTEGER NOT NULL,
            loser_points INTEGER NOT NULL,
            finished INTEGER NOT NULL,
            record TEXT NOT NULL,
            winner_rating_change REAL NOT NULL,
            loser_rating_change REAL NOT NULL
        )""",
        "CREATE INDEX finished_matches_winner ON finished_matches (winner, finished)",
        "CREATE INDEX finished_matches_loser ON finished_matches (loser, finished)",
    ):
        conn.execute(statement)


def migrate_2(conn: sqlite3.Connection) -> None:
    """Bans of names and addresses (``until`` NULL: until lifted) and the log of every
    administrator action."""
    for statement in (
        """CREATE TABLE bans (
            kind TEXT NOT NULL CHECK (kind IN ('name', 'address')),
            value TEXT NOT NULL COLLATE NOCASE,
            created INTEGER NOT NULL,
            until INTEGER,
            admin TEXT NOT NULL,
            reason TEXT NOT NULL,
            PRIMARY KEY (kind, value)
        ) WITHOUT ROWID""",
        """CREATE TABLE admin_log (
            id INTEGER PRIMARY KEY,
            at INTEGER NOT NULL,
            admin TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            detail TEXT NOT NULL
        )""",
    ):
        conn.execute(statement)


def migrate_3(conn: sqlite3.Connection) -> None:
    """Fair play: abandonment counts, departures waiting to count, login notices."""
    for statement in (
        "ALTER TABLE users ADD COLUMN abandoned INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE users ADD COLUMN adjudicated INTEGER NOT NULL DEFAULT 0",
        """CREATE TABLE departures (
            player_a TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
            player_b TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
            dropper TEXT NOT NULL,
            left_at INTEGER NOT NULL,
            offered INTEGER NOT NULL DEFAULT 0,
            counts_now INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (player_a, player_b),
            CHECK (player_a <= player_b)
        ) WITHOUT ROWID""",
        "CREATE INDEX departures_left ON departures (left_at)",
        """CREATE TABLE notices (
            id INTEGER PRIMARY KEY,
            recipient_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            text TEXT NOT NULL
        )""",
        "CREATE INDEX notices_recipient ON notices (recipient_id, id)",
    ):
        conn.execute(statement)


def migrate_4(conn: sqlite3.Connection) -> None:
    """Finished matches belong to the accounts that played them: ``winner_id`` and
    ``loser_id`` (NULL for a player without an account, and once his account is
    deleted), so that a newcomer who takes a deleted account's name inherits none of its
    history.  Existing results are given the id of the account of the name, where that
    account was created before the match finished (an older result of the name was a
    deleted account's)."""
    for side in ("winner", "loser"):
        conn.execute(f"ALTER TABLE finished_matches ADD COLUMN {side}_id INTEGER")
        conn.execute(
            f"UPDATE finished_matches SET {side}_id = (SELECT u.id FROM users AS u"
            f" WHERE u.name = finished_matches.{side}"
            " AND u.created <= finished_matches.finished)")


def migrate_5(conn: sqlite3.Connection) -> None:
    """Registrations of the last hour by network (``access.registrations_per_hour``),
    here rather than in a server's memory so that every node of a cluster counts the
    same ones and a restart forgets none."""
    for statement in (
        """CREATE TABLE registrations (
            network TEXT NOT NULL,
            at REAL NOT NULL
        )""",
        "CREATE INDEX registrations_network ON registrations (network, at)",
    ):
        conn.execute(statement)


def migrate_6(conn: sqlite3.Connection) -> None:
    """Web session tokens, hashed (fibsd.store.tokens)."""
    for statement in (
        """CREATE TABLE session_tokens (
            token_hash TEXT PRIMARY KEY,
            user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            created INTEGER NOT NULL,
            expires INTEGER NOT NULL
        )""",
        "CREATE INDEX session_tokens_user ON session_tokens (user_id, created)",
        "CREATE INDEX session_tokens_expires ON session_tokens (expires)",
    ):
        conn.execute(statement)


def migrate_7(conn: sqlite3.Connection) -> None:
    """Engine analysis of finished matches (protocol/analysis.md): the durable job
    queue and its results in ``analyses`` (one row per match: state, lease, the marks
    as JSON), each player's summary in ``analysis_players`` (the profile and the PR
    ladder read it by name), and ``analysis_done``, the order results were kept in (the
    server's poll for the ready notices)."""
    for statement in (
        """CREATE TABLE analyses (
            match_id INTEGER PRIMARY KEY REFERENCES finished_matches (id) ON DELETE CASCADE,
            state TEXT NOT NULL,
            plies INTEGER NOT NULL,
            queued REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            lease_until REAL,
            token TEXT,
            error TEXT,
            requested_by TEXT,
            requested_at REAL,
            analysed_at REAL,
            marks TEXT
        )""",
        "CREATE INDEX analyses_state ON analyses (state, queued)",
        "CREATE INDEX analyses_requested ON analyses (requested_by, requested_at)",
        """CREATE TABLE analysis_players (
            match_id INTEGER NOT NULL REFERENCES analyses (match_id) ON DELETE CASCADE,
            seat INTEGER NOT NULL,
            name TEXT NOT NULL,
            pr REAL,
            checker_error_rate REAL,
            cube_error_rate REAL,
            luck_rate REAL,
            luck_adjusted_result REAL,
            decisions INTEGER NOT NULL,
            checker_decisions INTEGER NOT NULL,
            cube_decisions INTEGER NOT NULL,
            doubtful INTEGER NOT NULL,
            bad INTEGER NOT NULL,
            very_bad INTEGER NOT NULL,
            PRIMARY KEY (match_id, seat)
        )""",
        "CREATE INDEX analysis_players_name ON analysis_players (name, match_id)",
        """CREATE TABLE analysis_done (
            id INTEGER PRIMARY KEY,
            match_id INTEGER NOT NULL,
            at REAL NOT NULL
        )""",
    ):
        conn.execute(statement)


def migrate_8(conn: sqlite3.Connection) -> None:
    """Tournaments (issue 25): each with its entries and its rounds' pairings, and the
    tournament and round a finished match was played for.  A tournament's state moves
    in the transaction that stores the result moving it (``fibsd.store.tournaments``);
    ``driver``/``lease_until`` say which node drives it (a lease, for a cluster)."""
    for statement in (
        """CREATE TABLE tournaments (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            format TEXT NOT NULL,
            lengths TEXT NOT NULL,
            rounds INTEGER,
            max_players INTEGER NOT NULL,
            start_at INTEGER,
            bots INTEGER NOT NULL DEFAULT 0,
            clock TEXT NOT NULL DEFAULT '',
            state TEXT NOT NULL DEFAULT 'open',
            created INTEGER NOT NULL,
            started INTEGER,
            finished INTEGER,
            winner TEXT,
            driver TEXT,
            lease_until REAL
        )""",
        "CREATE INDEX tournaments_state ON tournaments (state, id)",
        """CREATE TABLE tournament_entries (
            tournament_id INTEGER NOT NULL REFERENCES tournaments (id),
            name TEXT NOT NULL,
            joined INTEGER NOT NULL,
            rating REAL NOT NULL,
            seed INTEGER,
            PRIMARY KEY (tournament_id, name)
        )""",
        "CREATE INDEX tournament_entries_name ON tournament_entries (name)",
        """CREATE TABLE tournament_pairings (
            tournament_id INTEGER NOT NULL REFERENCES tournaments (id),
            round INTEGER NOT NULL,
            slot INTEGER NOT NULL,
            first TEXT NOT NULL,
            second TEXT,
            winner TEXT,
            forfeit INTEGER NOT NULL DEFAULT 0,
            match_id INTEGER,
            paired INTEGER NOT NULL,
            deadline INTEGER NOT NULL,
            PRIMARY KEY (tournament_id, round, slot)
        )""",
        "ALTER TABLE finished_matches ADD COLUMN tournament_id INTEGER",
        "ALTER TABLE finished_matches ADD COLUMN tournament_round INTEGER",
    ):
        conn.execute(statement)


def migrate_9(conn: sqlite3.Connection) -> None:
    """Accounts played by a program are marked (``bot``: 1), so that whois, the web
    face, the ladder and tournaments can tell them from people."""
    conn.execute("ALTER TABLE users ADD COLUMN bot INTEGER NOT NULL DEFAULT 0")


MIGRATIONS: tuple[Migration, ...] = (migrate_1, migrate_2, migrate_3, migrate_4, migrate_5,
                                     migrate_6, migrate_7, migrate_8, migrate_9)


def schema_version(conn: sqlite3.Connection) -> int:
    """The highest migration recorded, 0 for a database without the table."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if exists is None:
        return 0
    (version,) = conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    return int(version)


def upgrade(conn: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply the migrations the database lacks, each in its own transaction.

    ``conn`` must be in autocommit mode (``isolation_level=None``), so that the
    transactions here are the only ones.  Returns the version reached.
    """
    version = schema_version(conn)
    if version > len(migrations):
        raise SchemaTooNew(version, len(migrations))
    for number, migration in enumerate(migrations[version:], start=version + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version ("
                "version INTEGER PRIMARY KEY, applied INTEGER NOT NULL)"
            )
            migration(conn)
            conn.execute(
                "INSERT INTO schema_version (version, applied) VALUES (?, ?)",
                (number, int(time.time())),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return len(migrations)
