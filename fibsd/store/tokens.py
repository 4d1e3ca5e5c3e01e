"""Web session tokens in the SQL stores (protocol/web.md, "Reconnecting").

A token lets the web client log in again after a dropped WebSocket without the
password.  The database holds only its SHA-256 (``token_hash``): a copy of the database
logs no one in.  Each belongs to an account by id (deleted with it), has an expiry, and
an account keeps at most ``keep`` of them, the newest; every new token purges the
expired ones of everyone, so the table holds at most the live ones and those of the
last few minutes.  A token is stored (again) only while the account's password hash is
the one its session logged in with, so no revoked token comes back.  The queries are the same on SQLite and PostgreSQL (migration 6 in
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

    def add_token(self, name: str, token_hash: str, now: int, expires: int, keep: int,
                  guard: str) -> bool:
        """``name``'s token, new or kept on (its connection dropped: it now lasts until
        ``expires``), unless his password hash is no longer ``guard`` (the one he logged
        in with): a new password revokes every token, and a session still holding one
        must not store it again.  His oldest beyond ``keep`` and everyone's expired ones
        go.  Whether it was stored."""
        with self._transaction() as cursor:
            cursor.execute("DELETE FROM session_tokens WHERE expires <= ?", (now,))
            row = cursor.execute("SELECT id FROM users WHERE name = ? AND password_hash = ?",
                                 (name, guard)).fetchone()
            if row is None:
                return False
            user_id = int(row[0])
            cursor.execute("INSERT INTO session_tokens (token_hash, user_id, created, expires)"
                           " VALUES (?, ?, ?, ?) ON CONFLICT (token_hash)"
                           " DO UPDATE SET expires = excluded.expires",
                           (token_hash, user_id, now, expires))
            cursor.execute(
                "DELETE FROM session_tokens WHERE user_id = ? AND token_hash NOT IN"
                " (SELECT token_hash FROM session_tokens WHERE user_id = ?"
                " ORDER BY created DESC, token_hash LIMIT ?)", (user_id, user_id, keep))
            return True

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
