"""What the match archive costs: ``.mat`` export of long matches, and archive pages.

    .venv/bin/python benchmarks/export.py [matches per length]

1. Random matches of 5, 11 and 25 points (random legal plays, seeded dice, a double now
   and then, taken or dropped) are exported with ``mat_text`` (which replays the record
   through the rules engine, every move checked), read back with ``parse_mat`` and
   replayed again with ``mat_record``: milliseconds per match and the sizes.
2. A SQLite archive of 5,000 finished matches (one player in 2,000 of them): the time of
   an ``archive`` page (``recent_finished_matches``, 21 rows) near the newest and far back,
   and of ``finished_match(id)``.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fibsd.rules.dice import ScriptedDice
from fibsd.rules.game import Phase
from fibsd.rules.match import Match
from fibsd.store import FinishedMatch
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.mat import mat_record, mat_text, parse_mat


def random_match(length: int, seed: int) -> Match:
    rng = random.Random(seed)
    dice = ScriptedDice((rng.randint(1, 6), rng.randint(1, 6)) for _ in range(100_000))
    match = Match(length)
    while not match.over:
        game = match.game
        if game is None or game.over:
            match.new_game(dice)
            continue
        turn = game.turn
        assert turn is not None
        if game.phase is Phase.DOUBLE_OFFERED:
            answer = match.reject if rng.random() < 0.3 else match.accept
            answer(1 - game.pending_double.player)  # type: ignore[union-attr]
        elif game.phase is Phase.ROLL:
            if match.can_double(turn) and rng.random() < 0.03:
                match.double(turn)
            else:
                match.roll(turn, dice)
        else:
            play = rng.choice(game.legal_plays())
            match.move(turn, [(m.src, m.dst) for m in play.moves])
    return match


def timed(action, repeat: int, clock=time.perf_counter) -> float:
    """Median seconds of ``repeat`` runs by ``clock`` (wall time by default)."""
    times = []
    for _ in range(repeat):
        start = clock()
        action()
        times.append(clock() - start)
    return statistics.median(times)


def cpu(action, repeat: int) -> float:
    """Median CPU seconds of this process: on a shared machine, what the work costs."""
    return timed(action, repeat, time.process_time)


def export_figures(count: int) -> None:
    print("length  games  record KB  .mat KB  mat_text ms (CPU)  parse+replay ms (CPU)")
    for length in (5, 11, 25):
        rows = []
        for seed in range(count):
            match = random_match(length, seed)
            record = match.to_record()
            text = mat_text(record, ("alice", "bob"))
            write = timed(lambda: mat_text(record, ("alice", "bob")), 3)
            read = timed(lambda: mat_record(parse_mat(text)), 3)
            write_cpu = cpu(lambda: mat_text(record, ("alice", "bob")), 3)
            read_cpu = cpu(lambda: mat_record(parse_mat(text)), 3)
            rows.append((match.number, len(json.dumps(record)), len(text.encode()), write,
                         write_cpu, read, read_cpu))
        games, record_size, size, write, write_cpu, read, read_cpu = (
            statistics.mean(column) for column in zip(*rows))
        print(f"{length:6d}  {games:5.1f}  {record_size / 1024:9.1f}  {size / 1024:7.1f}"
              f"  {write * 1000:7.1f} ({write_cpu * 1000:5.1f})"
              f"  {read * 1000:11.1f} ({read_cpu * 1000:5.1f})")


def archive_figures() -> None:
    record = json.dumps({"format": "fibsd-live-match", "players": ["alice", "bob"],
                         "o_first": 0, "length": 5, "match": random_match(5, 1).to_record()})
    with tempfile.TemporaryDirectory() as directory:
        store = SQLiteStore(Path(directory) / "archive.sqlite")
        rng = random.Random(7)
        for number in range(5000):
            players = rng.sample([f"p{i}" for i in range(100)], 2)
            if number % 5 < 2:
                players[0] = "heavy"
            store.record_finished_match(FinishedMatch(
                players[0], players[1], 5, 5, 3, 1_700_000_000 + number, record))
        near = cpu(lambda: store.recent_finished_matches("heavy", 21, 0), 50)
        far = cpu(lambda: store.recent_finished_matches("heavy", 21, 1980), 50)
        one = cpu(lambda: store.finished_match(2500), 200)
        store.close()
    print(f"CPU: archive page 1 of 'heavy' (2,000 matches): {near * 1000:.2f} ms;"
          f" page 100: {far * 1000:.2f} ms; finished_match(id): {one * 1000:.3f} ms")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    export_figures(count)
    archive_figures()


if __name__ == "__main__":
    main()
