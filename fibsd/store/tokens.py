"""Web session tokens in the SQL stores (protocol/web.md, "Reconnecting").

A token lets the web client log in again after a dropped WebSocket without the
password.  The database holds only its SHA-256 (``token_hash``): a copy of the database
logs no one in.  Each belongs to an account by id (deleted with it), has an expiry, and
an account keeps at most ``keep`` of them, the newest; every new token purges the
expired ones of everyone, so the table holds at most the live ones and those of the
last few minutes.  The queries are the same on SQLite and PostgreSQL (migration 8 in
``migrations`` and ``postgres_migrations``).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any


class TokenQueries:
    """The token methods of ``SQLStore`` (fibsd.store.sql), which brings these."""

    def _transaction(self, write: bool = True) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _one(self, sql: str, parameters: Any = ()) -> Any:
        raise NotImplementedError

    @classmethod
    def _user_id(cls, cursor: Any, name: str, lock: bool = False) -> int:
        raise NotImplementedError

    def add_token(self, name: str, token_hash: str, now: int, expires: int, keep: int) -> None:
        """``name``'s token, new or kept on (its connection dropped: it now lasts until
        ``expires``); his oldest beyond ``keep`` and everyone's expired ones go."""
        with self._transaction() as cursor:
            user_id = self._user_id(cursor, name)
            cursor.execute("DELETE FROM session_tokens WHERE expires <= ?", (now,))
            cursor.execute("INSERT INTO session_tokens (token_hash, user_id, created, expires)"
                           " VALUES (?, ?, ?, ?) ON CONFLICT (token_hash)"
                           " DO UPDATE SET expires = excluded.expires",
                           (token_hash, user_id, now, expires))
            cursor.execute(
                "DELETE FROM session_tokens WHERE user_id = ? AND token_hash NOT IN"
                " (SELECT token_hash FROM session_tokens WHERE user_id = ?"
                " ORDER BY created DESC, token_hash LIMIT ?)", (user_id, user_id, keep))

    def token_user(self, token_hash: str, now: int) -> str | None:
        """The name of the account whose unexpired token this is, or None."""
        row = self._one("SELECT u.name FROM session_tokens AS t JOIN users AS u"
                        " ON u.id = t.user_id WHERE t.token_hash = ? AND t.expires > ?",
                        (token_hash, now))
        return None if row is None else str(row[0])

    def revoke_token(self, token_hash: str) -> None:
        with self._transaction() as cursor:
            cursor.execute("DELETE FROM session_tokens WHERE token_hash = ?", (token_hash,))

    def revoke_tokens(self, name: str) -> None:
        """Every token of ``name``'s (a new password)."""
        with self._transaction() as cursor:
            cursor.execute("DELETE FROM session_tokens WHERE user_id ="
                           " (SELECT id FROM users WHERE name = ?)", (name,))

    def count_tokens(self) -> int:
        """Every token stored, live or not yet purged (for the tests and the operator)."""
        return int(self._one("SELECT count(*) FROM session_tokens")[0])
