"""Every line of a running match, per audience: the player (``you``), his opponent, the
watchers; invitations, joins, leaving and the errors the rules engine raises.

Pure text: names and numbers in, FIBS's exact line out (fibs-protocol game-play.md and
between-games.md; fibsd's choices where FIBS is unknown are in protocol/play.md).
Clients classify these lines with anchored regular expressions (FIBS Cookie Monster),
so the traps are kept on purpose: no period after the opening roll, the score line
and ``match length:``; a blank before the final period of moves and match-end lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from fibsd.rules.errors import (
    AlreadyRolled,
    AwaitingDoubleAnswer,
    AwaitingResignAnswer,
    CannotBearOff,
    CubeUnavailable,
    GameOver,
    InvalidPlayText,
    MovesBackwards,
    MustAnswerFirst,
    MustEnterFirst,
    MustRollFirst,
    NoCheckerThere,
    NothingToAnswer,
    NotYourTurn,
    PointBlocked,
    RulesError,
    TooManyMoves,
    WrongDistance,
    WrongMoveCount,
)

ORDINALS = ("first", "second", "third", "fourth")


def points(n: int) -> str:
    """``1 point``, ``2 points``."""
    return f"{n} point" if n == 1 else f"{n} points"


def _length(length: int) -> str:
    return "an unlimited match" if length == 0 else f"a {length} point match"


# -- invitations (between-games.md 1) ---------------------------------------------------

def you_invited(name: str, length: int | None) -> str:
    """``length`` 0 is unlimited, None resumes the saved match."""
    if length is None:
        return f"** You invited {name} to resume a saved match."
    return f"** You invited {name} to {_length(length)}."


def invitation(inviter: str, length: int | None) -> str:
    if length is None:
        return f"{inviter} wants to resume a saved match with you."
    return f"{inviter} wants to play {_length(length)} with you."


def type_join(inviter: str) -> str:
    return f"Type 'join {inviter}' to accept."


def saved_match_warning(length: int) -> str:
    what = "unlimited match" if length == 0 else f"{length} point match"
    return f"WARNING: Don't accept if you want to continue the saved {what}!"


INVITE_WHO = "** invite who?"
INVITE_SELF = "** You can't invite yourself."
INVITE_NOT_READY = "** Use 'toggle ready' first."
INVITE_YOU_PLAY = "** You are already playing."
INVITE_BAD_LENGTH = ("** The second argument to 'invite' has to be a number "
                     "or the word 'unlimited'")
INVITE_TOO_LONG = "** You're not experienced enough to play a match of that length."
# Too many invitations in a minute (``limits.invites_per_minute``): a FIBS refusal that
# client authors captured without its trigger (between-games.md 1.4).
INVITE_FLOOD = "** Please wait for your last invitation to be accepted."


def invite_length_range(maximum: int) -> str:
    """A number outside 1..``limits.max_match_length``: INVITE_BAD_LENGTH's wording,
    with the range."""
    return (f"** The second argument to 'invite' has to be a number from 1 to {maximum} "
            "or the word 'unlimited'")


def refusing_games(name: str) -> str:
    return f"** {name} is refusing games."


def already_playing(name: str) -> str:
    return f"** {name} is already playing with someone else."


def no_saved_match(name: str) -> str:
    return f"** There's no saved match with {name}. Please give a match length."


# -- join (between-games.md 2) ------------------------------------------------------------

JOIN_WHO = "** Error: Join who?"
JOIN_TWO_GAMES = "** You can't play two games at once"
SAVED_CORRUPT = "** ERROR: Saved match is corrupt. Please start another one."


def invitation_changed(inviter: str, length: int | None) -> str:
    """A ``join`` that may have been meant for the inviter's earlier, different terms."""
    terms = "to resume a saved match" if length is None else f"to {_length(length)}"
    return (f"** {inviter} changed the invitation: it is now {terms}. "
            f"Type 'join {inviter}' again to accept.")


def didnt_invite(name: str) -> str:
    return f"** {name} didn't invite you."


def cant_find_player(name: str) -> str:
    return f"** Error: can't find player {name}"


def join_already_playing(name: str) -> str:
    return f"** Error: {name} is already playing with someone else."


def now_playing(inviter: str, length: int) -> str:
    """To the joiner of a new match (no final period)."""
    return f"** You are now playing {_length(length)} with {inviter}"


def has_joined(joiner: str, length: int) -> str:
    """To the inviter of a new match; the unlimited form has no ``** ``."""
    if length == 0:
        return f"Player {joiner} has joined you for an unlimited match."
    return f"** Player {joiner} has joined you for a {length} point match."


