"""``fibsd-bot``: a FIBS player on the client library.

The bot is an event handler for ``ClipClientProtocol``: it reacts to what the
server says and never polls.  Its choices come from a *brain*
(``HeuristicBrain``, the documented rules of ``fibsd.client.strategy``, or
``fibsd.client.gnubg_brain.GnubgBrain`` where GNU Backgammon runs).

Match flow: at login it makes itself ready, then either invites its opponent
(``--invite``) or waits and joins whoever invites it.  It rolls or doubles when
asked, moves after ``Please move`` (and after ``It's your turn to move`` for the
opening roll, once the board follows), answers doubles and resignations, never
resigns, and joins every next game.  The position it plays from is the last
``board:`` line; the dice are those of the last own roll (or of the board).

Losing the connection: the factory reconnects; if a match was running, the match
is saved on the server, and after the new login the bot sends ``invite
<opponent>`` (the resume form, between-games.md 6.3) until the opponent joins.
A bot whose opponent dropped waits and joins the opponent's resume invitation.

Usage (``python -m fibsd.client.bot`` works the same)::

    fibsd-bot --name bob --password secret --register              # accept anyone
    fibsd-bot --name alice --password secret --register --invite bob --length 5 --matches 3
    fibsd-bot --name gnu --password secret --brain gnubg --gnubg-port 4322
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from twisted.internet.interfaces import IDelayedCall, IReactorTime

from fibsd.client import events as ev
from fibsd.client import strategy
from fibsd.client.protocol import (
    ClipClientFactory, ClipClientProtocol, Credentials, LoginFailed, Outcome, connect,
)
from fibsd.rules.movegen import legal_plays
from fibsd.rules.play import Play
from fibsd.rules.position import Position

RETRY_SECONDS = 1.0  # between invitations the server refused (opponent away, save not written)
MAX_RETRIES = 120


class Brain(Protocol):
    """Decides for the bot; positions are from the bot's side."""

    def play(self, board: ev.Board, position: Position, dice: tuple[int, int],
             plays: Sequence[Play]) -> Play | None: ...

    def double(self, position: Position, state: strategy.CubeState) -> bool: ...

    def take(self, position: Position, state: strategy.CubeState) -> bool: ...

    def accept_resignation(self, position: Position, points: int,
                           state: strategy.CubeState) -> bool: ...


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
        self.protocol: ClipClientProtocol | None = None
        self.factory: ClipClientFactory | None = None
        self.board: ev.Board | None = None
        self.dice: tuple[int, int] = (0, 0)
        self.opponent: str | None = None  # of the running or interrupted match
        self.playing = False
        self.move_on_board = False
        # Our double is waiting for an answer: a double offered back now is an instant
        # redouble (fibsd words it as a double, as FIBS clients know no other line).
        self.doubled = False
        self.want_match: str | None = None  # whom we invite (again) until a match begins
        self.retries = 0
        self.retry_call: IDelayedCall | None = None
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
        self.playing = False
        self.move_on_board = False
        self._pending = None
        protocol.closed.wait().addCallback(lambda _: self._lost())

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

    # -- login and invitations -------------------------------------------------------

    def on_OwnInfo(self, event: ev.OwnInfo) -> None:
        if event.ready:
            self._start()
        else:
            self.send("toggle ready")

    def on_ToggleChanged(self, event: ev.ToggleChanged) -> None:
        if event.toggle == "ready" and event.value and not self.playing:
            self._start()

    def _start(self) -> None:
        """Ready: resume an interrupted match, or invite, or wait to be invited."""
        if self.opponent is not None:
            self.want_match = self.opponent
        elif self.invite_name is not None and not self._limit_reached():
            self.want_match = self.invite_name
        self._invite()

    def _invite(self) -> None:
        self.retry_call = None
        if self.want_match is None or self.playing:
            return
        if self.opponent is not None:
            self.send(f"invite {self.opponent}")
        else:
            self.send(f"invite {self.want_match} {self.length}")

    def on_Error(self, event: ev.Error) -> None:
        if self.stats is not None and self.playing:
            self.stats.errors.append(event.text)
        if self.want_match is not None and not self.playing:
            self._retry()

    def on_UnknownCommand(self, event: ev.UnknownCommand) -> None:
        if self.stats is not None:
            self.stats.errors.append(f"unknown command {event.word}")

    def _retry(self) -> None:
        if self.retry_call is not None or self.clock is None or self.retries >= MAX_RETRIES:
            return
        self.retries += 1
        self.retry_call = self.clock.callLater(RETRY_SECONDS, self._invite)

    def on_LoginNotice(self, event: ev.LoginNotice) -> None:
        if event.name == self.want_match and not self.playing and self.retry_call is not None:
            self.retry_call.cancel()
            self._invite()

    def on_Invitation(self, event: ev.Invitation) -> None:
        if self.lengths is not None and event.match_length not in self.lengths:
            return
        if self._accepts(event.inviter):  # from a saved match's opponent: a new match replaces it
            self.send(f"join {event.inviter}")

    def on_ResumeInvitation(self, event: ev.ResumeInvitation) -> None:
        if self._accepts(event.inviter):
            self.send(f"join {event.inviter}")

    def _accepts(self, inviter: str) -> bool:
        if self.playing or self._limit_reached():
            return False
        if self.opponent is not None:
            return inviter == self.opponent
        return self.invite_name is None or inviter == self.invite_name

    def on_NewMatch(self, event: ev.NewMatch) -> None:
        self._begin(event.opponent)

    def on_MatchResumed(self, event: ev.MatchResumed) -> None:
        self._begin(event.opponent)

    def _begin(self, opponent: str) -> None:
        self.opponent, self.playing, self.want_match, self.retries = opponent, True, None, 0
        if self.retry_call is not None and self.retry_call.active():
            self.retry_call.cancel()
        self.retry_call = None

    # -- playing ---------------------------------------------------------------------

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
        play = self.brain.play(board, position, self.dice, plays)
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
                and self.brain.double(board.position(), self._cube_state()):
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
        take = self.brain.take(self.board.position(), self._cube_state(redouble=redouble))
        self.send("accept" if take else "reject")

    def on_ResignOffer(self, event: ev.ResignOffer) -> None:
        if not event.must_answer or self.board is None:
            return
        accept = self.brain.accept_resignation(self.board.position(), event.points,
                                               self._cube_state())
        self.send("accept" if accept else "reject")

    def on_JoinNextGame(self, event: ev.JoinNextGame) -> None:
        self._game_over()
        if self.game_limit is not None and self.games_played >= self.game_limit:
            self.send("leave")  # the match is saved; the bot is done
            self._finish()
        else:
            self.send("join")

    def on_MatchWon(self, event: ev.MatchWon) -> None:
        if not self.playing:
            return  # a match we watch
        self._game_over()
        self.matches_played += 1
        if self.stats is not None:
            self.stats.matches += 1
        self.playing, self.opponent = False, None
        if self._limit_reached():
            self._finish()
        elif self.invite_name is not None:
            self._start()

    def _game_over(self) -> None:
        self.games_played += 1
        self.board, self.dice, self.move_on_board = None, (0, 0), False
        if self.stats is not None:
            self.stats.games += 1

    def on_GameSaved(self, event: ev.GameSaved) -> None:
        self.playing = False  # the opponent dropped: wait for his resume invitation

    def on_OpponentLeft(self, event: ev.OpponentLeft) -> None:
        self.playing = False

    # -- ending ----------------------------------------------------------------------

    def _limit_reached(self) -> bool:
        return ((self.match_limit is not None and self.matches_played >= self.match_limit)
                or (self.game_limit is not None and self.games_played >= self.game_limit))

    def _finish(self) -> None:
        self.want_match = None
        if self.factory is not None:
            self.factory.stopTrying()
        self.finished.succeed(self)

    def _lost(self) -> None:
        """The connection ended; a running match is now saved on the server."""
        self.playing = False
        if self.retry_call is not None and self.retry_call.active():
            self.retry_call.cancel()
        self.retry_call = None


