"""The listings ``show games``, ``show saved``, ``show savedcount`` and ``ratings``
(fibs-protocol between-games.md 8, ratings.md 4), and the choice of ranks a
``ratings`` request lists.

Pure: rows in, FIBS's lines out.  Column widths reproduce the reference samples
exactly; what clients depend on are the shapes FIBS Cookie Monster matches (a name,
blanks, ``- ``, a name, ``(<n> point match``; a status marker glued to the opponent's
name in ``show saved``; a ``*`` in column 0 on the requester's ratings line).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fibsd.rules.events import (
    CannotMove,
    DoubleAccepted,
    Doubled,
    DoubleRejected,
    Event,
    GameWon,
    Moved,
    OpeningRoll,
    Redoubled,
    ResignOffered,
    Rolled,
)
from fibsd.rules.notation import format_fibs_moves
from fibsd.wire import game_text as text
from fibsd.wire.board import Colour

# -- show games -----------------------------------------------------------------------

GAMES_HEADER = "List of games:"


@dataclass(frozen=True)
class GameRow:
    first: str  # the inviter
    second: str
    length: int  # 0: unlimited
    first_score: int
    second_score: int


def format_games(games: Iterable[GameRow]) -> list[str]:
    """``alice           -             bob (5 point match 2-1)``."""
    lines = [GAMES_HEADER]
    for game in games:
        kind = "unlimited match" if game.length == 0 else f"{game.length} point match"
        lines.append(f"{game.first:<15} - {game.second:>15} "
                     f"({kind} {game.first_score}-{game.second_score})")
    return lines


# -- show saved ------------------------------------------------------------------------

NO_SAVED_GAMES = "no saved games."
SAVED_HEADER = "  opponent          matchlength   score (your points first)"
READY, LOGGED_IN, ABSENT = "**", " *", "  "  # the opponent's status markers


@dataclass(frozen=True)
class SavedRow:
    opponent: str
    marker: str  # READY, LOGGED_IN or ABSENT
    length: int  # 0: unlimited
    own_score: int
    opponent_score: int


def format_saved(rows: Sequence[SavedRow]) -> list[str]:
    """The header and one line per saved match, or ``no saved games.``.

    >>> format_saved([SavedRow("bonehead", READY, 3, 1, 2)])[1]
    '**bonehead                3                1 -  2'
    """
    if not rows:
        return [NO_SAVED_GAMES]
    lines = [SAVED_HEADER]
    for row in rows:
        scores = f" - {row.opponent_score:>2}"
        if row.length == 0:
            # The reference's unlimited sample: the word starts where a one-digit
            # length stands, and the score moves one column right.
            lines.append(f"{row.marker}{row.opponent:<23} unlimited{row.own_score:>10}{scores}")
        else:
            lines.append(f"{row.marker}{row.opponent:<19} {row.length:>5}"
                         f"{row.own_score:>17}{scores}")
    return lines


def saved_count(name: str, count: int) -> str:
    if count == 0:
        return f"{name} has no saved games."
    return f"{name} has {count} saved game{'' if count == 1 else 's'}."


def no_user_called(name: str) -> str:
    """An account name that does not exist (SIBS's wording)."""
    return f"** There is no user called '{name}'."


# -- ratings -----------------------------------------------------------------------------

RATINGS_HEADER = " rank name            rating    Experience"
RANGE_LIMIT = 100  # most ranks one request may list
TOP = 20  # ranks listed by a bare 'ratings'
AROUND = 5  # ranks listed either side of a named player
FROM_NEEDS_NUMBER = "** Please give a positive number after 'from'."
TO_NEEDS_NUMBER = "** Please give a positive number after 'to'."
RANGE_TOO_LONG = "** range currently limited to 100."


def invalid_range(first: int, last: int) -> str:
    return f"** invalid range from {first} to {last}."


def only_one_name(first: str, second: str) -> str:
    return f"** Please use only one of the given names '{first}' and '{second}'."


@dataclass(frozen=True)
class RatingRow:
    rank: int
    name: str
    rating: float
    experience: int


def rank_players(accounts: Iterable[tuple[str, float, int]],
                 threshold: int) -> list[RatingRow]:
    """The rating list: accounts (best first) with at least ``threshold`` experience."""
    rated = [account for account in accounts if account[2] >= threshold]
    return [RatingRow(rank, *account) for rank, account in enumerate(rated, 1)]


def unranked_rows(accounts: Iterable[tuple[str, float, int]],
                  threshold: int) -> list[RatingRow]:
    """The players below the threshold, numbered on after the last ranked one (best
    first), so every line keeps the shape clients parse (a number after the ``*``) and
    no two players share a rank."""
    accounts = list(accounts)
    first = sum(1 for account in accounts if account[2] >= threshold) + 1
    unrated = [account for account in accounts if account[2] < threshold]
    return [RatingRow(rank, *account) for rank, account in enumerate(unrated, first)]


def format_rating_row(row: RatingRow, *, own: bool) -> str:
    """``    1 GammonBot_XI    2160.34     1034159``; ``own`` puts ``*`` in column 0."""
    return (f"{'*' if own else ' '}{row.rank:>4} {row.name:<15} "
            f"{row.rating:7.2f}{row.experience:>12}")


def format_ratings(rows: Iterable[RatingRow], own: str) -> list[str]:
    return [RATINGS_HEADER, *(format_rating_row(row, own=row.name == own) for row in rows)]


def with_own_row(rows: Sequence[RatingRow], own: RatingRow) -> list[RatingRow]:
    """``rows`` plus the requester's row, which is always listed, in rank order."""
    if any(row.name == own.name for row in rows):
        return list(rows)
    return sorted([*rows, own], key=lambda row: (row.rank, row.name == own.name))


@dataclass(frozen=True)
class RatingsRequest:
    """Ranks ``first``..``last``, or (``name`` set) the ranks around that player."""

    first: int = 1
    last: int = TOP
    name: str | None = None


def _positive(word: str | None) -> int | None:
    if word is None or not (word.isascii() and word.isdigit()) or int(word) < 1:
        return None
    return int(word)


def parse_ratings(words: Sequence[str]) -> RatingsRequest:
    """``ratings``, ``ratings <name>``, ``ratings from <a> to <b>`` (either part may be
    left out: ``from <a>`` lists 20 ranks, ``to <b>`` starts at 1).  Raises ValueError
    whose argument is the error line."""
    first: int | None = None
    last: int | None = None
    names: list[str] = []
    rest = list(words)
    while rest:
        word = rest.pop(0)
        keyword = word.lower()
        if keyword in ("from", "to"):
            number = _positive(rest.pop(0) if rest else None)
            if number is None:
                raise ValueError(FROM_NEEDS_NUMBER if keyword == "from" else TO_NEEDS_NUMBER)
            if keyword == "from":
                first = number
            else:
                last = number
        else:
            names.append(word)
    if len(names) > 1:
        raise ValueError(only_one_name(names[0], names[1]))
    if names:
        return RatingsRequest(name=names[0])
    if first is None and last is None:
        return RatingsRequest()
    first = first or 1
    last = last or first + TOP - 1
    if last < first:
        raise ValueError(invalid_range(first, last))
    if last - first + 1 > RANGE_LIMIT:
        raise ValueError(RANGE_TOO_LONG)
    return RatingsRequest(first, last)


def select_ratings(ranked: Sequence[RatingRow], request: RatingsRequest,
                   named: RatingRow | None = None) -> list[RatingRow]:
    """The rows a request lists (the caller adds the requester's own row).  ``named``
    is the requested player's row, ranked or not (None: no such account)."""
    if request.name is None:
        return [row for row in ranked if request.first <= row.rank <= request.last]
    if named is None:
        return []
    if named not in ranked:
        return [named]
    return [row for row in ranked if abs(row.rank - named.rank) <= AROUND]


# -- oldboard ----------------------------------------------------------------------------

def no_old_board(name: str) -> str:
    """``oldboard`` for a player who has finished no game (fibsd's wording)."""
    return f"** {name} has not finished a game yet."


# -- oldmoves (the list of a game's moves, game-play.md 7.5) ----------------------------

def _action(event: Event) -> tuple[int, str] | None:
    """(player, word) of a cube or resignation step.  The answer to a resignation has
    no line (FIBS's listing goes from ``wants to resign`` to ``wins``): ``accepts`` and
    ``rejects`` answer doubles only, which is how importers such as gnubg's read them."""
    if isinstance(event, (Doubled, Redoubled)):
        return event.player, "doubles"
    if isinstance(event, DoubleAccepted):
        return event.player, "accepts"
    if isinstance(event, DoubleRejected):
        return event.player, "rejects"
    if isinstance(event, ResignOffered):
        return event.player, "wants to resign"
    return None


def format_moves_list(history: Iterable[Event], names: tuple[str, str], x_player: int,
                      score: tuple[int, int], length: int) -> list[str]:
    """One game's list: the score before it (X player's first), who is X and O, then one
    line per turn or cube or resignation action, as ``X: (6 2) 1-7 12-14``.

    ``history`` is the game's events, ``names`` and ``score`` indexed by player, the
    X player ``x_player``; ``length`` 0 is unlimited."""
    o_player = 1 - x_player
    mark = {x_player: "X", o_player: "O"}
    direction = {x_player: Colour.X.direction, o_player: Colour.O.direction}
    lines = [text.moves_score(length, score[x_player], score[o_player]),
             text.moves_players(names[x_player], names[o_player])]
    dice: dict[int, tuple[int, int]] = {}
    for event in history:
        if isinstance(event, OpeningRoll) and event.winner is not None:
            winner = event.winner
            dice[winner] = (event.dice[winner], event.dice[1 - winner])
        elif isinstance(event, Rolled):
            dice[event.player] = event.dice
        elif isinstance(event, CannotMove):
            rolled = dice.pop(event.player, event.dice)
            lines.append(text.moves_entry(mark[event.player], text.moves_roll(rolled, None)))
        elif isinstance(event, Moved):
            moves = format_fibs_moves(event.play.moves, direction[event.player])
            rolled = dice.pop(event.player, (0, 0))
            lines.append(text.moves_entry(mark[event.player], text.moves_roll(rolled, moves)))
        elif isinstance(event, GameWon):
            lines.append(text.moves_entry(mark[event.winner], f"wins {text.points(event.points)}"))
        elif (action := _action(event)) is not None:
            lines.append(text.moves_entry(mark[action[0]], action[1]))
    return lines
