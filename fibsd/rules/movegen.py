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

``check_play`` reads a typed play in FIBS's spirit: pairs are applied in the order given,
each must be possible in the position the previous ones left, and the whole must reach a
legal result.  Decisions where FIBS is silent or stricter than the issue asks:

* A pair may span several dice (``13-8`` for 5-3, ``24-16`` for 4-4) when the steps in
  between are open; which dice, and in which order, is chosen so that the whole play is
  legal, as is the die for an ambiguous bear-off (3-off with a 4 or a 6).  FIBS itself
  wants one pair per die.
* The pair count therefore counts dice, not pairs: ``TooManyMoves`` when there are more
  pairs than playable dice (every pair uses at least one die); ``WrongMoveCount`` when
  even reading every pair as spanning as many dice as its distance allows cannot cover
  the playable dice.  ``given`` in both is the number of pairs typed.
* The returned ``Play`` has the result of the matching legal play and the player's own
  moves, one per die, in the order typed (so hits are flagged where the player made them).
"""

from __future__ import annotations

import json
import sys
from typing import Callable, Iterable, Sequence, TextIO

from fibsd.rules.errors import (
    CannotBearOff,
    IllegalPlay,
    MovesBackwards,
    MustEnterFirst,
    NoCheckerThere,
    NotAWholePlay,
    PointBlocked,
    TooManyMoves,
    WrongDistance,
    WrongMoveCount,
)
from fibsd.rules.play import BAR_POINT, OFF_POINT, Move, Play
from fibsd.rules.position import InvalidPositionId, Position

__all__ = ["legal_plays", "dice_playable", "check_play", "main"]

_BAR = BAR_POINT
# Every Move there can be, made once: [src][dst][hit].  Fixed size, never grows.
_MOVES = tuple(tuple((Move(s, t, False), Move(s, t, True)) for t in range(26)) for s in range(26))
# Key deltas: a signed nibble per point (at most four checkers change per point in a turn,
# so the balanced base-16 sum is injective) and, above them, one bit per point hit.
_UNIT = tuple(1 << (4 * p) for p in range(26))
_HIT = tuple(1 << (4 * 26 + 4 + p) for p in range(26))
_ALL_SOURCES = tuple(range(25, 0, -1))
_ANY_HIT = 1 << (4 * 26 + 2)  # the nibble part stays well below this in size


# A result of legal moves from a valid position is valid, and re-validating each one would
# cost ten times building it: results (and their plays) are filled through the slot
# descriptors, which is what the frozen dataclasses' own __init__ does, minus the checks.
_SET_PLAYER = Position.player.__set__  # type: ignore[attr-defined]
_SET_OPPONENT = Position.opponent.__set__  # type: ignore[attr-defined]
_SET_MOVES = Play.moves.__set__  # type: ignore[attr-defined]
_SET_RESULT = Play.result.__set__  # type: ignore[attr-defined]


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
    found, _ = _search(position, _check_dice(dice))
    opponent = position.opponent
    new = object.__new__
    set_player = _SET_PLAYER
    set_opponent = _SET_OPPONENT
    set_moves = _SET_MOVES
    set_result = _SET_RESULT
    plays = []
    for moves, player, key in found.values():
        result = new(Position)
        set_player(result, player)
        set_opponent(result, _after_hits(opponent, moves) if key > _ANY_HIT else opponent)
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
    return _search(position, _check_dice(dice))[1]


_Found = dict[int, tuple[tuple[Move, ...], tuple[int, ...], int]]


def _search(position: Position, dice: tuple[int, int]) -> tuple[_Found, int]:
    """Depth-first search over non-rising sources; returns the results kept and dice used."""
    high, low = dice
    board = [0, *position.player]  # board[p] for points 1..24, board[25] is the bar
    # Opposing checkers on each of the mover's points: status[p] for p in 1..24.
    status = (0, *position.opponent[23::-1])
    sources = _ALL_SOURCES
    hits = [False] * 26
    path: list[Move] = []
    unit = _UNIT
    hit_bit = _HIT
    all_moves = _MOVES
    full: _Found = {}  # plays using every die
    partial: dict[int, _Found] = {}  # plays that stop early, by dice used
    outside = sum(board[7:])  # checkers that keep the mover from bearing off

    def step(depth: int, first: int, key: int, sequence: tuple[int, ...]) -> None:
        """Try every move of die ``sequence[depth]`` from ``sources[first:]``."""
        nonlocal outside
        die = sequence[depth]
        last = depth + 1 == len(sequence)
        moved = False
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
                if outside:
                    continue
                if dst < 0 and any(board[src + 1 : 7]):
                    continue
                dst = 0
            moved = True
            new_key = key + unit[dst] - unit[src]
            if hit:
                new_key += hit_bit[dst]
            if last:
                if new_key not in full:
                    board[src] -= 1
                    board[dst] += 1
                    full[new_key] = ((*path, all_moves[src][dst][hit]), tuple(board[1:]), new_key)
                    board[src] += 1
                    board[dst] -= 1
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
            partial.setdefault(depth, {}).setdefault(key, (tuple(path), tuple(board[1:]), key))

    if high == low:
        step(0, 0, 0, (high,) * 4)
    else:
        step(0, 0, 0, (high, low))
        step(0, 0, 0, (low, high))
    if full:
        return full, 4 if high == low else 2
    best = max(partial)
    if best == 1 and high != low:
        larger = {k: v for k, v in partial[1].items() if _plays_die(v[0][0], high)}
        if larger:
            return larger, 1
    return (partial[best] if best else {}), best


def _plays_die(move: Move, die: int) -> bool:
    """Whether ``die`` makes this move (a bear-off below the die's point also counts:
    the conditions for it are the same whichever larger die is used)."""
    return move.pips == die or (move.dst == OFF_POINT and move.src < die)
