"""Legal plays for a roll, checking a typed play against them, and the ``fibsd-movegen`` tool.

Legality is judged by the position a play reaches (architecture: "judge a play by the
position it reaches"): ``legal_plays`` enumerates every whole-turn play that obeys the
forced-play rules and keeps one play per resulting position.

Forced-play rules, applied once, during generation:

* all four moves of a double, both dice otherwise, or as many as any sequence allows;
* when only one die of a non-double can be played, the larger one if any sequence plays it;
* every checker on the bar enters before anything else moves; dice left when a bar checker
  cannot enter are forfeit;
* bearing off needs all fifteen checkers at home; a die larger than the checker's point
  bears off only from the highest occupied point; bearing off is never compulsory.

How the search stays small: whatever order a legal play was made in, its moves can be
replayed with sources in non-increasing order (the bar first), and that replay is legal
too.  The search therefore only tries sources that do not rise, which visits each set of
moves once instead of once per permutation.  Positions are keyed by an integer delta (a
signed nibble per point plus one bit per hit point), so no board is copied until a new
result turns up.  The representative kept for a result is the first one found: sources
descending, the larger die first where both orders reach the same place.

A game does not need every play of a roll, only whether there is none, one or several,
and how many dice a play uses: ``survey`` stops the search at the second play that uses
every die (most rolls), and the full list is made only for whoever asks for it.

``check_play`` accepts the typed pairs when they reach a legal result, and otherwise
explains the refusal the way FIBS does, pair by pair in the order typed.  A walk of the
typed pairs made of legal single moves that uses the dice a legal play uses (the most
dice, the larger one when only one plays) is itself a legal play, so the check needs
the roll's dice count and never the list of plays.  Decisions where
FIBS is silent or stricter:

* Each pair is one checker's path.  A pair may span several dice (``13-8`` for 3-2,
  ``24-16`` for 4-4) when the points in between are open; the dice, their order, and the
  die for an ambiguous bear-off (3-off with a 4 or a 6) are chosen so that the whole play
  is legal.  A hit on the way is assumed only when no quiet way exists (notation writes
  such hits out: ``13/7*/2``).  FIBS itself wants one pair per die.
* The typed order does not decide legality, the result does (architecture rule 3): the
  pairs are tried in the order given first, then in any order or interleaving that the
  dice allow, so gnubg's ``6/off 3/off`` for 4-4 (6/2, 3/off, 2/off) is accepted, and
  so is ``13-8 bar-23``.  FIBS would refuse the latter with "remove pieces from the bar";
  the errors below still follow the typed order when no reading is legal.
* The pair count therefore counts dice, not pairs: ``TooManyMoves`` when there are more
  pairs than playable dice (every pair uses at least one die); ``WrongMoveCount`` when
  even reading every pair as spanning as many dice as its distance allows cannot cover
  the playable dice.  ``given`` in both is the number of pairs typed.
* The returned ``Play`` has the result of the matching legal play and the player's own
  moves, one per die, in the order found (the typed order whenever that order can be
  played), so hits are flagged where the player made them.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Iterable, NamedTuple, Sequence, TextIO

from fibsd.rules.errors import (
    CannotBearOff,
    MovesBackwards,
    MustEnterFirst,
    NoCheckerThere,
    NotAWholePlay,
    PointBlocked,
    TooManyMoves,
    WrongDistance,
    WrongMoveCount,
)
from fibsd.rules.notation import format_standard
from fibsd.rules.play import Move, Play
from fibsd.rules.position import InvalidPositionId, Position

__all__ = ["legal_plays", "Survey", "survey", "dice_playable", "check_play", "main"]

# Every Move there can be, made once: [src][dst][hit].  Fixed size, never grows.
_MOVES = tuple(tuple((Move(s, t, False), Move(s, t, True)) for t in range(26)) for s in range(26))
# Key deltas: a signed nibble per point (at most four checkers change per point in a turn,
# so the balanced base-16 sum is injective) and, above them, one bit per point hit.
_UNIT = tuple(1 << (4 * p) for p in range(26))
_HIT_SHIFT = 4 * 26 + 4
_HIT = tuple(1 << (_HIT_SHIFT + p) for p in range(26))
_ALL_SOURCES = tuple(range(25, 0, -1))
# The key change of one move: _SHIFT[hit][src][dst].
_SHIFT = tuple(
    tuple(tuple(_UNIT[t] - _UNIT[s] + (_HIT[t] if hit else 0) for t in range(26)) for s in range(26))
    for hit in (False, True)
)
# The nibble part stays below 2 ** 103 in size, so a key above _ANY_HIT has a hit, and
# rounding at _HIT_SHIFT reads back exactly which points were hit.
_ANY_HIT = 1 << (_HIT_SHIFT - 2)
_HALF = 1 << (_HIT_SHIFT - 1)


# A result of legal moves from a valid position is valid, and re-validating each one would
# cost ten times building it: results (and their plays) are filled through the slot
# descriptors, which is what the frozen dataclasses' own __init__ does, minus the checks.
_SET_PLAYER = Position.player.__set__  # type: ignore[attr-defined,misc]
_SET_OPPONENT = Position.opponent.__set__  # type: ignore[attr-defined,misc]
_SET_MOVES = Play.moves.__set__  # type: ignore[attr-defined,misc]
_SET_RESULT = Play.result.__set__  # type: ignore[attr-defined,misc]


def _check_dice(dice: tuple[int, int]) -> tuple[int, int]:
    high, low = dice
    if not (1 <= high <= 6 and 1 <= low <= 6):
        raise ValueError(f"dice must be 1..6, got {dice!r}")
    return (high, low) if high >= low else (low, high)


def legal_plays(position: Position, dice: tuple[int, int]) -> tuple[Play, ...]:
    """Every distinct legal play of ``dice``, one per resulting position; ``()`` if none.

    >>> len(legal_plays(Position.initial(), (3, 1)))
    16
    >>> legal_plays(Position.initial(), (6, 6))[0].moves[0]
    Move(src=24, dst=18, hit=False)
    """
    return _built(position, _search(position, _check_dice(dice))[0])


class Survey(NamedTuple):
    """What a game needs to know of a roll before the move comes.

    ``usable``: the dice a legal play uses (FIBS's "Please move n pieces" counts them).
    ``plays``: every legal play when ``complete``; otherwise the search stopped at the
    second whole play found, which is all a roll needs (it can be played, the move is not
    forced), and ``legal_plays`` gives the rest when someone asks.
    """

    plays: tuple[Play, ...]
    usable: tuple[int, ...]
    complete: bool


def survey(position: Position, dice: tuple[int, int]) -> Survey:
    """The roll's ``Survey``: searched only as far as telling no play, one play and
    several apart.  ``check_play`` needs only its ``usable`` dice: a play of legal steps
    that uses all of them is legal."""
    found, used, complete = _search(position, _check_dice(dice), enough=2)
    return Survey(_built(position, found), used, complete)


def _built(position: Position, found: _Found) -> tuple[Play, ...]:
    """The plays of the search's results, made without re-validating each result."""
    opponent = position.opponent
    new = object.__new__
    set_player = _SET_PLAYER
    set_opponent = _SET_OPPONENT
    set_moves = _SET_MOVES
    set_result = _SET_RESULT
    plays = []
    after_hits: dict[int, tuple[int, ...]] = {}  # opponent sides by the points hit
    for moves, player, key in found.values():
        result = new(Position)
        set_player(result, player)
        if key > _ANY_HIT:
            hit_key = (key + _HALF) >> _HIT_SHIFT
            side = after_hits.get(hit_key)
            if side is None:
                side = after_hits[hit_key] = _after_hits(opponent, moves)
            set_opponent(result, side)
        else:
            set_opponent(result, opponent)
        play = new(Play)
        set_moves(play, moves)
        set_result(play, result)
        plays.append(play)
    return tuple(plays)


def _after_hits(opponent: tuple[int, ...], moves: tuple[Move, ...]) -> tuple[int, ...]:
    side = list(opponent)
    for move in moves:
        if move.hit:
            side[24 - move.dst] -= 1
            side[24] += 1
    return tuple(side)


def dice_playable(position: Position, dice: tuple[int, int]) -> int:
    """How many dice a legal play of this roll uses (FIBS's "Please move n pieces")."""
    return len(_search(position, _check_dice(dice), enough=1)[1])


_Found = dict[int, tuple[tuple[Move, ...], tuple[int, ...], int]]


class _Enough(Exception):
    """The search has found as many whole plays as its caller asked for."""


def _search(position: Position, dice: tuple[int, int], enough: int = 0) -> tuple[_Found, tuple[int, ...], bool]:
    """Depth-first search over non-rising sources; returns the results kept, the dice a
    legal play uses, and whether every result was searched for (``enough``: stop at that
    many plays using every die; they settle the dice used)."""
    high, low = dice
    board = [0, *position.player]  # board[p] for points 1..24, board[25] is the bar
    # Opposing checkers on each of the mover's points: status[p] for p in 1..24.
    status = (0, *position.opponent[23::-1])
    sources = _ALL_SOURCES
    hits = [False] * 26
    path: list[Move] = []
    shift = _SHIFT
    all_moves = _MOVES
    full: _Found = {}  # plays using every die
    # Plays that stop early, by number of dice used and, for one die, which one.
    partial: dict[tuple[int, int], _Found] = {}
    outside = sum(board[7:])  # checkers that keep the mover from bearing off

    def step(depth: int, first: int, key: int, sequence: tuple[int, ...]) -> None:
        """Try every move of die ``sequence[depth]`` from ``sources[first:]``."""
        nonlocal outside
        die = sequence[depth]
        moved = False
        last = depth + 1 == len(sequence)
        # Sources run from the bar down; with a checker on the bar, only the bar.
        for index in range(first, 1 if board[25] else 25):
            src = sources[index]
            if not board[src]:
                continue
            dst = src - die
            hit = False
            if dst > 0:
                opposing = status[dst]
                if opposing:
                    if opposing > 1:
                        continue
                    hit = not hits[dst]
            else:
                if outside or (dst < 0 and any(board[src + 1 : 7])):
                    continue
                dst = 0
            moved = True
            new_key = key + shift[hit][src][dst]
            if last:
                if new_key not in full:
                    board[src] -= 1
                    board[dst] += 1
                    full[new_key] = ((*path, all_moves[src][dst][hit]), tuple(board[1:]), new_key)
                    board[src] += 1
                    board[dst] -= 1
                    if len(full) == enough:
                        raise _Enough
                continue
            board[src] -= 1
            board[dst] += 1
            gone = src > 6 and dst <= 6
            if gone:
                outside -= 1
            if hit:
                hits[dst] = True
            path.append(all_moves[src][dst][hit])
            step(depth + 1, index if sequence[depth + 1] <= die else index + 1, new_key, sequence)
            path.pop()
            if hit:
                hits[dst] = False
            if gone:
                outside += 1
            board[src] += 1
            board[dst] -= 1
        if not moved and not full:
            first = sequence[0] if depth == 1 else 0
            partial.setdefault((depth, first), {}).setdefault(key, (tuple(path), tuple(board[1:]), key))

    whole = (high,) * 4 if high == low else (high, low)
    try:
        if high == low:
            step(0, 0, 0, whole)
        else:
            step(0, 0, 0, (high, low))
            step(0, 0, 0, (low, high))
    except _Enough:
        return full, whole, False
    if full:
        return full, whole, True
    best, first = max(partial)  # for one die of a non-double, the larger die if it plays
    if not best:
        return {}, (), True
    return partial[best, first], (first or high,) * best, True


# -- checking a typed play ---------------------------------------------------------------

_Board = list[int]  # 26 counts: [0] borne off, [1..24] points, [25] bar (mover's numbering)
_Side = list[int]  # the opponent's 25 counts in the opponent's own numbering

# Why a single step fails, in the order check_play reports such failures.
_NO_CHECKER, _BAR_FIRST, _BLOCKED, _NO_BEAR_OFF = range(4)


def _step(board: _Board, opponent: _Side, src: int, die: int) -> Move | tuple[int, int]:
    """The move of one checker from ``src`` by ``die``, or (failure, point)."""
    if not board[src]:
        return (_NO_CHECKER, src)
    if board[25] and src != 25:
        return (_BAR_FIRST, src)
    dst = src - die
    if dst > 0:
        opposing = opponent[24 - dst]
        if opposing > 1:
            return (_BLOCKED, dst)
        return _MOVES[src][dst][opposing == 1]
    if any(board[7:]) or (dst < 0 and any(board[src + 1 : 7])):
        return (_NO_BEAR_OFF, src)
    return _MOVES[src][0][False]


def _apply(board: _Board, opponent: _Side, move: Move) -> tuple[_Board, _Side]:
    board = board.copy()
    board[move.src] -= 1
    board[move.dst] += 1
    if move.hit:
        opponent = opponent.copy()
        opponent[24 - move.dst] -= 1
        opponent[24] += 1
    return board, opponent


def _die_orders(dice: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every ordered choice of dice from the ones left, fewest dice first, larger first."""
    if not dice:
        return []
    if len(set(dice)) == 1:
        return [dice[:n] for n in range(1, len(dice) + 1)]
    high, low = max(dice), min(dice)
    return [(high,), (low,), (high, low), (low, high)]


def _without(dice: tuple[int, ...], used: tuple[int, ...]) -> tuple[int, ...]:
    rest = list(dice)
    for die in used:
        rest.remove(die)
    return tuple(rest)


def _spans(
    board: _Board, opponent: _Side, src: int, dst: int, dice: tuple[int, ...]
) -> tuple[list[tuple[tuple[Move, ...], tuple[int, ...], _Board, _Side]], tuple[int, int] | None]:
    """Ways one checker can go from ``src`` to ``dst`` with some of ``dice``.

    Returns the ways (moves, dice used, board and opponent after) and, when there are
    none, the first failure met by a die sequence of the right length (or None when no
    sequence covers the distance at all).
    """
    ways = []
    failure: tuple[int, int] | None = None
    for order in _die_orders(dice):
        total = sum(order)
        if dst and total != src - dst:
            continue
        if not dst and not (total >= src and total - order[-1] < src):
            continue
        moves: list[Move] = []
        here, side, at = board, opponent, src
        for die in order:
            step = _step(here, side, at, die)
            if not isinstance(step, Move):
                failure = failure or step
                break
            moves.append(step)
            here, side = _apply(here, side, step)
            at = step.dst
        else:
            ways.append((tuple(moves), order, here, side))
    return ways, failure


def check_play(position: Position, dice: tuple[int, int], pairs: Sequence[tuple[int, int]],
               usable: tuple[int, ...] | None = None) -> Play:
    """The legal play that the typed ``(src, dst)`` pairs make, or the FIBS-ordered error.

    Pairs are in the mover's numbering (25 = bar, 0 = off); see the module docstring for
    pairs spanning several dice.  ``usable``: the dice a legal play of this roll uses
    (``survey(position, dice).usable``), if the caller kept it.

    >>> check_play(Position.initial(), (3, 1), [(8, 5), (6, 5)]).moves
    (Move(src=8, dst=5, hit=False), Move(src=6, dst=5, hit=False))
    """
    dice = _check_dice(dice)
    for src, dst in pairs:
        if not (1 <= src <= 25 and 0 <= dst <= 24):
            raise ValueError(f"not a pair of points: {(src, dst)!r}")
    if usable is None:
        usable = _search(position, dice, enough=1)[1]
    board = [position.player_off, *position.player]
    opponent = list(position.opponent)

    found = _match(board, opponent, list(pairs), usable, ())
    if found is not None:
        return found
    _diagnose(board, opponent, pairs, dice, usable, len(usable))
    raise NotAWholePlay()


def _match(
    board: _Board,
    opponent: _Side,
    paths: list[tuple[int, int]],
    dice: tuple[int, ...],
    moves: tuple[Move, ...],
) -> Play | None:
    """Walk each typed pair as one checker's path, a die at a time, until every path is
    done and every die used; the first such walk wins.

    Every step is a legal move and the walk uses exactly the dice a legal play uses, so
    its result is a legal play's: nothing is looked up.  Paths are tried in the order
    typed, each to its end, so a play that works in that order keeps it; steps of
    different paths may interleave when they must (a bear-off that waits for another
    checker to come down).  Quiet steps before hitting ones, then larger dice first.
    """
    if not dice:
        if any(at != dst for at, dst in paths):
            return None
        result = object.__new__(Position)
        _SET_PLAYER(result, tuple(board[1:]))
        _SET_OPPONENT(result, tuple(opponent))
        return Play(moves, result)
    for index, (at, dst) in enumerate(paths):
        if at == dst:
            continue
        steps = []
        for die in sorted(set(dice), reverse=True):
            if dst and at - die < dst:
                continue
            step = _step(board, opponent, at, die)
            if isinstance(step, Move):
                steps.append((step.hit and step.dst != dst, die, step))
        # A hit on the way is read only when no way avoids it: notation writes such
        # hits out (24/18*/13), so a bare 24/13 means the quiet way.
        for _, die, step in sorted(steps, key=lambda entry: entry[0]):
            after, side = _apply(board, opponent, step)
            rest = list(paths)
            rest[index] = (step.dst, dst)
            found = _match(after, side, rest, _without(dice, (die,)), moves + (step,))
            if found is not None:
                return found
    return None


def _most_dice(src: int, dst: int, dice: tuple[int, int]) -> int:
    """The most dice one typed pair could stand for."""
    high, low = dice
    distance = src - dst
    if high != low:
        return 2 if not dst or distance == high + low else 1
    if not dst:
        return min(4, -(-src // high))
    return max(1, distance // high) if distance % high == 0 else 1


def _diagnose(
    board: _Board,
    opponent: _Side,
    pairs: Sequence[tuple[int, int]],
    dice: tuple[int, int],
    usable: tuple[int, ...],
    required: int,
) -> None:
    """Raise the first error in FIBS's order of checks (game-play.md 4.5), if any."""
    if len(pairs) > required:
        raise TooManyMoves(required, len(pairs))
    if sum(_most_dice(src, dst, dice) for src, dst in pairs) < required:
        raise WrongMoveCount(required, len(pairs))
    for ordinal, (src, dst) in enumerate(pairs, 1):
        if dst >= src:
            raise MovesBackwards(ordinal)
    on_bar = board[25]
    for ordinal, (src, _) in enumerate(pairs, 1):
        if on_bar and src != 25:
            raise MustEnterFirst(ordinal)
        if src == 25:
            on_bar = max(0, on_bar - 1)
    left = usable
    for ordinal, (src, dst) in enumerate(pairs, 1):
        if not board[src]:
            raise NoCheckerThere(ordinal, src)
        ways, failure = _spans(board, opponent, src, dst, left)
        if not ways:
            if failure is None:
                raise WrongDistance(ordinal, src - dst)
            reason, point = failure
            if reason == _BLOCKED:
                raise PointBlocked(ordinal, point)
            if reason == _NO_BEAR_OFF:
                raise CannotBearOff(ordinal)
            if reason == _BAR_FIRST:
                raise MustEnterFirst(ordinal)
            raise NoCheckerThere(ordinal, point)
        _, used, board, opponent = ways[0]
        left = _without(left, used)


# -- the fibsd-movegen tool -------------------------------------------------------------


def _answer(line: str) -> dict[str, object]:
    fields = line.split()
    if len(fields) != 3:
        return {"error": f"expected '<position id> <d1> <d2>', got {len(fields)} fields"}
    text, *dice_text = fields
    try:
        position = Position.from_position_id(text)
    except InvalidPositionId as exc:
        return {"error": f"bad position id: {exc}"}
    if not all(word in ("1", "2", "3", "4", "5", "6") for word in dice_text):
        return {"error": f"bad dice: {' '.join(dice_text)!r}"}
    dice = (int(dice_text[0]), int(dice_text[1]))
    plays = legal_plays(position, dice)
    return {
        "position": text,
        "dice": list(dice),
        "plays": [{"move": format_standard(play), "result": play.result.position_id()} for play in plays],
    }


def run(lines: Iterable[str], out: TextIO) -> None:
    """Answer each query line with one JSON line, flushing so the tool works as a co-process."""
    for line in lines:
        if not line.strip():
            continue
        out.write(json.dumps(_answer(line)) + "\n")
        out.flush()


def main() -> None:
    """Console script ``fibsd-movegen``: queries on stdin, JSON lines on stdout.

    A reader that goes away (``fibsd-movegen < queries | head``) ends the tool quietly,
    as any Unix filter does, rather than with a traceback.
    """
    try:
        run(sys.stdin, sys.stdout)
    except BrokenPipeError:
        # The interpreter flushes stdout again at exit: point it at /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
