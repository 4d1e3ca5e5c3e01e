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
* History belongs to the account, not to the name: a finished match counts for the
  accounts that played it (or, for a player without one, for his name alone), follows a
  rename, and after a delete counts for no account, so that a newcomer who registers a
  deleted account's name inherits none of its matches, ratings history or reliability.
* A saved match is keyed by its unordered pair of players: the record comes back with
  ``player_a``/``player_b`` in sorted order, whichever order it was saved or asked for.
* A write the database refuses (a full disk, a read-only file, an I/O error) raises
  ``WriteFailed`` and writes nothing; opening a store that cannot be written raises it
  at once, so a server never starts on a database it cannot keep its promises in.
  A read that cannot reach the database (a lost or hung server) raises ``Unavailable``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from fibsd.analysis.model import AnalysisJob, MatchAnalysis, PlayerSummary
    from fibsd.store.tournaments import PairingRecord, TournamentRecord


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


class Unavailable(Exception):
    """The database could not be reached or did not answer in time (a lost or hung
    server): a read that did not happen.  Like ``WriteFailed``, an operating condition
    the server waits out (``fibsd.server.dbthread``), not a bug."""


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
    # played by a program (a resident bot, or one marked by an admin or at its
    # registration): whois, the web, the ladder and tournaments tell it from people
    bot: bool = False


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
    # the archive's number for the match, set by the store when it reads one back
    # (None before it is stored); not part of a result's equality
    id: int | None = field(default=None, compare=False)
    # the tournament (its id) and round (1-based) the match was played for, if any:
    # storing the result also records it in that round's pairing (fibsd.store.tournaments)
    tournament: int | None = None
    tournament_round: int | None = None


@dataclass(frozen=True)
class Ban:
    """A name or an address refused at login until ``until`` (None: until lifted).
    Names and addresses match ignoring case."""

    kind: str  # "name" or "address"
    value: str
    created: int  # Unix time
    until: int | None
    admin: str  # who banned (an account, or "console" for ``fibsd admin``)
    reason: str = ""


@dataclass(frozen=True)
class AdminAction:
    """One administrator action, as kept in the admin log (never a password)."""

    at: int  # Unix time
    admin: str
    action: str  # alert, kick, ban, unban, password, rename, delete, reload, shutdown ...
    target: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Departure:
    """A saved match one player left or dropped (or was claimed from): it counts as
    abandoned if he does not resume it in time once his opponent has offered to
    (``offered``), or at once (``counts_now``: twice dropped on his own turn when behind)."""

    player_a: str
    player_b: str
    dropper: str
    left: int  # Unix time
    offered: bool = False
    counts_now: bool = False


