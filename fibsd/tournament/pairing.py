"""Pairing for the three tournament formats, as pure functions of the stored state.

Nothing here reads a clock, a database or a random source: a tournament's next round is
a function of its entries (in seed order) and the results stored so far, so a server that
restarts (or a node that takes a tournament over) pairs exactly what the first would have.

* **Knockout**: the field is seeded by rating (``seed_order``) into a bracket of the next
  power of two; seed 1 meets the lowest seed, and the seeds are placed so that the top two
  can meet only in the final.  The places left empty are byes, which go to the top seeds
  (a bye is a pairing ``(player, None)`` that player wins, never a forfeit).  Each later
  round pairs the winners of neighbouring pairings.
* **Swiss**: ``rounds`` rounds.  Before each round the players are ranked by score, then
  by the tie-break, then by seed; an odd field gives a bye (one point) to the lowest-ranked
  player who has not had one; then the players are paired top down, each with the highest
  ranked player he has not met, backtracking when the rest cannot be paired without a
  rematch (if no pairing without a rematch exists, the round repeats the fewest: it pairs
  by rank).  The tie-break is **Buchholz**: the sum of the scores of the opponents met (a
  bye adds nothing).
* **Round robin**: the field is dealt by seed into groups of at most ``group_size`` in
  snake order (1st, 2nd, ... then back), and each group plays every pairing once by the
  circle method (a player sits out each round of an odd group).  Rounds are the longest
  group's.  The winner is the best of the standings across all groups (score, Buchholz,
  seed).

A result is a ``Pairing`` with its ``winner`` set; a forfeit counts as a win for the
standings and the bracket (it is marked, but scores the same).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

FORMATS = ("knockout", "swiss", "roundrobin")


@dataclass(frozen=True)
class Pairing:
    """One pairing of a round: ``second`` None is a bye, won by ``first``."""

    first: str
    second: str | None
    winner: str | None = None
    forfeit: bool = False

    @property
    def players(self) -> tuple[str, str | None]:
        return (self.first, self.second)

    @property
    def is_bye(self) -> bool:
        return self.second is None

    @property
    def loser(self) -> str | None:
        if self.winner is None or self.second is None:
            return None
        return self.second if self.winner == self.first else self.first


Round = Sequence[Pairing]


def seed_order(entries: Sequence[tuple[str, float]]) -> list[str]:
    """Players by rating, best first; equal ratings by name ignoring case, then name."""
    ranked = sorted(entries, key=lambda e: (-e[1], e[0].lower(), e[0]))
    return [name for name, _ in ranked]


def bracket_size(players: int) -> int:
    size = 1
    while size < players:
        size *= 2
    return size


def bracket_slots(size: int) -> list[int]:
    """Seed numbers (1-based) in bracket order: neighbours meet in round one.

    >>> bracket_slots(8)
    [1, 8, 4, 5, 2, 7, 3, 6]
    """
    slots = [1]
    while len(slots) < size:
        total = 2 * len(slots) + 1
        slots = [s for seed in slots for s in (seed, total - seed)]
    return slots


def round_count(fmt: str, players: int, rounds: int | None = None,
                group_size: int = 8) -> int:
    """How many rounds a tournament of ``players`` plays (0 when it cannot start)."""
    if players < 2:
        return 0
    if fmt == "knockout":
        return bracket_size(players).bit_length() - 1
    if fmt == "swiss":
        return max(1, rounds or 1)
    if fmt == "roundrobin":
        largest = max(len(g) for g in groups([str(i) for i in range(players)], group_size))
        return largest if largest % 2 else largest - 1
    raise ValueError(f"unknown format {fmt!r}")


def length_of(lengths: Sequence[int], round_index: int) -> int:
    """The match length of round ``round_index`` (0-based): the last repeats."""
    return lengths[min(round_index, len(lengths) - 1)]


def groups(seeds: Sequence[str], group_size: int) -> list[list[str]]:
    """The round-robin groups: as few as hold everyone, dealt in snake order."""
    count = max(1, -(-len(seeds) // max(2, group_size)))
    dealt: list[list[str]] = [[] for _ in range(count)]
    for index, name in enumerate(seeds):
        lap, place = divmod(index, count)
        dealt[place if lap % 2 == 0 else count - 1 - place].append(name)
    return dealt


def circle_rounds(group: Sequence[str]) -> list[list[tuple[str, str | None]]]:
    """Every pairing of ``group`` once, by the circle method (None: sits out)."""
    table: list[str | None] = list(group)
    if len(table) % 2:
        table.append(None)
    n = len(table)
    rounds = []
    for _ in range(n - 1):
        pairs: list[tuple[str, str | None]] = []
        for i in range(n // 2):
            a, b = table[i], table[n - 1 - i]
            if a is None:
                a, b = b, a
            if a is not None:
                pairs.append((a, b))
        rounds.append(pairs)
        table = [table[0], table[-1], *table[1:-1]]
    return rounds


def next_round(fmt: str, seeds: Sequence[str], played: Sequence[Round], *,
               rounds: int | None = None, group_size: int = 8) -> list[Pairing] | None:
    """The pairings of the round after ``played`` (every pairing of which has a
    winner), or None when the tournament is over."""
    total = round_count(fmt, len(seeds), rounds, group_size)
    if len(played) >= total:
        return None
    if any(p.winner is None for r in played for p in r):
        raise ValueError("a round is not finished")
    if fmt == "knockout":
        return _knockout(seeds, played)
    if fmt == "swiss":
        return _swiss(seeds, played)
    return _round_robin(seeds, len(played), group_size)


def _knockout(seeds: Sequence[str], played: Sequence[Round]) -> list[Pairing]:
    if not played:
        size = bracket_size(len(seeds))
        order = [seeds[s - 1] if s <= len(seeds) else None for s in bracket_slots(size)]
        pairs = []
        for a, b in zip(order[::2], order[1::2]):
            assert a is not None  # a bye never meets a bye: the top seeds get them
            pairs.append(Pairing(a, b, winner=a if b is None else None))
        return pairs
    winners = [str(p.winner) for p in played[-1]]
    return [Pairing(a, b) for a, b in zip(winners[::2], winners[1::2])]


def _round_robin(seeds: Sequence[str], index: int, group_size: int) -> list[Pairing]:
    pairs = []
    for group in groups(seeds, group_size):
        schedule = circle_rounds(group)
        if index < len(schedule):
            for a, b in schedule[index]:
                pairs.append(Pairing(a, b, winner=a if b is None else None))
    return pairs


def scores(seeds: Sequence[str], played: Sequence[Round]) -> dict[str, float]:
    """Points per player: one for each win (a forfeit or a bye included)."""
    points = {name: 0.0 for name in seeds}
    for r in played:
        for p in r:
            if p.winner is not None:
                points[p.winner] += 1
    return points


def buchholz(seeds: Sequence[str], played: Sequence[Round]) -> dict[str, float]:
    """The tie-break: the sum of the final scores of each player's opponents."""
    points = scores(seeds, played)
    total = {name: 0.0 for name in seeds}
    for r in played:
        for p in r:
            if p.second is not None:
                total[p.first] += points[p.second]
                total[p.second] += points[p.first]
    return total


