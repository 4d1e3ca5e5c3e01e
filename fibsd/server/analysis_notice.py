"""The line that tells a player his match's analysis is ready (protocol/analysis-command.md).

The analysis side calls ``tell_ready`` on the reactor thread for each result it learns
of (``on_analysis_done``: a poll of the store's ``analyses_done_after``).  Each player
of the match who is connected to this node and has not ``set analysis off`` gets one
line; in a cluster every node polls and tells only its own users, so a player hears it
once, wherever he is logged in.  Nothing is kept for a player who is offline: the
analysis waits for him on the web face and behind ``analysis``.
"""

from __future__ import annotations

import json
from typing import Any

from twisted.internet.defer import Deferred, maybeDeferred

from fibsd.server.lobby import Lobby
from fibsd.store import FinishedMatch
from fibsd.wire import analysis_text as text


def players_of(match: FinishedMatch) -> tuple[str, str]:
    """The match's players in its record's order (the inviter first)."""
    try:
        names = json.loads(match.record)["players"]
        return str(names[0]), str(names[1])
    except (ValueError, KeyError, IndexError, TypeError):
        return match.winner, match.loser


def tell_ready(lobby: Lobby, db: Any, match_id: int) -> Deferred[None]:
    """Tell the match's players on this node that its analysis is ready."""

    def found(match: FinishedMatch | None) -> None:
        if match is None:
            return
        players = players_of(match)
        line = text.ready(match_id, players)
        for name in dict.fromkeys(players):
            user = lobby.find(name)
            if user is None or user.session.remote:
                continue
            if user.variables.get("analysis", "on") == "on":
                user.session.notify(line)

    d: Deferred[None] = maybeDeferred(db.finished_match, match_id).addCallback(found)
    return d
