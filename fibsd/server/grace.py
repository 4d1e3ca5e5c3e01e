"""Matches that survive a dropped connection (issue 23; protocol/play.md, "Drop grace").

FIBS saves a match the moment a player's connection drops, and it goes on only once
both players invite and join again.  With ``[pace] drop_grace`` seconds a drop in a
running match *holds* it instead:

- the dropped player is logged out as FIBS logs him out (``bob drops connection.``, the
  CLIP ``8`` line, at the drop): he cannot answer, so every client's list of users stays
  true and nobody invites, tells or watches a connection that is gone.  His match stays
  live; his opponent and the watchers are told with one ``** `` line how long it waits.
  His watchers keep watching.  His opponent may play his own turn meanwhile (whoever
  must act is the one whose clock runs);
- logging in again within the grace resumes the match at once: he gets FIBS's resume
  line and the match as a resume shows it, his opponent and the watchers a ``** `` line
  and their board, and everyone his ``5`` line naming his opponent (as FIBS's own
  resume after a login shows it);
- when the grace ends without him, when his opponent leaves the server, or when the
  server stops, the match is saved with FIBS's own lines, exactly as a drop saves it
  without a grace (``bob drops connection. The game was saved.``, then his watchers'
  ``You're not watching anymore.``).

While held, ``LiveMatch.user`` answers with the dropped player's last ``OnlineUser``
(``Hold.user`` in ``lobby.graces``): its session is closed, so nothing reaches it, but a
match that ends meanwhile (his opponent accepts his resignation) is still rated with his
rating; his login within the grace tells him the result in a ``** `` line.  Each hold
keeps that user, his closed session and a timer: ``[pace] max_held`` bounds them, a drop
beyond it is saved at once.  A crash during a grace loses nothing either: the match was
written at its last action, as every match is (fibsd.server.match), and is resumed by
``invite`` and ``join`` after the restart.  In a cluster (``lobby.cluster``) the two
players may be on two nodes: there a drop saves the match at once, as FIBS does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from twisted.logger import Logger

from fibsd.server.lobby import Hook, on_logout
from fibsd.wire import game_text, grace_text

if TYPE_CHECKING:
    from twisted.internet.interfaces import IDelayedCall

    from fibsd.config import Pace
    from fibsd.server.lobby import Lobby
    from fibsd.server.user import OnlineUser

log = Logger()
# Run with (lobby, the dropped user) when a grace ends without him, as logout hooks run
# at a logout (the watching commands stop his watchers then, not at the drop).
GRACE_END_HOOKS: list[Hook] = []


def on_grace_end(hook: Hook) -> Hook:
    GRACE_END_HOOKS.append(hook)
    return hook


@dataclass
class Hold:
    """A match waiting for ``user``, whose connection dropped."""

    user: OnlineUser  # his last connection's user (its session is closed)
    match: Any  # fibsd.server.match.LiveMatch
    departure: str  # what the others were told at the drop: ``bob drops connection.``
    call: IDelayedCall  # the end of the grace


def holds(lobby: Lobby, user: OnlineUser) -> bool:
    """Whether ``user``'s departure holds his match (the logout hooks then leave his
    match and his watchers alone)."""
    hold = lobby.graces.get(user.name)
    return hold is not None and hold.user is user


def _live(lobby: Lobby, name: str) -> Any:
    match = lobby.matches.get(name)
    return match if match is not None and match.is_live else None


def departing(lobby: Lobby, user: OnlineUser, departure: str, pace: Pace, *,
              dropped: bool) -> None:
    """``user`` is about to be logged out with ``departure`` (the session calls this
    before ``Lobby.logout``).  His opponent's held match is saved first, as that drop
    would have saved it; a ``dropped`` connection's running match is then held for the
    grace, unless the grace is off, the limit is reached or the server is stopping."""
    if lobby.find(user.name) is not user:
        return  # a connection replaced by a new login: the match is the new one's
    match = _live(lobby, user.name)
    if match is None:
        return
    opponent = match.opponent_of(user)
    if opponent in lobby.graces:
        end(lobby, opponent)
        return
    if (not dropped or not pace.drop_grace or lobby.stopping or lobby.cluster is not None
            or lobby.find(opponent) is None):
        return
    if len(lobby.graces) >= pace.max_held:
        log.warn("{user}'s match saved at once: {held} matches held", event="limit",
                 limit="pace.max_held", user=user.name, held=len(lobby.graces))
        return
    call = lobby.clock.callLater(pace.drop_grace, end, lobby, user.name)
    lobby.graces[user.name] = Hold(user, match, departure, call)
    log.info("{user} dropped: the match waits {seconds} s", event="grace_start",
             user=user.name, seconds=pace.drop_grace)


@on_logout
def _told(lobby: Lobby, user: OnlineUser) -> None:
    """After the logout notice (``bob drops connection.``): how long the match waits."""
    if holds(lobby, user):
        hold = lobby.graces[user.name]
        seconds = round(hold.call.getTime() - lobby.now())
        _tell(hold.match, grace_text.match_waits_for(user.name, seconds), user.name)


def _tell(match: Any, line: str, absent: str, boards: bool = False) -> None:
    """``line`` (and each one's board) to the player other than ``absent`` and to the
    watchers."""
    lobby = match.lobby
    others = [lobby.find(name) for name in match.names if name != absent]
    others += [user for user, _ in match.watchers()]
    for other in others:
        if other is not None:
            other.session.notify(line, *(match.board_lines(other) if boards else ()))


def end(lobby: Lobby, name: str) -> None:
    """The grace of ``name`` is over (ran out, his opponent left, the server stops):
    his match is saved with the lines a drop without a grace gives, and his watchers
    stop watching him."""
    hold = lobby.graces.pop(name, None)
    if hold is None:
        return
    if hold.call.active():
        hold.call.cancel()
    log.info("{user} did not come back", event="grace_end", user=name)
    if _live(lobby, name) is hold.match:
        hold.match.suspend(hold.user, departure=hold.departure)
    for hook in list(GRACE_END_HOOKS):
        hook(lobby, hold.user)


def end_all(lobby: Lobby) -> None:
    """The server is stopping: every held match is saved now."""
    for name in list(lobby.graces):
        end(lobby, name)


def came_back(lobby: Lobby, user: OnlineUser) -> bool:
    """``user`` logged in again (a login hook): True when a held match resumes, and
    he is shown it as a resume shows it (once its writes under way are stored, so
    nobody is shown a state that is not)."""
    hold = lobby.graces.pop(user.name, None)
    if hold is None:
        return False
    if hold.call.active():
        hold.call.cancel()
    match = hold.match
    if _live(lobby, user.name) is not match:  # left, claimed or finished meanwhile
        rules = match.rules
        if rules.over:  # he would not know: his connection was gone when it ended
            winner = rules.winner
            user.session.notify(grace_text.ended_meanwhile(
                rules.length, match.opponent_of(user), match.names[winner],
                (rules.score[winner], rules.score[1 - winner])))
        return False
    opponent = match.opponent_of(user)
    user.playing = opponent
    log.info("{user} is back in the match", event="grace_back", user=user.name)

    def show(_: object) -> None:
        if lobby.find(user.name) is not user or _live(lobby, user.name) is not match:
            return
        if match.paused:  # the state is not stored yet: the board follows once it is
            user.session.notify(game_text.MATCH_WAITS)
            match.when_saved().addCallback(show)
            return
        user.session.notify(game_text.now_playing_resumed(opponent))
        match.show_state(user)
        _tell(match, grace_text.is_back(user.name), user.name, boards=True)

    lobby.broadcast_who(user)
    match.when_saved().addCallback(show)
    return True
