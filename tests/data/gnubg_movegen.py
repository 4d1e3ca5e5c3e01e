"""Regenerate ``movegen.txt``: every legal result of each query, as GNU Backgammon sees it.

The tests read the data file and never run this script: it needs gnubg, run by hand from
the repository root with gnubg's embedded Python::

    gnubg -t -q -p tests/data/gnubg_movegen.py >/dev/null

gnubg passes the script neither arguments nor ``__file__``, so the output path is taken
from ``MOVEGEN_OUT`` (default ``tests/data/movegen.txt``).  The file name does not match
pytest's ``test_*.py``, and ``gnubg`` is imported inside ``main`` only, so collecting
``tests/`` (with ``--doctest-modules``) imports this module harmlessly.

Where the answers come from: ``hint`` at 0-ply lists every legal play (gnubg scores all
of them at 0-ply and only prunes when searching deeper), one per resulting position; each
listed play is then made with gnubg's own ``move`` command and the board gnubg holds
afterwards, turned back to the mover's view, is the result.  Nothing here decides
legality; the script only builds positions, picks dice and labels queries.

Boards are ``(opponent, player)`` pairs of 25 counts in gnubg's order, each side in its
own numbering (index 0..23 = points 1..24, index 24 = the bar), player on roll.
"""

from __future__ import annotations

import os
import random
import sys
from collections import Counter
from types import ModuleType
from typing import Callable, Iterator

SEED = 20260121
OUT = os.environ.get("MOVEGEN_OUT", "tests/data/movegen.txt")
ROLLS = tuple((a, b) for a in range(6, 0, -1) for b in range(a, 0, -1))  # the 21 rolls
START = (0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0)
BAR = 24

# Queries wanted per category, in the order they are written.  Outcome categories
# (one-die ... dance) are filled by searching cramped positions for rolls with that outcome.
TARGETS = {
    "random": 800,
    "game": 1000,
    "bar": 600,
    "closed": 600,
    "bearoff": 600,
    "contact-bearoff": 500,
    "one-die": 250,
    "larger-die": 250,
    "double-1": 200,
    "double-2": 200,
    "double-3": 200,
    "dance": 250,
}
OUTCOMES = ("one-die", "larger-die", "double-1", "double-2", "double-3", "dance")

# gnubg must only answer: no computer player, nothing automatic, 0-ply so hint keeps all.
SETUP = (
    "set display off",
    "set player 0 human",
    "set player 1 human",
    "set automatic roll off",
    "set automatic move off",
    "set automatic game off",
    "set automatic bearoff off",
    "set automatic doubles 0",
    "set jacoby off",
    "set evaluation chequerplay evaluation plies 0",
    "set evaluation chequerplay evaluation prune off",
    "new game",
)

Side = tuple[int, ...]
Board = tuple[Side, Side]


class Oracle:
    """gnubg's game machinery asked, one query at a time, for legal results."""

    def __init__(self, gnubg: ModuleType) -> None:
        self._gnubg = gnubg
        for command in SETUP:
            gnubg.command(command)
        self._plays: dict[tuple[str, int, int], tuple[str, ...]] = {}
        self._results: dict[tuple[str, int, int], list[str]] = {}

    def position_id(self, board: Board) -> str:
        return str(self._gnubg.positionid(board))

    def board(self, position_id: str) -> Board:
        opponent, player = self._gnubg.positionfromid(position_id)
        return tuple(opponent), tuple(player)

    def swap(self, position_id: str) -> str:
        opponent, player = self.board(position_id)
        return self.position_id((player, opponent))

    def _set(self, position_id: str, dice: tuple[int, int]) -> None:
        """Put gnubg in a game with this board and roll, the player on roll to move."""
        gnubg = self._gnubg
        if gnubg.posinfo()["gamestate"] != 1:
            gnubg.command("new game")
        gnubg.command(f"set board {position_id}")
        gnubg.command("set dice %d %d" % dice)
        if gnubg.positionid() != position_id or sorted(gnubg.posinfo()["dice"]) != sorted(dice):
            raise RuntimeError(f"gnubg did not take {position_id} {dice}")

    def plays(self, position_id: str, dice: tuple[int, int]) -> tuple[str, ...]:
        """gnubg's text for every legal play, one per resulting position."""
        key = (position_id, *dice)
        if key not in self._plays:
            self._set(position_id, dice)
            hint = self._gnubg.hint(100000)
            self._plays[key] = tuple(entry["move"] for entry in hint["hint"]) if hint else ()
        return self._plays[key]

    def results(self, position_id: str, dice: tuple[int, int]) -> list[str]:
        """Sorted Position IDs (mover's view) of the positions gnubg's plays reach."""
        key = (position_id, *dice)
        if key not in self._results:
            self._results[key] = self._reach(position_id, dice)
        return self._results[key]

    def _reach(self, position_id: str, dice: tuple[int, int]) -> list[str]:
        """Make each play with gnubg's own `move` and read the board it leaves."""
        gnubg = self._gnubg
        moves = self.plays(position_id, dice)
        found = set()
        for move in moves:
            self._set(position_id, dice)
            turn = gnubg.posinfo()["turn"]
            gnubg.command(f"move {move}")
            info = gnubg.posinfo()
            if info["gamestate"] == 1 and info["turn"] == turn:
                raise RuntimeError(f"gnubg refused its own play {move} in {position_id} {dice}")
            mover, opponent = gnubg.board()  # the turn has passed: side 0 is the mover
            found.add(self.position_id((tuple(opponent), tuple(mover))))
        if len(found) != len(moves):
            raise RuntimeError(f"two of gnubg's plays meet in {position_id} {dice}: {moves}")
        return sorted(found)


