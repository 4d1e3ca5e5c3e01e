"""A live match between two online users, and everything it tells whom.

``LiveMatch`` owns the rules ``Match``, the dice, the colours (game one's chosen by the
lobby's coin, swapped every game) and the per-recipient output.  Each action calls the
rules engine first; the engine raises before it changes anything, so a refused action
sends nothing and the caller answers with ``fibsd.wire.game_text``'s error line.  The
events of a successful action become lines for the player (``You ...``), his opponent
and every watcher, collected per recipient and sent once the action is complete:
the acting user gets them as the reply to his command, everyone else as a notification.

Players are the rules' indices 0 and 1 (0 invited the match, 1 joined it); they are kept
by name and looked up in the lobby, so a player who logs in again from another
connection goes on playing.  Watchers are the online users whose ``watching`` names a
player; each sees the board as that player.

Client mode (CLIP users, game-play.md 1.2): every block of lines caused by an event gets
one empty line in front of it, except the direct reply to the user's own command.

Durability (why every action waits for the database before it is announced): each action
(and each start, resume, ``leave`` or departure) writes the whole match record, in the
saved-match format ``invite``/``join`` resume from, through the single database thread,
and the lines that announce the action are held until that write has committed.  Queuing
the write before sending the lines would not be enough: a line handed to the socket
reaches the client even if the process dies a moment later, while the queued write dies
with it, so a client could see dice that a restart no longer knows (and a re-roll would
let a player fish for better dice).  Held until the commit, a line can never outlive its
write; a crash at any instant loses at most the action whose write had not committed, and
nobody has seen its result.  Writes go through one thread in the order they were queued
and their answers come back in that order, so held lines leave in action order too.  A
match's later commands (``_in_order`` in ``commands/play.py``) and a new watcher's board
wait until the writes before them have committed, so nobody is shown a state that is not
yet on disk.  SQLite's WAL with ``synchronous=NORMAL`` makes a commit survive a crash of
the process (the operating system holds the written pages); only a power loss can take the
last commits back.  The end of a match records the result, the ratings and the removal of
the saved row in one transaction, so a rating is never applied twice nor lost half-way.

A write the database cannot take (``WriteFailed``, ``Unavailable``: a lost, hung or full
database) pauses the match where its last stored write left it: the lines of the unstored
action stay held, the players and watchers are told with a ``** `` line that the match
waits for the database, and commands about the match are answered with that line
instead of waiting.  The same write (the same record, so the same seeded dice) is tried
again once the database thread finds the database back (``when_up``; with a backoff of
its own should the write still fail), and only then are the held lines sent, after a
line saying the match goes on.  While a match is paused its later writes (a departure's
save) wait behind the paused one, so none lands before an earlier one it would be
overwritten by; one stored stores the earlier ones it holds.  So nothing shown is
ever taken back: a roll is shown only once stored, and a restart during the outage
resumes from the stored state with the same committed dice sequence, rolling the same
dice nobody has seen yet.  The end of a match (result and ratings) is shown, and the
ratings change in memory, only once stored; a retry of the end first checks whether an
attempt whose answer was lost (a connection cut during COMMIT) stored it already.  A
write that fails for another reason (a bug, a deleted account) is logged (event
``write_failed``) and told with the older ``** `` lines, and play goes on.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import deferLater
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.rating import rate_match
from fibsd.rules.clock import ClockSpec, MatchClock, forfeit_game
from fibsd.rules.dice import SeededDice
from fibsd.rules.errors import GameStateError, InvalidPlayText, RulesError
from fibsd.rules.events import (
    CannotMove,
    CubeAutoDoubled,
    DoubleAccepted,
    Doubled,
    DoubleRejected,
    EndReason,
    Event,
    GameStarted,
    GameWon,
    MatchWon,
    Moved,
    OpeningRoll,
    Redoubled,
    ResignAccepted,
    ResignOffered,
    ResignRejected,
    Rolled,
    WinKind,
)
from fibsd.rules.game import Phase
from fibsd.rules.match import Match
from fibsd.rules.notation import format_fibs_moves, parse_fibs_pairs, to_mover_numbering
from fibsd.rules.play import OFF_POINT, Play
from fibsd.rules.record import compact
from fibsd.server.clocks import MatchClocks
from fibsd.server.dbthread import OUTAGES, log_write_failed, unattended
from fibsd.store import Departure, FinishedMatch, SavedMatch, Store
from fibsd.wire import clock_text, fair_text
from fibsd.wire import game_text as text
from fibsd.wire import listings_text
from fibsd.wire.ascii_board import render_board
from fibsd.wire.board import (
    UNLIMITED,
    BoardView,
    Colour,
    Seat,
    Table,
    board_line,
    board_view,
)
from fibsd.wire.ratings_text import format_rating_calculation

_log = Logger()

if TYPE_CHECKING:
    from twisted.internet.interfaces import IDelayedCall

    from fibsd.config import FairPlay
    from fibsd.rules.dice import DiceSource
    from fibsd.server.lobby import Lobby
    from fibsd.server.user import OnlineUser

RECORD_FORMAT = "fibsd-live-match"
PER_GAME_TOGGLES = {"double": True, "greedy": False, "moves": False}  # settings.md 1.2
UNLIMITED_REDOUBLES = 99  # board field 52 for 'set redoubles unlimited'
# Automatic rolls that cannot be played, in a row, before the server stops rolling on
# its own (both players closed out with checkers on the bar would never end).
MAX_AUTOMATIC_ROLLS = 50
CLAIM_WARNING = 60  # seconds of warning before the opponent may claim
# A paused write tried again while the database thread says the database is up (the
# write itself still fails): seconds before the first new try, doubled up to the last.
RETRY_FIRST = 0.5
RETRY_MAX = 30.0


def redouble_setting(value: str) -> int | None:
    """A player's ``set redoubles`` value as a limit: None means unlimited."""
    if value == "unlimited":
        return None
    return 0 if value == "none" else int(value)


@dataclass
class _Result:
    """A finished match waiting for its write: shown with ratings only once stored."""

    finished: FinishedMatch
    new_ratings: dict[str, tuple[float, int]] | None
    printout: list[tuple[OnlineUser, list[str]]]  # rating calculation per recipient
    after: list[tuple[OnlineUser, float, int]]  # ratings the users get once it is stored


@dataclass
class _Write:
    """One write of a match not yet stored (``LiveMatch._durably``)."""

    write: Callable[[bool], Deferred[Any]]  # True: a retry
    what: str
    stored: Callable[[bool], None]  # True: the command was answered already (a pause)
    refused: Callable[[Failure], None]
    answered: Deferred[None]  # the command's: fires once stored, refused or paused
    retry_in: float = RETRY_FIRST
    started: bool = False  # made (and not failed since, unless it is the first)
    done: bool = False  # stored (by itself or a later write) or refused


Blocks = dict["OnlineUser", list[list[str]]]


def _finish_unless_stored(store: Store, finished: FinishedMatch,
                          new_ratings: dict[str, tuple[float, int]] | None) -> None:
    """On the database thread: ``record_finished_match`` again, unless an earlier try
    whose answer was lost stored it (the ratings must not change twice)."""
    if any(match.record == finished.record and match.finished == finished.finished
           for match in store.finished_matches(finished.winner)):
        return
    store.record_finished_match(finished, new_ratings=new_ratings)


def database_down(lobby: Lobby) -> None:
    """The database thread found the database down: every match with a write under
    way pauses (``LiveMatch.wait_for_database``) and says so."""
    for match in list(lobby.writing):
        match.wait_for_database()


