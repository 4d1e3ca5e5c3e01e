"""Persistence behind one small interface.

The server talks only to ``Store``; implementations (SQLite by default) keep records,
not live objects.  Every method is synchronous, short and atomic: it either does all
of its writing or none of it.  The server runs the methods on a single worker thread
(``fibsd.server.dbthread``) so the reactor never waits on disk, and so one store is
never used by two threads at once.

Invariants every implementation keeps (``tests/store/test_contract.py`` checks them):

* Names are stored as typed; lookups are case-sensitive, while ``name_taken`` (and the
  unique index behind ``create_user``) is not, so no two accounts differ only in case.
* Methods that write for a named user raise ``UnknownUser`` when there is no such
  account; methods that only read return ``None`` or an empty list instead.
* A new account starts at rating 1500.0 and experience 0, with no settings.
* A saved match is keyed by its unordered pair of players: the record comes back with
  ``player_a``/``player_b`` in sorted order, whichever order it was saved or asked for.
* A write the database refuses (a full disk, a read-only file, an I/O error) raises
  ``WriteFailed`` and writes nothing; opening a store that cannot be written raises it
  at once, so a server never starts on a database it cannot keep its promises in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol


class NameTaken(Exception):
    """An account with this name (ignoring case) already exists."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class UnknownUser(KeyError):
    """No account has this name."""


class WriteFailed(Exception):
    """The database refused a write (disk full, read-only, I/O error): nothing of the
    call was written.  The message is the database's own."""


INITIAL_RATING = 1500.0
INITIAL_EXPERIENCE = 0


@dataclass(frozen=True)
class UserRecord:
    name: str
    password_hash: str
    created: int  # Unix time
    last_login: int | None = None
    last_host: str | None = None
    last_logout: int | None = None
    rating: float = INITIAL_RATING
    experience: int = INITIAL_EXPERIENCE
    address: str = ""  # the e-mail address set with `address`
    settings: dict[str, str] = field(default_factory=dict)  # toggles and `set` variables, as text


@dataclass(frozen=True)
class StoredMessage:
    sender: str
    recipient: str
    sent: int  # Unix time
    text: str


@dataclass(frozen=True)
class SavedMatch:
    """An unfinished match, keyed by its two players (stored in sorted order)."""

    player_a: str
    player_b: str
    saved: int  # Unix time
    record: str  # the match's full record, serialised by the server (opaque here)


@dataclass(frozen=True)
class FinishedMatch:
    winner: str
    loser: str
    length: int  # 0 for unlimited
    winner_points: int
    loser_points: int
    finished: int  # Unix time
    record: str  # the full record, opaque here
    winner_rating_change: float = 0.0
    loser_rating_change: float = 0.0


class Store(Protocol):
    # users
    def create_user(self, name: str, password_hash: str, created: int) -> UserRecord:
        """Add an account; raises ``NameTaken`` if the name exists in any case."""
        ...

    def get_user(self, name: str) -> UserRecord | None:
        """The account with exactly this name, with its settings and lists."""
        ...

    def name_taken(self, name: str) -> bool:
        """Whether an account has this name, ignoring case."""
        ...

    def set_password_hash(self, name: str, password_hash: str) -> None: ...
    def record_login(self, name: str, when: int, host: str) -> None: ...
    def record_logout(self, name: str, when: int) -> None: ...
    def set_address(self, name: str, address: str) -> None: ...

    def save_settings(self, name: str, settings: Mapping[str, str]) -> None:
        """Store each given value; names not given keep their stored value."""
        ...

    def set_rating(self, name: str, rating: float, experience: int) -> None: ...

    def ratings(self) -> list[tuple[str, float, int]]:
        """Every account as (name, rating, experience): best rating first; ties by
        more experience, then by name ignoring case."""
        ...

    # stored messages
    def store_message(self, message: StoredMessage) -> None:
        """Keep a message for its recipient (who must have an account)."""
        ...

    def take_messages(self, recipient: str) -> list[StoredMessage]:
        """The recipient's stored messages, oldest first, removed from the store."""
        ...

    def count_messages(self, recipient: str) -> int:
        """How many messages wait for the recipient (for the per-user limit)."""
        ...

    # matches
    def save_match(self, saved: SavedMatch) -> None:
        """Keep an unfinished match, replacing any saved for the same pair."""
        ...

    def load_match(self, player_a: str, player_b: str) -> SavedMatch | None: ...
    def delete_saved_match(self, player_a: str, player_b: str) -> None: ...

    def saved_matches(self, name: str) -> list[SavedMatch]:
        """Every saved match ``name`` plays in, sorted by opponent name."""
        ...

    def record_finished_match(
        self,
        match: FinishedMatch,
        new_ratings: Mapping[str, tuple[float, int]] | None = None,
    ) -> None:
        """Keep the result, drop the pair's saved match, and set each player in
        ``new_ratings`` to its (rating, experience), all in one transaction.

        The players need not have accounts (a result outlives an account); the
        names in ``new_ratings`` must, or nothing is written (``UnknownUser``)."""
        ...

    def finished_matches(self, name: str) -> list[FinishedMatch]:
        """Every finished match ``name`` played, oldest first."""
        ...

    def close(self) -> None: ...
