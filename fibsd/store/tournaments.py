"""Tournaments in the SQL stores: the tournament, its entries, its rounds' pairings.

Every change is one transaction, and each checks the state it changes from, so two
servers (or a server and ``fibsd tournament`` from the shell) never both start, pair or
finish the same tournament:

* ``join_tournament``/``leave_tournament`` count and write in one transaction (the
  count of entries cannot pass ``max_players``; one player is in one open or running
  tournament at a time);
* ``start_tournament`` turns ``open`` into ``running`` with round 1, ``add_round``
  writes a round only if it is the next one, ``finish_tournament`` turns ``running``
  into ``finished``;
* a tournament match's result is written to its pairing by ``record_tournament_result``
  inside the transaction that stores the finished match and the ratings (``SQLStore``'s
  ``_finish``), and a forfeit with the removal of the pair's saved match: so a result
  and the tournament state it moves are never stored apart.

The next round is a pure function of the stored results (``fibsd.tournament.pairing``),
so after a crash between a result and the next round the director pairs the same round.
A node drives a tournament while it holds its lease (``take_lease``): a dead node's
lease runs out and another node takes it over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Cursor = Any

_TOURNAMENT_COLUMNS = (
    "id, name, format, lengths, rounds, max_players, start_at, bots, clock, state,"
    " created, started, finished, winner"
)
_PAIRING_COLUMNS = "round, slot, first, second, winner, forfeit, match_id, deadline"
# an entry's answers (``join_tournament``/``leave_tournament``)
JOINED, LEFT = "joined", "left"
NO_TOURNAMENT, STARTED, FULL, ALREADY, ELSEWHERE, NOT_ENTERED = (
    "no such tournament", "started", "full", "already", "elsewhere", "not entered")


@dataclass(frozen=True)
class TournamentRecord:
    id: int
    name: str
    format: str  # knockout, swiss, roundrobin
    lengths: tuple[int, ...]  # per round; the last repeats
    rounds: int | None  # Swiss: how many
    max_players: int
    start_at: int | None  # Unix time; None: when full
    bots: bool  # whether bot accounts may enter
    clock: str  # the clock of its matches ("" none), as typed: 12s+2m
    state: str  # open, running, finished
    created: int
    started: int | None = None
    finished: int | None = None
    winner: str | None = None


@dataclass(frozen=True)
class PairingRecord:
    round: int  # 1-based
    slot: int  # 0-based, the order of the round's pairings
    first: str
    second: str | None  # None: a bye
    winner: str | None = None
    forfeit: bool = False
    match_id: int | None = None  # the finished match's archive id
    deadline: int = 0  # Unix time: unstarted by then, it is decided by forfeit


def _tournament(row: Sequence[Any]) -> TournamentRecord:
    return TournamentRecord(
        id=int(row[0]), name=row[1], format=row[2],
        lengths=tuple(int(x) for x in row[3].split(",")), rounds=row[4],
        max_players=int(row[5]), start_at=row[6], bots=bool(row[7]), clock=row[8],
        state=row[9], created=int(row[10]), started=row[11], finished=row[12],
        winner=row[13])


def _pairing(row: Sequence[Any]) -> PairingRecord:
    return PairingRecord(int(row[0]), int(row[1]), row[2], row[3], row[4], bool(row[5]),
                         row[6], int(row[7]))


def record_tournament_result(cursor: Cursor, match: Any, match_id: int) -> None:
    """Inside the transaction storing ``match`` (a ``FinishedMatch`` of a tournament):
    its pairing gets its winner and archive id, if the pairing is still undecided."""
    cursor.execute(
        "UPDATE tournament_pairings SET winner = ?, match_id = ?, forfeit = ?"
        " WHERE tournament_id = ? AND round = ? AND winner IS NULL"
        " AND ((first = ? AND second = ?) OR (first = ? AND second = ?))",
        (match.winner, match_id, False, match.tournament, match.tournament_round,
         match.winner, match.loser, match.loser, match.winner))


def rename_in_tournaments(cursor: Cursor, name: str, new_name: str) -> None:
    """Inside ``rename_user``'s transaction: the player keeps his place in the open and
    running tournaments (a finished draw keeps the names it was played under)."""
    live = "tournament_id IN (SELECT id FROM tournaments WHERE state != 'finished')"
    cursor.execute(f"UPDATE tournament_entries SET name = ? WHERE name = ? AND {live}",
                   (new_name, name))
    for column in ("first", "second", "winner"):
        cursor.execute(f"UPDATE tournament_pairings SET {column} = ? WHERE {column} = ?"
                       f" AND {live}", (new_name, name))


class TournamentQueries:
    """The tournament methods of ``SQLStore`` (which brings the hooks used here)."""

    _transaction: Any
    _one: Any
    _all: Any
    _LOCK_ROW: str

    def create_tournament(self, *, name: str, fmt: str, lengths: Sequence[int],
                          rounds: int | None, max_players: int, start_at: int | None,
                          bots: bool, clock: str, created: int,
                          limit: int | None = None) -> int | None:
        """A new open tournament's id; None when ``limit`` tournaments are open or
        running already (counted in the same transaction)."""
        with self._transaction() as cursor:
            if limit is not None:
                (count,) = cursor.execute(
                    "SELECT count(*) FROM tournaments WHERE state != 'finished'").fetchone()
                if count >= limit:
                    return None
            row = cursor.execute(
                "INSERT INTO tournaments (name, format, lengths, rounds, max_players,"
                " start_at, bots, clock, state, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?,"
                " 'open', ?) RETURNING id",
                (name, fmt, ",".join(str(n) for n in lengths), rounds, max_players,
                 start_at, bool(bots), clock, created)).fetchone()
        return int(row[0])

    def tournament(self, tournament_id: int) -> TournamentRecord | None:
        row = self._one(f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments WHERE id = ?",
                        (tournament_id,))
        return None if row is None else _tournament(row)

    def tournaments(self, states: Sequence[str] = ("open", "running", "finished"),
                    limit: int = 100) -> list[TournamentRecord]:
        """Tournaments in ``states``, newest first, at most ``limit``."""
        marks = ", ".join("?" for _ in states)
        rows = self._all(f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments"
                         f" WHERE state IN ({marks}) ORDER BY id DESC LIMIT ?",
                         (*states, limit))
        return [_tournament(row) for row in rows]

    def tournament_entries(self, tournament_id: int) -> list[tuple[str, float]]:
        """(name, rating) of each entry: by seed once started, else in order of joining."""
        rows = self._all("SELECT name, rating FROM tournament_entries WHERE tournament_id = ?"
                         " ORDER BY coalesce(seed, 0), joined, name", (tournament_id,))
        return [(row[0], float(row[1])) for row in rows]

    def tournament_pairings(self, tournament_id: int) -> list[PairingRecord]:
        rows = self._all(f"SELECT {_PAIRING_COLUMNS} FROM tournament_pairings"
                         " WHERE tournament_id = ? ORDER BY round, slot", (tournament_id,))
        return [_pairing(row) for row in rows]

    def entered_tournament(self, name: str) -> int | None:
        """The open or running tournament ``name`` is entered in, if any."""
        row = self._one("SELECT t.id FROM tournament_entries AS e JOIN tournaments AS t"
                        " ON t.id = e.tournament_id WHERE e.name = ? AND t.state != 'finished'",
                        (name,))
        return None if row is None else int(row[0])

    def join_tournament(self, tournament_id: int, name: str, rating: float, now: int) -> str:
        """Enter ``name``: ``JOINED`` or why not (``NO_TOURNAMENT``, ``STARTED``,
        ``FULL``, ``ALREADY``, ``ELSEWHERE``)."""
        with self._transaction() as cursor:
            row = cursor.execute("SELECT state, max_players FROM tournaments WHERE id = ?"
                                 + self._LOCK_ROW, (tournament_id,)).fetchone()
            if row is None:
                return NO_TOURNAMENT
            if row[0] != "open":
                return STARTED
            other = cursor.execute(
                "SELECT e.tournament_id FROM tournament_entries AS e JOIN tournaments AS t"
                " ON t.id = e.tournament_id WHERE e.name = ? AND t.state != 'finished'",
                (name,)).fetchone()
            if other is not None:
                return ALREADY if int(other[0]) == tournament_id else ELSEWHERE
            (count,) = cursor.execute("SELECT count(*) FROM tournament_entries"
                                      " WHERE tournament_id = ?", (tournament_id,)).fetchone()
            if count >= row[1]:
                return FULL
            cursor.execute("INSERT INTO tournament_entries (tournament_id, name, joined,"
                           " rating) VALUES (?, ?, ?, ?)", (tournament_id, name, now, rating))
        return JOINED

    def leave_tournament(self, tournament_id: int, name: str) -> str:
        """Withdraw ``name`` before the start: ``LEFT`` or why not."""
        with self._transaction() as cursor:
            row = cursor.execute("SELECT state FROM tournaments WHERE id = ?" + self._LOCK_ROW,
                                 (tournament_id,)).fetchone()
            if row is None:
                return NO_TOURNAMENT
            if row[0] != "open":
                return STARTED
            cursor.execute("DELETE FROM tournament_entries WHERE tournament_id = ? AND name = ?",
                           (tournament_id, name))
            if cursor.rowcount == 0:
                return NOT_ENTERED
        return LEFT

    def start_tournament(self, tournament_id: int, seeds: Sequence[tuple[str, float]],
                         first_round: Sequence[tuple[str, str | None, str | None]],
                         now: int, deadline: int) -> bool:
        """Turn the open tournament running: entries ``seeds`` in seed order (with the
        ratings they are seeded by; entries not listed are withdrawn) and round 1's
        pairings (first, second, winner: a bye's).  False if it was not open."""
        with self._transaction() as cursor:
            changed = cursor.execute(
                "UPDATE tournaments SET state = 'running', started = ?"
                " WHERE id = ? AND state = 'open'", (now, tournament_id)).rowcount
            if not changed:
                return False
            listed = [name for name, _ in seeds]
            for name in [r[0] for r in cursor.execute(
                    "SELECT name FROM tournament_entries WHERE tournament_id = ?",
                    (tournament_id,)).fetchall()]:
                if name not in listed:
                    cursor.execute("DELETE FROM tournament_entries WHERE tournament_id = ?"
                                   " AND name = ?", (tournament_id, name))
            for seed, (name, rating) in enumerate(seeds, start=1):
                cursor.execute("UPDATE tournament_entries SET seed = ?, rating = ?"
                               " WHERE tournament_id = ? AND name = ?",
                               (seed, rating, tournament_id, name))
            self._insert_round(cursor, tournament_id, 1, first_round, now, deadline)
        return True

    @staticmethod
    def _insert_round(cursor: Cursor, tournament_id: int, number: int,
                      pairs: Sequence[tuple[str, str | None, str | None]], now: int,
                      deadline: int) -> None:
        for slot, (first, second, winner) in enumerate(pairs):
            cursor.execute(
                "INSERT INTO tournament_pairings (tournament_id, round, slot, first, second,"
                " winner, forfeit, paired, deadline) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (tournament_id, number, slot, first, second, winner, False, now, deadline))

    def add_round(self, tournament_id: int, number: int,
                  pairs: Sequence[tuple[str, str | None, str | None]], now: int,
                  deadline: int) -> bool:
        """Write round ``number`` if the tournament runs, every earlier round is decided
        and this one is not written yet; whether it was written."""
        with self._transaction() as cursor:
            row = cursor.execute("SELECT state FROM tournaments WHERE id = ?" + self._LOCK_ROW,
                                 (tournament_id,)).fetchone()
            if row is None or row[0] != "running":
                return False
            (last, open_) = cursor.execute(
                "SELECT coalesce(max(round), 0), count(CASE WHEN winner IS NULL THEN 1 END)"
                " FROM tournament_pairings WHERE tournament_id = ?",
                (tournament_id,)).fetchone()
            if last != number - 1 or open_:
                return False
            self._insert_round(cursor, tournament_id, number, pairs, now, deadline)
        return True

    def record_forfeit(self, tournament_id: int, number: int, slot: int, winner: str) -> bool:
        """Decide an undecided pairing by forfeit for ``winner`` and drop the pair's
        saved match (a started match given up), in one transaction; whether it was
        undecided."""
        with self._transaction() as cursor:
            row = cursor.execute(
                "SELECT first, second FROM tournament_pairings WHERE tournament_id = ?"
                " AND round = ? AND slot = ? AND winner IS NULL" + self._LOCK_ROW,
                (tournament_id, number, slot)).fetchone()
            if row is None or winner not in row:
                return False
            cursor.execute("UPDATE tournament_pairings SET winner = ?, forfeit = ?"
                           " WHERE tournament_id = ? AND round = ? AND slot = ?",
                           (winner, True, tournament_id, number, slot))
            if row[1] is not None:
                pair = sorted((row[0], row[1]))
                cursor.execute("DELETE FROM saved_matches WHERE player_a = ? AND player_b = ?",
                               tuple(pair))
        return True

    def finish_tournament(self, tournament_id: int, winner: str | None, now: int) -> bool:
        """End it with ``winner`` (None: it did not take place); whether it was not over."""
        with self._transaction() as cursor:
            return bool(cursor.execute(
                "UPDATE tournaments SET state = 'finished', finished = ?, winner = ?,"
                " driver = NULL, lease_until = NULL WHERE id = ? AND state != 'finished'",
                (now, winner, tournament_id)).rowcount)

    def take_lease(self, tournament_id: int, node: str, now: float, until: float) -> bool:
        """Let ``node`` drive the tournament until ``until`` if nobody else holds it at
        ``now`` (or renew its own lease); whether it drives it."""
        with self._transaction() as cursor:
            return bool(cursor.execute(
                "UPDATE tournaments SET driver = ?, lease_until = ? WHERE id = ?"
                " AND state != 'finished'"
                " AND (driver IS NULL OR driver = ? OR lease_until < ?)",
                (node, until, tournament_id, node, now)).rowcount)

    def names_with_setting(self, key: str, value: str) -> list[str]:
        """The accounts whose stored setting ``key`` is ``value`` (``tournament notify``)."""
        rows = self._all("SELECT u.name FROM settings AS s JOIN users AS u ON u.id = s.user_id"
                         " WHERE s.name = ? AND s.value = ? ORDER BY u.name", (key, value))
        return [row[0] for row in rows]

    def tournament_of_match(self, match_id: int) -> tuple[int, int] | None:
        """(tournament id, round) the archived match was played for, if any."""
        row = self._one("SELECT tournament_id, tournament_round FROM finished_matches"
                        " WHERE id = ? AND tournament_id IS NOT NULL", (match_id,))
        return None if row is None else (int(row[0]), int(row[1]))
