"""Dice statistics: chi-square of the faces and of the 36 rolls, before and after fair dice.

    .venv/bin/python benchmarks/dice_stats.py --rolls 200000

"before" is the dice source every match used until fair dice (``SystemDice``: two
``secrets.randbelow(6)`` per roll); "after" is what a match rolls now: a
``SeededDice`` per match on a fresh 32-byte seed from the OS CSPRNG (as
``Lobby.draw_seed`` draws it), ``--per-match`` rolls each, counter from 0, as
protocol/fair-dice.md derives them.  ``--database FILE`` (repeatable) adds the rolls
of every finished match stored in fibsd databases (e.g. load runs'), as the players
saw them over the wire, counted together; ``--only-databases`` skips the two sources.  Prints, per source: rolls, the chi-square of the faces (5 degrees
of freedom) and of the 36 rolls (35), each with its p-value, and the share of doubles.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator

from fibsd.fair.stats import chi_square
from fibsd.fair.verify import recorded_rolls
from fibsd.rules.dice import SEED_BYTES, Dice, SeededDice, SystemDice


def system_rolls(count: int) -> Iterator[Dice]:
    dice = SystemDice()
    for _ in range(count):
        yield dice.roll()


def seeded_rolls(count: int, per_match: int) -> Iterator[Dice]:
    made = 0
    while made < count:
        dice = SeededDice(secrets.token_bytes(SEED_BYTES))
        for _ in range(min(per_match, count - made)):
            yield dice.roll()
            made += 1


def database_rolls(paths: Iterable[str]) -> Iterator[Dice]:
    for path in paths:
        conn = sqlite3.connect(path)
        for (record,) in conn.execute("SELECT record FROM finished_matches"):
            for first, second in recorded_rolls(json.loads(record)["match"]):
                yield (first, second)
        conn.close()


def report(name: str, rolls: Iterable[Dice]) -> None:
    started = time.perf_counter()
    outcomes = [0] * 36
    for first, second in rolls:
        outcomes[6 * (first - 1) + second - 1] += 1
    seconds = time.perf_counter() - started
    total = sum(outcomes)
    faces = [0] * 6
    for index, count in enumerate(outcomes):
        faces[index // 6] += count
        faces[index % 6] += count
    face_chi, face_p = chi_square(faces)
    roll_chi, roll_p = chi_square(outcomes)
    doubles = sum(outcomes[7 * i] for i in range(6)) / total
    print(f"{name}: {total} rolls; faces chi-square {face_chi:.2f} (5 df) p = {face_p:.2f}; "
          f"36 rolls chi-square {roll_chi:.2f} (35 df) p = {roll_p:.2f}; doubles "
          f"{doubles:.4f} (1/6 = 0.1667); {total / seconds:,.0f} rolls/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=200_000)
    parser.add_argument("--per-match", type=int, default=100, help="rolls per seeded match")
    parser.add_argument("--database", action="append", default=[],
                        help="also count the finished matches of this database (repeatable)")
    parser.add_argument("--only-databases", action="store_true")
    options = parser.parse_args()
    if not options.only_databases:
        report("before (SystemDice)", system_rolls(options.rolls))
        report("after (SeededDice)", seeded_rolls(options.rolls, options.per_match))
    if options.database:
        report(f"over the wire ({len(options.database)} databases)",
               database_rolls(options.database))


if __name__ == "__main__":
    main()
