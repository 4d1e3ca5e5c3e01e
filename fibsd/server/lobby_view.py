"""What the web face may read of the lobby: plain values, never a user or a session.

The web face (``fibsd/web/``) must not reach into sessions or change anything, so it
gets this view instead of the lobby: who is online (name, rating, experience, whom he
plays or watches; no addresses), the matches being played, and a running match's
``board:`` line exactly as a watcher of that player receives it.  ``fibsd.app``
hands it over; the web face describes what it needs as a ``Protocol`` of its own.
"""

from __future__ import annotations

from typing import NamedTuple

from fibsd.server.lobby import Lobby
from fibsd.server.match import LiveMatch, live_match
from fibsd.wire.board import format_board


class OnlinePlayer(NamedTuple):
    name: str
    rating: float
    experience: int
    playing: str | None  # the opponent's name
    watching: str | None
    away: bool


class RunningMatch(NamedTuple):
    players: tuple[str, str]  # inviter first
    length: int  # 0: unlimited
    score: tuple[int, int]


class LobbyView:
    def __init__(self, lobby: Lobby) -> None:
        self._lobby = lobby

    def online(self) -> list[OnlinePlayer]:
        """Everyone online, in login order."""
        return [OnlinePlayer(u.name, u.rating, u.experience, u.playing, u.watching,
                             u.away is not None) for u in self._lobby.users()]

    def is_online(self, name: str) -> bool:
        return name in self._lobby.online

    def online_count(self) -> int:
        return len(self._lobby.online)

    def running(self) -> list[RunningMatch]:
        """Every match being played, once each, in the order they started."""
        return [RunningMatch(m.names, m.rules.length, m.rules.score) for m in self._live()]

    def running_count(self) -> int:
        return sum(1 for _ in self._live())

    def board_line(self, player: str) -> str | None:
        """The ``board:`` line a watcher of ``player`` gets now, or None when ``player``
        plays no match."""
        match = live_match(self._lobby, player)
        if match is None:
            return None
        return format_board(match.board_view(match.names.index(player), plays=False))

    def _live(self) -> list[LiveMatch]:
        seen: dict[int, LiveMatch] = {}
        for match in self._lobby.matches.values():
            if isinstance(match, LiveMatch):
                seen.setdefault(id(match), match)
        return list(seen.values())