def now_playing_resumed(inviter: str) -> str:
    return f"You are now playing with {inviter}. Your running match was loaded."


def has_joined_resumed(joiner: str) -> str:
    return f"{joiner} has joined you. Your running match was loaded."


def report_start(a: str, b: str, length: int) -> str:
    return f"{a} and {b} start {_length(length)}."


def report_resume(a: str, b: str, length: int) -> str:
    what = "unlimited match" if length == 0 else f"{length}-point match"
    return f"{a} and {b} are resuming their {what}."


# -- leaving (between-games.md 6) -----------------------------------------------------------

YOU_TERMINATED = "** You terminated the game. The game was saved."
NO_ONE_TO_LEAVE = "** Error: No one to leave."


def player_left(name: str) -> str:
    return f"** Player {name} has left the game. The game was saved."


def report_left(name: str, opponent: str) -> str:
    return f"{name} has left the game with {opponent}."


def game_saved(departure: str) -> str:
    """``departure`` is the logout notice (``alice drops connection.``)."""
    return f"{departure} The game was saved."


# -- writes that failed (fibsd's own lines: protocol/play.md, "When the database fails") ------

YOU_TERMINATED_UNSAVED = "** You terminated the game. It could not be saved."


def player_left_unsaved(name: str) -> str:
    """Not FIBS's ``** Player <name> has left the game. The game was saved.``, and not
    its generic ``has left the game.`` either (a saved match's cookies would make a
    client offer to resume it): a line no client pattern matches."""
    return f"** {name} left the game; it could not be saved."


def game_unsaved(departure: str) -> str:
    return f"** {departure} The game could not be saved."


MATCH_WAITS = ("** The match waits for the server's database; it goes on by itself"
               " once the database is back.")
MATCH_GOES_ON = "** The server's database is back; the match goes on."
GAME_NOT_SAVED = "** Warning: the server could not save this match; a restart would lose it."
RESULT_NOT_SAVED = "** The result of this match could not be saved; ratings are unchanged."


# -- the game (game-play.md 2-7) -------------------------------------------------------

def starting_new_game(opponent: str) -> str:
    return f"Starting a new game with {opponent}."


def opening_roll(first: str, first_die: int, second: str, second_die: int) -> str:
    """Players: ``You rolled 5, bob rolled 3``; watchers: X player first.  No period."""
    return f"{first} rolled {first_die}, {second} rolled {second_die}"


YOUR_TURN_TO_MOVE = "It's your turn to move."
YOUR_TURN_TO_ROLL = "It's your turn to roll or double."
YOU_CANT_MOVE = "You can't move."
DONE = "Done."
JOIN_NEXT_GAME = "Type 'join' if you want to play the next game, type 'leave' if you don't."


def makes_first_move(name: str) -> str:
    return f"{name} makes the first move."


def cube_now(value: int) -> str:
    return f"The number on the doubling cube is now {value}"


def you_roll(dice: tuple[int, int]) -> str:
    return f"You roll {dice[0]} and {dice[1]}."


def player_rolls(name: str, dice: tuple[int, int]) -> str:
    return f"{name} rolls {dice[0]} and {dice[1]}."


def please_move(n: int) -> str:
    return f"Please move {n} piece." if n == 1 else f"Please move {n} pieces."


def cant_move(name: str) -> str:
    return f"{name} can't move."


def player_moves(name: str, moves: str) -> str:
    """``moves`` as ``fibsd.rules.notation.format_fibs_moves`` writes it."""
    return f"{name} moves {moves} ."


def only_possible_move(moves: str) -> str:
    return f"The only possible move is {moves} ."


def bearing_off(sources: Iterable[int]) -> str:
    """``sources`` are absolute points: ``Bearing off: 6 o 4 o``."""
    return "Bearing off: " + " ".join(f"{point} o" for point in sources)


def you_double(opponent: str) -> str:
    return f"You double. Please wait for {opponent} to accept or reject."


def doubles_to_you(name: str) -> str:
    return f"{name} doubles. Type 'accept' or 'reject'."


def doubles(name: str) -> str:
    return f"{name} doubles."


def you_accept_double(value: int) -> str:
    return f"You accept the double. The cube shows {value}."


def accepts_double_cube(name: str, value: int) -> str:
    return f"{name} accepts the double. The cube shows {value}."


def accepts_double(name: str) -> str:
    return f"{name} accepts the double."


def you_give_up(winner: str, n: int) -> str:
    return f"You give up. {winner} wins {points(n)}."


