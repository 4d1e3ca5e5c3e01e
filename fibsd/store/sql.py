"""Every query of the SQL stores, and every row read back into a record, written once.

``SQLiteStore`` and ``PostgresStore`` keep the same tables (``postgres_migrations``
mirrors ``migrations`` column for column) and run the same statements on them; each
store brings its connection, its transactions and the few spots where the two SQL
dialects differ, which it sets as the hooks below:

* placeholders are SQLite's ``?``; the PostgreSQL store's cursor turns them into ``%s``;
* names and ban values compare ignoring case by ``_nocase``, so that each database uses
  its own case-insensitive index (``COLLATE NOCASE`` in SQLite, ``lower(...)`` in
  PostgreSQL);
* rows removed and handed back (stored messages, notices, a rename's matches) come from
  ``_take``: PostgreSQL runs writers side by side, so it deletes ``RETURNING`` the rows
  (one stored meanwhile is neither handed back nor lost), SQLite serialises writers and
  reads, then deletes;
* where a transaction reads a row before it writes by it, it locks the row with
  ``_LOCK_ROW`` (PostgreSQL; SQLite's writer holds the database);
* a rename defers the foreign keys to the commit with ``_DEFER_FOREIGN_KEYS``;
* reads of one statement each (``_one``, ``_all``) run in ``_reads()``: SQLite's in
  autocommit, PostgreSQL's in a read transaction (which opens a lost connection again).

A finished match belongs to the accounts that played it: besides the names (as shown,
kept current by a rename) it holds ``winner_id``/``loser_id``, set from the names when
it is stored and emptied when an account is deleted.  A player's results are those of
his name *and* his account (``_PLAYED``): for a name without an account, those kept
without one; so a newcomer who registers a deleted account's name inherits none of its
history (the opponents keep theirs), and a result never changes hands.

Writes run in ``_transaction()``, reads that must see one snapshot in
``_transaction(write=False)``: both commit at the end and roll back on any exception, and
a write the database refuses raises ``WriteFailed``.  Flags are written as ``bool`` and
read back through ``bool``: SQLite keeps them as 1 and 0, PostgreSQL as booleans.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
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
)
from fibsd.store.analysis_sql import AnalysisQueries
from fibsd.store.batch import GroupCommit, NotWritten
from fibsd.store.tokens import TokenQueries
from fibsd.store.tournaments import (
    TournamentQueries,
    record_tournament_result,
    rename_in_tournaments,
)

Cursor = Any  # a sqlite3 or psycopg cursor: ``execute`` returns one to fetch from

_USER_COLUMNS = (
    "id, name, password_hash, created, last_login, last_host, last_logout,"
    " rating, experience, address, bot"
)
_MATCH_COLUMNS = (
    "winner, loser, length, winner_points, loser_points, finished, record,"
    " winner_rating_change, loser_rating_change"
)
# read back: the columns above, then the tournament and round a match was played for
_MATCH_READ = f"{_MATCH_COLUMNS}, tournament_id, tournament_round"
_SAVED_COLUMNS = "player_a, player_b, saved, record"
_BAN_COLUMNS = "kind, value, created, until, admin, reason"
_DEPARTURE_COLUMNS = "player_a, player_b, dropper, left_at, offered, counts_now"
_RECIPIENT = "recipient_id = (SELECT id FROM users WHERE name = ?)"
# the account now of a name, 0 for none (a result without an account keeps NULL)
_ACCOUNT = "coalesce((SELECT id FROM users WHERE name = ?), 0)"


def _played(side: str) -> str:
    """The condition that a player was the ``side`` ("winner" or "loser") of a finished
    match: the same name, and the same account or none.  Both placeholders take his
    name; the name comes first, so the side's (name, finished) index finds the rows."""
    return f"({side} = ? AND coalesce({side}_id, 0) = {_ACCOUNT})"


