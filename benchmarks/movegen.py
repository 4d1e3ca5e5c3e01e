"""Legal-play generation speed and memory over a fixed, seeded mix of positions.

Run from the repository root: ``python benchmarks/movegen.py [queries] [rounds]``.

The queries come from seeded random self-play games (every position met, with the roll
that came next), so the mix has what real games have: non-doubles and doubles, checkers
on the bar, bear-offs, and rolls that cannot be played.  Speed is the best of several
rounds over the whole set, so other load on the machine shows as little as possible;
peak memory is measured on a separate pass, since tracemalloc slows everything down.
"""

from __future__ import annotations

import random
import sys
import time
import tracemalloc
from collections.abc import Callable

from fibsd.rules.movegen import legal_plays
from fibsd.rules.position import CHECKERS, Position

Query = tuple[Position, tuple[int, int]]
SEED = 20261121


def seeded_queries(count: int, seed: int = SEED) -> list[Query]:
    rng = random.Random(seed)
    queries: list[Query] = []
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


CATEGORIES: dict[str, Callable[[Query], bool]] = {
    "non-doubles": lambda q: q[1][0] != q[1][1],
    "doubles": lambda q: q[1][0] == q[1][1],
    "on the bar": lambda q: q[0].player[24] > 0,
    "bearing off": lambda q: not any(q[0].player[6:]),
    "cannot move": lambda q: not legal_plays(*q),
}


def rate(queries: list[Query], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for position, dice in queries:
            legal_plays(position, dice)
        best = min(best, time.perf_counter() - start)
    return len(queries) / best


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    queries = seeded_queries(count)
    plays = sum(len(legal_plays(p, d)) for p, d in queries)
    print(f"{len(queries)} queries (seed {SEED}), {plays / len(queries):.1f} distinct plays each on average")
    print(f"all queries: {rate(queries, rounds):10,.0f} queries/s (best of {rounds} rounds)")
    for name, test in CATEGORIES.items():
        subset = [q for q in queries if test(q)]
        print(f"  {name:12} {len(subset):6} queries {rate(subset, rounds):10,.0f} queries/s")
    tracemalloc.start()
    for position, dice in queries:
        legal_plays(position, dice)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak memory while generating: {peak / 1024:,.0f} KiB")


if __name__ == "__main__":
    main()
