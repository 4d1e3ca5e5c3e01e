"""Match commands: invite, join, leave and every game action (fibs-protocol
between-games.md 1, 2, 6 and game-play.md).

Invitations: each user has at most one outstanding invitation (a new one replaces it);
it is dropped when the inviter starts playing or logs out.  An invitation is registered
at the moment its lines are sent to the invitee, so ``join <name>`` never binds to one
he has not been sent.  One race is left that ordering alone cannot settle: ``<name>``
re-invites with other terms while the joiner's ``join`` for the old terms is on its way.
A join binds to the invitation the joiner had been sent when he typed it: an invitation
whose terms differ from the last ones that inviter showed the joiner is *unconfirmed*
for ``JOIN_RACE_WINDOW`` seconds after it was sent; a ``join`` arriving in that window
may have been typed for the old terms, so it restates the new terms and asks again.  A
``join`` arriving later was typed by someone who had the new terms: it starts the match.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import wraps
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import maybeDeferred, succeed

from fibsd.rules.clock import ClockSpec, format_spec
from fibsd.rules.dice import SeededDice
from fibsd.rules.errors import RulesError
from fibsd.rules.events import WinKind
from fibsd.server import grace
from fibsd.server.clocks import chosen_clock
from fibsd.server.commands import command, user_of
from fibsd.server.dbthread import unattended
from fibsd.server.lobby import Lobby, on_login, on_logout
from fibsd.server.match import LiveMatch, live_match
from fibsd.server.ratelimit import allow
from fibsd.wire import chat
from fibsd.wire import clock_text, fair_text
from fibsd.wire import game_text as text

if TYPE_CHECKING:
    from fibsd.server.session import Session
    from fibsd.server.user import OnlineUser
    from fibsd.store import SavedMatch

# Matches longer than this need experience (between-games.md 1.1; the threshold is
# BaldLies's, FIBS's own is not documented).
LONG_MATCH = 9
# Seconds after a changed invitation is sent during which a join may still be one typed
# for the old terms: one network round trip with a wide margin (protocol/play.md).
JOIN_RACE_WINDOW = 2.0
RESIGN_KINDS = {"n": WinKind.SINGLE, "normal": WinKind.SINGLE, "g": WinKind.GAMMON,
                "gammon": WinKind.GAMMON, "b": WinKind.BACKGAMMON,
                "backgammon": WinKind.BACKGAMMON}


@dataclass(frozen=True)
class Invitation:
    inviter: str
    invitee: str
    length: int | None  # 0 unlimited, None: resume the saved match
    confirmed: bool = True  # False: the terms changed since the invitee last saw this inviter's
    sent: float = 0.0  # when the invitee was sent these terms (the lobby's clock)
    # A new match's server seed, drawn now so both players can see its commitment with
    # ``fairdice`` before joining (None for a resume, or when a test scripts the dice).
    server_seed: bytes | None = None
    clock: ClockSpec | None = None  # the clock a join agrees to (protocol/clock.md)
    # (tournament id, round): an invitation the tournament director set up; the match it
    # starts is that round's (fibsd.tournament.director)
    tournament: tuple[int, int] | None = None


def _match(session: Session) -> LiveMatch | None:
    return live_match(session.lobby, user_of(session).name)


Command = Callable[["Session", str], Any]


def _in_order(run: Command) -> Command:
    """Run a command about the user's match (played or watched) only once the writes
    of that match under way have committed (``LiveMatch.when_saved``): it then acts
    on, and shows, only a state that is stored, and its lines follow theirs.  While
    the match waits for the database (``LiveMatch.paused``) it is answered so at once."""

    @wraps(run)
    def ordered(session: Session, rest: str) -> Any:
        match = _watched(session)
        if match is not None and match.paused:  # for want of the database: say so
            return session.send(text.MATCH_WAITS)
        if match is not None and match.unsaved:
            return match.when_saved().addCallback(lambda _: ordered(session, rest))
        return run(session, rest)

    return ordered


# -- invite ----------------------------------------------------------------------------

@command("invite")
def invite(session: Session, rest: str) -> Any:
    user = user_of(session)
    lobby = session.lobby
    words = rest.split()
    if not words:
        return session.send(text.INVITE_WHO)
    if words[0].lower() == user.name.lower():
        return session.send(text.INVITE_SELF)
    if user.playing is not None:
        return session.send(text.INVITE_YOU_PLAY)
    if not user.ready:
        return session.send(text.INVITE_NOT_READY)
    target = lobby.complete(words[0])
    if target is None:
        return session.send(chat.no_one_called(words[0]))
    if target is user:
        return session.send(text.INVITE_SELF)
    if user.name in target.gagged:
        # What FIBS's gag tells the gagged user on `tell`, and no more.
        return session.send(chat.wont_listen(target.name))
    if not target.ready:
        return session.send(text.refusing_games(target.name))
    if target.playing is not None:
        return session.send(text.already_playing(target.name))
    length: int | None = None
    if len(words) > 1:
        word = words[1].lower()
        if word == "unlimited":
            length = 0
        elif word.isascii() and word.isdigit():
            length = int(word)
            maximum = session.settings.limits.max_match_length
            if not 1 <= length <= maximum:
                return session.send(text.invite_length_range(maximum))
        else:
            return session.send(text.INVITE_BAD_LENGTH)
        if length > LONG_MATCH and user.experience < session.settings.rated_experience:
            return session.send(text.INVITE_TOO_LONG)
    clock = chosen_clock(user) if length is not None else None
    if clock is None and length and session.settings.clock.required_for_rated \
            and session.settings.clock.enabled:
        return session.send(clock_text.CLOCK_REQUIRED)
    if not allow(session, "invites_per_minute"):
        return session.send(text.INVITE_FLOOD)
    if target.session.not_reading():
        return session.send(chat.not_reading(target.name, "invitation"))
    if _paused_pair(lobby, user.name, target.name):
        return session.send(text.MATCH_WAITS)

    def send(saved: SavedMatch | None) -> None:
        if lobby.find(target.name) is not target or lobby.find(user.name) is not user:
            return
        if length is None and saved is None:
            session.send(text.no_saved_match(target.name))
            return
        lines = _invitation_lines(user.name, length, saved, clock)
        if saved is not None and session.settings.fair.abandon_days > 0:
            # an invitation offers to resume the match the invitee may have left
            unattended(session.db.offer_resume(user.name), "offer_resume")
        seen = target.invitations_seen
        if seen is None:
            seen = target.invitations_seen = {}
        terms = (length, format_spec(clock))
        confirmed = seen.get(user.name, terms) == terms
        seen[user.name] = terms
        seed = None
        if length is not None and lobby.dice is None:
            # The same offer again keeps the commitment the invitee may have checked.
            previous = lobby.invitations.get(user.name)
            if (isinstance(previous, Invitation) and previous.invitee == target.name
                    and previous.length == length and previous.server_seed is not None):
                seed = previous.server_seed
            else:
                seed = lobby.draw_seed()
        lobby.invitations[user.name] = Invitation(user.name, target.name, length, confirmed,
                                                  lobby.now(), seed, clock)
        session.send(text.you_invited(target.name, length))
        if target.away is not None:
            session.send(chat.is_away(target.name, target.away))
        target.session.notify(*lines)

    return maybeDeferred(session.db.load_match, user.name, target.name).addCallback(send)


def _invitation_lines(inviter: str, length: int | None, saved: SavedMatch | None,
                      clock: ClockSpec | None) -> list[str]:
    """What the invitee reads: FIBS's invitation line, the warning when a new match
    would replace a saved one, and ``Type 'join <inviter>' to accept.``; then, for a
    match with a clock, the line with the clock (after FIBS's lines, which stay as
    they are)."""
    lines = [text.invitation(inviter, length)]
    if length is not None and saved is not None:
        lines.append(text.saved_match_warning(LiveMatch.saved_length(saved.record)))
    lines.append(text.type_join(inviter))
    if clock is not None and length is not None:
        lines.append(clock_text.invitation_clock(clock, clock.reserve(length)))
    return lines


def _paused_pair(lobby: Lobby, *names: str) -> bool:
    """Whether an earlier match of these two (ended or left) still waits for the
    database to store it: a new start or a resume would be overwritten by it."""
    return any(match.blocks_start(names) for match in list(lobby.writing))


@on_logout
def _forget(lobby: Lobby, user: OnlineUser) -> None:
    """A departing user's invitation lapses, and his match is saved."""
    lobby.invitations.pop(user.name, None)
    match = live_match(lobby, user.name)
    if match is not None and not grace.holds(lobby, user):  # held: fibsd.server.grace
        match.suspend(user, departure=user.departure or f"{user.name} logs out.")


