"""Small builders and an independent referee for the rules tests.

``brute_force_results`` is deliberately naive: it tries every die order and every
checker, with no pruning, so that it shares no shortcut with ``fibsd.rules.movegen``.
"""

from __future__ import annotations

import random
from typing import Mapping

from fibsd.rules.movegen import legal_plays
from fibsd.rules.play import Move, Play
from fibsd.rules.position import CHECKERS, Position

BAR = 25


def board(mine: Mapping[int, int], theirs: Mapping[int, int] | None = None) -> Position:
    """A position from point -> count maps, both keyed in the *mover's* numbering.

    25 is the bar for either side; checkers not placed are borne off.
    """
    player = [0] * 25
    opponent = [0] * 25
    for point, count in mine.items():
        player[point - 1] += count
    for point, count in (theirs or {}).items():
        opponent[24 if point == BAR else 24 - point] += count
    return Position(tuple(player), tuple(opponent))


def replay(position: Position, moves: tuple[Move, ...]) -> Position:
    """Apply single moves with full checks, asserting each hit flag is right."""
    player, opponent = list(position.player), list(position.opponent)
    for move in moves:
        assert player[move.src - 1] > 0, move
        player[move.src - 1] -= 1
        if move.dst:
            blot = opponent[24 - move.dst]
            assert blot <= 1, move
            assert move.hit == (blot == 1), move
            if blot:
                opponent[24 - move.dst] = 0
                opponent[24] += 1
            player[move.dst - 1] += 1
        else:
            assert not move.hit
            assert sum(player[6:]) == 0, move
    return Position(tuple(player), tuple(opponent))


def brute_force_results(position: Position, dice: tuple[int, int]) -> set[Position]:
    """Every legal result, found by trying all orders of all dice on all checkers."""
    high, low = max(dice), min(dice)
    sequence = (high,) * 4 if high == low else (high, low)
    ends: set[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = set()
    seen: set[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = set()

    def explore(player: tuple[int, ...], opponent: tuple[int, ...], left: tuple[int, ...],
                used: tuple[int, ...]) -> None:
        if (player, opponent, used) in seen:
            return
        seen.add((player, opponent, used))
        moved = False
        for index, die in enumerate(left):
            for src in range(25, 0, -1):
                if not player[src - 1] or (player[24] and src != BAR):
                    continue
                dst = src - die
                new_player, new_opponent = list(player), list(opponent)
                new_player[src - 1] -= 1
                if dst >= 1:
                    if opponent[24 - dst] >= 2:
                        continue
                    if opponent[24 - dst] == 1:
                        new_opponent[24 - dst] -= 1
                        new_opponent[24] += 1
                    new_player[dst - 1] += 1
                elif any(player[6:]) or (dst < 0 and any(player[src:6])):
                    continue
                moved = True
                explore(tuple(new_player), tuple(new_opponent),
                        left[:index] + left[index + 1:], used + (die,))
        if not moved:
            ends.add((used, player, opponent))

    explore(position.player, position.opponent, sequence, ())
    most = max(len(used) for used, _, _ in ends)
    if most == 0:
        return set()
    kept = [end for end in ends if len(end[0]) == most]
    if most == 1 and high != low and any(used == (high,) for used, _, _ in kept):
        kept = [end for end in kept if end[0] == (high,)]
    return {Position(player, opponent) for _, player, opponent in kept}


def random_queries(count: int, seed: int) -> list[tuple[Position, tuple[int, int]]]:
    """Positions from seeded random games, each with the roll that came next."""
    rng = random.Random(seed)
    queries: list[tuple[Position, tuple[int, int]]] = []
    while len(queries) < count:
        position = Position.initial()
        while len(queries) < count:
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            queries.append((position, dice))
            plays = legal_plays(position, dice)
            if plays:
                position = rng.choice(plays).result
            if position.player_off == CHECKERS:
                break
            position = position.swap()
    return queries


def results(plays: tuple[Play, ...]) -> set[Position]:
    return {play.result for play in plays}
