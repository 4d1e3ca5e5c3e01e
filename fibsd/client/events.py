"""One frozen value per kind of line a FIBS server sends, as a client sees it.

Naming follows the server's wording.  Where a line exists in a first-person and
a third-person form (``You roll 6 and 4.`` / ``bob rolls 6 and 4.``) one class
covers both and the ``player`` field holds the literal ``"You"`` (``YOU``) for
the first person, exactly as field 1 of the recipient's own ``board:`` line
does.  That is only unambiguous while no account is called ``You``; a server
should refuse that name.

Telnet-mode forms of the same news (``bob tells: hi``, ``bob logs in.``) give
the same events as their CLIP lines, so a client is not tied to the mode.

Match lengths are ``int | None`` wherever the server can say ``unlimited``:
``None`` means an unlimited match.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fibsd.rules.notation import format_fibs_moves
from fibsd.rules.play import Move
from fibsd.rules.position import BAR, Position

YOU = "You"
UNLIMITED_LENGTH = 9999  # the match length a board line carries for "unlimited"


class Event:
    """Base of every event; lets handlers and ``wait_for`` accept any of them."""

    __slots__ = ()


# -- framing: empty lines, prompts, free text before login, unknown lines ---------


@dataclass(frozen=True)
class Empty(Event):
    """An empty line; FIBS puts them around asynchronous notices in client mode."""


@dataclass(frozen=True)
class Prompt(Event):
    """A prompt sent without a line end: ``login: ``, ``> ``, the password ones."""

    text: str


@dataclass(frozen=True)
class Banner(Event):
    """Free text before login (logo, rules, date line, guest instructions)."""

    text: str


@dataclass(frozen=True)
class Farewell(Event):
    """Free text after ``Goodbye.``, before the server closes the connection."""

    text: str


@dataclass(frozen=True)
class Unknown(Event):
    """A line no rule recognises; the protocol logs and counts these."""

    line: str


# -- login, registration, CLIP 1-4 -----------------------------------------------


@dataclass(frozen=True)
class Welcome(Event):
    """CLIP 1: the login succeeded."""

    name: str
    last_login: int
    last_host: str


@dataclass(frozen=True)
class OwnInfo(Event):
    """CLIP 2: the user's toggles, rating and experience at login."""

    name: str
    allowpip: bool
    autoboard: bool
    autodouble: bool
    automove: bool
    away: bool
    bell: bool
    crawford: bool
    double: bool
    experience: int
    greedy: bool
    moreboards: bool
    moves: bool
    notify: bool
    rating: float
    ratings: bool
    ready: bool
    redoubles: int | None  # None for "unlimited"; 0 for "none"
    report: bool
    silent: bool
    timezone: str


@dataclass(frozen=True)
class MotdStart(Event):
    """CLIP 3."""


@dataclass(frozen=True)
class MotdLine(Event):
    """A line of the message of the day, between CLIP 3 and 4."""

    text: str


@dataclass(frozen=True)
class MotdEnd(Event):
    """CLIP 4."""


@dataclass(frozen=True)
class UserAuthenticated(Event):
    """``** User <name> authenticated.`` - a telnet-mode login succeeded."""

    name: str


@dataclass(frozen=True)
class LastLogin(Event):
    """``** Last login: <text>`` (telnet login)."""

    text: str


@dataclass(frozen=True)
class AlreadyLoggedIn(Event):
    """``** Warning: You are already logged in.``"""


@dataclass(frozen=True)
class GuestWelcome(Event):
    """``Welcome to FIBS. You just logged in as guest.``"""

    server: str


@dataclass(frozen=True)
class OneUsername(Event):
    """``ONE USERNAME PER PERSON ONLY!!!`` - the end of the guest instructions."""


@dataclass(frozen=True)
class NameAccepted(Event):
    """``Your name will be <name>``: the server now asks for the password."""

    name: str


@dataclass(frozen=True)
class NameTaken(Event):
    """``** Please use another name. '<name>' is already used by someone else.``"""

    name: str


@dataclass(frozen=True)
class PasswordRefused(Event):
    """A password the registration dialogue refused (too short, contains ':')."""

    text: str


@dataclass(frozen=True)
class Registered(Event):
    """``You are registered.``"""


@dataclass(frozen=True)
class MessagesForYou(Event):
    """``There are messages for you:`` - CLIP 9 lines follow."""


# -- CLIP 5-20 -------------------------------------------------------------------


