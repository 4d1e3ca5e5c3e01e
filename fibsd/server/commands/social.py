"""Talking to others: shout, tell, say, kibitz, whisper, message, waitfor, gag, blind,
away, back, wave.

Texts come from ``fibsd.wire.chat``; each event is rendered for the recipient's mode
(CLIP line or telnet sentence), never the sender's.  Gags, blinds, waits and waves
are per connection, as on FIBS: they end when either side logs out (MacFIBS renews
its gags at each login and would lift them if they persisted, since ``gag`` toggles).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from weakref import WeakSet

from fibsd.server.commands import command, user_of
from fibsd.server.lobby import Lobby, on_login, on_logout
from fibsd.server.ratelimit import allow
from fibsd.server.user import OnlineUser
from fibsd.store import StoredMessage, UserRecord
from fibsd.wire import chat

if TYPE_CHECKING:
    from fibsd.server.session import Session

# Per-connection state of this family, kept beside OnlineUser rather than in it; weak,
# so it goes with the connection's user object.  (``waitfor``'s names are in
# ``OnlineUser.awaits``: a cluster replicates them, fibsd.cluster.messages.)
_waved: WeakSet[OnlineUser] = WeakSet()


def _reply(session: Session, said: chat.Said) -> None:
    session.send(said.for_client(session.is_clip))


def _deliver(to: OnlineUser, said: chat.Said) -> None:
    to.session.notify(said.for_client(to.session.is_clip))


def _name_and_text(rest: str) -> tuple[str, str]:
    name, _, text = rest.partition(" ")
    return name, text.strip()


def _names(names: frozenset[str] | set[str] | list[str]) -> list[str]:
    return sorted(names, key=str.lower)


# --- shout, tell, say -----------------------------------------------------------------

@command("shout")
def shout(session: Session, rest: str) -> None:
    user = user_of(session)
    text = rest.strip()
    if not text:
        session.send(chat.NOTHING_TO_SAY)
    elif user.toggles["silent"]:
        session.send(chat.SILENT_SHOUT)
    elif not allow(session, "shouts_per_minute"):
        session.send(chat.SHOUT_FLOOD)
    else:
        _reply(session, chat.you_shout(text))
        for other in session.lobby.users():
            if other is not user and not other.toggles["silent"] \
                    and user.name not in other.gagged and not other.session.not_reading():
                _deliver(other, chat.shout_received(user.name, text))


def _tell(session: Session, rest: str, *, complete: bool) -> None:
    user = user_of(session)
    name, text = _name_and_text(rest)
    if not name:
        session.send(chat.NAME_NEEDED)
        return
    if not text:
        session.send(chat.NOTHING_TO_SAY)
        return
    target = session.lobby.complete(name) if complete else session.lobby.find(name)
    if target is None:
        session.send(chat.no_one_called(name))
    elif target is user:
        session.send(chat.say_to_yourself(text))
    elif target.name in user.gagged:
        session.send(chat.CANT_TALK)
    elif user.name in target.gagged:
        session.send(chat.wont_listen(target.name))
    elif not allow(session, "tells_per_minute"):
        session.send(chat.talk_flood("tell"))
    elif target.session.not_reading():
        session.send(chat.not_reading(target.name))
    else:
        _deliver(target, chat.tell_received(user.name, text))
        _reply(session, chat.you_tell(target.name, text))
        if target.away is not None:
            session.send(chat.is_away(target.name, target.away))


@command("tell", aliases=("t",))
def tell(session: Session, rest: str) -> None:
    _tell(session, rest, complete=True)


@command("tellx")
def tellx(session: Session, rest: str) -> None:
    _tell(session, rest, complete=False)


@command("say", aliases=("s",))
def say(session: Session, rest: str) -> None:
    user = user_of(session)
    text = rest.strip()
    if user.playing is None:
        session.send(chat.NOT_PLAYING)
    elif not text:
        session.send(chat.NOTHING_TO_SAY)
    elif not allow(session, "says_per_minute"):
        session.send(chat.talk_flood("say"))
    else:
        opponent = session.lobby.find(user.playing)
        if opponent is not None and opponent.session.not_reading():
            session.send(chat.not_reading(opponent.name))
            return
        if opponent is not None:
            _deliver(opponent, chat.say_received(user.name, text))
        _reply(session, chat.you_say(user.playing, text))


# --- kibitz and whisper ---------------------------------------------------------------

def _game_players(lobby: Lobby, user: OnlineUser) -> set[str] | None:
    """The names of the players of the game ``user`` plays or watches."""
    if user.playing is not None:
        return {user.name, user.playing}
    if user.watching is not None:
        watched = lobby.find(user.watching)
        opponent = watched.playing if watched is not None else None
        return {user.watching} | ({opponent} if opponent else set())
    return None


def _to_game(session: Session, rest: str, *, players_hear: bool, verb: str, limit: str,
             heard: Callable[[str, str], chat.Said], echo: Callable[[str], chat.Said]) -> None:
    """Deliver to the game's watchers (and players); gags do not apply inside a game.
    Listeners who do not read their output are left out of it and of the count."""
    user = user_of(session)
    players = _game_players(session.lobby, user)
    text = rest.strip()
    if players is None:
        session.send(chat.NOT_WATCHING_OR_PLAYING)
        return
    if not text:
        session.send(chat.NOTHING_TO_SAY)
        return
    if not allow(session, limit):
        session.send(chat.talk_flood(verb))
        return
    listeners = [
        other for other in session.lobby.users()
        if other is not user
        and (other.watching in players or (players_hear and other.name in players))
        and not other.session.not_reading()
    ]
    _reply(session, echo(text))
    for other in listeners:
        _deliver(other, heard(user.name, text))
    session.send(chat.heard_by(len(listeners)))


@command("kibitz", aliases=("k",))
def kibitz(session: Session, rest: str) -> None:
    _to_game(session, rest, players_hear=True, verb="kibitz", limit="kibitzes_per_minute",
             heard=chat.kibitz_received, echo=chat.you_kibitz)


@command("whisper", aliases=("wh",))
def whisper(session: Session, rest: str) -> None:
    _to_game(session, rest, players_hear=False, verb="whisper", limit="whispers_per_minute",
             heard=chat.whisper_received, echo=chat.you_whisper)


# --- message --------------------------------------------------------------------------

def _show_messages(session: Session, messages: list[StoredMessage]) -> None:
    if not messages:
        session.send(chat.NO_MESSAGES)
        return
    session.send(chat.MESSAGES_FOLLOW, *(
        chat.message_received(m.sender, m.sent, m.text).for_client(session.is_clip)
        for m in messages))


@command("message")
def message(session: Session, rest: str) -> object:
    user = user_of(session)
    name, text = _name_and_text(rest)
    if not name:
        return session.db.take_messages(user.name).addCallback(
            lambda messages: _show_messages(session, messages))
    if not text:
        session.send(chat.MESSAGE_USAGE)
        return None
    if not allow(session, "messages_per_minute"):
        session.send(chat.command_flood("message"))
        return None
    now = session.now()
    target = session.lobby.find(name)
    if target is not None:
        if target.session.not_reading():
            session.send(chat.not_reading(target.name))
            return None
        _deliver(target, chat.message_received(user.name, now, text))
        _reply(session, chat.message_delivered(target.name))
        return None

    def store(record: UserRecord | None) -> object:
        if record is None:
            session.send(chat.dont_know_user(name))
            return None
        stored = StoredMessage(sender=user.name, recipient=record.name, sent=now, text=text)
        # The cap is checked in the same transaction as the write: senders at once
        # cannot pass it between a count and an insert.
        return session.db.store_message(stored, session.settings.limits.max_messages) \
            .addCallback(kept, record.name)

    def kept(stored: bool, recipient: str) -> None:
        if stored:
            _reply(session, chat.message_saved(recipient))
        else:
            session.send(chat.mailbox_full(recipient))

    return session.db.get_user(name).addCallback(store)


# --- waitfor --------------------------------------------------------------------------

@command("waitfor")
def waitfor(session: Session, rest: str) -> object:
    user = user_of(session)
    name = rest.split(" ")[0]
    if not name:
        session.send(chat.waiting_list(list(user.awaits)) if user.awaits
                     else chat.NOBODY_AWAITED)
        return None
    if name == user.name:
        session.send(chat.WAIT_SELF)
        return None
    if session.lobby.find(name) is not None:
        session.send(chat.already_online(name))
        return None

    def wait(record: UserRecord | None) -> None:
        if record is None:
            session.send(chat.dont_know_user(name))
            return
        if record.name not in user.awaits:
            user.awaits = (*user.awaits, record.name)
        session.send(chat.waiting(record.name))

    return session.db.get_user(name).addCallback(wait)


@on_login
def _arrived(lobby: Lobby, user: OnlineUser) -> None:
    """Each waiter is told, and the arriving user is told of each waiter, in login order.
    In a cluster every node does its own users' part: the waiter's node tells him and
    ends his wait, the arriving user's node tells him who waited (all of it from one
    node, so in the order one server would give)."""
    for waiter in lobby.waiters_for(user.name):
        if waiter is user:
            continue
        if not waiter.session.remote:
            waiter.awaits = [name for name in waiter.awaits if name != user.name]
            waiter.session.notify(chat.finally_logs_in(user.name))
            lobby.state_changed(waiter)
        if not user.session.remote:
            user.session.notify(chat.is_waiting_for_you(waiter.name))


@on_logout
def _left(lobby: Lobby, user: OnlineUser) -> None:
    """Gags and blinds end when either side logs out (and waits, by the lobby)."""
    for other in lobby.users():
        if user.name in other.gagged:
            other.gagged = other.gagged - {user.name}
        if user.name in other.blinded:
            other.blinded = other.blinded - {user.name}


# --- gag and blind --------------------------------------------------------------------

def _toggle_listed(session: Session, rest: str, field: str, *, self_reply: str,
                   nobody: str, listing: Callable[[list[str]], str],
                   changed: Callable[[str, bool], str]) -> None:
    """``gag`` and ``blind``: no name lists, a name toggles (there is no ungag/unblind).
    ``field`` names the user's frozenset, replaced by the changed one."""
    user = user_of(session)
    listed: frozenset[str] = getattr(user, field)
    name = rest.split(" ")[0]
    if not name:
        session.send(listing(_names(listed)) if listed else nobody)
        return
    target = session.lobby.complete(name)
    if target is user:
        session.send(self_reply)
    elif target is None:
        session.send(chat.no_one_called(name))
    else:
        on = target.name not in listed
        setattr(user, field, listed | {target.name} if on else listed - {target.name})
        session.send(changed(target.name, on))