def standings(seeds: Sequence[str], played: Sequence[Round]) -> list[tuple[str, float, float]]:
    """(name, score, Buchholz), best first; equal on both, the better seed first."""
    points, tie = scores(seeds, played), buchholz(seeds, played)
    place = {name: i for i, name in enumerate(seeds)}
    order = sorted(seeds, key=lambda n: (-points[n], -tie[n], place[n]))
    return [(n, points[n], tie[n]) for n in order]


def _met(played: Sequence[Round]) -> set[frozenset[str]]:
    return {frozenset((p.first, p.second)) for r in played for p in r if p.second is not None}


def _swiss(seeds: Sequence[str], played: Sequence[Round]) -> list[Pairing]:
    ranked = [name for name, _, _ in standings(seeds, played)]
    if len(ranked) % 2:
        had_bye = {p.first for r in played for p in r if p.is_bye}
        candidates = [n for n in ranked if n not in had_bye] or ranked
        bye = candidates[-1]
        ranked.remove(bye)
        pairs_bye = [Pairing(bye, None, winner=bye)]
    else:
        pairs_bye = []
    met = _met(played)
    found = _pair_down(ranked, met)
    if found is None:  # everyone has met everyone it could: pair by rank
        found = list(zip(ranked[::2], ranked[1::2]))
    return [Pairing(a, b) for a, b in found] + pairs_bye


def _pair_down(ranked: list[str], met: set[frozenset[str]],
               budget: list[int] | None = None) -> list[tuple[str, str]] | None:
    """Pair ``ranked`` top down, each with the best-ranked player he has not met;
    None if impossible (or the search grows too long for the field: then the caller
    pairs by rank, so a pathological field cannot stall the server)."""
    if budget is None:
        budget = [20000]
    if not ranked:
        return []
    budget[0] -= 1
    if budget[0] < 0:
        return None
    top, rest = ranked[0], ranked[1:]
    for i, other in enumerate(rest):
        if frozenset((top, other)) in met:
            continue
        tail = _pair_down(rest[:i] + rest[i + 1:], met, budget)
        if tail is not None:
            return [(top, other), *tail]
    return None


def champion(fmt: str, seeds: Sequence[str], played: Sequence[Round], *,
             rounds: int | None = None, group_size: int = 8) -> str | None:
    """The winner once every round is played, else None."""
    if len(played) < round_count(fmt, len(seeds), rounds, group_size):
        return None
    if any(p.winner is None for r in played for p in r):
        return None
    if fmt == "knockout":
        return played[-1][0].winner if played else None
    return standings(seeds, played)[0][0] if played else None