@dataclass(frozen=True)
class WhoInfo(Event):
    """CLIP 5; ``-`` fields are ``None``."""

    name: str
    opponent: str | None
    watching: str | None
    ready: bool
    away: bool
    rating: float
    experience: int
    idle: int
    login: int
    hostname: str
    client: str | None
    email: str | None


@dataclass(frozen=True)
class WhoEnd(Event):
    """CLIP 6."""


@dataclass(frozen=True)
class LoginNotice(Event):
    """CLIP 7: ``text`` is the sentence, e.g. ``HALIS logs in.``"""

    name: str
    text: str


@dataclass(frozen=True)
class LogoutNotice(Event):
    """CLIP 8: ``text`` is the sentence, e.g. ``Barger drops connection.``"""

    name: str
    text: str


@dataclass(frozen=True)
class Message(Event):
    """CLIP 9: a stored or immediate personal message (telnet form ``Message from ...``: no time)."""

    sender: str
    time: int | None
    text: str


@dataclass(frozen=True)
class MessageDelivered(Event):
    """CLIP 10."""

    recipient: str


@dataclass(frozen=True)
class MessageSaved(Event):
    """CLIP 11."""

    recipient: str


@dataclass(frozen=True)
class Says(Event):
    """CLIP 12: a tell to you, or your opponent's say."""

    sender: str
    text: str


@dataclass(frozen=True)
class Shouts(Event):
    """CLIP 13."""

    sender: str
    text: str


@dataclass(frozen=True)
class Whispers(Event):
    """CLIP 14."""

    sender: str
    text: str


@dataclass(frozen=True)
class Kibitzes(Event):
    """CLIP 15."""

    sender: str
    text: str


@dataclass(frozen=True)
class YouSay(Event):
    """CLIP 16: the echo of your tell or say."""

    recipient: str
    text: str


@dataclass(frozen=True)
class YouShout(Event):
    """CLIP 17."""

    text: str


@dataclass(frozen=True)
class YouWhisper(Event):
    """CLIP 18."""

    text: str


@dataclass(frozen=True)
class YouKibitz(Event):
    """CLIP 19."""

    text: str


@dataclass(frozen=True)
class Alert(Event):
    """CLIP 20: an administrator's alert."""

    sender: str
    text: str


# -- the board line --------------------------------------------------------------


@dataclass(frozen=True)
class Board(Event):
    """The 53 fields of a ``board:`` line.

    ``points`` holds the 26 values b0..b25 in absolute coordinates: positive
    counts are O (colour 1, moving 24 -> 1, bar at 25), negative counts X
    (colour -1, moving 1 -> 24, bar at 0).  "player" is field 1 (``You`` or the
    watched player), "opponent" field 2.
    """

    player: str
    opponent: str
    match_length: int
    player_score: int
    opponent_score: int
    points: tuple[int, ...]
    turn: int
    player_dice: tuple[int, int]
    opponent_dice: tuple[int, int]
    cube: int
    player_may_double: bool
    opponent_may_double: bool
    was_doubled: bool
    colour: int
    direction: int
    home: int
    bar: int
    player_home: int
    opponent_home: int
    player_bar: int
    opponent_bar: int
    can_move: int
    forced_move: int
    did_crawford: bool
    redoubles: int

    @property
    def is_unlimited(self) -> bool:
        return self.match_length == UNLIMITED_LENGTH

    @property
    def is_watching(self) -> bool:
        return self.player != YOU

    @property
    def is_game_over(self) -> bool:
        return self.turn == 0

    @property
    def is_players_turn(self) -> bool:
        """Whether the server waits for P1 (to roll, move, or answer)."""
        return self.turn == self.colour

    def absolute_point(self, own_point: int) -> int:
        """P1's point in P1's own numbering (1 = deepest home point) as FIBS numbers it."""
        return own_point if self.direction == -1 else 25 - own_point

    def move_text(self, move: Move) -> str:
        """P1's move in P1's own numbering (``fibsd.rules.play.Move``: 25 = bar, 0 = off) as FIBS
        writes it: ``bar-22`` for O entering with a 3, ``bar-3`` for X, ``5-off`` / ``20-off``."""
        return format_fibs_moves((move,), self.direction)

    def move_command(self, moves: Iterable[Move]) -> str:
        """The ``move`` command for a play, e.g. ``move 8-5 6-5``."""
        return " ".join(["move", *(self.move_text(move) for move in moves)])

    def position(self) -> Position:
        """The game from P1's view: each side in its own numbering, index 24 the bar."""
        return Position(self._side(self.colour, self.direction), self._side(-self.colour, -self.direction))

    def _side(self, colour: int, direction: int) -> tuple[int, ...]:
        counts = [0] * 25
        for own in range(1, 25):
            value = self.points[own if direction == -1 else 25 - own]
            if value * colour > 0:
                counts[own - 1] = abs(value)
        counts[BAR] = abs(self.points[25 if colour == 1 else 0])
        return tuple(counts)