@dataclass(frozen=True)
class RatingStep:
    """One finished match's rating change for one player, without the record."""

    match_id: int
    finished: int  # Unix time
    change: float


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

    def set_bot(self, name: str, bot: bool) -> None:
        """Mark the account as played by a program, or not; ``UnknownUser``."""
        ...

    def bot_names(self) -> set[str]:
        """The names of the accounts marked as bots."""
        ...

    def ratings(self) -> list[tuple[str, float, int]]:
        """Every account as (name, rating, experience): best rating first; ties by
        more experience, then by name ignoring case."""
        ...

    # stored messages
    def store_message(self, message: StoredMessage, limit: int | None = None) -> bool:
        """Keep a message for its recipient (who must have an account), unless ``limit``
        messages already wait for him: then store nothing and return False.  The count
        and the write are one transaction, so senders at once cannot pass the limit."""
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
        names in ``new_ratings`` must, or nothing is written (``UnknownUser``).  The
        result belongs to the accounts the names have now."""
        ...

    def finished_matches(self, name: str) -> list[FinishedMatch]:
        """Every finished match the account ``name`` played (for a name without an
        account: the results kept without one), oldest first."""
        ...

    # administration
    def rename_user(self, name: str, new_name: str) -> None:
        """Give an account a new name, in its saved and finished matches and stored
        messages too (a deleted namesake's results keep the old name);
        ``UnknownUser`` or ``NameTaken`` (another account, any case)."""
        ...

    def delete_user(self, name: str) -> None:
        """Remove an account with its settings, messages and saved matches (finished
        matches stay, under the name: they are the opponents' history too, but no
        longer this account's, nor a later account's of the name); ``UnknownUser``."""
        ...

    def add_ban(self, ban: Ban) -> None:
        """Keep ``ban``, replacing one of the same kind and value."""
        ...

    def remove_ban(self, kind: str, value: str) -> bool:
        """Lift a ban; whether there was one."""
        ...

    def bans(self, now: int) -> list[Ban]:
        """The bans in force at ``now``, by kind then value."""
        ...

    def ban_for(self, name: str, address: str, now: int) -> Ban | None:
        """The ban in force at ``now`` on this name or address (the name's first)."""
        ...

    def log_admin(self, action: AdminAction) -> None: ...

    def admin_log(self, limit: int) -> list[AdminAction]:
        """The last ``limit`` admin actions, oldest first."""
        ...

    # the archive
    def recent_finished_matches(
        self, name: str, limit: int, offset: int = 0
    ) -> list[FinishedMatch]:
        """At most ``limit`` of the matches ``name`` played, newest first, skipping the
        ``offset`` newest (a page of the archive; reads no more rows than it returns)."""
        ...

    def finished_match(self, match_id: int) -> FinishedMatch | None:
        """The finished match with this ``id``, or ``None``."""
        ...

    def rating_steps(self, name: str, limit: int) -> list[RatingStep]:
        """``name``'s rating changes in his last ``limit`` finished matches, oldest
        first (the web face's rating chart)."""
        ...

    # registrations per network and hour (protocol/access.md)
    def reserve_registration(self, network: str, now: float, limit: int,
                             window: float) -> float | None:
        """Count a registration from ``network`` at ``now`` unless ``limit`` were made
        from it in the ``window`` seconds before: None when counted, else when the
        oldest of those was made.  Atomic across servers on one database."""
        ...

    def registrations_since(self, network: str, since: float) -> list[float]:
        """When the registrations from ``network`` after ``since`` were made, oldest first."""
        ...

    # fair play (protocol/fair-dice.md)
    def record_departure(self, departure: Departure) -> None:
        """Keep a departure, replacing any for the same pair."""
        ...

    def offer_resume(self, name: str) -> None:
        """``name`` offers to resume every match another player left him in."""
        ...

    def clear_departure(self, player_a: str, player_b: str) -> None: ...

    def due_departures(self, left_before: int) -> list[Departure]:
        """Departures that count at once or whose player left before ``left_before``."""
        ...

    def count_abandonment(
        self,
        departure: Departure,
        adjudicated: FinishedMatch | None = None,
        new_ratings: Mapping[str, tuple[float, int]] | None = None,
        notices: Mapping[str, str] | None = None,
    ) -> None:
        """In one transaction: the dropper's abandonment counted, the departure gone,
        and for an adjudicated match its result kept (as ``record_finished_match``),
        the dropper's adjudications counted and a notice kept for each named player."""
        ...

    def take_notices(self, name: str) -> list[str]:
        """The notices waiting for ``name``, oldest first, removed from the store."""
        ...

    def reliability(self, name: str) -> tuple[int, int, int]:
        """(matches abandoned, of those adjudicated, matches finished) for ``name``."""
        ...

    # engine analysis (protocol/analysis.md; fibsd.store.analysis_sql)
    def queue_analyses(self, which: str, plies: int) -> None:
        """From now on ``record_finished_match`` (and an adjudication) queues the
        match's analysis at ``plies`` in its own transaction: ``all`` matches, the
        ``rated`` ones (that changed ratings) or ``none`` (the default)."""
        ...

    def analysis(self, match_id: int) -> MatchAnalysis | None:
        """The match's analysis job and result; None if it was never queued."""
        ...

    def analyses_of(self, name: str, limit: int) -> list[tuple[int, float, PlayerSummary]]:
        """(match id, finished, ``name``'s summary) of his analysed matches, newest first."""
        ...

    def pr_ladder(self, min_matches: int, limit: int) -> list[tuple[str, float, int]]:
        """(name, average PR, analysed matches) for players with ``min_matches`` or
        more, lowest PR first."""
        ...

    def request_analysis(self, match_id: int, plies: int, requested_by: str,
                         now: float | None = None) -> str:
        """Queue the match again deeper: ``queued``, ``pending``, ``deep`` or ``unknown``."""
        ...

    def analysis_requests(self, name: str, since: float) -> int:
        """How many analyses ``name`` requested after ``since``."""
        ...

    def save_analysis(self, result: MatchAnalysis) -> None:
        """Keep ``result`` as the match's analysis, whatever its job's state."""
        ...

    def claim_analysis(self, now: float, lease: float, attempts: int) -> AnalysisJob | None:
        """A worker takes the oldest job due under a lease (see analysis_sql)."""
        ...

    def complete_analysis(self, result: MatchAnalysis, token: str) -> bool:
        """Keep a worker's result if its claim still holds the job."""
        ...

    def fail_analysis(self, match_id: int, token: str, reason: str, attempts: int,
                      final: bool = False) -> str | None:
        """A worker's try failed: ``failed`` after ``attempts`` (or if ``final``), else
        ``queued``; None if its claim no longer holds."""
        ...

    def release_analysis(self, match_id: int, token: str) -> None:
        """Give a job back untried."""
        ...

    def analysis_done_mark(self) -> int: ...

    def analyses_done_after(self, seen: int, limit: int = 1000) -> list[tuple[int, int]]:
        """(sequence, match id) of results kept after ``seen``, in order."""
        ...

    def analysis_counts(self) -> dict[str, int]: ...
    # web session tokens (fibsd.store.tokens), by their hash
    def add_token(self, name: str, token_hash: str, now: int, expires: int,
                  keep: int, guard: str) -> bool: ...
    def token_user(self, token_hash: str, now: int) -> str | None: ...
    def revoke_token(self, token_hash: str) -> None: ...
    def revoke_tokens(self, name: str) -> None: ...
    def count_tokens(self) -> int: ...
    # tournaments (fibsd.store.tournaments has the records and says what each keeps)
    def create_tournament(self, *, name: str, fmt: str, lengths: Sequence[int],
                          rounds: int | None, max_players: int, start_at: int | None,
                          bots: bool, clock: str, created: int,
                          limit: int | None = None) -> int | None: ...
    def tournament(self, tournament_id: int) -> TournamentRecord | None: ...
    def tournaments(self, states: Sequence[str] = ("open", "running", "finished"),
                    limit: int = 100) -> list[TournamentRecord]: ...
    def tournament_entries(self, tournament_id: int) -> list[tuple[str, float]]: ...
    def tournament_pairings(self, tournament_id: int) -> list[PairingRecord]: ...
    def entered_tournament(self, name: str) -> int | None: ...
    def join_tournament(self, tournament_id: int, name: str, rating: float, now: int) -> str: ...
    def leave_tournament(self, tournament_id: int, name: str) -> str: ...
    def start_tournament(self, tournament_id: int, seeds: Sequence[tuple[str, float]],
                         first_round: Sequence[tuple[str, str | None, str | None]],
                         now: int, deadline: int) -> bool: ...
    def add_round(self, tournament_id: int, number: int,
                  pairs: Sequence[tuple[str, str | None, str | None]], now: int,
                  deadline: int) -> bool: ...
    def record_forfeit(self, tournament_id: int, number: int, slot: int,
                       winner: str) -> bool: ...
    def finish_tournament(self, tournament_id: int, winner: str | None, now: int) -> bool: ...
    def take_lease(self, tournament_id: int, node: str, now: float, until: float) -> bool: ...
    def tournament_of_match(self, match_id: int) -> tuple[int, int] | None: ...
    def names_with_setting(self, key: str, value: str) -> list[str]: ...

    def close(self) -> None: ...
