"""The lines of ``watch``, ``unwatch`` and ``look`` (fibs-protocol between-games.md 3
and 4), for the watcher, the watched player and his opponent.

FIBS Cookie Monster classifies these by their openings (``^You're now watching``,
``^\\*\\* You stop watching``, ``You're not watching anymore\\.``), so the wording is
kept exactly, including the two spellings of the stop line: with stars when a new
``watch`` ends the old one, without for ``unwatch``.
"""

from __future__ import annotations

WATCH_WHO = "** Watch who?"
WATCH_SELF = "** Use a mirror to do that."
WATCH_WHILE_PLAYING = "** You can't watch another game while you're playing."
NOT_WATCHING = "** You're not watching."
LOOK_WHO = "** Look at who?"
LOOK_SELF = "You look great."


def now_watching(player: str) -> str:
    return f"You're now watching {player}."


def nothing_interesting(player: str) -> str:
    """After ``now_watching`` when the player is in no match."""
    return f"{player} is not doing anything interesting."


def stop_watching(player: str, *, replaced: bool = False) -> str:
    """``unwatch``; ``replaced``: a new ``watch`` ended the old one."""
    line = f"You stop watching {player}."
    return f"** {line}" if replaced else line


def is_watching_you(watcher: str) -> str:
    return f"{watcher} is watching you."


def starts_watching(watcher: str, player: str) -> str:
    """To the watched player's opponent."""
    return f"{watcher} starts watching {player}."


def stops_watching_you(watcher: str) -> str:
    return f"{watcher} stops watching you."


def stops_watching(watcher: str, player: str) -> str:
    return f"{watcher} stops watching {player}."


def watched_logs_out(player: str) -> str:
    """To each watcher of a player who left the server."""
    return f"{player} logs out. You're not watching anymore."


def doesnt_want_you_to(blinder: str, verb: str) -> str:
    """``verb`` is ``watch`` or ``look``."""
    return f"** {blinder} doesn't want you to {verb}."


def not_playing(player: str) -> str:
    return f"** {player} is not playing."