# -- the command ---------------------------------------------------------------------


def make_brain(name: str, options: argparse.Namespace) -> Brain:
    if name == "gnubg":
        from fibsd.client.gnubg_brain import GnubgBrain

        return GnubgBrain(options.gnubg_host, options.gnubg_port, fallback=HeuristicBrain())
    return HeuristicBrain()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="fibsd-bot", description="A FIBS bot: plays matches on a FIBS or fibsd server.")
    parser.add_argument("--server", default="localhost")
    parser.add_argument("--port", type=int, default=4321)
    parser.add_argument("--name", required=True)
    parser.add_argument("--password", help="the password (visible to ps: prefer --password-file)")
    parser.add_argument("--password-file", metavar="PATH",
                        help="read the password from the first line of this file")
    parser.add_argument("--lengths", default="any", metavar="LIST",
                        help="the match lengths it joins: 'any' or a comma list (1,3,5)")
    parser.add_argument("--register", action="store_true",
                        help="create the account through the guest dialogue if login fails")
    parser.add_argument("--invite", metavar="NAME",
                        help="invite this player (otherwise accept anyone's invitation)")
    parser.add_argument("--length", type=int, default=1, help="match length when inviting")
    parser.add_argument("--matches", type=int, help="stop after this many matches")
    parser.add_argument("--games", type=int, help="stop after this many games (leaves the match)")
    parser.add_argument("--brain", choices=("heuristic", "gnubg"), default="heuristic")
    parser.add_argument("--gnubg-host", default="localhost")
    parser.add_argument("--gnubg-port", type=int, default=4322,
                        help="where gnubg's 'external' command listens")
    options = parser.parse_args(argv)
    if options.password_file is not None:
        with open(options.password_file, encoding="utf-8") as file:
            options.password = file.readline().strip()
    if not options.password:
        parser.error("give --password-file PATH (or --password)")
    options.lengths = (None if options.lengths == "any"
                       else frozenset(int(n) for n in options.lengths.split(",")))
    return options


