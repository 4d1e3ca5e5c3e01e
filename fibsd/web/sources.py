"""What the web face reads, described as it needs it.

``LobbySource`` is the read-only lobby view (``fibsd.server.lobby_view.LobbyView``
fits it); ``Archive`` is the store's read methods and nothing else, called on the
database thread.  The web face imports no server module: ``fibsd.app`` hands both in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from twisted.internet.defer import Deferred

from fibsd.analysis.model import MatchAnalysis, PlayerSummary
from fibsd.store import FinishedMatch, RatingStep, UserRecord


class OnlinePlayer(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def rating(self) -> float: ...
    @property
    def experience(self) -> int: ...
    @property
    def playing(self) -> str | None: ...
    @property
    def watching(self) -> str | None: ...
    @property
    def away(self) -> bool: ...


class RunningMatch(Protocol):
    @property
    def players(self) -> tuple[str, str]: ...
    @property
    def length(self) -> int: ...
    @property
    def score(self) -> tuple[int, int]: ...


class LobbySource(Protocol):
    def online(self) -> Sequence[OnlinePlayer]: ...
    def is_online(self, name: str) -> bool: ...
    def online_count(self) -> int: ...
    def running(self) -> Sequence[RunningMatch]: ...
    def running_count(self) -> int: ...
    def board_line(self, player: str) -> str | None: ...


# The store methods the web face may call: reads only (tests/test_layering.py checks
# that fibsd/web names no other store method).
READS = ("get_user", "ratings", "finished_match", "recent_finished_matches", "rating_steps",
         "analysis", "analyses_of", "pr_ladder", "tournament", "tournaments",
         "tournament_entries", "tournament_pairings", "bot_names")


class Archive:
    """The store's read methods on the database thread, as Deferreds."""

    def __init__(self, db: Any) -> None:
        self._db = db  # fibsd.server.dbthread.DatabaseThread: call(name, *args) -> Deferred

    def get_user(self, name: str) -> Deferred[UserRecord | None]:
        d: Deferred[UserRecord | None] = self._db.call("get_user", name)
        return d

    def ratings(self) -> Deferred[list[tuple[str, float, int]]]:
        d: Deferred[list[tuple[str, float, int]]] = self._db.call("ratings")
        return d

    def bot_names(self) -> Deferred[set[str]]:
        d: Deferred[set[str]] = self._db.call("bot_names")
        return d

    def finished_match(self, match_id: int) -> Deferred[FinishedMatch | None]:
        d: Deferred[FinishedMatch | None] = self._db.call("finished_match", match_id)
        return d

    def recent_finished_matches(self, name: str, limit: int,
                                offset: int = 0) -> Deferred[list[FinishedMatch]]:
        d: Deferred[list[FinishedMatch]] = self._db.call("recent_finished_matches", name,
                                                          limit, offset)
        return d

    def analysis(self, match_id: int) -> Deferred[MatchAnalysis | None]:
        d: Deferred[MatchAnalysis | None] = self._db.call("analysis", match_id)
        return d

    def analyses_of(self, name: str,
                    limit: int) -> Deferred[list[tuple[int, float, PlayerSummary]]]:
        d: Deferred[list[tuple[int, float, PlayerSummary]]] = self._db.call(
            "analyses_of", name, limit)
        return d

    def pr_ladder(self, min_matches: int, limit: int) -> Deferred[list[tuple[str, float, int]]]:
        d: Deferred[list[tuple[str, float, int]]] = self._db.call("pr_ladder", min_matches,
                                                                   limit)
        return d

    def rating_steps(self, name: str, limit: int) -> Deferred[list[RatingStep]]:
        d: Deferred[list[RatingStep]] = self._db.call("rating_steps", name, limit)
        return d

    def tournament(self, tournament_id: int) -> Deferred[Any]:
        d: Deferred[Any] = self._db.call("tournament", tournament_id)
        return d

    def tournaments(self, states: tuple[str, ...], limit: int) -> Deferred[list[Any]]:
        d: Deferred[list[Any]] = self._db.call("tournaments", states, limit)
        return d

    def tournament_entries(self, tournament_id: int) -> Deferred[list[tuple[str, float]]]:
        d: Deferred[list[tuple[str, float]]] = self._db.call("tournament_entries", tournament_id)
        return d

    def tournament_pairings(self, tournament_id: int) -> Deferred[list[Any]]:
        d: Deferred[list[Any]] = self._db.call("tournament_pairings", tournament_id)
        return d
