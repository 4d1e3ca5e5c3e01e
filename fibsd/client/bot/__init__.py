"""``fibsd-bot``: a FIBS player on the client library.

The bot is an event handler for ``ClipClientProtocol``: it reacts to what the
server says and never polls.  Its choices come from a *brain*
(``HeuristicBrain``, the documented rules of ``fibsd.client.strategy``, or
``fibsd.client.gnubg_brain.GnubgBrain`` where GNU Backgammon runs).

It never gets stuck, because it asks the server rather than trusting its memory:

* **After every login and every match** it reads ``show saved`` (the listing ends
  at the answer to ``show savedcount <self>``) and resumes saved matches first: it
  invites each saved opponent who is online with ``invite <name>`` (no length: the
  resume form), and again when one logs in; it joins every resume invitation.  Two
  bots that both invite resume once (the second join is refused); a bot that only
  waits for its opponent's login is invited all the same.
* **Every invitation gets an answer** once its ``Type 'join ...'`` line has come:
  a join, or a ``tell`` saying why not (playing, a length it does not play, busy
  resuming another saved match, done).  A new match that would discard a saved one
  (the ``WARNING: Don't accept ...`` line) is never joined: the bot invites the
  inviter to resume instead and tells him so.
* **A refused invitation**: a final refusal (``** You're not experienced enough
  ...``, a length out of range) is not retried; the bot logs it and tells the
  invitee.  Others (away, busy, not ready, offline) are retried with growing delays
  and given up after ``MAX_RETRIES`` until that player logs in again.  An invitation
  nobody joins stays open on the server, but after ``PATIENCE_SECONDS`` the bot takes
  other invitations meanwhile.
* **Its own who line** (CLIP ``5``) tells it when the server has it in a match it
  did not see start (a new connection that replaced one the server still held).

Losing the connection: the factory reconnects; a running match is saved on the
server and resumed as above.  The log says, at the info level, what it does:
logins, saved matches, invitations and answers, matches started, resumed and over,
refusals and errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from twisted.internet.defer import Deferred, succeed
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from fibsd.client import events as ev
from fibsd.client import offers
from fibsd.client import strategy
from fibsd.client.brain import Brain
from fibsd.client.offers import describe_lengths
from fibsd.client.protocol import ClipClientFactory, ClipClientProtocol, Outcome, Stage
from fibsd.rules.movegen import legal_plays
from fibsd.rules.play import Play
from fibsd.rules.position import Position

log = Logger(namespace="fibsd-bot")

RETRY_SECONDS = 1.0  # the first wait after a passing refusal (opponent away, busy, offline)
MAX_RETRY_SECONDS = 60.0  # the waits double up to this
PATIENCE_SECONDS = 60.0  # how long an invitation out keeps other inviters waiting
MAX_RETRIES = 10  # refused invitations; then the bot gives up until that player logs in


class HeuristicBrain:
    """The rules of ``fibsd.client.strategy``."""

    def play(self, board: ev.Board, position: Position, dice: tuple[int, int],
             plays: Sequence[Play]) -> Play | None:
        return strategy.choose_play(plays)

    def double(self, position: Position, state: strategy.CubeState) -> bool:
        return strategy.should_double(position, state)

    def take(self, position: Position, state: strategy.CubeState) -> bool:
        return strategy.should_take(position, state)

    def accept_resignation(self, position: Position, points: int,
                           state: strategy.CubeState) -> bool:
        return strategy.accept_resignation(position, points, state)


QUICK = HeuristicBrain()  # decides at once: for a bot short of time


# The events that answer each command, for latency measurement.
ANSWERS: dict[str, tuple[type[ev.Event], ...]] = {
    "roll": (ev.Rolls,),
    "move": (ev.Board, ev.Done),
    "double": (ev.YouDouble,),
    "accept": (ev.AcceptsDouble, ev.AcceptsResignation),
    "reject": (ev.GivesUp, ev.RejectsResignation),
    "join": (ev.StartingNewGame, ev.WaitForJoin, ev.NewMatch, ev.MatchResumed),
    "invite": (ev.YouInvited, ev.YouInvitedResume),
    "toggle": (ev.ToggleChanged,),
}
GAME_ACTIONS = frozenset({"move", "double", "accept", "reject"})  # rolls are counted as rolled


@dataclass
class Stats:
    """What a load test wants from its bots: command latencies and counted game actions."""

    latencies: list[float] = field(default_factory=list)
    actions: int = 0
    games: int = 0
    matches: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class _Offer:
    """An invitation being read: its first line has come, ``Type 'join ...'`` ends it."""

    inviter: str
    length: int | None  # None: to resume the saved match; offers.UNLIMITED: unlimited
    warning: int | None = None  # the saved match's length, when the server warned


class Bot:
    """One account's player; pass it as the handler of a ``ClipClientFactory``."""

    def __init__(
        self,
        name: str,
        brain: Brain | None = None,
        *,
        invite: str | None = None,
        length: int = 1,
        lengths: frozenset[int] | None = None,
        matches: int | None = None,
        games: int | None = None,
        clock: IReactorTime | None = None,
        stats: Stats | None = None,
        match_clock: str | None = None,
    ) -> None:
        self.name = name
        self.brain: Brain = brain or HeuristicBrain()
        self.invite_name = invite
        self.length = length
        self.lengths = lengths  # the lengths it joins; None: any
        self.match_limit = matches
        self.game_limit = games
        self.clock = clock
        self.stats = stats
        # ``set clock`` for the matches it invites to (protocol/clock.md), sent once per
        # connection; and whether its own clock is short in the running match.
        self.match_clock = match_clock
        self.clock_set = False
        self.hurry = False
        self.protocol: ClipClientProtocol | None = None
        self.factory: ClipClientFactory | None = None
        self.board: ev.Board | None = None
        self.dice: tuple[int, int] = (0, 0)
        self.opponent: str | None = None  # of the running match
        self.playing = False
        self.ready = False
        self.move_on_board = False
        # Our double is waiting for an answer: a double offered back now is an instant
        # redouble (fibsd words it as a double, as FIBS clients know no other line).
        self.doubled = False
        # What the server holds for us: ``show saved`` after every login and match,
        # kept up to date by drops, logins and logouts.  Keys are lower-case names.
        self.saved: dict[str, offers.SavedMatch] = {}
        self.listing: dict[str, offers.SavedMatch] | None = None  # show saved being read
        self.looked = False  # the listing of this connection has been read
        self.offer: _Offer | None = None
        self.want_match: str | None = None  # whom we invite (again) until a match begins
        self.want_resume = False  # ... to resume our saved match, or to a new one
        self.awaiting: str | None = None  # an invite was sent, its answer not read yet
        self.invite_refused: str | None = None  # why the server refuses our --invite
        self.given_up: set[str] = set()  # not invited again until they log in (lower case)
        self.retries = 0
        self.retry_call: IDelayedCall | None = None
        self.quitting = False
        self.games_played = 0
        self.matches_played = 0
        self.finished: Outcome[Bot] = Outcome()
        self._pending: tuple[tuple[type[ev.Event], ...], float] | None = None
        self._handlers: dict[type[ev.Event], Callable[[Any], None] | None] = {}

    # -- wiring ----------------------------------------------------------------------

    def attach(self, protocol: ClipClientProtocol) -> None:
        """The factory's ``connected`` callback: every new connection is ours to send on."""
        self.protocol = protocol
        self.factory = protocol.factory
        self.playing = self.ready = self.looked = self.move_on_board = False
        self.clock_set = False
        self.listing = self.offer = self.awaiting = None
        self._pending = None
        self._cancel_retry()
        protocol.closed.wait().addCallback(lambda _: self._lost(protocol))

    def send(self, command: str) -> None:
        if self.protocol is None or self.protocol.transport is None:
            return
        if self.stats is not None:
            word = command.split(" ", 1)[0]
            answers = ANSWERS.get(word)
            if answers is not None:
                self._pending = (answers, time.perf_counter())
            if word in GAME_ACTIONS:
                self.stats.actions += 1
        self.protocol.send(command)

    def __call__(self, event: ev.Event) -> None:
        """Dispatch to ``on_<Event>``; one dictionary lookup per line."""
        pending = self._pending
        if pending is not None and (isinstance(event, pending[0]) or isinstance(event, ev.Error)):
            self._pending = None
            assert self.stats is not None
            self.stats.latencies.append(time.perf_counter() - pending[1])
        kind = type(event)
        try:
            handler = self._handlers[kind]
        except KeyError:
            handler = self._handlers[kind] = getattr(self, "on_" + kind.__name__, None)
        if handler is not None:
            handler(event)

    def _tell(self, name: str, text: str) -> None:
        """Say why to a player, and log it: no invitation goes unanswered."""
        log.info("told {name}: {text}", name=name, text=text)
        self.send(f"tell {name} {text}")

    # -- login and the saved matches -------------------------------------------------

    def on_Welcome(self, event: ev.Welcome) -> None:
        log.info("logged in as {name}", name=event.name)

    def on_AlreadyLoggedIn(self, event: ev.AlreadyLoggedIn) -> None:
        log.info("the server still had an older connection of ours; this one replaces it")

    def on_OwnInfo(self, event: ev.OwnInfo) -> None:
        self.ready = event.ready
        if not event.ready:
            self.send("toggle ready")
        self._look()

    def _look(self) -> None:
        """Ask for ``show saved``; ``show savedcount <self>`` marks the listing's end."""
        if self.listing is not None:
            return  # one is on its way
        self.listing = {}
        self.send("show saved")
        self.send(f"show savedcount {self.name}")

    def on_Information(self, event: ev.Information) -> None:
        if event.kind != "saved" or self.listing is None:
            return
        entry = offers.saved_line(event.text)
        if entry is not None:
            self.listing[entry.opponent.lower()] = entry
            return
        owner = offers.saved_count_of(event.text)
        if owner is not None and owner.lower() == self.name.lower():
            self.saved, self.listing, self.looked = self.listing, None, True
            for entry in self.saved.values():
                log.info("saved match with {name}: {match}, {state}", name=entry.opponent,
                         match=entry.describe(), state="online" if entry.online else "offline")
            self._next()

    def on_WhoInfo(self, event: ev.WhoInfo) -> None:
        """Our own who line says whether the server has us in a match: it is the truth
        when a new connection replaced one the server still held (no resume lines come)."""
        if event.name.lower() != self.name.lower() or event.opponent is None or self.playing:
            return
        log.info("the server has us in the match with {name}: playing on", name=event.opponent)
        self._begin(event.opponent)

    def on_ToggleChanged(self, event: ev.ToggleChanged) -> None:
        if event.toggle == "ready":
            self.ready = event.value
            if event.value:
                self._next()

    def on_LoginNotice(self, event: ev.LoginNotice) -> None:
        key = event.name.lower()
        if key == self.name.lower():
            return
        self.given_up.discard(key)
        self._mark(key, online=True)
        entry = self.saved.get(key)
        wanted = self.want_match is not None and self.want_match.lower() == key
        invited = self.invite_name is not None and self.invite_name.lower() == key
        if not self.playing and (entry is not None or wanted or invited):
            self.retries = 0
            self._cancel_retry()
            self._next()

    def on_LogoutNotice(self, event: ev.LogoutNotice) -> None:
        self._mark(event.name.lower(), online=False)

    def _mark(self, key: str, *, online: bool) -> None:
        """A saved opponent came or went: in what we know, and in a listing being read
        (its line may have been written before the notice)."""
        for table in (self.saved, self.listing):
            entry = table.get(key) if table is not None else None
            if table is not None and entry is not None:
                table[key] = replace(entry, online=online)

    # -- inviting ----------------------------------------------------------------------

    def _next(self) -> None:
        """Idle and ready: resume a saved match whose opponent is online, else invite
        ``--invite`` (to resume, when there is a saved match with him), else wait."""
        if (self.protocol is None or self.playing or not self.ready or not self.looked
                or self.awaiting is not None or self.finished.done):
            return
        if self._limit_reached():
            self._finish()  # e.g. --matches 0: nothing to do
            return
        target = self._choose()
        if target is None:
            self.want_match = None
            return
        name, resume = target
        if self.want_match is None or self.want_match.lower() != name.lower():
            self.retries = 0
        self.want_match, self.want_resume = name, resume
        self._cancel_retry()
        self._invite()

    def _choose(self) -> tuple[str, bool] | None:
        for key in sorted(self.saved):
            entry = self.saved[key]
            if entry.online and key not in self.given_up:
                return entry.opponent, True
        name = self.invite_name
        if name is None or self.invite_refused is not None or name.lower() in self.given_up:
            return None
        return name, name.lower() in self.saved

    def _invite(self) -> None:
        self.retry_call = None
        name = self.want_match
        if name is None or self.playing or self.protocol is None:
            return
        if self.match_clock is not None and not self.clock_set:
            self.clock_set = True
            self.send(f"set clock {self.match_clock}")
        self.awaiting = name
        if self.want_resume:
            log.info("inviting {name} to resume our saved match", name=name)
            self.send(f"invite {name}")
        else:
            log.info("inviting {name} to a {length} point match", name=name, length=self.length)
            self.send(f"invite {name} {self.length}")

    def on_YouInvited(self, event: ev.YouInvited) -> None:
        self._invited()

    def on_YouInvitedResume(self, event: ev.YouInvitedResume) -> None:
        self._invited()

    def _invited(self) -> None:
        """The invitation is out (it stays open on the server until we play); if nobody
        joins within ``PATIENCE_SECONDS`` the bot takes other invitations meanwhile."""
        self.awaiting = None
        self._cancel_retry()
        if self.clock is not None:
            self.retry_call = self.clock.callLater(PATIENCE_SECONDS, self._stop_waiting)

    def _stop_waiting(self) -> None:
        self.retry_call = None
        name = self.want_match
        if name is None or self.playing:
            return
        log.info("{name} has not joined: taking other invitations until he logs in again"
                 " or invites us", name=name)
        self.given_up.add(name.lower())
        self.want_match = None
        self._next()

    def on_Error(self, event: ev.Error) -> None:
        if offers.lost_join_race(event.text):
            # both of us invited and joined: the other's join started the match first
            log.info("our join came second: {text}", text=event.text)
            return
        if self.stats is not None and self.playing:
            self.stats.errors.append(event.text)
        if self.listing is not None and offers.try_again_later(event.text):
            log.info("show saved not answered ({text}): asking again in a minute", text=event.text)
            self.listing = None
            if self.clock is not None:
                self.clock.callLater(MAX_RETRY_SECONDS, self._look)
            return
        target, self.awaiting = self.awaiting, None
        refusal = offers.invite_refusal(event.text) if target is not None else None
        if target is None or refusal is None:
            log.info("the server says: ** {text}", text=event.text)
            return
        if refusal is offers.Refusal.PLAYING:
            log.info("the server says we are playing already")
        elif refusal is offers.Refusal.NO_SAVED:
            log.info("no saved match with {name} after all", name=target)
            self.saved.pop(target.lower(), None)
            self._next()
        elif refusal is offers.Refusal.FINAL:
            self.invite_refused = event.text
            log.warn("the server refuses our invitation of {name} to a {length} point match"
                     " ({text}); not asking again", name=target, length=self.length,
                     text=event.text)
            self._tell(target, f"I wanted to invite you to a {self.length} point match, but "
                               f"the server refuses it: {event.text}")
            self.want_match = None
            self._next()
        else:
            log.info("cannot invite {name} now ({text})", name=target, text=event.text)
            self._retry(min(RETRY_SECONDS * 2 ** self.retries, MAX_RETRY_SECONDS))

    def on_UnknownCommand(self, event: ev.UnknownCommand) -> None:
        log.warn("the server does not know the command {word!r}", word=event.word)
        if self.stats is not None:
            self.stats.errors.append(f"unknown command {event.word}")

    def _retry(self, delay: float) -> None:
        name = self.want_match
        if name is None or self.clock is None or self.retry_call is not None:
            return
        if self.retries >= MAX_RETRIES:
            log.info("giving up inviting {name} until he logs in again", name=name)
            self.given_up.add(name.lower())
            self.want_match = None
            self._next()
            return
        self.retries += 1
        self.retry_call = self.clock.callLater(delay, self._invite)

    def _cancel_retry(self) -> None:
        if self.retry_call is not None and self.retry_call.active():
            self.retry_call.cancel()
        self.retry_call = None

    # -- invitations to us: every one gets a join or a tell ---------------------------

    def on_Invitation(self, event: ev.Invitation) -> None:
        length = offers.UNLIMITED if event.match_length is None else event.match_length
        self.offer = _Offer(event.inviter, length)

    def on_ResumeInvitation(self, event: ev.ResumeInvitation) -> None:
        self.offer = _Offer(event.inviter, None)

    def on_SavedMatchWarning(self, event: ev.SavedMatchWarning) -> None:
        if self.offer is not None:
            length = offers.warning_length(event.text)
            self.offer.warning = offers.UNLIMITED if length is None else length

    def on_TypeJoin(self, event: ev.TypeJoin) -> None:
        offer, self.offer = self.offer, None
        if offer is not None and offer.inviter == event.inviter:
            self._answer(offer)
        elif self.lengths is None and not self.playing:
            log.info("{name} invites us (the invitation line was not read): joining",
                     name=event.inviter)
            self._join(event.inviter)
        else:
            self._tell(event.inviter, "Sorry, I could not read your invitation; please "
                                      "invite me again.")

    def _answer(self, offer: _Offer) -> None:  # noqa: C901 - one branch per answer
        name = offer.inviter
        key = name.lower()
        saved = self.saved.get(key)
        self.given_up.discard(key)
        if self.playing:
            self._tell(name, f"Sorry, I am in a match with {self.opponent}; please invite me "
                             "again when it is over.")
        elif self.finished.done or self._limit_reached():
            self._tell(name, "Sorry, I am not taking more matches now.")
        elif offer.length is None:
            log.info("{name} invites us to resume our saved match: joining", name=name)
            self._join(name)
        elif offer.warning is not None or saved is not None:
            if saved is None:
                saved = offers.SavedMatch(name, True, offer.warning or offers.UNLIMITED, 0, 0)
            what = saved.kind()
            log.info("{name} invites us to a new match, which would discard our saved {what}:"
                     " inviting him to resume it instead", name=name, what=what)
            self.saved[key] = replace(saved, online=True)
            self.want_match, self.want_resume, self.retries = name, True, 0
            self._cancel_retry()
            self._invite()
            self._tell(name, f"We have a saved {what}; a new match would discard it, so I "
                             "invited you to resume it instead.")
        elif self.lengths is not None and offer.length not in self.lengths:
            self._tell(name, f"Sorry, I play {describe_lengths(self.lengths)} matches only; "
                             "please invite me to one of those.")
        elif self.invite_name is not None and key != self.invite_name.lower():
            self._tell(name, f"Sorry, I only play {self.invite_name} now.")
        elif self.want_match is not None and self.want_resume and self.want_match.lower() != key:
            self._tell(name, f"Sorry, I am resuming a saved match with {self.want_match} "
                             "first; please invite me again later.")
        else:
            length = "unlimited" if offer.length == offers.UNLIMITED else f"{offer.length} point"
            log.info("{name} invites us to a {length} match: joining", name=name, length=length)
            self._join(name)

    def _join(self, inviter: str) -> None:
        self.send(f"join {inviter}")

    # -- matches -----------------------------------------------------------------------

    def on_NewMatch(self, event: ev.NewMatch) -> None:
        length = "unlimited" if event.match_length is None else f"{event.match_length} point"
        log.info("match with {name} started ({length})", name=event.opponent, length=length)
        self._begin(event.opponent)

    def on_MatchResumed(self, event: ev.MatchResumed) -> None:
        log.info("match with {name} resumed", name=event.opponent)
        self._begin(event.opponent)

    def _begin(self, opponent: str) -> None:
        self.opponent, self.playing, self.want_match, self.retries = opponent, True, None, 0
        self.hurry = False
        self.saved.pop(opponent.lower(), None)
        self.given_up.discard(opponent.lower())
        self._cancel_retry()

    def _mine(self, player: str) -> bool:
        return player == ev.YOU or (self.opponent is not None
                                    and player.lower() == self.opponent.lower())

    def on_Score(self, event: ev.Score) -> None:
        if self._mine(event.opponent):
            log.info("game over: {me} {mine} - {other} {theirs}", me=self.name,
                     mine=event.player_score, other=event.opponent, theirs=event.opponent_score)

    # -- playing ---------------------------------------------------------------------

    @property
    def deciding(self) -> Brain:
        """The brain for the next decision: the heuristic, which answers at once, once
        the server warned that the bot's clock is short (an engine may take seconds)."""
        return QUICK if self.hurry else self.brain

    def on_ClockWarning(self, event: ev.ClockWarning) -> None:
        self.hurry = True

    def on_Board(self, event: ev.Board) -> None:
        if event.is_watching:
            return
        self.board = event
        if event.is_players_turn and event.player_dice[0]:
            self.dice = event.player_dice
        if self.move_on_board and event.is_players_turn:
            self.move_on_board = False
            self._move()

    def on_YourTurnToMove(self, event: ev.YourTurnToMove) -> None:
        self.move_on_board = True  # the opening board follows

    def on_Rolls(self, event: ev.Rolls) -> None:
        if event.player == ev.YOU:
            self.dice = (event.die1, event.die2)
            if self.stats is not None:
                self.stats.actions += 1

    def on_PleaseMove(self, event: ev.PleaseMove) -> None:
        self._move()

    def _move(self) -> None:
        board = self.board
        if board is None:
            return
        position = board.position()
        plays = legal_plays(position, self.dice)
        play = self.deciding.play(board, position, self.dice, plays)
        if play is not None:
            self.send(board.move_command(play.moves))

    def _cube_state(self, *, redouble: bool = False) -> strategy.CubeState:
        board = self.board
        assert board is not None
        length = None if board.is_unlimited else board.match_length
        return strategy.CubeState(board.cube, length, board.player_score, board.opponent_score,
                                  redouble or board.cube > 1, post_crawford=board.did_crawford)

    def on_RollOrDouble(self, event: ev.RollOrDouble) -> None:
        board = self.board
        if board is not None and board.player_may_double \
                and self.deciding.double(board.position(), self._cube_state()):
            self.send("double")
        else:
            self.send("roll")

    def on_YouDouble(self, event: ev.YouDouble) -> None:
        self.doubled = True

    def on_AcceptsDouble(self, event: ev.AcceptsDouble) -> None:
        self.doubled = False

    def on_Doubles(self, event: ev.Doubles) -> None:
        redouble, self.doubled = self.doubled, False
        if not event.must_answer or self.board is None:
            return
        take = self.deciding.take(self.board.position(), self._cube_state(redouble=redouble))
        self.send("accept" if take else "reject")

    def on_ResignOffer(self, event: ev.ResignOffer) -> None:
        if not event.must_answer or self.board is None:
            return
        accept = self.deciding.accept_resignation(self.board.position(), event.points,
                                               self._cube_state())
        self.send("accept" if accept else "reject")

    def on_JoinNextGame(self, event: ev.JoinNextGame) -> None:
        self._game_over()
        if self.game_limit is not None and self.games_played >= self.game_limit:
            log.info("{games} games played: leaving the match (it stays saved)",
                     games=self.games_played)
            self.send("leave")  # the match is saved; the bot is done
            self._finish()
        else:
            self.send("join")

    def on_MatchWon(self, event: ev.MatchWon) -> None:
        if not self._mine(event.player):
            return  # a match we watch
        won = event.player == ev.YOU
        log.info("match with {name} over: {result} {high}-{low}", name=self.opponent,
                 result="won" if won else "lost", high=event.winner_score if won else event.loser_score,
                 low=event.loser_score if won else event.winner_score)
        self._game_over()
        self.matches_played += 1
        if self.stats is not None:
            self.stats.matches += 1
        self.playing, self.opponent = False, None
        if self._limit_reached():
            self._finish()
        else:
            self._look()  # the saved matches first, then --invite

    def _game_over(self) -> None:
        self.games_played += 1
        self.board, self.dice, self.move_on_board = None, (0, 0), False
        if self.stats is not None:
            self.stats.games += 1

    def _keep_saved(self, online: bool) -> None:
        """Our running match is now saved on the server: note it, from the last board."""
        opponent, board = self.opponent, self.board
        self.playing = False
        if opponent is None:
            return
        length, own, other = offers.UNLIMITED, 0, 0
        if board is not None:
            length = offers.UNLIMITED if board.is_unlimited else board.match_length
            own, other = board.player_score, board.opponent_score
        self.saved[opponent.lower()] = offers.SavedMatch(opponent, online, length, own, other)

    def on_GameSaved(self, event: ev.GameSaved) -> None:
        if not self._mine(event.player):
            return
        log.info("{name} left the server; the match is saved: resuming when he is back",
                 name=event.player)
        self._keep_saved(online=False)  # his login brings our resume invitation

    def on_OpponentLeft(self, event: ev.OpponentLeft) -> None:
        log.info("{name} left the match; it is saved: resuming when he invites", name=event.player)
        self._keep_saved(online=True)
        self.given_up.add(event.player.lower())  # he chose to stop: not chased until he asks

    def on_YouTerminated(self, event: ev.YouTerminated) -> None:
        self._keep_saved(online=True)

    # -- ending ----------------------------------------------------------------------

    def _limit_reached(self) -> bool:
        return ((self.match_limit is not None and self.matches_played >= self.match_limit)
                or (self.game_limit is not None and self.games_played >= self.game_limit))

    def _finish(self) -> None:
        if self.finished.done:
            return
        log.info("done: {matches} matches, {games} games", matches=self.matches_played,
                 games=self.games_played)
        self.want_match = None
        self._cancel_retry()
        if self.factory is not None:
            self.factory.stopTrying()
        self.finished.succeed(self)

    def _lost(self, protocol: ClipClientProtocol) -> None:
        """A connection ended; a running match is now saved on the server."""
        if protocol is not self.protocol:
            return  # one the server replaced, or a registration
        if protocol.stage is Stage.REGISTERED:
            log.info("registered {name}: logging in", name=self.name)
        elif self.playing:
            log.info("connection lost during the match with {name}; it is saved",
                     name=self.opponent)
        elif self.quitting or self.finished.done:
            log.info("logged out")
        else:
            log.info("connection lost")
        self.playing = False
        self.awaiting = None
        self._cancel_retry()

    def quit(self) -> Deferred[None]:
        """Log out (a running match stays saved) and stop reconnecting: fires once closed."""
        self.quitting = True
        self._cancel_retry()
        if self.factory is not None:
            self.factory.stopTrying()
        protocol = self.protocol
        if protocol is None or protocol.transport is None or protocol.closed.done:
            return succeed(None)
        closed = protocol.closed.wait()
        self.send("bye")
        return closed