# -- game play -------------------------------------------------------------------


@dataclass(frozen=True)
class StartingNewGame(Event):
    """``Starting a new game with <opponent>.``"""

    opponent: str


@dataclass(frozen=True)
class OpeningRoll(Event):
    """``You rolled 5, bob rolled 3`` (players) / ``alice rolled 3, bob rolled 5`` (watchers: X first)."""

    first: str
    first_die: int
    second: str
    second_die: int


@dataclass(frozen=True)
class YourTurnToMove(Event):
    """``It's your turn to move.`` - you won the opening roll."""


@dataclass(frozen=True)
class MakesFirstMove(Event):
    """``<name> makes the first move.``"""

    player: str


@dataclass(frozen=True)
class RollOrDouble(Event):
    """``It's your turn to roll or double.`` (and the older variant)."""


@dataclass(frozen=True)
class Rolls(Event):
    """``You roll 6 and 4.`` / ``bob rolls 6 and 4.``; dice in rolled order."""

    player: str
    die1: int
    die2: int


@dataclass(frozen=True)
class PleaseMove(Event):
    """``Please move 2 pieces.``"""

    count: int


@dataclass(frozen=True)
class CantMove(Event):
    """``You can't move.`` / ``bob can't move.``"""

    player: str


@dataclass(frozen=True)
class Moves(Event):
    """``<name> moves 13-7 bar-22 6-off .``: pairs as written, absolute points or ``bar``/``off``."""

    player: str
    moves: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class OnlyPossibleMove(Event):
    """``The only possible move is 8-2 6-2 .`` - the server moved for you (automove)."""

    moves: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class BearingOff(Event):
    """``Bearing off: 6 o 4 o`` - the server bore off for you (greedy)."""

    points: tuple[int, ...]


@dataclass(frozen=True)
class PipCounts(Event):
    """``Your pip count is 142. bob's pip count is 127.`` (player ``You``) or a watcher's form."""

    player: str
    player_pips: int
    opponent: str
    opponent_pips: int


@dataclass(frozen=True)
class Done(Event):
    """``Done.`` - your move was taken (autoboard off)."""


@dataclass(frozen=True)
class Doubles(Event):
    """``bob doubles.`` (watchers) / ``bob doubles. Type 'accept' or 'reject'.`` (you must answer).

    An instant redouble of an unlimited match reads the same: it comes while your own
    double waits for its answer.
    """

    player: str
    must_answer: bool


@dataclass(frozen=True)
class YouDouble(Event):
    """``You double. Please wait for <opponent> to accept or reject.`` (an instant redouble
    too)."""

    opponent: str


@dataclass(frozen=True)
class AcceptsDouble(Event):
    """``You accept the double. The cube shows 2.`` / ``bob accepts the double[. The cube shows 2].``"""

    player: str
    cube: int | None


@dataclass(frozen=True)
class GivesUp(Event):
    """A dropped double: ``You give up. alice wins 1 point.`` / ``bob gives up. You win 2 points.``"""

    player: str
    winner: str
    points: int


@dataclass(frozen=True)
class DoublingCubeNow(Event):
    """``The number on the doubling cube is now 2`` (automatic double)."""

    value: int


@dataclass(frozen=True)
class ResignOffer(Event):
    """``You want to resign. bob will win 2 points.`` / ``alice wants to resign. You will win ...``."""

    player: str
    winner: str
    points: int
    must_answer: bool


@dataclass(frozen=True)
class AcceptsResignation(Event):
    """``You accept and win 2 points.`` / ``bob accepts and wins 2 points.``"""

    player: str
    points: int


@dataclass(frozen=True)
class RejectsResignation(Event):
    """``You reject. The game continues.`` / ``bob rejects. The game continues.``"""

    player: str


@dataclass(frozen=True)
class GameWon(Event):
    """``You win the game and get 1 point. Congratulations!`` /
    ``alice wins the game and gets 2 points[. Sorry].``"""

    player: str
    points: int


@dataclass(frozen=True)
class Score(Event):
    """``score in 5 point match: alice-1 bob-0`` (own or watched player first)."""

    match_length: int | None
    player: str
    player_score: int
    opponent: str
    opponent_score: int