@on_login
def _back_in_match(lobby: Lobby, user: OnlineUser) -> None:
    """The same account logged in again while playing: the new connection is shown the
    match as on a resume, with the line that says what is expected of him."""
    match = live_match(lobby, user.name)
    if not grace.came_back(lobby, user) and match is not None:  # held: fibsd.server.grace
        match.show_state(user)


# -- join --------------------------------------------------------------------------------

@command("join")
@_in_order
def join(session: Session, rest: str) -> Any:
    user = user_of(session)
    lobby = session.lobby
    words = rest.split()
    match = _match(session)
    if match is None and user.parted is not None:
        crossed = _crossed_leave(session, user, words)
        if crossed is not None:
            return crossed
    if not words:
        joined = match.join_next(user) if match is not None else None
        return joined if joined is not None else session.send(text.JOIN_WHO)
    inviter = lobby.complete(words[0])
    if match is not None:
        if inviter is not None and inviter.name == match.opponent_of(user):
            joined = match.join_next(user)
            if joined is not None:
                return joined
        return session.send(text.JOIN_TWO_GAMES)
    if inviter is None:
        return session.send(text.cant_find_player(words[0]))
    invitation = lobby.invitations.get(inviter.name)
    if not isinstance(invitation, Invitation) or invitation.invitee != user.name:
        return session.send(text.didnt_invite(inviter.name))
    if inviter.playing is not None:
        return session.send(text.join_already_playing(inviter.name))
    if not inviter.ready and invitation.tournament is None:  # a pairing needs no 'ready'
        return session.send(text.refusing_games(inviter.name))
    if not invitation.confirmed and lobby.now() - invitation.sent < JOIN_RACE_WINDOW:
        return _restate(session, invitation)
    if _paused_pair(lobby, user.name, inviter.name):
        return session.send(text.MATCH_WAITS)
    if user.invitations_seen:  # answered: no longer an open offer
        user.invitations_seen.pop(inviter.name, None)

    def still_valid() -> bool:
        return (lobby.invitations.get(inviter.name) is invitation
                and lobby.find(inviter.name) is inviter and lobby.find(user.name) is user
                and inviter.playing is None and user.playing is None)

    if invitation.length is None:
        def resume(saved: SavedMatch | None) -> Any:
            if not still_valid():
                session.send(text.didnt_invite(inviter.name))
                return None
            try:
                if saved is None:
                    raise ValueError("no saved match")
                live = LiveMatch.from_record(lobby, saved.record)
                if set(live.names) != {inviter.name, user.name}:
                    raise ValueError("the saved match has other players")
            except ValueError:
                session.send(text.SAVED_CORRUPT)
                return None
            return live.begin(inviter, user, resumed=True)

        return maybeDeferred(session.db.load_match, inviter.name, user.name).addCallback(resume)

    length = invitation.length

    def start(saved: SavedMatch | None) -> Any:
        if not still_valid():
            session.send(text.didnt_invite(inviter.name))
            return None
        live = LiveMatch.new(lobby, inviter, user, length, invitation.server_seed,
                             invitation.clock)
        live.tournament = invitation.tournament
        started = live.begin(inviter, user, resumed=False)  # its record replaces a saved one
        seed = _unrevealed_seed(saved)
        if saved is not None and seed is not None:  # its rolls become verifiable
            line = fair_text.saved_seed_revealed(LiveMatch.saved_names(saved), seed)
            told = [p for p in (inviter, user) if p.session.settings.fair.announce_seed]

            def tell(_: object) -> None:
                for player in told:
                    player.session.notify(line)

            started.addCallback(tell)
        return started

    # The saved match is read only to reveal its seed: when the database cannot answer,
    # the match starts all the same (as it did before that read).
    return maybeDeferred(session.db.load_match, inviter.name, user.name).addCallbacks(
        start, lambda failure: start(None))


