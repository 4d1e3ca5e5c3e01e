"""Watching games: ``watch``, ``unwatch`` and ``look`` (fibs-protocol between-games.md 3
and 4, game-play.md 9).

A watcher is attached to a *player*, not to a match: ``OnlineUser.watching`` names him,
and every live match routes its events to the users watching either of its players
(``LiveMatch.watchers``), so a watcher follows the player into his next match without
a new ``watch``.  Watching ends with ``unwatch``, a new ``watch``, the watcher starting
a match of his own, or the watched player leaving the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fibsd.server.commands import command, user_of
from fibsd.server.grace import holds, on_grace_end
from fibsd.server.lobby import Lobby, on_logout
from fibsd.server.match import live_match
from fibsd.wire import watching_text as text
from fibsd.wire.chat import no_one_called

if TYPE_CHECKING:
    from fibsd.server.session import Session
    from fibsd.server.user import OnlineUser


def _event(user: OnlineUser | None, line: str) -> None:
    """A notice caused by someone else: CLIP users get an empty line in front
    (game-play.md 1.2)."""
    if user is not None:
        user.session.notify_event(line)


def _blinder(lobby: Lobby, viewer: OnlineUser, player: OnlineUser) -> str | None:
    """The player, or his opponent, who does not want ``viewer`` to see the game."""
    for name in (player.name, player.playing):
        other = lobby.find(name) if name else None
        if other is not None and viewer.name in other.blinded:
            return other.name
    return None


def stop_watching(lobby: Lobby, watcher: OnlineUser) -> str | None:
    """Detach ``watcher``; the player and his opponent are told.  Returns the name he
    watched (None: he watched nobody)."""
    player = watcher.watching
    if player is None:
        return None
    watcher.watching = None
    watched = lobby.find(player)
    if watched is not None:
        _event(watched, text.stops_watching_you(watcher.name))
        if watched.playing is not None:
            _event(lobby.find(watched.playing), text.stops_watching(watcher.name, player))
    return player


@command("watch")
def watch(session: Session, rest: str) -> None:
    user = user_of(session)
    lobby = session.lobby
    words = rest.split()
    if not words:
        session.send(text.WATCH_WHO)
        return
    if user.playing is not None:
        session.send(text.WATCH_WHILE_PLAYING)
        return
    target = lobby.complete(words[0])
    if target is user or words[0].lower() == user.name.lower():
        error: str | None = text.WATCH_SELF
    elif target is None:
        error = no_one_called(words[0])
    elif (blinder := _blinder(lobby, user, target)) is not None:
        error = text.doesnt_want_you_to(blinder, "watch")
    else:
        error = None
    # FIBS ends the old watch first, even when the new one fails.
    stopped = None
    if error is not None or target is None or target.name != user.watching:
        stopped = stop_watching(lobby, user)
        if stopped is not None:
            session.send(text.stop_watching(stopped, replaced=True))
    if error is None:
        assert target is not None
        _start_watching(session, user, target)
        return
    session.send(error)
    if stopped is not None:
        lobby.broadcast_who(user)


def _start_watching(session: Session, user: OnlineUser, target: OnlineUser) -> None:
    lobby = session.lobby
    again = user.watching == target.name
    session.send(text.now_watching(target.name))
    match = live_match(lobby, target.name)
    if match is None:
        user.watching = target.name
        session.send(text.nothing_interesting(target.name))
    else:
        match.add_watcher(user, target.name)
    if not again:
        _event(target, text.is_watching_you(user.name))
        if target.playing is not None:
            _event(lobby.find(target.playing), text.starts_watching(user.name, target.name))
    lobby.broadcast_who(user)


@command("unwatch")
def unwatch(session: Session, rest: str) -> None:
    user = user_of(session)
    player = stop_watching(session.lobby, user)
    if player is None:
        session.send(text.NOT_WATCHING)
        return
    session.send(text.stop_watching(player))
    session.lobby.broadcast_who(user)


@command("look")
def look(session: Session, rest: str) -> None:
    user = user_of(session)
    lobby = session.lobby
    words = rest.split()
    if not words:
        session.send(text.LOOK_WHO)
        return
    target = lobby.complete(words[0])
    if target is user or words[0].lower() == user.name.lower():
        session.send(text.LOOK_SELF)
        return
    if target is None:
        session.send(no_one_called(words[0]))
        return
    blinder = _blinder(lobby, user, target)
    if blinder is not None:
        session.send(text.doesnt_want_you_to(blinder, "look"))
        return
    match = live_match(lobby, target.name)
    if match is None:
        session.send(text.not_playing(target.name))
        return
    session.send(*match.board_lines(user, seen_as=target.name))


@on_logout
def _watched_player_left(lobby: Lobby, player: OnlineUser) -> None:
    """Watchers of a player who left stop watching (after the match, if any, has
    told them it was saved: this hook runs after the match commands' own); those of
    a dropped player whose match is held go on until his grace ends
    (fibsd.server.grace)."""
    if not holds(lobby, player):
        _watchers_stop(lobby, player)


@on_grace_end
def _watchers_stop(lobby: Lobby, player: OnlineUser) -> None:
    """Watchers of ``player``, who left, stop watching.  In a cluster each node stops
    its own users' watching (and tells the others so)."""
    for watcher in lobby.local_users():
        if watcher.watching == player.name:
            watcher.watching = None
            _event(watcher, text.watched_logs_out(player.name))
            lobby.broadcast_who(watcher)