@command("gag")
def gag(session: Session, rest: str) -> None:
    _toggle_listed(session, rest, "gagged", self_reply=chat.GAG_SELF,
                   nobody=chat.NOBODY_GAGGED, listing=chat.gag_list, changed=chat.gag_changed)


@command("blind")
def blind(session: Session, rest: str) -> None:
    _toggle_listed(session, rest, "blinded", self_reply=chat.BLIND_SELF,
                   nobody=chat.NOBODY_BLINDED, listing=chat.blind_list,
                   changed=chat.blind_changed)


# --- away, back, wave -----------------------------------------------------------------

@command("away")
def away(session: Session, rest: str) -> None:
    user = user_of(session)
    text = rest.strip()
    if text and not allow(session, "aways_per_minute"):
        session.send(chat.command_flood("away"))
        return
    if text:
        user.away = text
        session.send(chat.AWAY)
        session.lobby.broadcast_who(user)
        return
    away_users = [other for other in session.lobby.users() if other.away is not None]
    if not away_users:
        session.send(chat.NOBODY_AWAY)
        return
    session.send(chat.AWAY_LIST_HEADER,
                 *(chat.is_away(other.name, other.away or "") for other in away_users))


@command("back")
def back(session: Session, rest: str) -> None:
    user = user_of(session)
    if user.away is None:
        session.send(chat.NOT_AWAY)
        return
    user.away = None
    session.send(chat.WELCOME_BACK)
    session.lobby.broadcast_who(user)


@command("wave")
def wave(session: Session, rest: str) -> None:
    user = user_of(session)
    if user in _waved:
        session.send(chat.WAVE_AGAIN)
        session.lobby.send_to_all([chat.waves_again(user.name)], except_=user)
        session.disconnect(goodbye=True)
        return
    _waved.add(user)
    session.send(chat.WAVE)
    session.lobby.send_to_all([chat.waves(user.name)], except_=user)