def gives_up_you_win(name: str, n: int) -> str:
    return f"{name} gives up. You win {points(n)}."


def gives_up(name: str, winner: str, n: int) -> str:
    return f"{name} gives up. {winner} wins {points(n)}."


def you_resign(opponent: str, n: int) -> str:
    return f"You want to resign. {opponent} will win {points(n)}."


def resigns_to_you(name: str, n: int) -> str:
    return f"{name} wants to resign. You will win {points(n)}. Type 'accept' or 'reject'."


def resigns(name: str, opponent: str, n: int) -> str:
    return f"{name} wants to resign. {opponent} will win {points(n)}."


def you_accept_and_win(n: int) -> str:
    return f"You accept and win {points(n)}."


def accepts_and_wins(name: str, n: int) -> str:
    return f"{name} accepts and wins {points(n)}."


YOU_REJECT = "You reject. The game continues."


def rejects(name: str) -> str:
    return f"{name} rejects. The game continues."


def you_win_game(n: int) -> str:
    return f"You win the game and get {points(n)}. Congratulations!"


def wins_game(name: str, n: int, *, sorry: bool) -> str:
    return f"{name} wins the game and gets {points(n)}." + (" Sorry." if sorry else "")


def score_line(length: int, first: tuple[str, int], second: tuple[str, int]) -> str:
    """No final period; the recipient's own name (or the watched player's) first."""
    what = "unlimited match" if length == 0 else f"{length} point match"
    return f"score in {what}: {first[0]}-{first[1]} {second[0]}-{second[1]}"


def please_wait_join(opponent: str) -> str:
    return f"** Please wait for {opponent} to join too."


def you_win_match(length: int, score: tuple[int, int]) -> str:
    """``score`` is the winner's points first."""
    return f"You win the {length} point match {score[0]}-{score[1]} ."


def wins_match(name: str, length: int, score: tuple[int, int]) -> str:
    return f"{name} wins the {length} point match {score[0]}-{score[1]} ."


def report_result(winner: str, length: int, loser: str, score: tuple[int, int]) -> str:
    """To users with ``report`` on: two blanks before the score."""
    return f"{winner} wins a {length} point match against {loser}  {score[0]}-{score[1]} ."


# -- the list of moves after a game (toggle moves, game-play.md 7.5) ----------------------

def moves_score(length: int, x_score: int, o_score: int) -> str:
    """The listing's first line; X's score first, as the next line names X first."""
    return f"Score is {x_score}-{o_score} in {_length(length)}."


def moves_players(x_player: str, o_player: str) -> str:
    return f"{x_player} is X - {o_player} is O."


def moves_entry(colour: str, action: str) -> str:
    """``X: (6 2) 1-7 12-14``, ``O: doubles``, ``X: wins 2 points``."""
    return f"{colour}: {action}"


def moves_roll(dice: tuple[int, int], moves: str | None) -> str:
    """A roll and its play on one line; ``None`` for a roll that could not be played."""
    return f"({dice[0]} {dice[1]}) " + (moves if moves is not None else "can't move")


# -- resuming (game-play.md 3.7) ----------------------------------------------------------

def turn_line(name: str) -> str:
    return f"turn: {name}."


def match_length_line(length: int) -> str:
    return f"match length: {'unlimited' if length == 0 else length}"


def points_for(name: str, n: int) -> str:
    return f"points for {name}: {n}"


# -- board and pip (game-play.md 11) ----------------------------------------------------------

NOT_WATCHING_OR_PLAYING = "** You're not watching or playing."
NOT_PLAYING = "** You're not playing."
RESIGN_NOT_PLAYING = "** You're not playing, so you can't give up."
RESIGN_USAGE = "** Type 'n' (normal), 'g' (gammon) or 'b' (backgammon) after resign."
CANT_BEAR_OFF = "** You can't bear off now."


def pip_counts(first: str, first_pips: int, second: str, second_pips: int) -> str:
    """``first`` is ``Your`` for a player, else a name (``alice's``)."""
    own = "Your" if first == "You" else f"{first}'s"
    return f"{own} pip count is {first_pips}. {second}'s pip count is {second_pips}."


def pip_not_allowed(name: str) -> str:
    return f"** {name} doesn't allow the use of the pip command."


# -- rules errors, per command (game-play.md 4.2, 4.5, 5.4, 6.3) -------------------------------