_PLAYED = f"({_played('winner')} OR {_played('loser')})"
# One statement per save, run at every game action (made once: a string made anew is
# hashed anew): the row is written only when both players exist (no row: ``_save`` says
# who does not), so no query before it.
_SAVE_MATCH = (
    f"INSERT INTO saved_matches ({_SAVED_COLUMNS})"
    " SELECT ?, ?, CAST(? AS BIGINT), CAST(? AS TEXT)"
    " WHERE (SELECT count(*) FROM users WHERE name IN (?, ?)) = 2"
    " ON CONFLICT (player_a, player_b)"
    " DO UPDATE SET saved = excluded.saved, record = excluded.record"
)


def _pair(player_a: str, player_b: str) -> tuple[str, str]:
    first, second = sorted((player_a, player_b))
    return first, second


def _renamed_pair(pair: tuple[str, str], name: str, new_name: str) -> tuple[str, str]:
    """A stored pair of players after ``name`` became ``new_name``, in sorted order."""
    return _pair(*(new_name if player == name else player for player in pair))


def _finished(row: tuple[Any, ...]) -> FinishedMatch:
    """A ``finished_matches`` row read as ``id, <_MATCH_READ>``."""
    return FinishedMatch(*row[1:10], id=row[0], tournament=row[10], tournament_round=row[11])