def live_match(lobby: Lobby, player: str) -> LiveMatch | None:
    """The live match ``player`` plays, if any."""
    match = lobby.matches.get(player)
    return match if isinstance(match, LiveMatch) else None


def _saved_dice(lobby: Lobby, record: Any, rules: Match) -> DiceSource:
    """A saved match's dice: its own seed and counter; a record from before fair dice
    goes on with a fresh seed whose counter starts after the rolls already made (those
    are marked ``unseeded`` so a verifier skips them)."""
    if record is not None:
        return SeededDice.from_record(record)
    if lobby.dice is not None:
        return lobby.dice
    made = sum(1 for game in rules.to_record()["games"] for entry in game
               if entry[0] in ("opening", "roll"))
    return SeededDice(lobby.draw_seed(), next_roll=made, unseeded=made)


class LiveMatch:
    def __init__(self, lobby: Lobby, names: tuple[str, str], rules: Match, *,
                 o_first: int, dice: DiceSource) -> None:
        self.lobby = lobby
        self.names = names
        self.rules = rules
        self.o_first = o_first  # the player who plays O in game one
        self.dice = dice
        # The dice anyone can check (protocol/fair-dice.md); None only when a test
        # scripts the lobby's dice.
        self.fair = dice if isinstance(dice, SeededDice) else None
        self.joined: set[int] = set()  # players who typed 'join' for the next game
        self._actor: OnlineUser | None = None
        self._blocks: dict[OnlineUser, list[list[str]]] = {}
        self._after: list[Callable[[], None]] = []
        # Stallers and droppers (protocol/fair-dice.md): since when the player to act
        # has been silent; the silence ``claim`` counts (the silent player and the delays
        # of his warning and of the claim, None when none counts), whether he was warned,
        # and its one timer (``_arm_claim``); (game, player, count) of the latest drops
        # in a row on the dropper's own turn while behind.
        self.silent_since = lobby.now()
        self._silence: tuple[int, float, float] | None = None
        self._warned = False
        self._claim_timer: IDelayedCall | None = None
        self.own_turn_drops: tuple[int, int, int] | None = None
        self._result: _Result | None = None  # set by the end of the match
        self._ending_game = False  # the events of a game-ending action are being sent
        self._unsaved = 0  # writes queued whose answer has not come back
        self._waiting: deque[Deferred[None]] = deque()  # see ``when_saved``
        self._writes: deque[_Write] = deque()  # not yet stored; the first is under way
        self.paused = False  # a write failed for want of the database: see the docstring
        self.clocks: MatchClocks | None = None  # protocol/clock.md
        self.ended: str | None = None  # how it ended when not by points: "time"
        # (tournament id, round) when the match is played for a tournament (fibsd.tournament):
        # kept in the record, written with the result, told to ``lobby.result_hooks``
        self.tournament: tuple[int, int] | None = None
        self._head: str | None = None  # the record's unchanging start (``to_record``)
        self._boards: dict[tuple[Any, ...], Any] = {}  # see ``_standing``
        self._boards_state: tuple[int, int, bool] | None = None

    # -- creating and saving ---------------------------------------------------------

    @classmethod
    def new(cls, lobby: Lobby, inviter: OnlineUser, joiner: OnlineUser, length: int,
            server_seed: bytes | None = None, clock: ClockSpec | None = None) -> LiveMatch:
        """``server_seed``: the seed whose commitment the invitation showed; ``clock``:
        the clock it showed."""
        both = (inviter, joiner)
        limits = [redouble_setting(u.variables.get("redoubles", "none")) for u in both]
        known = [limit for limit in limits if limit is not None]
        rules = Match(
            length,
            crawford=any(u.toggles["crawford"] for u in both),
            redouble_limit=min(known) if known else None,
            autodouble=all(u.toggles["autodouble"] for u in both),
        )
        dice = lobby.dice
        if dice is None:
            dice = SeededDice(server_seed or lobby.draw_seed(),
                              (inviter.dice_text, joiner.dice_text))
        match = cls(lobby, (inviter.name, joiner.name), rules, o_first=lobby.coin(), dice=dice)
        if clock is not None:
            match.clocks = MatchClocks(match, MatchClock.new(clock, length))
        return match

    def to_record(self) -> str:
        """The saved match: players, colours and the rules' full record, as JSON text.
        Written at every action, so the rules' record comes as text encoded only as far
        as the last call (``Match.record_text``) and is set into the rest."""
        if self._head is None:  # the same for the whole match
            self._head = compact({
                "format": RECORD_FORMAT,
                "players": list(self.names),
                "o_first": self.o_first,
                "length": self.rules.length,
            })[:-1]
        tail: dict[str, Any] = {}
        if self.fair is not None:
            tail["dice"] = self.fair.to_record()
        if self.own_turn_drops is not None:
            tail["own_turn_drops"] = list(self.own_turn_drops)
        if self.clocks is not None:
            tail["clock"] = self.clocks.state.to_record()
        if self.ended is not None:
            tail["ended"] = self.ended
        if self.tournament is not None:
            tail["tournament"] = list(self.tournament)
        text = f'{self._head},"match":{self.rules.record_text()}'
        return f"{text},{compact(tail)[1:]}" if tail else f"{text}}}"

    @classmethod
    def from_record(cls, lobby: Lobby, record: str) -> LiveMatch:
        """Raises ValueError (``InvalidRecord`` included) for a record that is unusable."""
        try:
            data = json.loads(record)
            if data.get("format") != RECORD_FORMAT:
                raise ValueError("not a live match record")
            names = (str(data["players"][0]), str(data["players"][1]))
            o_first = int(data["o_first"])
            if o_first not in (0, 1):
                raise ValueError(f"o_first is {o_first}")
            rules = Match.from_record(data["match"])
            dice = _saved_dice(lobby, data.get("dice"), rules)
            drops = data.get("own_turn_drops")
            own_turn_drops = None if drops is None else (int(drops[0]), int(drops[1]),
                                                         int(drops[2]))
            clock = data.get("clock")
            state = None if clock is None else MatchClock.from_record(clock)
            tag = data.get("tournament")
            tournament = None if tag is None else (int(tag[0]), int(tag[1]))
        except (AttributeError, KeyError, IndexError, TypeError) as error:
            raise ValueError(f"bad saved match: {error!r}") from error
        match = cls(lobby, names, rules, o_first=o_first, dice=dice)
        match.own_turn_drops = own_turn_drops
        if state is not None:
            match.clocks = MatchClocks(match, state)
        match.tournament = tournament
        return match

    @staticmethod
    def saved_names(saved: SavedMatch) -> tuple[str, str]:
        """A saved match's players in its record's order (the inviter first)."""
        try:
            names = json.loads(saved.record)["players"]
            return (str(names[0]), str(names[1]))
        except (ValueError, KeyError, IndexError, TypeError):
            return (saved.player_a, saved.player_b)

    @staticmethod
    def saved_length(record: str) -> int:
        try:
            return int(json.loads(record)["length"])
        except (ValueError, KeyError, TypeError):
            return 0

    # -- who is who ----------------------------------------------------------------------

    def user(self, player: int) -> OnlineUser | None:
        """The player online, or dropped with the match held for him (fibsd.server.grace)."""
        name = self.names[player]
        held = self.lobby.graces.get(name)
        return self.lobby.find(name) or (held.user if held is not None else None)

    def index(self, user: OnlineUser) -> int:
        return self.names.index(user.name)

    def opponent_of(self, user: OnlineUser) -> str:
        return self.names[1 - self.index(user)]

    def colour(self, player: int) -> Colour:
        number = max(self.rules.number, 1)
        o_player = self.o_first if number % 2 else 1 - self.o_first
        return Colour.O if player == o_player else Colour.X

    def absolute_point(self, player: int, point: int) -> int:
        """A point of ``player``'s own numbering as FIBS writes it (25, the bar, stays)."""
        if point == 25 or self.colour(player) is Colour.O:
            return point
        return 25 - point

    def watchers(self) -> list[tuple[OnlineUser, int]]:
        """Every watcher and the index of the player he watches.  Asked several times
        per game action, and most matches have none: a list, made only when needed."""
        lobby = self.lobby
        names = self.names
        if not (lobby.watched(names[0]) or lobby.watched(names[1])):
            return []
        return [(user, player) for player, name in enumerate(names)
                for user in lobby.watchers_of(name) if user.name not in names]

    def add_watcher(self, user: OnlineUser, player: str | None = None) -> None:
        """``user`` watches ``player`` (default: the player his ``watching`` already
        names, else the inviter) from now on and gets the current board; every later
        event reaches him as the watched player sees it."""
        if player not in self.names:
            player = user.watching if user.watching in self.names else self.names[0]
        user.watching = player

        def show(_: object) -> None:
            if self.paused:  # the state is not stored: the board follows once it is
                user.session.notify(text.MATCH_WAITS)
                self.when_saved().addCallback(show)
            elif user.watching in self.names:
                user.session.notify(*self.board_lines(user))

        # After the writes under way: the board shows nothing that is not yet stored.
        self.when_saved().addCallback(show)

    # -- boards ----------------------------------------------------------------------------

    def board_view(self, player: int, *, plays: bool = True,
                   rolled: tuple[int, tuple[int, int]] | None = None) -> BoardView:
        """``player``'s view; ``rolled`` shows a roll the engine already passed on
        (a roll that could not be played)."""
        seats, table = self._table(rolled)
        return board_view(self.rules.position_for(player), seats[player], seats[1 - player],
                          table, recipient_plays=plays)

    def _table(self, rolled: tuple[int, tuple[int, int]] | None) -> tuple[list[Seat], Table]:
        """Both seats and the table of the boards, the same for every point of view:
        made once while the match stands still (``_standing``)."""
        cached = self._standing().get(("table", rolled))
        if cached is not None:
            return cached  # type: ignore[return-value]
        rules = self.rules
        game = rules.game
        score = self.score_before_game() if self._ending_game else rules.score
        seats = []
        for i in (0, 1):
            dice = (0, 0)
            if game is not None and not game.over and game.dice is not None and game.turn == i:
                dice = game.dice
                if self._opening_dice() and self.colour(0) is Colour.X:
                    dice = (dice[1], dice[0])  # O's die first
            if rolled is not None and rolled[0] == i:
                dice = rolled[1]
            seats.append(Seat(self.names[i], self.colour(i), score[i], dice,
                              rules.may_double(i), rules.playable(i), rules.forced_die(i)))
        turn: Colour | None = None
        doubled: Colour | None = None
        if rolled is not None:
            turn = self.colour(rolled[0])
        elif game is not None and not game.over:
            if rules.pending_double is not None:
                assert rules.to_act is not None
                turn = doubled = self.colour(rules.to_act)
            elif game.turn is not None:
                turn = self.colour(game.turn)
        if rules.length:
            redoubles = 0
        else:
            redoubles = (UNLIMITED_REDOUBLES if rules.redouble_limit is None
                         else rules.redouble_limit)
        table = Table(rules.length or UNLIMITED, rules.cube, turn, doubled,
                      rules.did_crawford, redoubles)
        self._boards[("table", rolled)] = (seats, table)
        return seats, table

    def _opening_dice(self) -> bool:
        game = self.rules.game
        return game is not None and not any(
            isinstance(e, (Rolled, Moved, CannotMove)) for e in game.history)

    def board_lines(self, user: OnlineUser, *,
                    rolled: tuple[int, tuple[int, int]] | None = None,
                    seen_as: str | None = None) -> list[str]:
        """The board in ``user``'s boardstyle, as the player he is or watches, or as
        the player ``seen_as`` (``look``)."""
        if seen_as is None:
            seen_as = (user.name if user.name in self.names
                       else user.watching or self.names[0])
        plays = seen_as == user.name
        player = self.names.index(seen_as)
        style = user.variables.get("boardstyle", "3")
        if style not in ("1", "2"):
            return [self._board_line(player, plays, rolled)]
        view = self.board_view(player, plays=plays, rolled=rolled)
        status = None
        if self.rules.pending_double is not None:
            status = f"{self.names[self.rules.pending_double.player]} doubled."
        elif self.rules.pending_resignation is not None:
            status = f"{self.names[self.rules.pending_resignation.player]} wants to resign."
        lines = render_board(view, int(style), own_name=user.name, status=status)
        if self.clocks is not None:
            lines.append(self.clocks.board_line())
        return lines

    def _board_line(self, player: int, plays: bool,
                    rolled: tuple[int, tuple[int, int]] | None) -> str:
        """The ``board:`` line of one point of view, made once while the match stands
        still and shared by everyone who sees it so (every watcher of a player).  The
        match stands still while its game has the same events (doubles, answers and
        resignations are events too) and the same game is played."""
        key = (player, plays, rolled)
        line = self._standing().get(key)
        if line is None:
            seats, table = self._table(rolled)
            line = board_line(self.rules.position_for(player), seats[player],
                              seats[1 - player], table, recipient_plays=plays)
            self._boards[key] = line
        return line

    def _standing(self) -> dict[tuple[Any, ...], Any]:
        """What the boards of the match as it stands share (``_board_line``,
        ``_table``), emptied once it moves on."""
        game = self.rules.game
        state = (self.rules.number, 0 if game is None else len(game.history),
                 self._ending_game)
        if state != self._boards_state:
            self._boards_state, self._boards = state, {}
        return self._boards

    def pips(self, player: int) -> tuple[int, int]:
        """(``player``'s pips, the opponent's)."""
        return self.rules.position_for(player).pips()

    @property
    def in_first_move(self) -> bool:
        game = self.rules.game
        return (game is not None and not game.over
                and not any(isinstance(e, Moved) for e in game.history))

    # -- output ------------------------------------------------------------------------------

    def _block(self, user: OnlineUser | None, lines: Sequence[str]) -> None:
        if user is not None and lines:
            self._blocks.setdefault(user, []).append(list(lines))

    def _append(self, user: OnlineUser | None, lines: Sequence[str]) -> None:
        if user is None or not lines:
            return
        blocks = self._blocks.setdefault(user, [])
        if blocks:
            blocks[-1].extend(lines)
        else:
            blocks.append(list(lines))

    def _say(self, player: int, mine: Sequence[str], theirs: Sequence[str],
             watching: Sequence[str] | Callable[[int], Sequence[str]]) -> None:
        """One event's blocks: for ``player``, his opponent, and each watcher (a function
        of the watched player's index when the line depends on it)."""
        self._block(self.user(player), mine)
        self._block(self.user(1 - player), theirs)
        for user, watched in self.watchers():
            self._block(user, watching(watched) if callable(watching) else watching)

    def _run(self, actor: OnlineUser | None, action: Callable[[], None]) -> Deferred[None]:
        """Run ``action`` with output collected, write the match, then send the output
        (the actor's as a reply) once the write has committed."""
        outer = self._actor is not None or bool(self._blocks)
        if outer:
            action()
            return succeed(None)
        if self.clocks is not None:
            self.clocks.charge(actor)
        self._actor = actor
        try:
            action()
        finally:
            blocks, self._blocks = self._blocks, {}
            after, self._after = self._after, []
            result, self._result = self._result, None
            self._actor = None
        db = self._db()
        if db is None or (result is None and not self.is_live):  # nothing to store
            self._send(blocks, actor, after)
            return succeed(None)
        if result is not None:
            ended = result

            def write(retry: bool) -> Deferred[Any]:
                if retry:  # an earlier try may have stored it, its answer lost
                    return db.run(_finish_unless_stored, ended.finished, ended.new_ratings)
                return db.record_finished_match(ended.finished, new_ratings=ended.new_ratings)

            what = "record_finished_match"
        else:
            saved = self._saved()

            def write(retry: bool) -> Deferred[Any]:
                return db.save_match(saved)

            what = "save_match"

        def stored(answered: bool) -> None:
            if result is not None:
                for user, rating, experience in result.after:
                    user.rating, user.experience = rating, experience
                for user, printout in result.printout:
                    self._add(blocks, user, printout)
            self._send(blocks, None if answered else actor, after)

        def refused(failure: Failure) -> None:
            log_write_failed(failure, what, players=" ".join(self.names))
            line = text.GAME_NOT_SAVED if result is None else text.RESULT_NOT_SAVED
            for player in (0, 1):
                self._add(blocks, self.user(player), [line])
            self._send(blocks, actor, after)

        return self._durably(db, write, what, stored, refused)

    def _durably(self, db: Any, write: Callable[[bool], Deferred[Any]], what: str,
                 stored: Callable[[bool], None],
                 refused: Callable[[Failure], None]) -> Deferred[None]:
        """Make ``write``; ``stored`` sends its lines once it is stored, ``refused`` once
        it failed for good.  A failure for want of the database pauses the match and
        tries the same write again (see the module's docstring); while the match is
        paused, later writes wait for it, so none lands before an earlier one.  Every
        write holds the whole match, so one stored stores the earlier ones too: they are
        answered with it, in order, and not tried again.  The Deferred is the command's:
        it fires once the write is stored or refused, or once the match pauses (the
        players are told; their sessions go on)."""
        entry = _Write(write, what, stored, refused, Deferred())
        self._writes.append(entry)
        self.lobby.writing.add(self)
        self._unsaved += 1  # until settled (``_settle``)
        if not self.paused:
            self._attempt(db, entry, retry=False)
        return entry.answered

    def _attempt(self, db: Any, entry: _Write, retry: bool) -> None:
        if entry.done:  # a later write stored it meanwhile
            return
        entry.started = True
        entry.write(retry).addCallbacks(lambda _: self._stored(db, entry),
                                        lambda failure: self._failed(db, entry, failure))

    def _stored(self, db: Any, entry: _Write) -> None:
        if entry.done:
            return
        if self.paused:
            self.paused = False
            self._to_everyone(text.MATCH_GOES_ON)
        while self._writes:
            first = self._writes.popleft()
            first.done = True
            first.stored(first.answered.called)
            self._settle(first)
            if first is entry:
                break
        self._go_on(db)

    def _failed(self, db: Any, entry: _Write, failure: Failure) -> None:
        if entry.done:
            return
        if failure.check(*OUTAGES) is None or self.lobby.stopping:
            self._writes.remove(entry)
            entry.done = True
            entry.refused(failure)
            self._settle(entry)
            self._go_on(db)
            return
        log_write_failed(failure, entry.what, players=" ".join(self.names))
        self.wait_for_database()
        if not entry.answered.called:
            entry.answered.callback(None)
        if entry is not self._writes[0]:  # tried again once the first is stored
            entry.started = False
            return
        up = db.when_up()
        wait = 0.0
        if up.called:  # up, for the thread: this write itself still fails; back off
            wait, entry.retry_in = entry.retry_in, min(entry.retry_in * 2, RETRY_MAX)
        up.addCallback(lambda _: deferLater(self.lobby.clock, wait, self._attempt, db, entry,
                                            True))

    def _go_on(self, db: Any) -> None:
        """After a write is through: the writes that waited for it are made."""
        if not self._writes:
            self.lobby.writing.discard(self)
            return
        if not self.paused:
            for waiting in list(self._writes):
                if not waiting.started:
                    self._attempt(db, waiting, retry=False)

    def _settle(self, entry: _Write) -> None:
        """``entry`` is stored or refused: its command is answered, and once no write
        of the match is under way the commands that waited go on, in order."""
        if not entry.answered.called:
            entry.answered.callback(None)
        self._unsaved -= 1
        while self._waiting and self._unsaved == 0:
            self._waiting.popleft().callback(None)

    def wait_for_database(self) -> None:
        """A write of this match has no answer, or failed, for want of the database:
        pause it, tell its players and watchers once, and answer the commands that
        were waiting for it (``_in_order`` answers them that the match waits)."""
        if self.paused or not self._writes:
            return
        self.paused = True
        self._cancel_claim()  # nobody's silence counts while the match waits
        if self.clocks is not None:
            self.clocks.halt()
        self._to_everyone(text.MATCH_WAITS)
        waiting, self._waiting = self._waiting, deque()
        for waiter in waiting:
            waiter.callback(None)

    def _to_everyone(self, line: str) -> None:
        for player in (0, 1):
            user = self.user(player)
            if user is not None:
                user.session.notify(line)
        for user, _ in self.watchers():
            user.session.notify(line)

    @staticmethod
    def _add(blocks: Blocks, user: OnlineUser | None, lines: list[str]) -> None:
        if user is not None:
            blocks.setdefault(user, []).append(lines)

    def _send(self, blocks: Blocks, actor: OnlineUser | None,
              after: list[Callable[[], None]]) -> None:
        for user, user_blocks in blocks.items():
            lines: list[str] = []
            for number, block in enumerate(user_blocks):
                if user.session.is_clip and not (user is actor and number == 0):
                    lines.append("")
                lines.extend(block)
            if user is actor:
                user.session.send(*lines)
            else:
                user.session.notify(*lines)
        for call in after:
            call()
        self._arm_claim()
        if self.clocks is not None:
            self.clocks.turn()

    # -- writing ---------------------------------------------------------------------------

    @property
    def is_live(self) -> bool:
        """Whether the match is still being played (not finished, left or saved)."""
        return any(self.lobby.matches.get(name) is self for name in self.names)

    @property
    def unsaved(self) -> bool:
        """Whether a write of this match is under way (commands wait only while one is:
        ``_settle`` lets the waiting ones go in order as soon as none is)."""
        return self._unsaved > 0

    def when_saved(self) -> Deferred[None]:
        """Fires once every write queued for this match has been answered, and every
        command that waited before has run (one at a time: one that writes again makes
        the next wait for that write too)."""
        if not self.unsaved:
            return succeed(None)
        waiter: Deferred[None] = Deferred()
        self._waiting.append(waiter)
        return waiter

    def blocks_start(self, names: Sequence[str]) -> bool:
        """Whether this match, paused, keeps the pair ``names`` from a new start or a
        resume (its pending write would land over the new match's)."""
        return self.paused and set(names) == set(self.names)

    def _saved(self) -> SavedMatch:
        a, b = sorted(self.names)
        return SavedMatch(a, b, int(self.lobby.now()), self.to_record())

    # -- starting ------------------------------------------------------------------------

    def begin(self, inviter: OnlineUser, joiner: OnlineUser, *,
              resumed: bool) -> Deferred[None]:
        """The players have agreed: register the match, write it (a new match replaces
        the pair's saved one, between-games.md 1.1) and then send the start (or resume)
        lines; ``joiner`` typed the command."""
        for name in self.names:
            self.lobby.matches[name] = self
            self.lobby.invitations.pop(name, None)
        inviter.playing, joiner.playing = joiner.name, inviter.name
        inviter.parted = joiner.parted = None
        if resumed and self.fair is not None and not self.fair.used:
            # The fresh seed drawn when the match was left: the texts in force now are
            # mixed in, as at the start of a match (protocol/fair-dice.md 1.1, 1.2).
            texts = {inviter.name: inviter.dice_text, joiner.name: joiner.dice_text}
            self.fair = self.fair.with_texts((texts[self.names[0]], texts[self.names[1]]))
            self.dice = self.fair
        inviter.watching = joiner.watching = None  # a player watches no one (watching.py)
        db = self._db()
        if db is not None:  # whoever left this pair's match is back: nothing to count
            unattended(db.clear_departure(*self.names), "clear_departure")
        length = self.rules.length
        report = (text.report_resume if resumed else text.report_start)(
            inviter.name, joiner.name, length)
        _log.info("{players[0]} and {players[1]} {verb} a {length}-point match",
                  event="match_resume" if resumed else "match_start",
                  verb="resume" if resumed else "start", players=list(self.names),
                  length=length)

        def start() -> None:
            # A watcher with report on hears of the match before its first game line: the
            # live watcher of GammonBot_VII got the start line (fibs-session-2020.txt).
            for user, _ in self.watchers():
                if user.toggles["report"]:
                    self._block(user, [report])
            if resumed:
                self._block(joiner, [text.now_playing_resumed(inviter.name)])
                self._block(inviter, [text.has_joined_resumed(joiner.name)])
                self._resume_lines()
            else:
                self._block(joiner, [text.now_playing(inviter.name, length)])
                self._block(inviter, [text.has_joined(joiner.name, length)])
                self._start_game()
            self._after.append(announce)

        def announce() -> None:
            # Others see the two who-info updates first, then the report (between-games 2.3).
            self.lobby.broadcast_who(inviter)
            self.lobby.broadcast_who(joiner)
            self._report(report)

        return self._run(joiner, start)

    def _report(self, line: str) -> None:
        """``line`` to users with ``report`` on who neither play nor watch this match."""
        self.lobby.announce((user for user in self.lobby.reporting()
                             if user.name not in self.names
                             and user.watching not in self.names), line)

    def _start_game(self) -> None:
        for player in (0, 1):
            user = self.user(player)
            if user is not None:
                user.set_toggles(PER_GAME_TOGGLES)
        self.joined.clear()
        self._events(self.rules.new_game(self.dice))

    def _state_lines(self, user: OnlineUser) -> list[str]:
        """Where the match stands, as a resume shows it (game-play.md 8): whose turn,
        the length, both scores and ``user``'s board."""
        rules = self.rules
        player = self.index(user)
        act = rules.to_act if rules.to_act is not None else (rules.turn or 0)
        return [
            text.turn_line(self.names[act]),
            text.match_length_line(rules.length),
            text.points_for(self.names[player], rules.score[player]),
            text.points_for(self.names[1 - player], rules.score[1 - player]),
            *self.board_lines(user),
        ]

    def _resume_lines(self) -> None:
        rules = self.rules
        waiting = rules.waiting_for_new_game
        for player in (0, 1):
            user = self.user(player)
            if user is not None:
                self._block(user, self._state_lines(user))
        if waiting:
            self._start_game()
        elif rules.pending_double is not None:
            doubler = rules.pending_double.player
            self._append(self.user(1 - doubler), [text.doubles_to_you(self.names[doubler])])
        elif rules.pending_resignation is not None:
            offer = rules.pending_resignation
            self._append(self.user(1 - offer.player),
                         [text.resigns_to_you(self.names[offer.player], offer.points)])
        elif rules.phase is Phase.MOVE:
            assert rules.turn is not None
            self._append(self.user(rules.turn), [text.please_move(rules.playable(rules.turn))])
        else:
            self._turn_begins()

    def show_state(self, user: OnlineUser) -> None:
        """A player who logged in again from another connection: the new connection
        gets the match as a resume shows it, and the line that says what is expected of
        him now (nothing when it is his opponent's move)."""
        rules = self.rules
        player = self.index(user)
        lines = self._state_lines(user)
        offer = rules.pending_double
        resignation = rules.pending_resignation
        if rules.waiting_for_new_game:
            if player not in self.joined:
                lines.append(text.JOIN_NEXT_GAME)
        elif offer is not None:
            if offer.player != player:
                lines.append(text.doubles_to_you(self.names[offer.player]))
        elif resignation is not None:
            if resignation.player != player:
                lines.append(text.resigns_to_you(self.names[resignation.player],
                                                 resignation.points))
        elif rules.turn == player and rules.phase is Phase.MOVE:
            lines.append(text.please_move(rules.playable(player)))
        elif rules.turn == player and rules.phase is Phase.ROLL:
            lines.append(text.YOUR_TURN_TO_ROLL)
        user.session.notify_event(*lines)

    # -- actions (each raises the rules' error before anything is sent) --------------------

    def roll(self, user: OnlineUser) -> Deferred[None]:
        player = self.index(user)
        return self._run(user, lambda: self._roll(player))

    def move(self, user: OnlineUser, move_text: str) -> Deferred[None]:
        player = self.index(user)
        try:
            pairs = parse_fibs_pairs(move_text)
        except InvalidPlayText:
            self._check_state_to_move(player)
            raise
        own = to_mover_numbering(pairs, self.colour(player).direction)
        events = self.rules.move(player, own)
        return self._run(user, lambda: self._moved(player, events))

    def _check_state_to_move(self, player: int) -> None:
        """Raise the state error a move would get, whatever its text."""
        try:
            self.rules.move(player, [])
        except GameStateError:
            raise
        except RulesError:
            pass

    def double(self, user: OnlineUser) -> Deferred[None]:
        events = self.rules.double(self.index(user))
        return self._run(user, lambda: self._events(events))

    def redouble(self, user: OnlineUser) -> Deferred[None]:
        events = self.rules.redouble(self.index(user))
        return self._run(user, lambda: self._events(events))

    def accept(self, user: OnlineUser) -> Deferred[None]:
        events = self.rules.accept(self.index(user))
        return self._run(user, lambda: self._answered(events))

    def reject(self, user: OnlineUser) -> Deferred[None]:
        events = self.rules.reject(self.index(user))
        return self._run(user, lambda: self._answered(events))

    def resign(self, user: OnlineUser, kind: WinKind) -> Deferred[None]:
        events = self.rules.resign(self.index(user), kind)
        return self._run(user, lambda: self._events(events))

    def lose_on_time(self, player: int) -> Deferred[None]:
        """``player``'s reserve ran out (``fibsd.server.clocks``): he loses the match,
        or with ``clock.on_timeout = "game"`` the game at the cube's value."""
        return self._run(None, lambda: self._lost_on_time(player))

    def _lost_on_time(self, player: int) -> None:
        name = self.names[player]
        self._say(player, [clock_text.YOU_LOST_ON_TIME], [clock_text.lost_on_time(name)],
                  [clock_text.lost_on_time(name)])
        user = self.user(player) or self.user(1 - player)
        if user is not None and user.session.settings.clock.on_timeout == "game":
            events = forfeit_game(self.rules, player)
            if any(isinstance(e, MatchWon) for e in events):
                self.ended = "time"  # the game lost on time was the match's last
            self._events(events)
        else:
            self.ended = "time"
            self._match_won(MatchWon(1 - player, self.rules.score))

    def bear_off(self, user: OnlineUser) -> Deferred[None] | None:
        """The ``off`` command: a greedy bear-off now; None when none is possible."""
        player = self.index(user)
        play = self._greedy_play()
        if self.rules.turn != player or play is None:
            return None
        return self._run(user, lambda: self._auto_play(player, play, greedy=True))

    def join_next(self, user: OnlineUser) -> Deferred[None] | None:
        """``join`` between games; None when no game is waiting to start."""
        if not self.rules.waiting_for_new_game:
            return None
        player = self.index(user)
        self.joined.add(player)
        if len(self.joined) < 2:
            user.session.send(text.please_wait_join(self.names[1 - player]))
            self._arm_claim()
            return succeed(None)
        return self._run(user, self._start_game)

    # -- what follows an action ------------------------------------------------------------

    def _roll(self, player: int) -> None:
        if self._rolled_cannot_move(player):
            self._turn_begins()
        else:
            self._play_for(player)

    def _rolled_cannot_move(self, player: int) -> bool:
        events = self.rules.roll(player, self.dice)
        self._events(events)
        return any(isinstance(e, CannotMove) for e in events)

    def _play_for(self, player: int) -> None:
        """After a roll that can be played: greedy, automove, or ask for the move."""
        user = self.user(player)
        if user is None:
            return
        greedy = self._greedy_play() if user.toggles["greedy"] else None
        only = self.rules.only_play() if user.toggles["automove"] else None
        if greedy is not None:
            self._auto_play(player, greedy, greedy=True)
        elif only is not None:
            self._auto_play(player, only, greedy=False)
        else:
            self._append(user, [text.please_move(self.rules.playable(player))])

    def _greedy_play(self) -> Play | None:
        """A legal play that bears off with every die, if there is one."""
        for play in self.rules.legal_plays():
            if play.moves and all(move.dst == OFF_POINT for move in play.moves):
                return play
        return None

    def _auto_play(self, player: int, play: Play, *, greedy: bool) -> None:
        colour = self.colour(player)
        if greedy:
            line = text.bearing_off(self.absolute_point(player, m.src) for m in play.moves)
        else:
            line = text.only_possible_move(format_fibs_moves(play.moves, colour.direction))
        self._block(self.user(player), [line])
        self._moved(player, self.rules.auto_move(player, play))

    def _moved(self, player: int, events: Sequence[Event]) -> None:
        self._events(events)
        if not self.rules.game or not self.rules.game.over:
            self._turn_begins()

    def _answered(self, events: Sequence[Event]) -> None:
        self._events(events)
        if any(isinstance(e, DoubleAccepted) for e in events):
            self._turn_begins()  # the doubler rolls at once
        elif any(isinstance(e, ResignRejected) for e in events):
            # Play goes on where the offer stopped it: a player who was to roll is asked
            # again (or rolled for); one who was to move has his board and roll already.
            self._turn_begins()

    def _turn_begins(self) -> None:
        """The player on roll is asked to roll or double, or rolled for (game-play.md
        4.1: he cannot double, or does not want to be asked)."""
        rules = self.rules
        for _ in range(MAX_AUTOMATIC_ROLLS):
            if rules.game is None or rules.phase is not Phase.ROLL or rules.turn is None:
                return
            player = rules.turn
            user = self.user(player)
            if user is None:
                return
            if (rules.can_double(player) and user.toggles["double"]
                    and not self._needs_one_point(player)):
                self._append(user, [text.YOUR_TURN_TO_ROLL])
                return
            if not self._rolled_cannot_move(player):
                self._play_for(player)
                return
        # Both sides closed out for this long: stop rolling for them and ask instead.
        if rules.turn is not None:
            self._append(self.user(rules.turn), [text.YOUR_TURN_TO_ROLL])

    def _needs_one_point(self, player: int) -> bool:
        """A player one point from winning the match (the leader after the Crawford
        game): doubling cannot help him, so FIBS rolls for him (game-play.md 4.1; bots
        written against fibs.com wait for that roll)."""
        length = self.rules.length
        return length > 0 and self.rules.score[player] == length - 1

    # -- events to lines ---------------------------------------------------------------------

    def _events(self, events: Sequence[Event]) -> None:
        # The boards sent with the action that ends a game show the score before it
        # (``board_view``): the points follow in ``wins the game``.
        self._ending_game = any(isinstance(e, GameWon) for e in events)
        try:
            for event in events:
                self._event(event, events)
        finally:
            self._ending_game = False

    def _event(self, event: Event, events: Sequence[Event]) -> None:  # noqa: C901
        names = self.names
        if isinstance(event, GameStarted):
            self._say(0, [text.starting_new_game(names[1])], [text.starting_new_game(names[0])],
                      lambda w: [text.starting_new_game(names[1 - w])])
        elif isinstance(event, OpeningRoll):
            self._opening(event)
        elif isinstance(event, CubeAutoDoubled):
            line = [text.cube_now(event.value)]
            self._say(0, line, line, line)
        elif isinstance(event, Rolled):
            self._rolled(event, events)
        elif isinstance(event, CannotMove):
            p = event.player
            self._append(self.user(p), [text.YOU_CANT_MOVE])
            self._block(self.user(1 - p), [text.cant_move(names[p])])
            for user, _ in self.watchers():
                self._block(user, [text.cant_move(names[p])])
        elif isinstance(event, Moved):
            self._moved_lines(event)
        elif isinstance(event, (Doubled, Redoubled)):
            # An instant redouble is offered in a double's words (protocol/play.md).
            p = event.player
            self._say(p, [text.you_double(names[1 - p])], [text.doubles_to_you(names[p])],
                      [text.doubles(names[p])])
        elif isinstance(event, DoubleAccepted):
            p = event.player
            self._say(p, [text.you_accept_double(event.value)],
                      [text.accepts_double_cube(names[p], event.value)],
                      [text.accepts_double(names[p])])
        elif isinstance(event, DoubleRejected):
            p = event.player
            won = next(e for e in events if isinstance(e, GameWon))
            self._say(p, [text.you_give_up(names[1 - p], won.points)],
                      [text.gives_up_you_win(names[p], won.points)],
                      [text.gives_up(names[p], names[1 - p], won.points)])
        elif isinstance(event, ResignOffered):
            p = event.player
            self._say(p, [text.you_resign(names[1 - p], event.points)],
                      [text.resigns_to_you(names[p], event.points)],
                      [text.resigns(names[p], names[1 - p], event.points)])
        elif isinstance(event, ResignAccepted):
            p = event.player
            self._say(p, [text.you_accept_and_win(event.points)],
                      [text.accepts_and_wins(names[p], event.points)],
                      [text.accepts_and_wins(names[p], event.points)])
        elif isinstance(event, ResignRejected):
            p = event.player
            self._say(p, [text.YOU_REJECT], [text.rejects(names[p])], [text.rejects(names[p])])
        elif isinstance(event, GameWon):
            self._game_won(event, events)
        elif isinstance(event, MatchWon):
            self._match_won(event)

    def _opening(self, event: OpeningRoll) -> None:
        names, dice = self.names, event.dice
        x = 0 if self.colour(0) is Colour.X else 1
        self._say(0, [text.opening_roll("You", dice[0], names[1], dice[1])],
                  [text.opening_roll("You", dice[1], names[0], dice[0])],
                  [text.opening_roll(names[x], dice[x], names[1 - x], dice[1 - x])])
        winner = event.winner
        if winner is None:
            return
        first = text.makes_first_move(names[winner])
        for player, line in ((winner, text.YOUR_TURN_TO_MOVE), (1 - winner, first)):
            user = self.user(player)
            if user is not None:
                self._block(user, [line, *self.board_lines(user)])
        for user, _ in self.watchers():
            self._block(user, [first, *self.board_lines(user)])

    def _rolled(self, event: Rolled, events: Sequence[Event]) -> None:
        p, dice = event.player, event.dice
        rolled = (p, dice) if event.playable == 0 else None
        roller = self.user(p)
        if roller is not None:
            roller.rolls_seen[6 * (dice[0] - 1) + dice[1] - 1] += 1
        mine = [text.you_roll(dice)]
        if roller is not None and roller.toggles["moreboards"]:
            mine += self.board_lines(roller, rolled=rolled)
        self._block(roller, mine)
        other = self.user(1 - p)
        self._block(other, [text.player_rolls(self.names[p], dice)])
        if other is not None and other.toggles["moreboards"]:
            self._block(other, self.board_lines(other, rolled=rolled))
        for user, _ in self.watchers():
            self._block(user, [text.player_rolls(self.names[p], dice)])
            if user.toggles["moreboards"]:
                self._block(user, self.board_lines(user, rolled=rolled))

    def _moved_lines(self, event: Moved) -> None:
        p = event.player
        moves = format_fibs_moves(event.play.moves, self.colour(p).direction)
        line = text.player_moves(self.names[p], moves)
        mover = self.user(p)
        if mover is not None:
            if not mover.toggles["autoboard"]:
                if not event.automatic:
                    self._block(mover, [text.DONE])
            elif event.automatic:
                self._append(mover, self.board_lines(mover))
            else:
                self._block(mover, self.board_lines(mover))
        for user in [self.user(1 - p), *(u for u, _ in self.watchers())]:
            if user is not None:
                board = self.board_lines(user) if user.toggles["autoboard"] else []
                self._block(user, [line, *board])

    def _game_won(self, event: GameWon, events: Sequence[Event]) -> None:
        w, n = event.winner, event.points
        names = self.names
        if event.reason is EndReason.BORNE_OFF:
            self._append(self.user(w), [text.you_win_game(n)])
            self._append(self.user(1 - w), [text.wins_game(names[w], n, sorry=True)])
            for user, _ in self.watchers():
                self._append(user, [text.wins_game(names[w], n, sorry=False)])
        listing: list[str] | None = None
        for player in (0, 1):
            user = self.user(player)
            if user is not None and user.toggles["moves"]:
                listing = listing or self._moves_listing()
                self._block(user, listing)
        if any(isinstance(e, MatchWon) for e in events):
            return
        length, score = self.rules.length, self.rules.score
        for player in (0, 1):
            self._block(self.user(player), [
                text.score_line(length, (names[player], score[player]),
                                (names[1 - player], score[1 - player])),
                text.JOIN_NEXT_GAME,
            ])
        for user, watched in self.watchers():
            self._block(user, [text.score_line(length, (names[watched], score[watched]),
                                               (names[1 - watched], score[1 - watched]))])

    def _moves_listing(self) -> list[str]:
        """The game just finished, as ``toggle moves`` lists it: the same listing as
        ``oldmoves`` (game-play.md 7.5)."""
        game = self.rules.game
        assert game is not None
        x_player = 0 if self.colour(0) is Colour.X else 1
        return listings_text.format_moves_list(game.history, self.names, x_player,
                                               self.score_before_game(), self.rules.length)

    def score_before_game(self) -> tuple[int, int]:
        """The points won before the current game (the one just finished, if it is
        over).  The rules count a game's points the moment it ends; the boards sent with
        the game-ending action and the moves listing do not (board.md section 3.1: GNU
        Gibbon adds the points of ``wins the game`` to the score of the board before)."""
        score = list(self.rules.score)
        game = self.rules.game
        if game is not None and game.result is not None:
            score[game.result.winner] -= game.result.points
        return (score[0], score[1])

    def _match_won(self, event: MatchWon) -> None:
        w, score = event.winner, event.score
        names, length = self.names, self.rules.length
        final = (score[w], score[1 - w])
        others = text.wins_match(names[w], length, final)
        self._say(w, [text.you_win_match(length, final)], [others], [others])
        winner, loser = self.user(w), self.user(1 - w)
        change = None
        printout: list[tuple[OnlineUser, list[str]]] = []
        after: list[tuple[OnlineUser, float, int]] = []
        if length and winner is not None and loser is not None:
            change = rate_match(winner.rating, winner.experience, loser.rating,
                                loser.experience, length)
            lines = format_rating_calculation(change, names[w], names[1 - w])
            printout = [(user, lines) for user in (winner, loser) if user.toggles["ratings"]]
            after = [(winner, change.new_winner_rating, change.new_winner_experience),
                     (loser, change.new_loser_rating, change.new_loser_experience)]
        if self.fair is not None:
            for user in (winner, loser):
                if user is not None and user.session.settings.fair.announce_seed:
                    self._block(user, [fair_text.seed_revealed(self.fair.server_seed)])
        self._close()
        _log.info("{winner} wins a {length}-point match against {loser} {score[0]}-{score[1]}",
                  event="match_end", winner=names[w], loser=names[1 - w], length=length,
                  score=list(final))
        finished = FinishedMatch(
            winner=names[w], loser=names[1 - w], length=length, winner_points=final[0],
            loser_points=final[1], finished=int(self.lobby.now()), record=self.to_record(),
            winner_rating_change=change.winner_change if change else 0.0,
            loser_rating_change=change.loser_change if change else 0.0,
            tournament=self.tournament[0] if self.tournament else None,
            tournament_round=self.tournament[1] if self.tournament else None,
        )
        new_ratings = None
        if change is not None:
            new_ratings = {names[w]: (change.new_winner_rating, change.new_winner_experience),
                           names[1 - w]: (change.new_loser_rating,
                                          change.new_loser_experience)}
        self._result = _Result(finished, new_ratings, printout, after)

        def announce() -> None:
            self._report(text.report_result(names[w], length, names[1 - w], final))
            for user in (winner, loser):
                if user is not None:
                    self.lobby.broadcast_who(user)
            for hook in self.lobby.result_hooks:
                hook(finished)

        self._after.append(announce)

    # -- ending without a winner --------------------------------------------------------------

    def suspend(self, leaver: OnlineUser, *, departure: str | None = None) -> Deferred[None]:
        """Save the match because ``leaver`` typed ``leave`` (``departure`` None) or left
        the server (``departure`` = the logout notice).  The lines saying so are sent
        once the write has committed (or say that it failed); returns that Deferred."""
        player = self.index(leaver)
        db = self._db(leaver)
        counts_now = self._count_drop(player, dropped=departure is not None)
        revealed = self._reseed()
        if self.clocks is not None:
            self.clocks.halt()  # the saved match keeps its clocks as they are now
        saved = self._saved()
        self._close()
        staying = self.user(1 - player)
        if staying is not None:
            staying.parted = (self, None)

        def tell(stored: bool) -> None:
            if stored:
                _log.info("match of {players[0]} and {players[1]} saved: {leaver} left",
                          event="match_save", players=list(self.names), leaver=leaver.name)
                if db is not None:  # a departure from a match that can be resumed
                    self._departed(db, leaver.session.settings.fair, player, counts_now)
            other = self.user(1 - player)
            if other is not None and other is staying:
                other.parted = (self, self.lobby.now())
            if departure is None:
                leaver.session.send(text.YOU_TERMINATED if stored else text.YOU_TERMINATED_UNSAVED,
                                    *self._seed_lines(leaver, revealed))
                if other is not None:
                    other.session.notify(text.player_left(leaver.name) if stored
                                         else text.player_left_unsaved(leaver.name),
                                         *self._seed_lines(other, revealed))
            else:
                line = text.game_saved(departure) if stored else text.game_unsaved(departure)
                if other is not None:
                    other.session.notify(line, *self._seed_lines(other, revealed))
                for user, _ in self.watchers():
                    user.session.notify_event(line)
            if departure is None:
                self.lobby.broadcast_who(leaver)
            if other is not None:
                self.lobby.broadcast_who(other)
            if departure is None:
                line = text.report_left(leaver.name, self.names[1 - player])
                for user in self.lobby.users():
                    if user.name in self.names:
                        continue
                    if user.toggles["report"] or user.watching in self.names:
                        user.session.notify_event(line)

        def failed(failure: Failure) -> None:
            log_write_failed(failure, "save_match", players=" ".join(self.names))
            tell(False)

        if db is None:
            tell(True)
            return succeed(None)
        return self._durably(db, lambda retry: db.save_match(saved), "save_match",
                             lambda answered: tell(True), failed)

    def _reseed(self) -> bytes | None:
        """The match is being left or saved: reveal the seed of its rolls so far, and
        go on (when resumed) under a fresh one whose commitment the resume invitation
        shows (protocol/fair-dice.md 1.2).  Returns the seed to reveal, None when no
        roll was made under it (or the dice are scripted)."""
        if self.fair is None or not self.fair.used:
            return None
        revealed = self.fair.server_seed
        self.fair = self.fair.fresh(self.lobby.draw_seed())
        self.dice = self.fair
        return revealed

    @staticmethod
    def _seed_lines(user: OnlineUser, revealed: bytes | None) -> list[str]:
        if revealed is None or not user.session.settings.fair.announce_seed:
            return []
        return [fair_text.seed_revealed(revealed)]

    def _close(self) -> None:
        self._cancel_claim()
        for name in self.names:
            if self.lobby.matches.get(name) is self:
                del self.lobby.matches[name]
            user = self.lobby.find(name)
            if user is not None:
                user.playing = None

    def _db(self, fallback: OnlineUser | None = None) -> Any:
        for user in (self.user(0), self.user(1), fallback):
            if user is not None:
                return user.session.db
        return None

    # -- droppers and stallers (protocol/fair-dice.md) -------------------------------------

    def _count_drop(self, player: int, *, dropped: bool) -> bool:
        """Note a departure; True when it is the second drop in a row in this game on
        the dropper's own turn while behind in the race (it counts at once)."""
        if self.lobby.stopping:
            return False  # a shutdown is nobody's drop
        rules = self.rules
        own, theirs = self.pips(player)
        if not dropped or rules.to_act != player or own <= theirs:
            self.own_turn_drops = None
            return False
        last = self.own_turn_drops
        count = last[2] + 1 if last is not None and last[:2] == (rules.number, player) else 1
        self.own_turn_drops = (rules.number, player, count)
        return count >= 2

    def _departed(self, db: Any, fair: FairPlay, dropper: int, counts_now: bool) -> None:
        """Remember who left the saved match, for the abandonment count (not when the
        server saves it because it is shutting down)."""
        if fair.abandon_days > 0 and not self.lobby.stopping:
            a, b = sorted(self.names)
            departure = Departure(a, b, self.names[dropper], int(self.lobby.now()),
                                  counts_now=counts_now)
            unattended(db.record_departure(departure), "record_departure")

    def silent_player(self) -> int | None:
        """The player everyone waits for: the one to act, or between games the one who
        has not typed ``join`` while the other has."""
        if self.rules.waiting_for_new_game:
            return 1 - next(iter(self.joined)) if len(self.joined) == 1 else None
        return self.rules.to_act

    def _fair_settings(self) -> FairPlay | None:
        for player in (0, 1):
            user = self.user(player)
            if user is not None:
                return user.session.settings.fair
        return None

    def _cancel_claim(self) -> None:
        """Nobody's silence counts (the match waits for the database, or is over)."""
        self._silence = None
        if self._claim_timer is not None:
            self._claim_timer.cancel()
            self._claim_timer = None

    def _arm_claim(self) -> None:
        """Something happened: the silence starts again, for whoever acts now.  Only the
        silence is noted: the match's one timer (``_claim_due``) is left as it is when it
        is armed no later than this silence's warning, so an action costs no timer work;
        it looks, when it fires, at the silence of that moment."""
        self.silent_since = now = self.lobby.now()
        fair = self._fair_settings()
        silent = self.silent_player()
        if (fair is None or not fair.claim_after or silent is None
                or self.lobby.matches.get(self.names[0]) is not self):
            self._cancel_claim()
            return
        warn = max(fair.claim_after - CLAIM_WARNING, 0)
        self._silence = (silent, warn, fair.claim_after)
        self._warned = False
        timer = self._claim_timer
        if timer is not None:
            if timer.getTime() <= now + warn:
                return
            timer.cancel()  # claim_after became shorter
        self._claim_timer = self.lobby.clock.callLater(warn, self._claim_due)

    def _claim_due(self) -> None:
        """The claim timer: what the current silence made due is sent, each line once
        (the warning to the silent player ``claim_after - CLAIM_WARNING`` seconds after
        it began, the claim to his opponent ``claim_after`` seconds after), and the
        timer is armed again for what is still to come."""
        self._claim_timer = None
        silence = self._silence
        if silence is None:  # never armed without one; ``_cancel_claim`` cancels it
            return
        silent, warn, after = silence
        now = self.lobby.now()
        if not self._warned and self.silent_since + warn <= now:
            self._warned = True
            self._tell(silent, fair_text.claim_warning(self.names[1 - silent]))
            if self._silence is not silence:  # what the line set off ended the silence
                return
        due = self.silent_since + after
        if due <= now:
            self._silence = None
            self._tell(1 - silent, fair_text.claimable(self.names[silent]))
            return
        if not self._warned:
            due = self.silent_since + warn
        self._claim_timer = self.lobby.clock.callLater(due - now, self._claim_due)

    def _tell(self, player: int, line: str) -> None:
        user = self.user(player)
        if user is not None:
            user.session.notify(line)

    def claim(self, claimant: OnlineUser) -> Deferred[None]:
        """``claimant``'s opponent stayed silent too long: save the match as abandoned
        by him.  As any write of the match, the lines saying so are sent once it is
        stored (``_durably``); the Deferred is the command's."""
        silent = 1 - self.index(claimant)
        db = self._db(claimant)
        fair = claimant.session.settings.fair
        a, b = sorted(self.names)
        self.own_turn_drops = None
        revealed = self._reseed()
        if self.clocks is not None:
            self.clocks.halt()
        saved = SavedMatch(a, b, int(self.lobby.now()), self.to_record())
        self._close()

        def tell(answered: bool) -> None:
            self._departed(db, fair, silent, False)
            (claimant.session.notify if answered else claimant.session.send)(
                fair_text.you_claimed(self.names[silent]), *self._seed_lines(claimant, revealed))
            silent_user = self.user(silent)
            if silent_user is not None:
                silent_user.session.notify(fair_text.claimed_from_you(claimant.name),
                                           *self._seed_lines(silent_user, revealed))
                self.lobby.broadcast_who(silent_user)
            self.lobby.broadcast_who(claimant)
            line = text.report_left(self.names[silent], claimant.name)
            for user in self.lobby.users():
                if user.name not in self.names and (user.toggles["report"]
                                                    or user.watching in self.names):
                    user.session.notify_event(line)

        def refused(failure: Failure) -> None:
            log_write_failed(failure, "save_match", players=" ".join(self.names))
            tell(False)

        return self._durably(db, lambda retry: db.save_match(saved), "save_match", tell,
                             refused)
