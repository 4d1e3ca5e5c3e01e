"""``Store`` on a PostgreSQL server, through psycopg 3 (the ``postgres`` extra).

Like ``SQLiteStore``, one connection, used only by the single database worker thread
(``fibsd.server.dbthread``), so the reactor never waits on the network and calls run
in the order they were made.  Each public method is one transaction (``with
conn.transaction()``: committed at the end, rolled back on any exception).

SQLite serialises writers (``BEGIN IMMEDIATE``); PostgreSQL runs them side by side at
READ COMMITTED, so where a method reads before it writes it locks what it read: the
stored-message cap locks the recipient's account row (``FOR UPDATE``) before counting,
so senders at once (other servers on the same database) cannot pass the cap.

A connection the server lost (PostgreSQL restarted) is opened again by the next call;
the call that found it broken fails, as any database error does.  A write PostgreSQL
refuses for want of resources or a connection (a full disk, a read-only server or
transaction, a lost connection) is rolled back and raised as ``WriteFailed``; opening
ends with one real write, so a server never starts on a database it cannot write.  One
case is ambiguous in any client of a database server: a connection lost while COMMIT was
under way leaves the transaction either wholly done or wholly undone, and no way to ask
which; it is reported as ``WriteFailed`` too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors

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
from fibsd.store.postgres_migrations import upgrade

# the same tables and columns as SQLite's, read into records the same way
from fibsd.store.sqlite import _MATCH_COLUMNS, _USER_COLUMNS, SQLiteStore, _finished, _pair

_BAN_COLUMNS = SQLiteStore._BAN_COLUMNS
_DEPARTURE_COLUMNS = "player_a, player_b, dropper, left_at, offered, counts_now"

# what PostgreSQL raises when it cannot take a write, rather than refusing its content
_REFUSED_WRITES = (psycopg.OperationalError, errors.ReadOnlySqlTransaction)


class PostgresStore(GroupCommit):
    """``Store`` on the PostgreSQL database at ``url`` (``postgresql://user@host/db``);
    the schema is brought up to date on opening."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._conn = self._connect()
        try:
            try:
                upgrade(self._conn)
            except _REFUSED_WRITES as error:
                raise WriteFailed(str(error).strip()) from error
            self._check_writable()
        except BaseException:
            self._conn.close()
            raise

    def _check_writable(self) -> None:
        """One committed write, so that an unwritable database fails here."""
        with self._transaction() as cursor:
            cursor.execute("UPDATE schema_version SET applied = applied"
                           " WHERE version = (SELECT max(version) FROM schema_version)")

    def _connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self._url, autocommit=True)

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[psycopg.Cursor[Any]]:
        if self._conn.broken:
            self._conn = self._connect()
        try:
            with self._conn.transaction(), self._conn.cursor() as cursor:
                yield cursor
        except _REFUSED_WRITES as error:
            if not write:
                raise
            raise WriteFailed(str(error).strip()) from error

    @staticmethod
    def _user_id(cursor: psycopg.Cursor[Any], name: str, lock: bool = False) -> int:
        cursor.execute(
            "SELECT id FROM users WHERE name = %s" + (" FOR UPDATE" if lock else ""), (name,))
        row = cursor.fetchone()
        if row is None:
            raise UnknownUser(name)
        return int(row[0])

    # users

    def create_user(self, name: str, password_hash: str, created: int) -> UserRecord:
        try:
            with self._transaction() as cursor:
                cursor.execute(
                    "INSERT INTO users (name, password_hash, created) VALUES (%s, %s, %s)",
                    (name, password_hash, created),
                )
        except errors.UniqueViolation as error:
            raise NameTaken(name) from error
        return UserRecord(name=name, password_hash=password_hash, created=created)

    def get_user(self, name: str) -> UserRecord | None:
        with self._transaction(write=False) as cursor:
            cursor.execute(f"SELECT {_USER_COLUMNS} FROM users WHERE name = %s", (name,))
            row = cursor.fetchone()
            if row is None:
                return None
            cursor.execute(
                "SELECT name, value FROM settings WHERE user_id = %s ORDER BY name", (row[0],))
            settings = dict(cursor.fetchall())
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
        with self._transaction(write=False) as cursor:
            cursor.execute("SELECT 1 FROM users WHERE lower(name) = lower(%s)", (name,))
            return cursor.fetchone() is not None

    def _update_user(self, name: str, assignments: str, values: tuple[object, ...]) -> None:
        """Run ``UPDATE users SET <assignments>`` for one user; ``assignments`` is
        always a literal from this module, never user input."""
        with self._transaction() as cursor:
            cursor.execute(f"UPDATE users SET {assignments} WHERE name = %s", (*values, name))
            if cursor.rowcount == 0:
                raise UnknownUser(name)

    def set_password_hash(self, name: str, password_hash: str) -> None:
        self._update_user(name, "password_hash = %s", (password_hash,))

    def record_login(self, name: str, when: int, host: str) -> None:
        self._update_user(name, "last_login = %s, last_host = %s", (when, host))

    def record_logout(self, name: str, when: int) -> None:
        self._update_user(name, "last_logout = %s", (when,))

    def set_address(self, name: str, address: str) -> None:
        self._update_user(name, "address = %s", (address,))

    def set_rating(self, name: str, rating: float, experience: int) -> None:
        self._update_user(name, "rating = %s, experience = %s", (rating, experience))

    def save_settings(self, name: str, settings: Mapping[str, str]) -> None:
        with self._transaction() as cursor:
            user_id = self._user_id(cursor, name)
            cursor.executemany(
                "INSERT INTO settings (user_id, name, value) VALUES (%s, %s, %s)"
                " ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value",
                [(user_id, key, value) for key, value in settings.items()],
            )

    def ratings(self) -> list[tuple[str, float, int]]:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                "SELECT name, rating, experience FROM users"
                " ORDER BY rating DESC, experience DESC, lower(name), name")
            return [(name, rating, experience) for name, rating, experience in cursor]

    # stored messages

    def store_message(self, message: StoredMessage, limit: int | None = None) -> bool:
        with self._transaction() as cursor:
            # the lock on the recipient's row makes the count and the write one step
            recipient_id = self._user_id(cursor, message.recipient, lock=limit is not None)
            if limit is not None:
                cursor.execute(
                    "SELECT count(*) FROM messages WHERE recipient_id = %s", (recipient_id,))
                if cursor.fetchone()[0] >= limit:  # type: ignore[index]
                    return False
            cursor.execute(
                "INSERT INTO messages (recipient_id, sender, sent, text)"
                " VALUES (%s, %s, %s, %s)",
                (recipient_id, message.sender, message.sent, message.text),
            )
        return True

    def take_messages(self, recipient: str) -> list[StoredMessage]:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM messages WHERE recipient_id ="
                " (SELECT id FROM users WHERE name = %s)"
                " RETURNING sent, id, sender, text",
                (recipient,),
            )
            rows = sorted(cursor.fetchall())
        return [StoredMessage(sender, recipient, sent, text) for sent, _, sender, text in rows]

    def count_messages(self, recipient: str) -> int:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                "SELECT count(*) FROM messages AS m JOIN users AS u ON u.id = m.recipient_id"
                " WHERE u.name = %s", (recipient,))
            return int(cursor.fetchone()[0])  # type: ignore[index]

    # matches

    def save_match(self, saved: SavedMatch) -> None:
        with self._transaction() as cursor:
            self._save(cursor, saved)

    @classmethod
    def _save(cls, cursor: psycopg.Cursor[Any], saved: SavedMatch) -> None:
        """``save_match``'s writes, inside the caller's transaction (``save_matches``
        batches them)."""
        player_a, player_b = _pair(saved.player_a, saved.player_b)
        for player in (player_a, player_b):
            cls._user_id(cursor, player)
        cursor.execute(
            "INSERT INTO saved_matches (player_a, player_b, saved, record)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (player_a, player_b)"
            " DO UPDATE SET saved = excluded.saved, record = excluded.record",
            (player_a, player_b, saved.saved, saved.record),
        )

    def load_match(self, player_a: str, player_b: str) -> SavedMatch | None:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                "SELECT player_a, player_b, saved, record FROM saved_matches"
                " WHERE player_a = %s AND player_b = %s", _pair(player_a, player_b))
            row = cursor.fetchone()
        return None if row is None else SavedMatch(*row)

    def delete_saved_match(self, player_a: str, player_b: str) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM saved_matches WHERE player_a = %s AND player_b = %s",
                _pair(player_a, player_b))

    def saved_matches(self, name: str) -> list[SavedMatch]:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                "SELECT player_a, player_b, saved, record FROM saved_matches"
                " WHERE player_a = %s OR player_b = %s", (name, name))
            matches = [SavedMatch(*row) for row in cursor]
        return sorted(matches, key=lambda m: m.player_b if m.player_a == name else m.player_a)

    def record_finished_match(
        self,
        match: FinishedMatch,
        new_ratings: Mapping[str, tuple[float, int]] | None = None,
    ) -> None:
        with self._transaction() as cursor:
            self._finish(cursor, match, new_ratings)

    @staticmethod
    def _finish(cursor: psycopg.Cursor[Any], match: FinishedMatch,
                new_ratings: Mapping[str, tuple[float, int]] | None) -> None:
        """``record_finished_match``'s writes, inside the caller's transaction."""
        cursor.execute(
            f"INSERT INTO finished_matches ({_MATCH_COLUMNS})"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
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
            "DELETE FROM saved_matches WHERE player_a = %s AND player_b = %s",
            _pair(match.winner, match.loser))
        for name, (rating, experience) in (new_ratings or {}).items():
            cursor.execute(
                "UPDATE users SET rating = %s, experience = %s WHERE name = %s",
                (rating, experience, name))
            if cursor.rowcount == 0:
                raise UnknownUser(name)

    def finished_matches(self, name: str) -> list[FinishedMatch]:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                f"SELECT id, {_MATCH_COLUMNS} FROM finished_matches"
                " WHERE winner = %s OR loser = %s ORDER BY finished, id", (name, name))
            return [_finished(row) for row in cursor]

    def recent_finished_matches(
        self, name: str, limit: int, offset: int = 0
    ) -> list[FinishedMatch]:
        # each half walks its own (player, finished) index backwards
        with self._transaction(write=False) as cursor:
            cursor.execute(
                f"SELECT id, {_MATCH_COLUMNS} FROM ("
                " (SELECT * FROM finished_matches WHERE winner = %(name)s"
                "  ORDER BY finished DESC, id DESC LIMIT %(both)s)"
                " UNION ALL"
                " (SELECT * FROM finished_matches WHERE loser = %(name)s AND winner != %(name)s"
                "  ORDER BY finished DESC, id DESC LIMIT %(both)s)) AS mine"
                " ORDER BY finished DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s",
                {"name": name, "both": limit + offset, "limit": limit, "offset": offset})
            return [_finished(row) for row in cursor]

    def finished_match(self, match_id: int) -> FinishedMatch | None:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                f"SELECT id, {_MATCH_COLUMNS} FROM finished_matches WHERE id = %s", (match_id,))
            row = cursor.fetchone()
        return None if row is None else _finished(row)

    def rating_steps(self, name: str, limit: int) -> list[RatingStep]:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                "SELECT id, finished, CASE WHEN winner = %(name)s THEN winner_rating_change"
                " ELSE loser_rating_change END FROM finished_matches"
                " WHERE winner = %(name)s OR loser = %(name)s ORDER BY id DESC LIMIT %(limit)s",
                {"name": name, "limit": limit})
            rows = cursor.fetchall()
        return [RatingStep(*row) for row in reversed(rows)]

    # administration

    def rename_user(self, name: str, new_name: str) -> None:
        try:
            with self._transaction() as cursor:
                self._user_id(cursor, name, lock=True)
                cursor.execute(
                    "SELECT 1 FROM users WHERE lower(name) = lower(%s) AND name != %s",
                    (new_name, name))
                if cursor.fetchone() is not None:
                    raise NameTaken(new_name)
                # Saved matches refer to the name: checked at COMMIT, after both changed.
                cursor.execute("SET CONSTRAINTS ALL DEFERRED")
                cursor.execute("UPDATE users SET name = %s WHERE name = %s", (new_name, name))
                cursor.execute(
                    "DELETE FROM saved_matches WHERE player_a = %s OR player_b = %s"
                    " RETURNING player_a, player_b, saved, record", (name, name))
                for player_a, player_b, when, record in cursor.fetchall():
                    first, second = _pair(*(new_name if p == name else p
                                            for p in (player_a, player_b)))
                    cursor.execute(
                        "INSERT INTO saved_matches (player_a, player_b, saved, record)"
                        " VALUES (%s, %s, %s, %s)", (first, second, when, record))
                cursor.execute(
                    "DELETE FROM departures WHERE player_a = %s OR player_b = %s"
                    f" RETURNING {_DEPARTURE_COLUMNS}", (name, name))
                for player_a, player_b, dropper, *rest in cursor.fetchall():
                    first, second = _pair(*(new_name if p == name else p
                                            for p in (player_a, player_b)))
                    cursor.execute(
                        f"INSERT INTO departures ({_DEPARTURE_COLUMNS})"
                        " VALUES (%s, %s, %s, %s, %s, %s)",
                        (first, second, new_name if dropper == name else dropper, *rest))
                for column in ("winner", "loser"):
                    cursor.execute(
                        f"UPDATE finished_matches SET {column} = %s WHERE {column} = %s",
                        (new_name, name))
                cursor.execute(
                    "UPDATE messages SET sender = %s WHERE sender = %s", (new_name, name))
        except errors.UniqueViolation as error:  # an account of that name came meanwhile
            raise NameTaken(new_name) from error

    def delete_user(self, name: str) -> None:
        with self._transaction() as cursor:
            self._user_id(cursor, name)
            cursor.execute("DELETE FROM users WHERE name = %s", (name,))

    def add_ban(self, ban: Ban) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                f"INSERT INTO bans ({_BAN_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (kind, lower(value)) DO UPDATE SET value = excluded.value,"
                " created = excluded.created, until = excluded.until,"
                " admin = excluded.admin, reason = excluded.reason",
                (ban.kind, ban.value, ban.created, ban.until, ban.admin, ban.reason))

    def remove_ban(self, kind: str, value: str) -> bool:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM bans WHERE kind = %s AND lower(value) = lower(%s)", (kind, value))
            return cursor.rowcount > 0

    def bans(self, now: int) -> list[Ban]:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                f"SELECT {_BAN_COLUMNS} FROM bans WHERE until IS NULL OR until > %s"
                " ORDER BY kind DESC, lower(value), value", (now,))
            return [Ban(*row) for row in cursor]

    def ban_for(self, name: str, address: str, now: int) -> Ban | None:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                f"SELECT {_BAN_COLUMNS} FROM bans"
                " WHERE ((kind = 'name' AND lower(value) = lower(%s))"
                " OR (kind = 'address' AND lower(value) = lower(%s)))"
                " AND (until IS NULL OR until > %s) ORDER BY kind DESC LIMIT 1",
                (name, address, now))
            row = cursor.fetchone()
        return None if row is None else Ban(*row)

    def log_admin(self, action: AdminAction) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "INSERT INTO admin_log (at, admin, action, target, detail)"
                " VALUES (%s, %s, %s, %s, %s)",
                (action.at, action.admin, action.action, action.target, action.detail))

    def admin_log(self, limit: int) -> list[AdminAction]:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                "SELECT at, admin, action, target, detail FROM admin_log"
                " ORDER BY id DESC LIMIT %s", (limit,))
            rows = cursor.fetchall()
        return [AdminAction(*row) for row in reversed(rows)]

    # fair play (protocol/fair-dice.md)

    def record_departure(self, departure: Departure) -> None:
        player_a, player_b = _pair(departure.player_a, departure.player_b)
        with self._transaction() as cursor:
            for player in (player_a, player_b):
                self._user_id(cursor, player)
            cursor.execute(
                f"INSERT INTO departures ({_DEPARTURE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (player_a, player_b) DO UPDATE SET dropper = excluded.dropper,"
                " left_at = excluded.left_at, offered = excluded.offered,"
                " counts_now = excluded.counts_now",
                (player_a, player_b, departure.dropper, departure.left,
                 departure.offered, departure.counts_now))

    def offer_resume(self, name: str) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "UPDATE departures SET offered = true"
                " WHERE (player_a = %s OR player_b = %s) AND dropper != %s", (name, name, name))

    def clear_departure(self, player_a: str, player_b: str) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM departures WHERE player_a = %s AND player_b = %s",
                _pair(player_a, player_b))

    def due_departures(self, left_before: int) -> list[Departure]:
        with self._transaction(write=False) as cursor:
            cursor.execute(
                f"SELECT {_DEPARTURE_COLUMNS} FROM departures"
                " WHERE counts_now OR left_at < %s ORDER BY left_at, player_a, player_b",
                (left_before,))
            return [Departure(*row) for row in cursor]

    def count_abandonment(
        self,
        departure: Departure,
        adjudicated: FinishedMatch | None = None,
        new_ratings: Mapping[str, tuple[float, int]] | None = None,
        notices: Mapping[str, str] | None = None,
    ) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM departures WHERE player_a = %s AND player_b = %s",
                _pair(departure.player_a, departure.player_b))
            self._user_id(cursor, departure.dropper)
            extra = ", adjudicated = adjudicated + 1" if adjudicated is not None else ""
            cursor.execute(f"UPDATE users SET abandoned = abandoned + 1{extra} WHERE name = %s",
                           (departure.dropper,))
            if adjudicated is not None:
                self._finish(cursor, adjudicated, new_ratings)
            for name, text in (notices or {}).items():
                cursor.execute("INSERT INTO notices (recipient_id, text) VALUES (%s, %s)",
                               (self._user_id(cursor, name), text))

    def take_notices(self, name: str) -> list[str]:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM notices WHERE recipient_id = (SELECT id FROM users WHERE name = %s)"
                " RETURNING id, text", (name,))
            return [text for _, text in sorted(cursor.fetchall())]

    def reliability(self, name: str) -> tuple[int, int, int]:
        with self._transaction(write=False) as cursor:
            cursor.execute("SELECT abandoned, adjudicated FROM users WHERE name = %s", (name,))
            row = cursor.fetchone()
            if row is None:
                return (0, 0, 0)
            cursor.execute(
                "SELECT count(*) FROM finished_matches WHERE winner = %s OR loser = %s",
                (name, name))
            return (int(row[0]), int(row[1]), int(cursor.fetchone()[0]))  # type: ignore[index]

    def close(self) -> None:
        self._conn.close()
