"""The bot's heuristic against a random mover, engine only (no network), seeded.

    .venv/bin/python benchmarks/strategy_vs_random.py [--games 200] [--seed 1]

Single cubeless games (a gammon counts as one win): the opening roll is rerolled
until the dice differ and the higher die moves first with both; the heuristic takes
the first roll of even-numbered games, the random mover of odd-numbered ones.
Prints the heuristic's win rate with a 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fibsd.client.strategy import choose_play  # noqa: E402
from fibsd.rules.movegen import legal_plays  # noqa: E402
from fibsd.rules.play import Play  # noqa: E402
from fibsd.rules.position import Position  # noqa: E402

Chooser = Callable[[Sequence[Play]], "Play | None"]


def random_mover(rng: random.Random) -> Chooser:
    def choose(plays: Sequence[Play]) -> Play | None:
        return rng.choice(plays) if plays else None

    return choose


def play_game(first: Chooser, second: Chooser, rng: random.Random) -> int:
    """0 if ``first`` (who takes the opening roll) wins, else 1."""
    while True:
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        if dice[0] != dice[1]:
            break
    players = (first, second)
    position, turn = Position.initial(), 0
    while True:
        play = players[turn](legal_plays(position, dice))
        if play is not None:
            position = play.result
            if sum(position.player) == 0:
                return turn
        position, turn = position.swap(), 1 - turn
        dice = (rng.randint(1, 6), rng.randint(1, 6))


def wilson(wins: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate."""
    if games == 0:
        return (0.0, 1.0)
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / (1 + z * z / games)
    return (centre - half, centre + half)


def match_up(games: int, seed: int) -> int:
    """How many of ``games`` the heuristic wins against the random mover."""
    rng = random.Random(seed)
    other = random_mover(random.Random(seed + 1))
    wins = 0
    for number in range(games):
        if number % 2 == 0:
            wins += play_game(choose_play, other, rng) == 0
        else:
            wins += play_game(other, choose_play, rng) == 1
    return wins


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.perf_counter()
    wins = match_up(args.games, args.seed)
    low, high = wilson(wins, args.games)
    print(f"heuristic vs random: {wins}/{args.games} won = {wins / args.games:.1%} "
          f"(95% CI {low:.1%}-{high:.1%}), seed {args.seed}, "
          f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