def _unrevealed_seed(saved: SavedMatch | None) -> bytes | None:
    """The seed of a saved match that made rolls no one was shown (a match saved as it
    was played, then the server stopped without saving it on the way out): revealed
    when a new match replaces it (protocol/fair-dice.md 1.2)."""
    if saved is None:
        return None
    try:
        dice = SeededDice.from_record(json.loads(saved.record).get("dice"))
    except (ValueError, TypeError, AttributeError):
        return None
    return dice.server_seed if dice.used else None


def _restate(session: Session, invitation: Invitation) -> Any:
    """A join that may have been typed for the inviter's earlier terms: say that they
    changed, then show the invitation again in FIBS's own lines, so that a bot that
    joins whenever it reads an invitation joins again, and this time binds."""
    lobby = session.lobby
    lobby.invitations[invitation.inviter] = replace(invitation, confirmed=True)

    def send(saved: SavedMatch | None) -> None:
        session.send(text.invitation_changed(invitation.inviter, invitation.length),
                     *_invitation_lines(invitation.inviter, invitation.length, saved,
                                        invitation.clock))

    if invitation.length is None:  # a resume replaces nothing: no warning to look up
        return send(None)
    return maybeDeferred(session.db.load_match, invitation.inviter,
                         invitation.invitee).addCallback(send)