@dataclass(frozen=True)
class JoinNextGame(Event):
    """``Type 'join' if you want to play the next game, type 'leave' if you don't.``"""


@dataclass(frozen=True)
class WaitForJoin(Event):
    """``** Please wait for <opponent> to join too.``"""

    opponent: str


@dataclass(frozen=True)
class MatchWon(Event):
    """``You win the 5 point match 5-3 .`` / ``alice wins the 5 point match 5-3 .``"""

    player: str
    match_length: int
    winner_score: int
    loser_score: int


@dataclass(frozen=True)
class ResumeTurn(Event):
    """``turn: <name>.`` - first line after a saved match is loaded."""

    player: str


@dataclass(frozen=True)
class ResumeMatchLength(Event):
    """``match length: 5`` (or ``unlimited``) after a resume."""

    match_length: int | None


@dataclass(frozen=True)
class ResumePoints(Event):
    """``points for <name>: <n>`` after a resume."""

    player: str
    points: int


@dataclass(frozen=True)
class MovesListScore(Event):
    """``Score is 0-0 in a 5 point match.`` - start of a game's move list."""

    player_score: int
    opponent_score: int
    match_length: int | None


@dataclass(frozen=True)
class MovesListPlayers(Event):
    """``bob is X - alice is O.``"""

    x_player: str
    o_player: str


@dataclass(frozen=True)
class MovesListEntry(Event):
    """``X: (6 2) 1-7 12-14``, ``O: doubles`` ... - one action of the move list."""

    colour: str
    text: str


# -- invitations, match start and end, leaving -----------------------------------


@dataclass(frozen=True)
class Invitation(Event):
    """``<inviter> wants to play a 5 point match with you.`` (length None: unlimited)."""

    inviter: str
    match_length: int | None


@dataclass(frozen=True)
class ResumeInvitation(Event):
    """``<inviter> wants to resume a saved match with you.``"""

    inviter: str


@dataclass(frozen=True)
class TypeJoin(Event):
    """``Type 'join <inviter>' to accept.``"""

    inviter: str


@dataclass(frozen=True)
class SavedMatchWarning(Event):
    """``[** ]WARNING: Don't accept if you want to continue the saved ... match!``"""

    text: str


@dataclass(frozen=True)
class YouInvited(Event):
    """``** You invited <name> to a 5 point match.`` (length None: unlimited)."""

    invitee: str
    match_length: int | None


@dataclass(frozen=True)
class YouInvitedResume(Event):
    """``** You invited <name> to resume a saved match.``"""

    invitee: str


@dataclass(frozen=True)
class NewMatch(Event):
    """A new match of yours begins: you joined (``** You are now playing ...``) or were joined."""

    opponent: str
    match_length: int | None
    you_joined: bool


@dataclass(frozen=True)
class MatchResumed(Event):
    """``You are now playing with X. Your running match was loaded.`` / ``X has joined you. ...``"""

    opponent: str
    you_joined: bool


@dataclass(frozen=True)
class MatchStartReport(Event):
    """``A and B start a 5 point match.`` (report toggle)."""

    player1: str
    player2: str
    match_length: int | None


@dataclass(frozen=True)
class MatchResumeReport(Event):
    """``A and B are resuming their 13-point match.``"""

    player1: str
    player2: str
    match_length: int | None


@dataclass(frozen=True)
class MatchResult(Event):
    """``A wins a 5 point match against B  5-3 .`` (report toggle)."""

    winner: str
    loser: str
    match_length: int
    winner_score: int
    loser_score: int


@dataclass(frozen=True)
class LeftGameReport(Event):
    """``A has left the game with B.``"""

    player: str
    opponent: str


@dataclass(frozen=True)
class YouTerminated(Event):
    """``** You terminated the game. The game was saved.``"""


@dataclass(frozen=True)
class OpponentLeft(Event):
    """``** Player <name> has left the game. The game was saved.``"""

    player: str


@dataclass(frozen=True)
class GameSaved(Event):
    """The opponent's connection ended: ``<name> drops connection. The game was saved.`` etc."""

    player: str
    text: str


@dataclass(frozen=True)
class RatingCalculation(Event):
    """A line of the ``toggle ratings`` calculation block."""

    text: str


# -- watching --------------------------------------------------------------------


@dataclass(frozen=True)
class YouWatch(Event):
    """``You're now watching <name>.``"""

    player: str


@dataclass(frozen=True)
class NothingInteresting(Event):
    """``<name> is not doing anything interesting.``"""

    player: str


