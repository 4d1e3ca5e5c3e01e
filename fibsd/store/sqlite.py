"""The default ``Store``: one SQLite file, standard library only.

Each public method is one short transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``,
rolled back on any exception), so a failure half-way leaves nothing half-written.
The connection is opened with ``check_same_thread=False`` because it is created on
the main thread and then used by the single database worker thread; never by two
threads at once.  Files use WAL journaling with ``synchronous=NORMAL``: a commit
survives a crash of the process, and readers (an operator's ``sqlite3`` shell) do not
block the server.

A write the database refuses (``SQLITE_FULL``, ``SQLITE_READONLY``, an I/O error) is
rolled back and raised as ``WriteFailed``; opening runs one real write (a no-op update
of the schema version row, committed) so that a database the server could not write
stops it at start instead of failing every save later.

Privacy: the file holds password hashes, so a new database file is created with mode
0600 (owner only); SQLite gives its ``-wal`` and ``-shm`` files the database file's mode.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fibsd.store import (
    AdminAction,
    Ban,
    Departure,
    FinishedMatch,
    NameTaken,
    RatingStep,
    SavedMatch,
    StoredMessage,
    UnknownUser,
    UserRecord,
    WriteFailed,
)
from fibsd.store.batch import GroupCommit
from fibsd.store.migrations import upgrade

_BUSY_TIMEOUT_MS = 5000
# WAL pages after which a commit checkpoints by itself (SQLite's default is 1000).  The
# server checkpoints from a second connection on a thread of its own (``checkpoint``),
# so that the writes, one per game action, never wait for a checkpoint's copying and
# syncing; this is only the backstop for a store used without it.
_AUTOCHECKPOINT_PAGES = 10000
PRIVATE_MODE = 0o600  # owner read and write only

_USER_COLUMNS = (
    "id, name, password_hash, created, last_login, last_host, last_logout,"
    " rating, experience, address"
)
_MATCH_COLUMNS = (
    "winner, loser, length, winner_points, loser_points, finished, record,"
    " winner_rating_change, loser_rating_change"
)


def _finished(row: tuple[Any, ...]) -> FinishedMatch:
    """A ``finished_matches`` row read as ``id, <_MATCH_COLUMNS>``."""
    return FinishedMatch(*row[1:], id=row[0])


def create_private(path: Path) -> None:
    """Create ``path`` empty with mode 0600 if it does not exist (SQLite would create
    it with the umask's mode, commonly 0644: readable by every local user).  An
    existing file keeps its mode: an operator may have chosen it."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE))
    except FileExistsError:
        pass


def _pair(player_a: str, player_b: str) -> tuple[str, str]:
    first, second = sorted((player_a, player_b))
    return first, second


class SQLiteStore(GroupCommit):
    """``Store`` on SQLite; ``path`` may be ``":memory:"`` for a private database.

    A file's directory is created if missing, so a fresh checkout starts with no
    setup step.
    """

    def __init__(self, path: str | Path) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            create_private(Path(path))
        self._conn = sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=False
        )
        self._conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        self._conn.execute("PRAGMA foreign_keys = ON")
        self._path = str(path)
        self._checkpointer: sqlite3.Connection | None = None
        if str(path) != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute(f"PRAGMA wal_autocheckpoint = {_AUTOCHECKPOINT_PAGES}")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        try:
            upgrade(self._conn)
            self._check_writable()
        except BaseException:
            self._conn.close()
            raise

    def _check_writable(self) -> None:
        """One committed write, so that an unwritable database fails here."""
        with self._transaction() as cursor:
            cursor.execute("UPDATE schema_version SET applied = applied"
                           " WHERE version = (SELECT max(version) FROM schema_version)")

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[sqlite3.Cursor]:
        """One transaction; a writer takes the write lock at once (IMMEDIATE) so
        it never fails half-way for want of it, a reader gets a stable snapshot."""
        cursor = self._conn.cursor()
        try:
            cursor.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield cursor
                cursor.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # a failed COMMIT may have ended it
                    cursor.execute("ROLLBACK")
                raise
        except (sqlite3.OperationalError, sqlite3.InternalError) as error:
            if not write:
                raise
            raise WriteFailed(str(error)) from error

    @staticmethod
    def _user_id(cursor: sqlite3.Cursor, name: str) -> int:
        row = cursor.execute("SELECT id FROM users WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise UnknownUser(name)
        return int(row[0])

    # users

    def create_user(self, name: str, password_hash: str, created: int) -> UserRecord:
        with self._transaction() as cursor:
            try:
                cursor.execute(
                    "INSERT INTO users (name, password_hash, created) VALUES (?, ?, ?)",
                    (name, password_hash, created),
                )
            except sqlite3.IntegrityError as error:
                raise NameTaken(name) from error
        return UserRecord(name=name, password_hash=password_hash, created=created)

    def get_user(self, name: str) -> UserRecord | None:
        with self._transaction(write=False) as cursor:
            row = cursor.execute(
                f"SELECT {_USER_COLUMNS} FROM users WHERE name = ?", (name,)
            ).fetchone()
            if row is None:
                return None
            user_id = row[0]
            settings = dict(
                cursor.execute(
                    "SELECT name, value FROM settings WHERE user_id = ? ORDER BY name",
                    (user_id,),
                ).fetchall()
            )
        return UserRecord(
            name=row[1],
            password_hash=row[2],
            created=row[3],
            last_login=row[4],
            last_host=row[5],
            last_logout=row[6],
            rating=row[7],
            experience=row[8],
            address=row[9],
            settings=settings,
        )

    def name_taken(self, name: str) -> bool:
        row = self._conn.execute(
            "SELECT 1 FROM users WHERE name = ? COLLATE NOCASE", (name,)
        ).fetchone()
        return row is not None

    def _update_user(self, name: str, assignments: str, values: tuple[object, ...]) -> None:
        """Run ``UPDATE users SET <assignments>`` for one user; ``assignments`` is
        always a literal from this module, never user input."""
        with self._transaction() as cursor:
            cursor.execute(f"UPDATE users SET {assignments} WHERE name = ?", (*values, name))
            if cursor.rowcount == 0:
                raise UnknownUser(name)

    def set_password_hash(self, name: str, password_hash: str) -> None:
        self._update_user(name, "password_hash = ?", (password_hash,))

    def record_login(self, name: str, when: int, host: str) -> None:
        self._update_user(name, "last_login = ?, last_host = ?", (when, host))

    def record_logout(self, name: str, when: int) -> None:
        self._update_user(name, "last_logout = ?", (when,))

    def set_address(self, name: str, address: str) -> None:
        self._update_user(name, "address = ?", (address,))

    def set_rating(self, name: str, rating: float, experience: int) -> None:
        self._update_user(name, "rating = ?, experience = ?", (rating, experience))

    def save_settings(self, name: str, settings: Mapping[str, str]) -> None:
        with self._transaction() as cursor:
            user_id = self._user_id(cursor, name)
            cursor.executemany(
                "INSERT INTO settings (user_id, name, value) VALUES (?, ?, ?)"
                " ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value",
                [(user_id, key, value) for key, value in settings.items()],
            )

    def ratings(self) -> list[tuple[str, float, int]]:
        rows = self._conn.execute(
            "SELECT name, rating, experience FROM users"
            " ORDER BY rating DESC, experience DESC, name COLLATE NOCASE, name"
        ).fetchall()
        return [(name, rating, experience) for name, rating, experience in rows]

    # stored messages

    def store_message(self, message: StoredMessage, limit: int | None = None) -> bool:
        with self._transaction() as cursor:
            recipient_id = self._user_id(cursor, message.recipient)
            if limit is not None:
                (waiting,) = cursor.execute(
                    "SELECT count(*) FROM messages WHERE recipient_id = ?", (recipient_id,)
                ).fetchone()
                if waiting >= limit:
                    return False
            cursor.execute(
                "INSERT INTO messages (recipient_id, sender, sent, text) VALUES (?, ?, ?, ?)",
                (recipient_id, message.sender, message.sent, message.text),
            )
        return True

    def take_messages(self, recipient: str) -> list[StoredMessage]:
        with self._transaction() as cursor:
            rows = cursor.execute(
                "SELECT m.id, m.sender, m.sent, m.text FROM messages AS m"
                " JOIN users AS u ON u.id = m.recipient_id"
                " WHERE u.name = ? ORDER BY m.sent, m.id",
                (recipient,),
            ).fetchall()
            cursor.executemany("DELETE FROM messages WHERE id = ?", [(row[0],) for row in rows])
        return [StoredMessage(sender, recipient, sent, text) for _, sender, sent, text in rows]

    def count_messages(self, recipient: str) -> int:
        (count,) = self._conn.execute(
            "SELECT count(*) FROM messages AS m JOIN users AS u ON u.id = m.recipient_id"
            " WHERE u.name = ?",
            (recipient,),
        ).fetchone()
        return int(count)

    # matches

    def save_match(self, saved: SavedMatch) -> None:
        with self._transaction() as cursor:
            self._save(cursor, saved)

    @classmethod
    def _save(cls, cursor: sqlite3.Cursor, saved: SavedMatch) -> None:
        """``save_match``'s writes, inside the caller's transaction."""
        player_a, player_b = _pair(saved.player_a, saved.player_b)
        for player in (player_a, player_b):
            cls._user_id(cursor, player)
        cursor.execute(
            "INSERT INTO saved_matches (player_a, player_b, saved, record)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (player_a, player_b)"
            " DO UPDATE SET saved = excluded.saved, record = excluded.record",
            (player_a, player_b, saved.saved, saved.record),
        )

    def load_match(self, player_a: str, player_b: str) -> SavedMatch | None:
        row = self._conn.execute(
            "SELECT player_a, player_b, saved, record FROM saved_matches"
            " WHERE player_a = ? AND player_b = ?",
            _pair(player_a, player_b),
        ).fetchone()
        return None if row is None else SavedMatch(*row)

    def delete_saved_match(self, player_a: str, player_b: str) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM saved_matches WHERE player_a = ? AND player_b = ?",
                _pair(player_a, player_b),
            )

    def saved_matches(self, name: str) -> list[SavedMatch]:
        rows = self._conn.execute(
            "SELECT player_a, player_b, saved, record FROM saved_matches"
            " WHERE player_a = ? OR player_b = ?",
            (name, name),
        ).fetchall()
        matches = [SavedMatch(*row) for row in rows]
        return sorted(matches, key=lambda m: m.player_b if m.player_a == name else m.player_a)

    def record_finished_match(
        self,
        match: FinishedMatch,
        new_ratings: Mapping[str, tuple[float, int]] | None = None,
    ) -> None:
        with self._transaction() as cursor:
            self._finish(cursor, match, new_ratings)

    @staticmethod
    def _finish(cursor: sqlite3.Cursor, match: FinishedMatch,
                new_ratings: Mapping[str, tuple[float, int]] | None) -> None:
        """``record_finished_match``'s writes, inside the caller's transaction."""
        cursor.execute(
            f"INSERT INTO finished_matches ({_MATCH_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                match.winner,
                match.loser,
                match.length,
                match.winner_points,
                match.loser_points,
                match.finished,
                match.record,
                match.winner_rating_change,
                match.loser_rating_change,
            ),
        )
        cursor.execute(
            "DELETE FROM saved_matches WHERE player_a = ? AND player_b = ?",
            _pair(match.winner, match.loser),
        )
        for name, (rating, experience) in (new_ratings or {}).items():
            cursor.execute(
                "UPDATE users SET rating = ?, experience = ? WHERE name = ?",
                (rating, experience, name),
            )
            if cursor.rowcount == 0:
                raise UnknownUser(name)

    def finished_matches(self, name: str) -> list[FinishedMatch]:
        rows = self._conn.execute(
            f"SELECT id, {_MATCH_COLUMNS} FROM finished_matches"
            " WHERE winner = ? OR loser = ? ORDER BY finished, id",
            (name, name),
        ).fetchall()
        return [_finished(row) for row in rows]

    def recent_finished_matches(
        self, name: str, limit: int, offset: int = 0
    ) -> list[FinishedMatch]:
        # each half walks its own (player, finished) index backwards
        rows = self._conn.execute(
            f"SELECT id, {_MATCH_COLUMNS} FROM ("
            f" SELECT * FROM (SELECT * FROM finished_matches WHERE winner = ?"
            "  ORDER BY finished DESC, id DESC LIMIT ?)"
            " UNION ALL"
            f" SELECT * FROM (SELECT * FROM finished_matches WHERE loser = ? AND winner != ?"
            "  ORDER BY finished DESC, id DESC LIMIT ?))"
            " ORDER BY finished DESC, id DESC LIMIT ? OFFSET ?",
            (name, limit + offset, name, name, limit + offset, limit, offset),
        ).fetchall()
        return [_finished(row) for row in rows]

    def finished_match(self, match_id: int) -> FinishedMatch | None:
        row = self._conn.execute(
            f"SELECT id, {_MATCH_COLUMNS} FROM finished_matches WHERE id = ?", (match_id,)
        ).fetchone()
        return None if row is None else _finished(row)

    # administration

    def rename_user(self, name: str, new_name: str) -> None:
        with self._transaction() as cursor:
            self._user_id(cursor, name)
            clash = cursor.execute(
                "SELECT 1 FROM users WHERE name = ? COLLATE NOCASE AND name != ?",
                (new_name, name)).fetchone()
            if clash is not None:
                raise NameTaken(new_name)
            # Saved matches refer to the name: checked at COMMIT, after both changed.
            cursor.execute("PRAGMA defer_foreign_keys = ON")
            cursor.execute("UPDATE users SET name = ? WHERE name = ?", (new_name, name))
            saved = cursor.execute(
                "SELECT player_a, player_b, saved, record FROM saved_matches"
                " WHERE player_a = ? OR player_b = ?", (name, name)).fetchall()
            for player_a, player_b, when, record in saved:
                cursor.execute("DELETE FROM saved_matches WHERE player_a = ? AND player_b = ?",
                               (player_a, player_b))
                first, second = _pair(*(new_name if p == name else p
                                        for p in (player_a, player_b)))
                cursor.execute("INSERT INTO saved_matches (player_a, player_b, saved, record)"
                               " VALUES (?, ?, ?, ?)", (first, second, when, record))
            departures = cursor.execute(
                "SELECT player_a, player_b, dropper, left_at, offered, counts_now"
                " FROM departures WHERE player_a = ? OR player_b = ?", (name, name)).fetchall()
            for player_a, player_b, dropper, *rest in departures:
                cursor.execute("DELETE FROM departures WHERE player_a = ? AND player_b = ?",
                               (player_a, player_b))
                first, second = _pair(*(new_name if p == name else p
                                        for p in (player_a, player_b)))
                cursor.execute(
                    "INSERT INTO departures (player_a, player_b, dropper, left_at, offered,"
                    " counts_now) VALUES (?, ?, ?, ?, ?, ?)",
                    (first, second, new_name if dropper == name else dropper, *rest))
            for column in ("winner", "loser"):
                cursor.execute(f"UPDATE finished_matches SET {column} = ? WHERE {column} = ?",
                               (new_name, name))
            cursor.execute("UPDATE messages SET sender = ? WHERE sender = ?", (new_name, name))

    def delete_user(self, name: str) -> None:
        with self._transaction() as cursor:
            self._user_id(cursor, name)
            cursor.execute("DELETE FROM users WHERE name = ?", (name,))

    def add_ban(self, ban: Ban) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "INSERT OR REPLACE INTO bans (kind, value, created, until, admin, reason)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (ban.kind, ban.value, ban.created, ban.until, ban.admin, ban.reason))

    def remove_ban(self, kind: str, value: str) -> bool:
        with self._transaction() as cursor:
            cursor.execute("DELETE FROM bans WHERE kind = ? AND value = ?", (kind, value))
            return cursor.rowcount > 0

    _BAN_COLUMNS = "kind, value, created, until, admin, reason"

    def bans(self, now: int) -> list[Ban]:
        rows = self._conn.execute(
            f"SELECT {self._BAN_COLUMNS} FROM bans WHERE until IS NULL OR until > ?"
            " ORDER BY kind DESC, value", (now,)).fetchall()
        return [Ban(*row) for row in rows]

    def ban_for(self, name: str, address: str, now: int) -> Ban | None:
        row = self._conn.execute(
            f"SELECT {self._BAN_COLUMNS} FROM bans"
            " WHERE ((kind = 'name' AND value = ?) OR (kind = 'address' AND value = ?))"
            " AND (until IS NULL OR until > ?) ORDER BY kind DESC LIMIT 1",
            (name, address, now)).fetchone()
        return None if row is None else Ban(*row)

    def log_admin(self, action: AdminAction) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "INSERT INTO admin_log (at, admin, action, target, detail)"
                " VALUES (?, ?, ?, ?, ?)",
                (action.at, action.admin, action.action, action.target, action.detail))

    def admin_log(self, limit: int) -> list[AdminAction]:
        rows = self._conn.execute(
            "SELECT at, admin, action, target, detail FROM admin_log"
            " ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [AdminAction(*row) for row in reversed(rows)]

    def rating_steps(self, name: str, limit: int) -> list[RatingStep]:
        rows = self._conn.execute(
            "SELECT id, finished, CASE WHEN winner = ? THEN winner_rating_change"
            " ELSE loser_rating_change END FROM finished_matches"
            " WHERE winner = ? OR loser = ? ORDER BY id DESC LIMIT ?",
            (name, name, name, limit),
        ).fetchall()
        return [RatingStep(*row) for row in reversed(rows)]

    # fair play

    def record_departure(self, departure: Departure) -> None:
        player_a, player_b = _pair(departure.player_a, departure.player_b)
        with self._transaction() as cursor:
            for player in (player_a, player_b):
                self._user_id(cursor, player)
            cursor.execute(
                "INSERT OR REPLACE INTO departures"
                " (player_a, player_b, dropper, left_at, offered, counts_now)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (player_a, player_b, departure.dropper, departure.left,
                 int(departure.offered), int(departure.counts_now)),
            )

    def offer_resume(self, name: str) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "UPDATE departures SET offered = 1"
                " WHERE (player_a = ? OR player_b = ?) AND dropper != ?",
                (name, name, name),
            )

    def clear_departure(self, player_a: str, player_b: str) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM departures WHERE player_a = ? AND player_b = ?",
                _pair(player_a, player_b),
            )

    def due_departures(self, left_before: int) -> list[Departure]:
        rows = self._conn.execute(
            "SELECT player_a, player_b, dropper, left_at, offered, counts_now FROM departures"
            " WHERE counts_now = 1 OR left_at < ? ORDER BY left_at",
            (left_before,),
        ).fetchall()
        return [Departure(a, b, dropper, left, bool(offered), bool(now))
                for a, b, dropper, left, offered, now in rows]

    def count_abandonment(
        self,
        departure: Departure,
        adjudicated: FinishedMatch | None = None,
        new_ratings: Mapping[str, tuple[float, int]] | None = None,
        notices: Mapping[str, str] | None = None,
    ) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM departures WHERE player_a = ? AND player_b = ?",
                _pair(departure.player_a, departure.player_b),
            )
            self._user_id(cursor, departure.dropper)
            extra = ", adjudicated = adjudicated + 1" if adjudicated is not None else ""
            cursor.execute(
                f"UPDATE users SET abandoned = abandoned + 1{extra} WHERE name = ?",
                (departure.dropper,),
            )
            if adjudicated is not None:
                self._finish(cursor, adjudicated, new_ratings)
            for name, text in (notices or {}).items():
                cursor.execute(
                    "INSERT INTO notices (recipient_id, text) VALUES (?, ?)",
                    (self._user_id(cursor, name), text),
                )

    def take_notices(self, name: str) -> list[str]:
        with self._transaction() as cursor:
            row = cursor.execute("SELECT id FROM users WHERE name = ?", (name,)).fetchone()
            if row is None:
                return []
            rows = cursor.execute(
                "SELECT text FROM notices WHERE recipient_id = ? ORDER BY id", (row[0],)
            ).fetchall()
            cursor.execute("DELETE FROM notices WHERE recipient_id = ?", (row[0],))
        return [text for (text,) in rows]

    def reliability(self, name: str) -> tuple[int, int, int]:
        row = self._conn.execute(
            "SELECT abandoned, adjudicated FROM users WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            return (0, 0, 0)
        (finished,) = self._conn.execute(
            "SELECT count(*) FROM finished_matches WHERE winner = ? OR loser = ?", (name, name)
        ).fetchone()
        return (int(row[0]), int(row[1]), int(finished))

    def checkpoint(self) -> None:
        """Copy committed pages from the WAL into the database file (a PASSIVE
        checkpoint: it never blocks a writer, nor waits for one).  Runs on its own
        connection, so it may run on another thread than the other methods, but never
        on two at once, nor after ``close``."""
        if self._path == ":memory:":
            return
        if self._checkpointer is None:
            self._checkpointer = sqlite3.connect(self._path, isolation_level=None,
                                                 check_same_thread=False)
        self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
        self._conn.close()