def _crossed_leave(session: Session, user: OnlineUser, words: list[str]) -> Any:
    """A ``join`` (plain, or naming the opponent) that crossed the opponent's
    ``leave``: the join arrived while the save was under way, or within
    ``JOIN_RACE_WINDOW`` of the line that told the user.  That line is its whole
    answer (no ``** Error: Join who?`` before or after it).  None: not such a join."""
    assert user.parted is not None
    match, told = user.parted
    opponent = match.opponent_of(user)
    if words and words[0].lower() != opponent.lower():
        return None
    invitation = session.lobby.invitations.get(opponent)
    if isinstance(invitation, Invitation) and invitation.invitee == user.name:
        return None  # the opponent invited him since: a join for that is no crossing
    if told is None and match.unsaved and not match.paused:
        return match.when_saved()  # the save's tell sends the line, then this fires
    if told is not None and session.lobby.now() - told < JOIN_RACE_WINDOW:
        return succeed(None)
    return None


# -- leave -------------------------------------------------------------------------------

@command("leave")
@_in_order
def leave(session: Session, rest: str) -> Any:
    match = _match(session)
    if match is None:
        return session.send(text.NO_ONE_TO_LEAVE)
    return match.suspend(user_of(session))


# -- the game -----------------------------------------------------------------------------

def _act(session: Session, action: str, error_text: Any, *args: Any) -> Any:
    """Run ``match.<action>(user, *args)``; a rules refusal gets its FIBS line."""
    match = _match(session)
    if match is None:
        session.send(text.NOT_PLAYING)
        return None
    user = user_of(session)
    try:
        return getattr(match, action)(user, *args)
    except RulesError as error:
        session.send(error_text(error, match.opponent_of(user)))
        return None


@command("roll", aliases=("r",))
@_in_order
def roll(session: Session, rest: str) -> Any:
    return _act(session, "roll", text.roll_error)