async def run(reactor: Any, options: argparse.Namespace) -> Bot:
    """Log in (registering when asked and needed) and play until the limits are reached."""
    bot = Bot(options.name, make_brain(options.brain, options), invite=options.invite,
              length=options.length, lengths=options.lengths, matches=options.matches, games=options.games,
              clock=reactor)
    credentials = Credentials(options.name, options.password, "fibsd-bot")
    _, ready = connect(reactor, options.server, options.port, credentials, bot,
                       reconnect=True, connected=bot.attach)
    try:
        await ready
    except LoginFailed:
        if not options.register:
            raise
        _, ready = connect(reactor, options.server, options.port, credentials, bot,
                           register=True, reconnect=True, connected=bot.attach)
        await ready
    await bot.finished.wait()
    if bot.protocol is not None and bot.protocol.transport is not None:
        closed = bot.protocol.closed.wait()
        bot.send("bye")
        await closed
    return bot


def main(argv: Sequence[str] | None = None) -> int:
    from twisted.internet import reactor
    from twisted.internet.defer import Deferred
    from twisted.logger import globalLogBeginner, textFileLogObserver

    options = parse_args(argv)
    globalLogBeginner.beginLoggingTo([textFileLogObserver(sys.stderr)], redirectStandardIO=False)
    outcome: dict[str, Any] = {}

    def done(result: Any) -> None:
        outcome["result"] = result
        if reactor.running:  # type: ignore[attr-defined]
            reactor.stop()  # type: ignore[attr-defined]

    def start() -> None:
        Deferred.fromCoroutine(run(reactor, options)).addBoth(done)

    reactor.callWhenRunning(start)  # type: ignore[attr-defined]
    reactor.run()  # type: ignore[attr-defined]
    result = outcome.get("result")
    if isinstance(result, Bot):
        print(f"{result.name}: {result.matches_played} matches, {result.games_played} games")
        return 0
    print(f"fibsd-bot: {getattr(result, 'value', result)}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
