"""One game of backgammon as a state machine: who must act, what they may do, what happens.

Phases and who acts in each (``turn`` is the player whose turn it is; ``to_act`` the
player the game waits for):

* ``OPENING``: before the opening roll (only ``start`` is possible).
* ``ROLL``: ``turn`` rolls or doubles; anyone may resign.
* ``MOVE``: ``turn`` has dice and must play them; anyone may resign.
* ``DOUBLE_OFFERED``: ``to_act`` (the doubled player) accepts, rejects or, where the
  redouble limit allows, redoubles at once.  Nobody may do anything else.
* ``RESIGN_OFFERED``: the resigner's opponent accepts or rejects.  A rejection returns
  to the phase the resignation interrupted, dice and all.
* ``OVER``: every action raises ``GameOver``; ``result`` holds the ``GameWon``.

The board is kept from player 0's side; ``position_for(player)`` turns it round.  The
opening roll is one die each and the winner plays both dice as his first move, so nobody
can double before the first move.  Every event the game emits is kept in ``history``,
which is the game's full record.

Scoring: a game borne off is worth the cube times 1, 2 (gammon: the loser bore off
nothing) or 3 (backgammon: besides, a loser's checker on the bar or in the winner's home
board); a dropped double is worth the cube before the double; an accepted resignation
the kind offered times the cube, never capped to what the winner needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from fibsd.rules.dice import Dice, DiceSource
from fibsd.rules.errors import (
    AlreadyRolled,
    AwaitingDoubleAnswer,
    AwaitingResignAnswer,
    CubeUnavailable,
    GameOver,
    GameStateError,
    InvalidResignation,
    MustAnswerFirst,
    MustRollFirst,
    NothingToAnswer,
    NotYourTurn,
)
from fibsd.rules.events import (
    CannotMove,
    CubeAutoDoubled,
    DoubleAccepted,
    Doubled,
    DoubleRejected,
    EndReason,
    Event,
    GameWon,
    Moved,
    OpeningRoll,
    Redoubled,
    ResignAccepted,
    ResignOffered,
    ResignRejected,
    Rolled,
    WinKind,
)
from fibsd.rules.movegen import check_play, legal_plays, survey
from fibsd.rules.play import Play
from fibsd.rules.position import BAR, CHECKERS, Position


class Phase(Enum):
    OPENING = "opening"
    ROLL = "roll"
    MOVE = "move"
    DOUBLE_OFFERED = "double-offered"
    RESIGN_OFFERED = "resign-offered"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class DoubleOffer:
    """The double waiting for an answer: ``player`` offered it (the doubler, or whoever
    redoubled last), ``value`` is the cube if taken, ``redoubles`` counts the instant
    redoubles made on it so far."""

    player: int
    value: int
    redoubles: int = 0


@dataclass(frozen=True, slots=True)
class Resignation:
    player: int
    kind: WinKind
    points: int


def _other(player: int) -> int:
    return 1 - player


def _check_player(player: int) -> None:
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, not {player!r}")


class Game:
    """One game; see the module docstring for its phases.

    ``no_cube`` is ``None`` when doubling is allowed, else the ``CubeUnavailable`` reason
    that refuses every double (``CRAWFORD``, ``CUBE_DEAD`` in a 1-point match).
    ``redouble_limit`` bounds instant redoubles in a row (``None``: no bound).
    ``autodouble`` doubles the cube on every opening tie.
    """

    def __init__(
        self,
        *,
        no_cube: str | None = None,
        redouble_limit: int | None = 0,
        autodouble: bool = False,
    ) -> None:
        self.no_cube = no_cube
        self.redouble_limit = redouble_limit
        self.autodouble = autodouble
        self._board = Position.initial()
        self._phase = Phase.OPENING
        self._turn: int | None = None
        self._dice: Dice | None = None
        # The legal plays of the roll being played; None until someone asks for them when
        # the roll's survey stopped early (see ``movegen.survey``): then there are two
        # or more.
        self._plays: tuple[Play, ...] | None = ()
        self._usable: tuple[int, ...] = ()  # the dice the move must use: it is checked by them
        self._playable = [0, 0]
        self._forced = [0, 0]
        self._cube = 1
        self._owner: int | None = None
        self._cube_turned = False  # a double was taken this turn: the next step is the roll
        self._offer: DoubleOffer | None = None
        self._resignation: Resignation | None = None
        self._resume = Phase.ROLL
        self._result: GameWon | None = None
        # A tuple, extended once per action, read several times per action (each board).
        self._history: tuple[Event, ...] = ()

    @classmethod
    def at_position(
        cls,
        position: Position,
        turn: int,
        *,
        cube: int = 1,
        owner: int | None = None,
        no_cube: str | None = None,
        redouble_limit: int | None = 0,
    ) -> Game:
        """A game already under way: ``position`` seen from player 0, ``turn`` to roll.

        For setting up positions (tests, analysis); a match always starts from the opening.
        """
        _check_player(turn)
        if owner is not None:
            _check_player(owner)
        if cube < 1 or cube & (cube - 1):
            raise ValueError(f"a cube shows a power of two, not {cube!r}")
        game = cls(no_cube=no_cube, redouble_limit=redouble_limit)
        game._board = position
        game._phase = Phase.ROLL
        game._turn = turn
        game._cube = cube
        game._owner = owner
        return game

    # -- state -------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def turn(self) -> int | None:
        """The player whose turn it is (``None`` before the opening roll); unchanged by
        a pending double or resignation, and kept once the game is over."""
        return self._turn

    @property
    def to_act(self) -> int | None:
        """The player the game waits for (``None`` before the opening and when over)."""
        if self._phase is Phase.DOUBLE_OFFERED:
            assert self._offer is not None
            return _other(self._offer.player)
        if self._phase is Phase.RESIGN_OFFERED:
            assert self._resignation is not None
            return _other(self._resignation.player)
        if self._phase in (Phase.OPENING, Phase.OVER):
            return None
        return self._turn

    @property
    def position(self) -> Position:
        """The board seen from player 0."""
        return self._board

    def position_for(self, player: int) -> Position:
        _check_player(player)
        return self._board if player == 0 else self._board.swap()

    @property
    def dice(self) -> Dice | None:
        """Dice rolled by ``turn`` and not yet played, in the order rolled.  After the
        opening roll: player 0's die, then player 1's."""
        return self._dice

    def playable(self, player: int) -> int:
        """How many dice ``player``'s latest roll let him use (0 before his first roll)."""
        _check_player(player)
        return self._playable[player]

    def forced_die(self, player: int) -> int:
        """The die ``player``'s latest one-die-only roll in this game let him use (0 if
        none): board field 50.  Kept here, not by the server, so that replaying a record
        (a resumed match) gives it back exactly."""
        _check_player(player)
        return self._forced[player]

    def legal_plays(self) -> tuple[Play, ...]:
        """The plays open to ``turn`` for the dice rolled; ``()`` outside ``MOVE``."""
        if self._phase is not Phase.MOVE:
            return ()
        if self._plays is None:
            assert self._turn is not None and self._dice is not None
            self._plays = legal_plays(self.position_for(self._turn), self._dice)
        return self._plays

    def only_play(self) -> Play | None:
        """The one legal play of the dice rolled, when there is exactly one (a forced
        move); None otherwise or outside ``MOVE``.  Cheaper than ``legal_plays()``."""
        plays = self._plays if self._phase is Phase.MOVE else None
        return plays[0] if plays is not None and len(plays) == 1 else None

    @property
    def cube(self) -> int:
        """The cube's value; an offered double changes it only once taken."""
        return self._cube

    @property
    def owner(self) -> int | None:
        """Who owns the cube; ``None`` while centred."""
        return self._owner

    @property
    def pending_double(self) -> DoubleOffer | None:
        return self._offer if self._phase is Phase.DOUBLE_OFFERED else None

    @property
    def pending_resignation(self) -> Resignation | None:
        return self._resignation if self._phase is Phase.RESIGN_OFFERED else None

    def was_doubled(self, player: int) -> bool:
        """Whether ``player`` must answer a double now."""
        return self._phase is Phase.DOUBLE_OFFERED and self.to_act == player

    def can_double(self, player: int) -> bool:
        """Whether ``double(player)`` would be allowed right now."""
        try:
            self._check_double(player)
        except GameStateError:
            return False
        return True

    @property
    def over(self) -> bool:
        return self._phase is Phase.OVER

    @property
    def result(self) -> GameWon | None:
        return self._result

    @property
    def history(self) -> tuple[Event, ...]:
        return self._history

    # -- actions -------------------------------------------------------------------

    def start(self, dice: DiceSource) -> tuple[Event, ...]:
        """The opening roll: one die each, rolled again while equal."""
        if self._phase is not Phase.OPENING:
            raise GameStateError("the opening roll has been made")
        events: list[Event] = []
        opening = OpeningRoll(dice.roll())
        events.append(opening)
        while opening.tie:
            if self.autodouble:
                self._cube *= 2
                events.append(CubeAutoDoubled(self._cube))
            opening = OpeningRoll(dice.roll())
            events.append(opening)
        winner = opening.winner
        assert winner is not None
        self._turn = winner
        events.extend(self._dice_rolled(winner, opening.dice))
        return self._emit(events)

    def roll(self, player: int, dice: DiceSource) -> tuple[Event, ...]:
        """Roll for ``player`` (declining to double); a roll with no legal play passes
        the turn at once (``Rolled`` then ``CannotMove``)."""
        self._check_turn_action(player)
        if self._phase is Phase.MOVE:
            raise AlreadyRolled()
        return self._emit(self._dice_rolled(player, dice.roll(), announce=True))

    def move(
        self, player: int, pairs: Sequence[tuple[int, int]], *, automatic: bool = False
    ) -> tuple[Event, ...]:
        """Play the typed ``pairs`` ((src, dst) in the mover's numbering, 25 bar, 0 off);
        ``automatic`` marks a play the server made for the player."""
        self._check_to_move(player)
        assert self._dice is not None
        play = check_play(self.position_for(player), self._dice, tuple(pairs), self._usable)
        return self._emit(self._played(player, play, automatic))

    def auto_move(self, player: int, play: Play) -> tuple[Event, ...]:
        """Play ``play`` for the player (a forced move, a greedy bear-off): one of
        ``legal_plays()``, or any play of the dice rolled."""
        return self.move(player, [(m.src, m.dst) for m in play.moves], automatic=True)

    def double(self, player: int) -> tuple[Event, ...]:
        self._check_double(player)
        self._offer = DoubleOffer(player, self._cube * 2)
        self._phase = Phase.DOUBLE_OFFERED
        return self._emit([Doubled(player, self._offer.value)])

    def redouble(self, player: int) -> tuple[Event, ...]:
        """Take the pending double and at once offer it back at twice the value (beaver,
        raccoon, ...); the other player must answer in turn."""
        offer = self._answerable(player, Phase.DOUBLE_OFFERED)
        assert offer is not None
        if self.redouble_limit is not None and offer.redoubles >= self.redouble_limit:
            raise CubeUnavailable(CubeUnavailable.REDOUBLE_LIMIT)
        self._offer = DoubleOffer(player, offer.value * 2, offer.redoubles + 1)
        return self._emit([Redoubled(player, self._offer.value, self._offer.redoubles)])

    def accept(self, player: int) -> tuple[Event, ...]:
        """Take the pending double, or accept the pending resignation (ending the game)."""
        self._answerable(player, None)
        if self._phase is Phase.DOUBLE_OFFERED:
            assert self._offer is not None
            self._cube = self._offer.value
            # The player first doubled keeps the cube through instant redoubles (a
            # beaver keeps it, a raccoon leaves it with him): the taker after an even
            # number of redoubles, the last redoubler after an odd number.
            self._owner = player if self._offer.redoubles % 2 == 0 else self._offer.player
            self._cube_turned = True
            self._offer = None
            self._phase = Phase.ROLL
            return self._emit([DoubleAccepted(player, self._cube)])
        assert self._resignation is not None
        resignation = self._resignation
        events: list[Event] = [ResignAccepted(player, resignation.points)]
        events.append(self._end(player, resignation.points, resignation.kind, EndReason.RESIGNED))
        return self._emit(events)

    def reject(self, player: int) -> tuple[Event, ...]:
        """Drop the pending double (losing the cube before it), or refuse the pending
        resignation (play goes on where it stopped)."""
        self._answerable(player, None)
        if self._phase is Phase.DOUBLE_OFFERED:
            assert self._offer is not None
            offer = self._offer
            events: list[Event] = [DoubleRejected(player)]
            events.append(
                self._end(offer.player, offer.value // 2, WinKind.SINGLE, EndReason.DROPPED)
            )
            return self._emit(events)
        self._resignation = None
        self._phase = self._resume
        return self._emit([ResignRejected(player)])

    def resign(self, player: int, kind: WinKind | int) -> tuple[Event, ...]:
        """Offer the opponent ``kind`` times the cube; allowed in either player's turn,
        before or after rolling, but not while a double or resignation awaits an answer."""
        self._check_started()
        self._check_no_offer(player)
        try:
            kind = WinKind(kind)
        except ValueError:
            raise InvalidResignation(f"unknown resignation kind {kind!r}") from None
        self._resignation = Resignation(player, kind, kind * self._cube)
        self._resume = self._phase
        self._phase = Phase.RESIGN_OFFERED
        return self._emit([ResignOffered(player, kind, self._resignation.points)])

    # -- checks ----------------------------------------------------------------------

    def _check_started(self) -> None:
        if self._phase is Phase.OVER:
            raise GameOver()
        if self._phase is Phase.OPENING:
            raise GameStateError("the opening roll has not been made")

    def _check_no_offer(self, player: int) -> None:
        _check_player(player)
        if self._phase is Phase.DOUBLE_OFFERED:
            assert self._offer is not None
            if player == self._offer.player:
                raise AwaitingDoubleAnswer()
            raise MustAnswerFirst(MustAnswerFirst.DOUBLE)
        if self._phase is Phase.RESIGN_OFFERED:
            assert self._resignation is not None
            if player == self._resignation.player:
                raise AwaitingResignAnswer()
            raise MustAnswerFirst(MustAnswerFirst.RESIGNATION)

    def _check_turn_action(self, player: int) -> None:
        self._check_started()
        self._check_no_offer(player)
        if player != self._turn:
            raise NotYourTurn()

    def _check_to_move(self, player: int) -> None:
        self._check_turn_action(player)
        if self._phase is Phase.ROLL:
            raise MustRollFirst()

    def _check_double(self, player: int) -> None:
        self._check_started()
        self._check_no_offer(player)
        if player != self._turn:
            raise CubeUnavailable(CubeUnavailable.NOT_ON_ROLL)
        if self._phase is Phase.MOVE:
            raise CubeUnavailable(CubeUnavailable.AFTER_ROLL)
        if self.no_cube is not None:
            raise CubeUnavailable(self.no_cube)
        if self._owner == _other(player):
            raise CubeUnavailable(CubeUnavailable.OPPONENT_OWNS)
        if self._cube_turned:
            # Doubling again before rolling would be an instant redouble of the take.
            raise CubeUnavailable(CubeUnavailable.REDOUBLE_LIMIT)

    def _answerable(self, player: int, phase: Phase | None) -> DoubleOffer | None:
        """Refuse unless ``player`` must answer an offer (of ``phase``'s kind if given)."""
        _check_player(player)
        if self._phase is Phase.OVER:
            raise GameOver()
        if self._phase is Phase.DOUBLE_OFFERED and phase in (None, Phase.DOUBLE_OFFERED):
            assert self._offer is not None
            if player == self._offer.player:
                raise AwaitingDoubleAnswer()
            return self._offer
        if self._phase is Phase.RESIGN_OFFERED and phase in (None, Phase.RESIGN_OFFERED):
            assert self._resignation is not None
            if player == self._resignation.player:
                raise AwaitingResignAnswer()
            return None
        raise NothingToAnswer()

    # -- transitions -------------------------------------------------------------------

    def _emit(self, events: list[Event]) -> tuple[Event, ...]:
        emitted = tuple(events)
        self._history += emitted
        return emitted

    def _dice_rolled(self, player: int, dice: Dice, announce: bool = False) -> list[Event]:
        found = survey(self.position_for(player), dice)
        # Every legal play uses the dice the survey counts (the most that can be used):
        # counted from them, not by a walk over the plays (hundreds for some doubles).
        playable = len(found.usable)
        self._playable[player] = playable
        if announce and playable == 1:
            # a bear-off with a larger die than its distance counts as the larger die
            pips = found.plays[0].moves[0].pips
            self._forced[player] = pips if pips in dice else max(dice)
        events: list[Event] = [Rolled(player, dice, playable)] if announce else []
        if playable == 0:
            events.append(CannotMove(player, dice))
            self._pass_turn(player)
        else:
            self._dice = dice
            self._plays = found.plays if found.complete else None
            self._usable = found.usable  # the move that follows is checked against them
            self._phase = Phase.MOVE
        return events

    def _pass_turn(self, player: int) -> None:
        self._turn = _other(player)
        self._dice = None
        self._plays = ()
        self._cube_turned = False
        self._phase = Phase.ROLL

    def _played(self, player: int, play: Play, automatic: bool) -> list[Event]:
        result = play.result
        self._board = result if player == 0 else result.swap()
        events: list[Event] = [Moved(player, play, automatic)]
        if result.player_off == CHECKERS:
            kind = _win_kind(result)
            events.append(self._end(player, kind * self._cube, kind, EndReason.BORNE_OFF))
        else:
            self._pass_turn(player)
        return events

    def _end(self, winner: int, points: int, kind: WinKind, reason: EndReason) -> GameWon:
        self._result = GameWon(winner, points, kind, reason)
        self._phase = Phase.OVER
        self._dice = None
        self._plays = ()
        self._offer = None
        self._resignation = None
        return self._result


def _win_kind(final: Position) -> WinKind:
    """What a bear-off win is worth, from the winner's side of the final board."""
    if final.opponent_off > 0:
        return WinKind.SINGLE
    # The winner's home board is the loser's points 19..24 (indices 18..23); BAR is 24.
    if any(final.opponent[index] for index in range(18, BAR + 1)):
        return WinKind.BACKGAMMON
    return WinKind.GAMMON