@command("move", aliases=("m",))
@_in_order
def move(session: Session, rest: str) -> Any:
    match = _match(session)
    if match is None:
        session.send(text.NOT_PLAYING)
        return None
    user = user_of(session)
    player = match.index(user)
    try:
        return match.move(user, rest)
    except RulesError as error:
        session.send(text.move_error(error, match.opponent_of(user),
                                     lambda point: match.absolute_point(player, point)))
        return None


@command("off")
@_in_order
def off(session: Session, rest: str) -> Any:
    match = _match(session)
    if match is None:
        session.send(text.NOT_PLAYING)
        return None
    borne = match.bear_off(user_of(session))
    if borne is None:
        session.send(text.CANT_BEAR_OFF)
    return borne


@command("double")
@_in_order
def double(session: Session, rest: str) -> Any:
    match = _match(session)
    if match is not None and match.in_first_move:
        session.send(text.FIRST_MOVE_DOUBLE)
        return None
    return _act(session, "double", text.double_error)


@command("redouble")
@_in_order
def redouble(session: Session, rest: str) -> Any:
    match = _match(session)
    unlimited = match is not None and match.rules.unlimited
    return _act(session, "redouble", lambda e, o: text.redouble_error(e, o, unlimited))


def _instant_redouble(session: Session, rest: str, count: int, word: str) -> Any:
    """``beaver`` is only the first instant redouble of a double, ``raccoon`` only the
    second (fibs.com's raccoon help); ``redouble`` is any of them."""
    match = _match(session)
    offer = match.rules.pending_double if match is not None else None
    if (match is not None and match.rules.unlimited and offer is not None
            and offer.player != match.index(user_of(session)) and offer.redoubles != count):
        return session.send(text.not_an_instant_redouble(word, count))
    return redouble(session, rest)


@command("beaver")
@_in_order
def beaver(session: Session, rest: str) -> Any:
    return _instant_redouble(session, rest, 0, "beaver")


@command("raccoon")
@_in_order
def raccoon(session: Session, rest: str) -> Any:
    return _instant_redouble(session, rest, 1, "raccoon")


@command("accept")
@_in_order
def accept(session: Session, rest: str) -> Any:
    return _act(session, "accept", text.answer_error)


@command("reject")
@_in_order
def reject(session: Session, rest: str) -> Any:
    return _act(session, "reject", text.answer_error)


@command("resign")
@_in_order
def resign(session: Session, rest: str) -> Any:
    match = _match(session)
    if match is None:
        session.send(text.RESIGN_NOT_PLAYING)
        return None
    kind = RESIGN_KINDS.get(rest.strip().lower())
    if kind is None:
        session.send(text.RESIGN_USAGE)
        return None
    return _act(session, "resign", text.resign_error, kind)


# -- looking at the game ------------------------------------------------------------------

def _watched(session: Session) -> LiveMatch | None:
    user = user_of(session)
    match = _match(session)
    if match is None and user.watching is not None:
        match = live_match(session.lobby, user.watching)
    return match


@command("board", aliases=("b",))
@_in_order
def board(session: Session, rest: str) -> None:
    user = user_of(session)
    match = _watched(session)
    if match is None:
        if user.watching is not None:
            session.send(f"** {user.watching} is not playing.")
        else:
            session.send(text.NOT_WATCHING_OR_PLAYING)
        return
    session.send(*match.board_lines(user))


@command("pip")
@_in_order
def pip(session: Session, rest: str) -> None:
    user = user_of(session)
    match = _watched(session)
    if match is None:
        session.send(text.NOT_WATCHING_OR_PLAYING)
        return
    for player in (0, 1):
        other = match.user(player)
        if other is not None and not other.toggles["allowpip"]:
            session.send(text.pip_not_allowed(other.name))
            return
    plays = user.name in match.names
    player = match.names.index(user.name if plays else user.watching or match.names[0])
    own, theirs = match.pips(player)
    session.send(text.pip_counts("You" if plays else match.names[player], own,
                                 match.names[1 - player], theirs))
