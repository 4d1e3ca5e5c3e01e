"""Persistence behind one small interface.

The server talks only to ``Store``; implementations (SQLite by default) keep records,
not live objects.  Every method is synchronous and short; the server runs them on a
single worker thread (``fibsd.server.dbthread``) so the reactor never waits on disk.
Names are stored as typed; lookups are case-sensitive, while ``name_taken`` is not,
so no two accounts differ only in case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


class NameTaken(Exception):
    """An account with this name (ignoring case) already exists."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class UnknownUser(KeyError):
    """No account has this name."""


@dataclass(frozen=True)
class UserRecord:
    name: str
    password_hash: str
    created: int  # Unix time
    last_login: int | None = None
    last_host: str | None = None
    last_logout: int | None = None
    rating: float = 1500.0
    experience: int = 0
    address: str = ""  # the e-mail address set with `address`
    settings: dict[str, str] = field(default_factory=dict)  # toggles and `set` variables, as text
    gagged: tuple[str, ...] = ()
    blinded: tuple[str, ...] = ()


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
    def create_user(self, name: str, password_hash: str, created: int) -> UserRecord: ...
    def get_user(self, name: str) -> UserRecord | None: ...
    def name_taken(self, name: str) -> bool: ...
    def set_password_hash(self, name: str, password_hash: str) -> None: ...
    def record_login(self, name: str, when: int, host: str) -> None: ...
    def record_logout(self, name: str, when: int) -> None: ...
    def set_address(self, name: str, address: str) -> None: ...
    def save_settings(self, name: str, settings: dict[str, str]) -> None: ...
    def set_gagged(self, name: str, names: tuple[str, ...]) -> None: ...
    def set_blinded(self, name: str, names: tuple[str, ...]) -> None: ...
    def set_rating(self, name: str, rating: float, experience: int) -> None: ...
    def ratings(self) -> list[tuple[str, float, int]]: ...  # (name, rating, experience), best first
    # stored messages
    def store_message(self, message: StoredMessage) -> None: ...
    def take_messages(self, recipient: str) -> list[StoredMessage]: ...  # oldest first, removed
    # matches
    def save_match(self, saved: SavedMatch) -> None: ...  # replaces any for the same pair
    def load_match(self, player_a: str, player_b: str) -> SavedMatch | None: ...
    def delete_saved_match(self, player_a: str, player_b: str) -> None: ...
    def saved_matches(self, name: str) -> list[SavedMatch]: ...
    def record_finished_match(self, match: FinishedMatch) -> None: ...
    def finished_matches(self, name: str) -> list[FinishedMatch]: ...
    def close(self) -> None: ...