class SQLStore(AnalysisQueries, TokenQueries, GroupCommit, TournamentQueries, ABC):
    """The ``Store`` methods over a SQL database; a subclass brings the connection."""

    # what the unique index on names raises when an account of the name exists
    _NAME_CLASH: type[Exception]
    # the end of a SELECT whose rows the transaction then writes by
    _LOCK_ROW: str
    # the statement that makes foreign keys be checked at the commit
    _DEFER_FOREIGN_KEYS: str
    # the statement that makes reservations of registrations wait for each other (none
    # where the writer holds the whole database)
    _SERIALISE_REGISTRATIONS: str

    @abstractmethod
    def _transaction(self, write: bool = True) -> AbstractContextManager[Cursor]:
        """One transaction, committed at the end, rolled back on any exception."""

    @abstractmethod
    def _reads(self) -> AbstractContextManager[Cursor]:
        """Somewhere to run reads of one statement each."""

    @staticmethod
    @abstractmethod
    def _nocase(expression: str) -> str:
        """``expression`` as it compares and sorts ignoring case."""

    @staticmethod
    @abstractmethod
    def _take(cursor: Cursor, table: str, columns: str, where: str,
              parameters: Sequence[object]) -> list[Any]:
        """Delete the rows of ``table`` matching ``where``; their ``columns``, in no order."""

    def _check_writable(self) -> None:
        """One committed write, so that an unwritable database fails here."""
        with self._transaction() as cursor:
            cursor.execute("UPDATE schema_version SET applied = applied"
                           " WHERE version = (SELECT max(version) FROM schema_version)")

    def probe(self) -> None:
        """One real write, committed: whether the database takes writes (again); the
        database thread asks while the database is down (``fibsd.server.dbthread``)."""
        self._check_writable()

    def _one(self, sql: str, parameters: Sequence[object] = ()) -> Any:
        """The first row one read statement finds, or ``None``."""
        with self._reads() as cursor:
            return cursor.execute(sql, parameters).fetchone()

    def _all(self, sql: str, parameters: Sequence[object] = ()) -> list[Any]:
        """Every row one read statement finds."""
        with self._reads() as cursor:
            rows: list[Any] = cursor.execute(sql, parameters).fetchall()
        return rows

    @classmethod
    def _user_id(cls, cursor: Cursor, name: str, lock: bool = False) -> int:
        sql = "SELECT id FROM users WHERE name = ?"
        if lock:
            sql += cls._LOCK_ROW
        row = cursor.execute(sql, (name,)).fetchone()
        if row is None:
            raise UnknownUser(name)
        return int(row[0])

    # users

    def create_user(self, name: str, password_hash: str, created: int) -> UserRecord:
        try:
            with self._transaction() as cursor:
                cursor.execute(
                    "INSERT INTO users (name, password_hash, created) VALUES (?, ?, ?)",
                    (name, password_hash, created),
                )
        except self._NAME_CLASH as error:
            raise NameTaken(name) from error
        return UserRecord(name=name, password_hash=password_hash, created=created)

    def get_user(self, name: str) -> UserRecord | None:
        with self._transaction(write=False) as cursor:
            row = cursor.execute(
                f"SELECT {_USER_COLUMNS} FROM users WHERE name = ?", (name,)
            ).fetchone()
            if row is None:
                return None
            settings = dict(
                cursor.execute(
                    "SELECT name, value FROM settings WHERE user_id = ? ORDER BY name",
                    (row[0],),
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
            bot=bool(row[10]),
        )

    def name_taken(self, name: str) -> bool:
        row = self._one(
            f"SELECT 1 FROM users WHERE {self._nocase('name')} = {self._nocase('?')}",
            (name,),
        )
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

    def set_bot(self, name: str, bot: bool) -> None:
        self._update_user(name, "bot = ?", (bool(bot),))

    def bot_names(self) -> set[str]:
        return {name for (name,) in self._all("SELECT name FROM users WHERE bot = ?", (True,))}

    def save_settings(self, name: str, settings: Mapping[str, str]) -> None:
        with self._transaction() as cursor:
            user_id = self._user_id(cursor, name)
            cursor.executemany(
                "INSERT INTO settings (user_id, name, value) VALUES (?, ?, ?)"
                " ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value",
                [(user_id, key, value) for key, value in settings.items()],
            )

    def ratings(self) -> list[tuple[str, float, int]]:
        rows = self._all(
            "SELECT name, rating, experience FROM users"
            f" ORDER BY rating DESC, experience DESC, {self._nocase('name')}, name"
        )
        return [(name, rating, experience) for name, rating, experience in rows]

    # stored messages

    def store_message(self, message: StoredMessage, limit: int | None = None) -> bool:
        with self._transaction() as cursor:
            # the lock on the recipient's row makes the count and the write one step
            recipient_id = self._user_id(cursor, message.recipient, lock=limit is not None)
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
            rows = self._take(cursor, "messages", "sent, id, sender, text", _RECIPIENT,
                              (recipient,))
        return [StoredMessage(sender, recipient, sent, text)
                for sent, _, sender, text in sorted(rows)]

    def count_messages(self, recipient: str) -> int:
        (count,) = self._one(
            "SELECT count(*) FROM messages AS m JOIN users AS u ON u.id = m.recipient_id"
            " WHERE u.name = ?",
            (recipient,),
        )
        return int(count)

    # matches

    def save_match(self, saved: SavedMatch) -> None:
        with self._transaction() as cursor:
            self._save(cursor, saved)

    @classmethod
    def _save_many(cls, cursor: Cursor, saves: Collection[SavedMatch]) -> None:
        """The saves of a batch (``GroupCommit.save_matches``, one per pair) in one
        call; raises ``NotWritten`` if a save named an unknown player (its row was not
        written: the batch is then made again save by save, each with its answer)."""
        rows = []
        for saved in saves:
            player_a, player_b = _pair(saved.player_a, saved.player_b)
            rows.append((player_a, player_b, saved.saved, saved.record, player_a, player_b))
        cursor.executemany(_SAVE_MATCH, rows)
        if cursor.rowcount != len(rows):
            raise NotWritten(f"{len(rows) - cursor.rowcount} of {len(rows)} saves")

    @classmethod
    def _save(cls, cursor: Cursor, saved: SavedMatch) -> None:
        """``save_match``'s writes, inside the caller's transaction; a save that wrote
        nothing says which player is unknown."""
        try:
            cls._save_many(cursor, [saved])
        except NotWritten:
            pair = _pair(saved.player_a, saved.player_b)
            known = {row[0] for row in cursor.execute(
                "SELECT name FROM users WHERE name IN (?, ?)", pair).fetchall()}
            for player in pair:
                if player not in known:
                    raise UnknownUser(player) from None
            raise

    def load_match(self, player_a: str, player_b: str) -> SavedMatch | None:
        row = self._one(
            f"SELECT {_SAVED_COLUMNS} FROM saved_matches"
            " WHERE player_a = ? AND player_b = ?",
            _pair(player_a, player_b),
        )
        return None if row is None else SavedMatch(*row)

    def delete_saved_match(self, player_a: str, player_b: str) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM saved_matches WHERE player_a = ? AND player_b = ?",
                _pair(player_a, player_b),
            )

    def saved_matches(self, name: str) -> list[SavedMatch]:
        rows = self._all(
            f"SELECT {_SAVED_COLUMNS} FROM saved_matches"
            " WHERE player_a = ? OR player_b = ?",
            (name, name),
        )
        matches = [SavedMatch(*row) for row in rows]
        return sorted(matches, key=lambda m: m.player_b if m.player_a == name else m.player_a)

    def record_finished_match(
        self,
        match: FinishedMatch,
        new_ratings: Mapping[str, tuple[float, int]] | None = None,
    ) -> None:
        with self._transaction() as cursor:
            self._finish(cursor, match, new_ratings)
            self._queue_finished(cursor, match, new_ratings)

    @staticmethod
    def _finish(cursor: Cursor, match: FinishedMatch,
                new_ratings: Mapping[str, tuple[float, int]] | None) -> None:
        """``record_finished_match``'s writes, inside the caller's transaction."""
        cursor.execute(
            f"INSERT INTO finished_matches ({_MATCH_COLUMNS}, winner_id, loser_id,"
            " tournament_id, tournament_round)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " (SELECT id FROM users WHERE name = ?), (SELECT id FROM users WHERE name = ?),"
            " ?, ?) RETURNING id",
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
                match.winner,
                match.loser,
                match.tournament,
                match.tournament_round,
            ),
        )
        (match_id,) = cursor.fetchone()
        if match.tournament is not None:
            record_tournament_result(cursor, match, int(match_id))
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
        rows = self._all(
            f"SELECT id, {_MATCH_READ} FROM finished_matches"
            f" WHERE {_PLAYED} ORDER BY finished, id",
            (name,) * 4,
        )
        return [_finished(row) for row in rows]

    def recent_finished_matches(
        self, name: str, limit: int, offset: int = 0
    ) -> list[FinishedMatch]:
        # each half walks its own (player, finished) index backwards
        rows = self._all(
            f"SELECT id, {_MATCH_READ} FROM ("
            f" SELECT * FROM (SELECT * FROM finished_matches WHERE {_played('winner')}"
            "  ORDER BY finished DESC, id DESC LIMIT ?) AS won"
            " UNION ALL"
            " SELECT * FROM (SELECT * FROM finished_matches"
            f"  WHERE {_played('loser')} AND winner != ?"
            "  ORDER BY finished DESC, id DESC LIMIT ?) AS lost) AS mine"
            " ORDER BY finished DESC, id DESC LIMIT ? OFFSET ?",
            (name, name, limit + offset, name, name, name, limit + offset, limit, offset),
        )
        return [_finished(row) for row in rows]

    def finished_match(self, match_id: int) -> FinishedMatch | None:
        row = self._one(
            f"SELECT id, {_MATCH_READ} FROM finished_matches WHERE id = ?", (match_id,)
        )
        return None if row is None else _finished(row)

    def rating_steps(self, name: str, limit: int) -> list[RatingStep]:
        rows = self._all(
            "SELECT id, finished, CASE WHEN winner = ? THEN winner_rating_change"
            " ELSE loser_rating_change END FROM finished_matches"
            f" WHERE {_PLAYED} ORDER BY id DESC LIMIT ?",
            (name,) * 5 + (limit,),
        )
        return [RatingStep(*row) for row in reversed(rows)]

    # administration

    def rename_user(self, name: str, new_name: str) -> None:
        try:
            with self._transaction() as cursor:
                user_id = self._user_id(cursor, name, lock=True)
                clash = cursor.execute(
                    f"SELECT 1 FROM users WHERE {self._nocase('name')} = {self._nocase('?')}"
                    " AND name != ?", (new_name, name)).fetchone()
                if clash is not None:
                    raise NameTaken(new_name)
                # Saved matches refer to the name: checked at COMMIT, after both changed.
                cursor.execute(self._DEFER_FOREIGN_KEYS)
                cursor.execute("UPDATE users SET name = ? WHERE name = ?", (new_name, name))
                mine = "player_a = ? OR player_b = ?"
                for player_a, player_b, *rest in self._take(
                        cursor, "saved_matches", _SAVED_COLUMNS, mine, (name, name)):
                    cursor.execute(
                        f"INSERT INTO saved_matches ({_SAVED_COLUMNS}) VALUES (?, ?, ?, ?)",
                        (*_renamed_pair((player_a, player_b), name, new_name), *rest))
                for player_a, player_b, dropper, *rest in self._take(
                        cursor, "departures", _DEPARTURE_COLUMNS, mine, (name, name)):
                    cursor.execute(
                        f"INSERT INTO departures ({_DEPARTURE_COLUMNS})"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        (*_renamed_pair((player_a, player_b), name, new_name),
                         new_name if dropper == name else dropper, *rest))
                for side in ("winner", "loser"):  # his results, not a deleted namesake's
                    cursor.execute(
                        f"UPDATE finished_matches SET {side} = ?"
                        f" WHERE {side} = ? AND {side}_id = ?", (new_name, name, user_id))
                self._rename_analyses(cursor, name, new_name, user_id)
                cursor.execute(
                    "UPDATE messages SET sender = ? WHERE sender = ?", (new_name, name))
                rename_in_tournaments(cursor, name, new_name)
        except self._NAME_CLASH as error:  # made meanwhile (PostgreSQL's writers run at once)
            raise NameTaken(new_name) from error

    def delete_user(self, name: str) -> None:
        with self._transaction() as cursor:
            user_id = self._user_id(cursor, name)
            # His results stay (the opponents' history) but no longer name his account,
            # whose id a new account may get again (SQLite reuses the highest rowid).
            for side in ("winner", "loser"):
                cursor.execute(
                    f"UPDATE finished_matches SET {side}_id = NULL"
                    f" WHERE {side} = ? AND {side}_id = ?", (name, user_id))
            cursor.execute("DELETE FROM users WHERE id = ?", (user_id,))

    def reserve_registration(self, network: str, now: float, limit: int,
                             window: float) -> float | None:
        with self._transaction() as cursor:
            if self._SERIALISE_REGISTRATIONS:
                cursor.execute(self._SERIALISE_REGISTRATIONS)
            cursor.execute("DELETE FROM registrations WHERE at <= ?", (now - window,))
            count, oldest = cursor.execute(
                "SELECT count(*), min(at) FROM registrations WHERE network = ?",
                (network,)).fetchone()
            if count >= limit:
                return float(oldest) if oldest is not None else now  # (limit 0: none)
            cursor.execute("INSERT INTO registrations (network, at) VALUES (?, ?)",
                           (network, now))
            return None

    def registrations_since(self, network: str, since: float) -> list[float]:
        rows = self._all("SELECT at FROM registrations WHERE network = ? AND at > ?"
                         " ORDER BY at", (network, since))
        return [float(at) for (at,) in rows]

    def add_ban(self, ban: Ban) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                f"INSERT INTO bans ({_BAN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
                f" ON CONFLICT (kind, {self._nocase('value')}) DO UPDATE SET"
                " value = excluded.value, created = excluded.created,"
                " until = excluded.until, admin = excluded.admin, reason = excluded.reason",
                (ban.kind, ban.value, ban.created, ban.until, ban.admin, ban.reason))

    def remove_ban(self, kind: str, value: str) -> bool:
        with self._transaction() as cursor:
            cursor.execute(
                f"DELETE FROM bans WHERE kind = ? AND {self._nocase('value')}"
                f" = {self._nocase('?')}", (kind, value))
            removed: int = cursor.rowcount
        return removed > 0

    def bans(self, now: int) -> list[Ban]:
        rows = self._all(
            f"SELECT {_BAN_COLUMNS} FROM bans WHERE until IS NULL OR until > ?"
            f" ORDER BY kind DESC, {self._nocase('value')}, value", (now,))
        return [Ban(*row) for row in rows]

    def ban_for(self, name: str, address: str, now: int) -> Ban | None:
        value, given = self._nocase("value"), self._nocase("?")
        row = self._one(
            f"SELECT {_BAN_COLUMNS} FROM bans"
            f" WHERE ((kind = 'name' AND {value} = {given})"
            f" OR (kind = 'address' AND {value} = {given}))"
            " AND (until IS NULL OR until > ?) ORDER BY kind DESC LIMIT 1",
            (name, address, now))
        return None if row is None else Ban(*row)

    def log_admin(self, action: AdminAction) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "INSERT INTO admin_log (at, admin, action, target, detail)"
                " VALUES (?, ?, ?, ?, ?)",
                (action.at, action.admin, action.action, action.target, action.detail))

    def admin_log(self, limit: int) -> list[AdminAction]:
        rows = self._all(
            "SELECT at, admin, action, target, detail FROM admin_log"
            " ORDER BY id DESC LIMIT ?", (limit,))
        return [AdminAction(*row) for row in reversed(rows)]

    # fair play (protocol/fair-dice.md)

    def record_departure(self, departure: Departure) -> None:
        player_a, player_b = _pair(departure.player_a, departure.player_b)
        with self._transaction() as cursor:
            for player in (player_a, player_b):
                self._user_id(cursor, player)
            cursor.execute(
                f"INSERT INTO departures ({_DEPARTURE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (player_a, player_b) DO UPDATE SET dropper = excluded.dropper,"
                " left_at = excluded.left_at, offered = excluded.offered,"
                " counts_now = excluded.counts_now",
                (player_a, player_b, departure.dropper, departure.left,
                 departure.offered, departure.counts_now))

    def offer_resume(self, name: str) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "UPDATE departures SET offered = true"
                " WHERE (player_a = ? OR player_b = ?) AND dropper != ?", (name, name, name))

    def clear_departure(self, player_a: str, player_b: str) -> None:
        with self._transaction() as cursor:
            cursor.execute(
                "DELETE FROM departures WHERE player_a = ? AND player_b = ?",
                _pair(player_a, player_b))

    def due_departures(self, left_before: int) -> list[Departure]:
        rows = self._all(
            f"SELECT {_DEPARTURE_COLUMNS} FROM departures"
            " WHERE counts_now OR left_at < ? ORDER BY left_at, player_a, player_b",
            (left_before,))
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
                _pair(departure.player_a, departure.player_b))
            self._user_id(cursor, departure.dropper)
            extra = ", adjudicated = adjudicated + 1" if adjudicated is not None else ""
            cursor.execute(f"UPDATE users SET abandoned = abandoned + 1{extra} WHERE name = ?",
                           (departure.dropper,))
            if adjudicated is not None:
                self._finish(cursor, adjudicated, new_ratings)
                self._queue_finished(cursor, adjudicated, new_ratings)
            for name, text in (notices or {}).items():
                cursor.execute("INSERT INTO notices (recipient_id, text) VALUES (?, ?)",
                               (self._user_id(cursor, name), text))

    def take_notices(self, name: str) -> list[str]:
        with self._transaction() as cursor:
            rows = self._take(cursor, "notices", "id, text", _RECIPIENT, (name,))
        return [text for _, text in sorted(rows)]

    def reliability(self, name: str) -> tuple[int, int, int]:
        with self._reads() as cursor:
            row = cursor.execute(
                "SELECT abandoned, adjudicated FROM users WHERE name = ?", (name,)
            ).fetchone()
            if row is None:
                return (0, 0, 0)
            (finished,) = cursor.execute(
                f"SELECT count(*) FROM finished_matches WHERE {_PLAYED}", (name,) * 4,
            ).fetchone()
        return (int(row[0]), int(row[1]), int(finished))