@dataclass(frozen=True)
class YouStopWatching(Event):
    """``[** ]You stop watching <name>.``"""

    player: str


@dataclass(frozen=True)
class WatchedLoggedOut(Event):
    """``<name> logs out. You're not watching anymore.``"""

    player: str


@dataclass(frozen=True)
class StartsWatching(Event):
    """``<watcher> is watching you.`` (player ``You``) / ``<watcher> starts watching <player>.``"""

    watcher: str
    player: str


@dataclass(frozen=True)
class StopsWatching(Event):
    """``<watcher> stops watching you.`` / ``<watcher> stops watching <player>.``"""

    watcher: str
    player: str


# -- social, settings and other replies ------------------------------------------


@dataclass(frozen=True)
class IsAway(Event):
    """``<name> is away: <message>``"""

    name: str
    message: str


@dataclass(frozen=True)
class YouAreAway(Event):
    """``You're away. Please type 'back'``"""


@dataclass(frozen=True)
class WelcomeBack(Event):
    """``Welcome back.``"""


@dataclass(frozen=True)
class Waves(Event):
    """``You wave goodbye[ again and log out].`` / ``<name> waves goodbye[ again].``"""

    player: str
    again: bool


@dataclass(frozen=True)
class Goodbye(Event):
    """The line of 29 blanks and ``Goodbye.``; the server closes after its farewell text."""


@dataclass(frozen=True)
class ConnectionTimedOut(Event):
    """``Connection timed out.``"""


@dataclass(frozen=True)
class UsersHeard(Event):
    """``** 3 users heard you.`` after a kibitz or whisper."""

    count: int


@dataclass(frozen=True)
class YouSayToYourself(Event):
    """``You say to yourself: <text>``"""

    text: str


@dataclass(frozen=True)
class WaitingForYou(Event):
    """``<name> is waiting for you to log in.``"""

    name: str


@dataclass(frozen=True)
class ToggleChanged(Event):
    """A toggle's confirmation sentence, e.g. ``** You're now ready to invite or join someone.``"""

    toggle: str
    value: bool


@dataclass(frozen=True)
class VariableValue(Event):
    """``Value of 'boardstyle' set to 3.`` (changed) / ``Value of 'sortwho' is login`` (quotes removed)."""

    variable: str
    value: str
    changed: bool


@dataclass(frozen=True)
class UnknownCommand(Event):
    """``** Unknown command: '<word>'``"""

    word: str


@dataclass(frozen=True)
class Error(Event):
    """Any other ``** `` line: a refusal, an error or a confirmation, with its text."""

    text: str


@dataclass(frozen=True)
class InvitationClock(Error):
    """``** With a clock: ...``, after an invitation's lines (protocol/clock.md): the
    clock a join agrees to; an ``Error`` to a client that knows only those."""


@dataclass(frozen=True)
class ClockWarning(Error):
    """``** Your clock: <seconds> seconds of reserve left.`` (protocol/clock.md): an
    ``Error`` to a client that knows only those."""

    seconds: int


@dataclass(frozen=True)
class Information(Event):
    """A line of an informational listing, which clients show rather than act upon.

    ``kind`` says which listing: ``who`` (telnet who list), ``whois``, ``toggles`` and
    ``settings`` (the toggle and set listings), ``ratings``, ``games`` (show games),
    ``saved`` (show saved, savedcount), ``watchers``, ``away``, ``account`` (address,
    password), ``show`` (show max), ``timezones``, ``stat``, ``registration`` (the guest
    dialogue's hints), ``look`` (the reply to looking at yourself), ``ascii_board``
    (boardstyle 1 and 2 drawings), ``archive`` (fibsd's ``archive`` listing), ``fairdice``
    and ``dicetest`` (protocol/fair-dice.md), ``tournament`` (protocol/tournaments.md),
    ``analysis`` (protocol/analysis-command.md), ``clock`` (protocol/clock.md).
    """

    kind: str
    text: str


@dataclass(frozen=True)
class ExportStart(Event):
    """``Match #<id> in .mat format, <lines> lines:`` - fibsd's ``export``; the next
    ``lines`` lines are the match as GNU Backgammon .mat text (``MatLine``)."""

    match_id: int
    lines: int


@dataclass(frozen=True)
class MatLine(Event):
    """One line of an exported match's .mat text, as sent (empty lines included)."""

    text: str


@dataclass(frozen=True)
class ExportEnd(Event):
    """``End of match #<id>.``: the export is complete."""

    match_id: int