# -- labelling queries by outcome ----------------------------------------------------------


def dice_used(move: str, dice: tuple[int, int]) -> int | None:
    """Dice a play uses, read from gnubg's text; None where the text cannot tell.

    gnubg writes one checker's consecutive steps as one segment (``24/20`` for 3-1) unless
    it hits on the way, so the count comes from distances.  Only a lone bear-off of a
    non-double from a point between the dice is ambiguous (``5/off`` with 6-2).
    """
    high, low = max(dice), min(dice)
    total = 0
    parts = move.split()
    for part in parts:
        count = 1
        if part.endswith(")"):
            part, _, times = part[:-1].partition("(")
            count = int(times)
        points = [
            25 if p == "bar" else 0 if p == "off" else int(p)
            for p in part.replace("*", "").split("/")
        ]
        for src, dst in zip(points, points[1:]):
            if high == low:
                steps = -(-src // high) if dst == 0 else (src - dst) // high
            elif len(parts) > 1 or count > 1 or len(points) > 2:
                steps = 1  # several segments: each is one die of a non-double
            elif dst > 0:
                steps = 2 if src - dst == high + low else 1
            elif src > high:
                steps = 2
            elif src <= low:
                steps = 1
            else:
                return None
            total += steps * count
    return total


def outcome(oracle: Oracle, position_id: str, dice: tuple[int, int]) -> str | None:
    """The outcome category of a query, or None if it has none (or cannot be told)."""
    plays = oracle.plays(position_id, dice)
    if not plays:
        return "dance"
    used = {dice_used(move, dice) for move in plays} - {None}
    if len(used) > 1:
        raise RuntimeError(f"plays of {position_id} {dice} use different numbers of dice")
    if not used:
        return None
    count = used.pop()
    high, low = max(dice), min(dice)
    if high == low:
        return f"double-{count}" if count < 4 else None
    if count == 2:
        return None
    each_alone = all(oracle.plays(position_id, (d, d)) for d in dice)
    return "larger-die" if each_alone else "one-die"


# -- building positions --------------------------------------------------------------------


class Builder:
    """A board under construction: the player's and the opponent's counts, own numbering."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.player = [0] * 25
        self.opponent = [0] * 25

    def free_for_player(self, index: int) -> bool:
        return index == BAR or self.opponent[23 - index] == 0

    def free_for_opponent(self, index: int) -> bool:
        return index == BAR or self.player[23 - index] == 0

    def put(self, side: list[int], index: int, count: int) -> None:
        other = self.opponent if side is self.player else self.player
        if count and index != BAR and other[23 - index]:
            raise ValueError("point held by the other side")
        side[index] += count

    def scatter(self, side: list[int], count: int, indices: list[int], spread: int) -> None:
        """Put ``count`` checkers on up to ``spread`` of the open ``indices``."""
        free = [i for i in indices if self.can_use(side, i)]
        if not free or count <= 0:
            return
        chosen = self.rng.sample(free, max(1, min(spread, len(free))))
        for n in range(count):
            self.put(side, chosen[n] if n < len(chosen) else self.rng.choice(chosen), 1)

    def can_use(self, side: list[int], index: int) -> bool:
        return self.free_for_player(index) if side is self.player else self.free_for_opponent(index)

    def board(self) -> Board | None:
        """The board, or None if a side has no checker left (the game would be over)."""
        if not any(self.player) or not any(self.opponent):
            return None
        if sum(self.player) > 15 or sum(self.opponent) > 15:
            raise ValueError("more than fifteen checkers")
        return tuple(self.opponent), tuple(self.player)


def off_count(rng: random.Random, most: int) -> int:
    return 0 if rng.random() < 0.5 else rng.randint(1, most)


def made_count(rng: random.Random, points: int) -> int:
    """Checkers on one of ``points`` made points: a third only while fifteen suffice."""
    return rng.randint(2, 3) if points <= 5 else 2


def random_board(rng: random.Random) -> Board | None:
    """Any legal board: checkers anywhere, some borne off or on the bar."""
    b = Builder(rng)
    for side in (b.player, b.opponent):
        left = 15 - off_count(rng, 12)
        bar = 0 if rng.random() < 0.75 else rng.randint(1, 3)
        b.put(side, BAR, min(bar, left))
        b.scatter(side, left - min(bar, left), list(range(24)), rng.randint(2, 9))
    return b.board()


def bar_board(rng: random.Random, closed: int) -> Board | None:
    """1..4 player checkers on the bar against ``closed`` made points in the opponent's home."""
    b = Builder(rng)
    home = rng.sample(range(6), closed)
    for index in home:
        b.put(b.opponent, index, made_count(rng, closed))
    left = max(0, 15 - sum(b.opponent) - off_count(rng, 3))
    blots = [i for i in range(6) if i not in home and rng.random() < 0.3]
    for index in blots[:left]:
        b.put(b.opponent, index, 1)
    b.scatter(b.opponent, left - len(blots[:left]), list(range(6, 24)), rng.randint(1, 5))
    on_bar = rng.randint(1, 4)
    b.put(b.player, BAR, on_bar)
    b.scatter(b.player, 15 - on_bar - off_count(rng, 4), list(range(24)), rng.randint(1, 7))
    return b.board()


def prime_board(rng: random.Random) -> Board | None:
    """A 4- to 6-point opponent prime with player checkers trapped behind it, or the player's
    own closed board facing an opponent on the bar."""
    b = Builder(rng)
    if rng.random() < 0.7:
        length = rng.randint(4, 6)
        start = rng.randint(0, 24 - length)  # opponent's lowest point of the prime
        for index in range(start, start + length):
            b.put(b.opponent, index, made_count(rng, length))
        extra = 15 - sum(b.opponent) - off_count(rng, 2)
        b.scatter(b.opponent, extra, list(range(24)), rng.randint(1, 3))
        behind = [23 - i for i in range(start)]  # player's points the prime blocks
        trapped = rng.randint(1, 6)
        if rng.random() < 0.3:
            b.put(b.player, BAR, 1)
            trapped -= 1
        b.scatter(b.player, trapped, behind, rng.randint(1, 3))
        rest = 15 - sum(b.player) - off_count(rng, 3)
        b.scatter(b.player, rest, list(range(24)), rng.randint(1, 5))
    else:
        made = rng.randint(5, 6)
        for index in rng.sample(range(6), made):
            b.put(b.player, index, made_count(rng, made))
        rest = 15 - sum(b.player) - off_count(rng, 1)
        b.scatter(b.player, rest, list(range(6, 24)), rng.randint(1, 3))
        on_bar = rng.randint(1, 3)
        b.put(b.opponent, BAR, on_bar)
        b.scatter(b.opponent, 15 - on_bar - off_count(rng, 4), list(range(24)), rng.randint(2, 6))
    return b.board()


def bearoff_board(rng: random.Random, contact: bool) -> Board | None:
    """All player checkers home, with gaps; the opponent past them or, for ``contact``,
    on the bar and sometimes holding points in the player's home board."""
    b = Builder(rng)
    points = rng.sample(range(6), rng.randint(1, 6))
    b.scatter(b.player, 15 - rng.randint(0, 14), points, len(points))
    if contact:
        on_bar = rng.randint(1, 2)
        b.put(b.opponent, BAR, on_bar)
        inside = rng.randint(0, 3)
        b.scatter(b.opponent, inside, list(range(18, 24)), rng.randint(1, 2))
        left = 15 - sum(b.opponent) - off_count(rng, 5)
        b.scatter(b.opponent, left, list(range(18)), rng.randint(2, 6))
    else:
        left = 15 - off_count(rng, 14)
        b.scatter(b.opponent, left, list(range(18)), rng.randint(1, 6))
    return b.board()


def cramped_board(rng: random.Random) -> Board | None:
    """Few playable checkers among many blocked points: where dice go unplayed."""
    kind = rng.random()
    if kind < 0.2:
        return bar_board(rng, rng.randint(3, 6))
    if kind < 0.3:
        return prime_board(rng)
    if kind < 0.4:
        return bearoff_board(rng, contact=True)
    b = Builder(rng)
    made = rng.sample(range(24), rng.randint(5, 8))
    for index in made:
        b.put(b.opponent, index, 2)
    if sum(b.opponent) > 15:
        return None
    movers = rng.randint(1, 3)
    if rng.random() < 0.3:
        b.put(b.player, BAR, 1)
        movers -= 1
    b.scatter(b.player, movers, list(range(6, 24)), movers)
    # Checkers on the 1-point cannot move while others are outside the home board.
    b.scatter(b.player, 15 - sum(b.player) - rng.randint(0, 10), [0], 1)
    return b.board()


# -- the categories ------------------------------------------------------------------------

Query = tuple[str, tuple[int, int]]


def rolls_for(rng: random.Random, every: float) -> tuple[tuple[int, int], ...]:
    """All 21 rolls for a share ``every`` of the positions, three random rolls otherwise."""
    if rng.random() < every:
        return ROLLS
    return tuple(sorted({roll(rng) for _ in range(3)}, reverse=True))


def roll(rng: random.Random) -> tuple[int, int]:
    a, b = rng.randint(1, 6), rng.randint(1, 6)
    return max(a, b), min(a, b)


def from_boards(
    oracle: Oracle, rng: random.Random, make: Callable[[random.Random], Board | None], every: float
) -> Iterator[Query]:
    while True:
        board = make(rng)
        if board is not None:
            position_id = oracle.position_id(board)
            for dice in rolls_for(rng, every):
                yield position_id, dice


def games(oracle: Oracle, rng: random.Random) -> Iterator[Query]:
    """Turns of whole games in which each side plays a random legal play."""
    while True:
        position_id = oracle.position_id((START, START))
        dice = roll(rng)
        while dice[0] == dice[1]:
            dice = roll(rng)
        while True:
            yield position_id, dice
            results = oracle.results(position_id, dice)
            if results:
                position_id = rng.choice(results)
                if not any(oracle.board(position_id)[1]):
                    break
            position_id = oracle.swap(position_id)
            dice = roll(rng)


def outcome_queries(oracle: Oracle, rng: random.Random, seen: set[Query]) -> dict[str, list[Query]]:
    """Rolls of cramped positions sorted by outcome, at most two per position and outcome."""
    found: dict[str, list[Query]] = {name: [] for name in OUTCOMES}
    for attempt in range(200000):
        if all(len(found[name]) >= TARGETS[name] for name in OUTCOMES):
            return found
        if attempt % 1000 == 0:
            print(f"outcomes after {attempt} positions: {_sizes(found)}", file=sys.stderr)
        board = cramped_board(rng)
        if board is None:
            continue
        position_id = oracle.position_id(board)
        taken: Counter[str] = Counter()
        for dice in ROLLS:
            name = outcome(oracle, position_id, dice)
            query = (position_id, dice)
            if name and len(found[name]) < TARGETS[name] and taken[name] < 2 and query not in seen:
                seen.add(query)
                taken[name] += 1
                found[name].append(query)
    raise RuntimeError(f"outcome search gave up: {_sizes(found)}")


def _sizes(found: dict[str, list[Query]]) -> dict[str, int]:
    return {name: len(queries) for name, queries in found.items()}


def collect(oracle: Oracle) -> dict[str, list[Query]]:
    rng = random.Random(SEED)
    sources: dict[str, Iterator[Query]] = {
        "random": from_boards(oracle, rng, random_board, 0.1),
        "game": games(oracle, rng),
        "bar": from_boards(oracle, rng, lambda r: bar_board(r, r.randint(0, 6)), 0.2),
        "closed": from_boards(oracle, rng, prime_board, 0.2),
        "bearoff": from_boards(oracle, rng, lambda r: bearoff_board(r, False), 0.2),
        "contact-bearoff": from_boards(oracle, rng, lambda r: bearoff_board(r, True), 0.2),
    }
    seen: set[Query] = set()
    chosen: dict[str, list[Query]] = {}
    for name, source in sources.items():
        chosen[name] = []
        while len(chosen[name]) < TARGETS[name]:
            query = next(source)
            if query not in seen:
                seen.add(query)
                chosen[name].append(query)
        print(f"{name}: {len(chosen[name])}", file=sys.stderr)
    chosen.update(outcome_queries(oracle, rng, seen))
    return chosen


def write(oracle: Oracle, chosen: dict[str, list[Query]]) -> None:
    with open(OUT, "w", encoding="ascii") as out:
        out.write(
            "# Legal results by GNU Backgammon, made by tests/data/gnubg_movegen.py"
            f" (seed {SEED}).\n"
            "# <position id> <d1> <d2> <category> <n> <result id>...: the sorted Position IDs\n"
            "# of every distinct position a legal play reaches, from the mover's view;\n"
            "# n = 0 when the roll cannot be played.  Counts per category:\n"
        )
        for name, queries in chosen.items():
            out.write(f"#   {name} {len(queries)}\n")
        for name, queries in chosen.items():
            for position_id, dice in queries:
                results = oracle.results(position_id, dice)
                fields = [position_id, str(dice[0]), str(dice[1]), name, str(len(results))]
                out.write(" ".join(fields + results) + "\n")


def main() -> None:
    import gnubg  # only inside gnubg's own Python

    oracle = Oracle(gnubg)
    chosen = collect(oracle)
    write(oracle, chosen)


if __name__ == "__main__":
    main()