def _awaiting_answer(error: RulesError, opponent: str) -> str | None:
    """The reply to any game action while the opponent still owes an answer to this
    player's double or resignation (``resign`` words the latter its own way)."""
    if isinstance(error, AwaitingDoubleAnswer):
        return f"** {opponent} hasn't responded to your double yet."
    if isinstance(error, AwaitingResignAnswer):
        return f"** Wait until {opponent} accepted or rejected your resign."
    return None


def move_error(error: RulesError, opponent: str,
               absolute: Callable[[int], int] = lambda point: point) -> str:
    """The reply to a ``move`` the rules refused.  The rules give points in the mover's
    numbering; ``absolute`` turns one into FIBS's absolute number (25, the bar, stays)."""
    ordinal = ORDINALS[min(getattr(error, "ordinal", 1), 4) - 1]
    if isinstance(error, InvalidPlayText):
        return f"** {ordinal} move: legal words are 'bar', 'home', 'off', 'b', 'h' and 'o'."
    if isinstance(error, WrongMoveCount):
        return f"** You must give {error.required} moves."
    if isinstance(error, TooManyMoves):
        return f"** Please don't give more than {error.allowed} moves."
    if isinstance(error, MustEnterFirst):
        return f"** You have to remove pieces from the bar in your {ordinal} move."
    if isinstance(error, MovesBackwards):
        return f"** You can't move home in your {ordinal} move."
    if isinstance(error, WrongDistance):
        return f"** You can't move {error.distance} points in your {ordinal} move."
    if isinstance(error, NoCheckerThere):
        where = "the bar" if error.point == 25 else str(absolute(error.point))
        return f"** You can't move from {where} in your {ordinal} move."
    if isinstance(error, PointBlocked):
        return f"** You can't move to {absolute(error.point)} in your {ordinal} move."
    if isinstance(error, CannotBearOff):
        return f"** You can't remove this piece in your {ordinal} move."
    if isinstance(error, MustRollFirst):
        return "** You have to roll the dice before moving."
    if (waiting := _awaiting_answer(error, opponent)) is not None:
        return waiting
    if isinstance(error, (NotYourTurn, MustAnswerFirst, GameOver)):
        return "** It's not your turn to move."
    return "** That's not a legal move."


def roll_error(error: RulesError, opponent: str) -> str:
    if isinstance(error, AlreadyRolled):
        return "** You did already roll the dice."
    return _awaiting_answer(error, opponent) or "** It's not your turn to roll the dice."


FIRST_MOVE_DOUBLE = "** You cannot double in the first move."


def double_error(error: RulesError, opponent: str) -> str:
    if isinstance(error, CubeUnavailable):
        return {
            CubeUnavailable.NOT_ON_ROLL: f"** Please wait until {opponent} has moved.",
            CubeUnavailable.AFTER_ROLL: "** You can only double before you roll the dice.",
            CubeUnavailable.CRAWFORD:
                "** The Crawford rule doesn't allow you to double in this game.",
            CubeUnavailable.CUBE_DEAD: "** You can't double in a 1 point match.",
        }.get(error.reason, "** It's not your turn to double.")
    if isinstance(error, AwaitingResignAnswer):
        return "** You can't double now. You want to resign."
    if isinstance(error, NotYourTurn):
        return f"** Please wait until {opponent} has moved."
    if isinstance(error, MustAnswerFirst):
        return "** Type 'accept' or 'reject'."
    return "** It's not your turn to double."


def not_an_instant_redouble(word: str, count: int) -> str:
    """``beaver``/``raccoon`` at the wrong step of a redouble chain (fibsd's wording;
    FIBS's is unknown)."""
    which = "first" if count == 0 else "second"
    return f"** A {word} is only the {which} instant redouble. Use 'redouble'."


def redouble_error(error: RulesError, opponent: str, unlimited: bool) -> str:
    if not unlimited:
        return "** Redoubles are only allowed in unlimited matches."
    if isinstance(error, CubeUnavailable):
        return "** You can't redouble any more in this game."
    return f"** {opponent} didn't double."


def answer_error(error: RulesError, opponent: str) -> str:
    """``accept`` and ``reject``."""
    return _awaiting_answer(error, opponent) or f"** {opponent} didn't double or resign."


def resign_error(error: RulesError, opponent: str) -> str:
    if isinstance(error, AwaitingResignAnswer):
        return "** You already did that."
    if isinstance(error, AwaitingDoubleAnswer):
        return f"** {opponent} hasn't responded to your double yet."
    if isinstance(error, MustAnswerFirst):
        return "** Type 'accept' or 'reject'."
    if isinstance(error, NothingToAnswer):
        return f"** {opponent} didn't double or resign."
    return "** The game is already over."
