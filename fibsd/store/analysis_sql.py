"""The analysis queue and its results in SQL (migration 7, protocol/analysis.md).

A mixin of ``fibsd.store.sql.SQLStore``: the same statements on SQLite and PostgreSQL,
through the store's ``_transaction``/``_all``/``_one`` and two dialect hooks,
``_SKIP_LOCKED`` (PostgreSQL: workers on any machines each take a different job, none
waits for another's) and ``_LAST_MATCH_ID`` (the id of the finished match just stored,
so that its job is queued in the same transaction as its result).

One row of ``analyses`` per match is the job and its outcome.  A job is ``queued``;
a worker's ``claim_analysis`` makes it ``running`` under a lease (``lease_until``) and a
fresh ``token``; the result is kept only by the holder of that token
(``complete_analysis``), so a match is analysed into the store once even when a worker
lost its lease and another took the job again.  A running job whose lease ran out is
taken again, unless it has had its ``attempts`` already: then it is ``failed``, with
the reason, and never tried again.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

from fibsd.analysis.model import (
    AnalysisJob,
    MatchAnalysis,
    PlayerSummary,
    mark_data,
    mark_from,
)
from fibsd.store import FinishedMatch

Cursor = Any

_PLAYER_FIELDS = (
    "name", "pr", "checker_error_rate", "cube_error_rate", "luck_rate",
    "luck_adjusted_result", "decisions", "checker_decisions", "cube_decisions", "doubtful",
    "bad", "very_bad",
)
_PLAYER_COLUMNS = ", ".join(_PLAYER_FIELDS)
WHICH = ("all", "rated", "none")  # ``[analysis] matches``


def _summary(row: tuple[Any, ...]) -> PlayerSummary:
    return PlayerSummary(*row)


class AnalysisQueries:
    """The analysis methods of the ``Store``; ``SQLStore`` brings the connection."""

    _SKIP_LOCKED: str = ""  # the writer holds the whole database (SQLite)
    _LAST_MATCH_ID: str = "last_insert_rowid()"
    # (which matches, plies): what ``record_finished_match`` queues; None queues none
    _analysis_policy: tuple[str, int] | None = None

    # what SQLStore provides
    _LOCK_ROW: str
    _transaction: Any
    _all: Any
    _one: Any

    def queue_analyses(self, which: str, plies: int) -> None:
        """From now on queue an analysis at ``plies`` for each finished match stored:
        ``all``, only ``rated`` ones (a result that changed ratings), or ``none``."""
        if which not in WHICH:
            raise ValueError(f"matches must be one of {', '.join(WHICH)}, not {which!r}")
        self._analysis_policy = None if which == "none" else (which, plies)

    def _queue_finished(self, cursor: Cursor, match: FinishedMatch,
                        new_ratings: Mapping[str, tuple[float, int]] | None) -> None:
        """Inside the transaction that stored ``match``: its job, if the policy says."""
        policy = self._analysis_policy
        if policy is None or (policy[0] == "rated" and not new_ratings):
            return
        cursor.execute(
            "INSERT INTO analyses (match_id, state, plies, queued)"
            f" VALUES ({self._LAST_MATCH_ID}, 'queued', ?, ?)",
            (policy[1], float(match.finished)))

    @staticmethod
    def _rename_analyses(cursor: Cursor, name: str, new_name: str, user_id: int) -> None:
        """Inside a rename: his summaries and marks follow his results (a deleted
        namesake's stay under the old name, as the results do)."""
        his = ("SELECT id FROM finished_matches WHERE (winner = ? AND winner_id = ?)"
               " OR (loser = ? AND loser_id = ?)")
        mine = (new_name, user_id, new_name, user_id)
        cursor.execute(f"UPDATE analysis_players SET name = ? WHERE name = ?"
                       f" AND match_id IN ({his})", (new_name, name, *mine))
        for match_id, marks in cursor.execute(
                f"SELECT match_id, marks FROM analyses WHERE marks IS NOT NULL"
                f" AND match_id IN ({his})", mine).fetchall():
            data = json.loads(marks)
            for mark in data:
                if mark.get("player") == name:
                    mark["player"] = new_name
            cursor.execute("UPDATE analyses SET marks = ? WHERE match_id = ?",
                           (json.dumps(data, separators=(",", ":")), match_id))

    # the face (the contract of notes/analysis_interface.md)

    def analysis(self, match_id: int) -> MatchAnalysis | None:
        with self._transaction(write=False) as cursor:
            row = cursor.execute(
                "SELECT state, plies, error, marks, analysed_at FROM analyses"
                " WHERE match_id = ?", (match_id,)).fetchone()
            if row is None:
                return None
            players = cursor.execute(
                f"SELECT {_PLAYER_COLUMNS} FROM analysis_players WHERE match_id = ?"
                " ORDER BY seat", (match_id,)).fetchall()
        state, plies, error, marks, analysed_at = row
        return MatchAnalysis(
            match_id=match_id, state=state, plies=plies, error=error,
            players=tuple(_summary(p) for p in players),
            marks=tuple(mark_from(m) for m in json.loads(marks or "[]")),
            analysed_at=analysed_at)

    def analyses_of(self, name: str, limit: int) -> list[tuple[int, float, PlayerSummary]]:
        rows = self._all(
            "SELECT p.match_id, f.finished, " + ", ".join(f"p.{c}" for c in _PLAYER_FIELDS) +
            " FROM analysis_players AS p JOIN analyses AS a ON a.match_id = p.match_id"
            " JOIN finished_matches AS f ON f.id = p.match_id"
            " WHERE p.name = ? AND a.state = 'done'"
            " ORDER BY f.finished DESC, f.id DESC LIMIT ?", (name, limit))
        return [(row[0], float(row[1]), _summary(row[2:])) for row in rows]

    def pr_ladder(self, min_matches: int, limit: int) -> list[tuple[str, float, int]]:
        rows = self._all(
            "SELECT p.name, avg(p.pr), count(*) FROM analysis_players AS p"
            " JOIN analyses AS a ON a.match_id = p.match_id"
            " WHERE a.state = 'done' AND p.pr IS NOT NULL GROUP BY p.name"
            " HAVING count(*) >= ? ORDER BY avg(p.pr), p.name LIMIT ?",
            (min_matches, limit))
        return [(name, float(pr), int(count)) for name, pr, count in rows]

    def request_analysis(self, match_id: int, plies: int, requested_by: str,
                         now: float | None = None) -> str:
        """Queue the match again at ``plies`` for ``requested_by``.  Says what became
        of it: ``queued``; ``pending`` (queued or running already: unchanged);
        ``deep`` (analysed already at ``plies`` or deeper: unchanged); ``unknown`` (no
        such finished match).  The per-user limit is the caller's
        (``analysis_requests``)."""
        at = time.time() if now is None else now
        with self._transaction() as cursor:
            if cursor.execute("SELECT 1 FROM finished_matches WHERE id = ?",
                              (match_id,)).fetchone() is None:
                return "unknown"
            row = cursor.execute(
                f"SELECT state, plies FROM analyses WHERE match_id = ?{self._LOCK_ROW}",
                (match_id,)).fetchone()
            if row is not None and row[0] in ("queued", "running"):
                return "pending"
            if row is not None and row[0] == "done" and row[1] >= plies:
                return "deep"
            cursor.execute(
                "INSERT INTO analyses (match_id, state, plies, queued, requested_by,"
                " requested_at) VALUES (?, 'queued', ?, ?, ?, ?)"
                " ON CONFLICT (match_id) DO UPDATE SET state = 'queued',"
                " plies = excluded.plies, queued = excluded.queued, attempts = 0,"
                " lease_until = NULL, token = NULL, error = NULL,"
                " requested_by = excluded.requested_by,"
                " requested_at = excluded.requested_at",
                (match_id, plies, at, requested_by, at))
        return "queued"

    def analysis_requests(self, name: str, since: float) -> int:
        """How many matches ``name`` asked to have analysed again after ``since`` (for
        the face's per-user limit)."""
        (count,) = self._one(
            "SELECT count(*) FROM analyses WHERE requested_by = ? AND requested_at > ?",
            (name, since))
        return int(count)

    def save_analysis(self, result: MatchAnalysis) -> None:
        """Keep ``result`` as the match's analysis, whatever its job's state."""
        with self._transaction() as cursor:
            cursor.execute(
                "INSERT INTO analyses (match_id, state, plies, queued) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (match_id) DO NOTHING",
                (result.match_id, result.state, result.plies or 0,
                 result.analysed_at or 0.0))
            self._keep(cursor, result)

    @staticmethod
    def _keep(cursor: Cursor, result: MatchAnalysis) -> None:
        cursor.execute(
            "UPDATE analyses SET state = ?, plies = coalesce(?, plies), error = ?,"
            " marks = ?, analysed_at = ?, lease_until = NULL, token = NULL"
            " WHERE match_id = ?",
            (result.state, result.plies, result.error,
             json.dumps([mark_data(m) for m in result.marks], separators=(",", ":")),
             result.analysed_at, result.match_id))
        cursor.execute("DELETE FROM analysis_players WHERE match_id = ?", (result.match_id,))
        cursor.executemany(
            f"INSERT INTO analysis_players (match_id, seat, {_PLAYER_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(result.match_id, seat, p.name, p.pr, p.checker_error_rate, p.cube_error_rate,
              p.luck_rate, p.luck_adjusted_result, p.decisions, p.checker_decisions,
              p.cube_decisions, p.doubtful, p.bad, p.very_bad)
             for seat, p in enumerate(result.players)])
        if result.state == "done":
            cursor.execute("INSERT INTO analysis_done (match_id, at) VALUES (?, ?)",
                           (result.match_id, result.analysed_at or 0.0))

    # the workers

    def claim_analysis(self, now: float, lease: float, attempts: int) -> AnalysisJob | None:
        """Take the oldest job due (queued, or running with its lease run out) for
        ``lease`` seconds, or None.  A job whose lease ran out after its ``attempts``th
        try is failed instead (its worker was lost each time)."""
        token = secrets.token_hex(8)
        with self._transaction() as cursor:
            cursor.execute(
                "UPDATE analyses SET state = 'failed', token = NULL, lease_until = NULL,"
                " error = 'no result after ' || attempts || ' attempts (the worker was lost"
                " or timed out)' WHERE state = 'running' AND lease_until < ?"
                " AND attempts >= ?", (now, attempts))
            row = cursor.execute(
                "SELECT match_id, plies, attempts FROM analyses"
                " WHERE state = 'queued' OR (state = 'running' AND lease_until < ?)"
                f" ORDER BY queued, match_id LIMIT 1{self._SKIP_LOCKED}", (now,)).fetchone()
            if row is None:
                return None
            match_id, plies, tried = row
            cursor.execute(
                "UPDATE analyses SET state = 'running', attempts = attempts + 1,"
                " lease_until = ?, token = ? WHERE match_id = ?",
                (now + lease, token, match_id))
            (record,) = cursor.execute(
                "SELECT record FROM finished_matches WHERE id = ?", (match_id,)).fetchone()
        return AnalysisJob(int(match_id), int(plies), record, int(tried) + 1, token)

    def complete_analysis(self, result: MatchAnalysis, token: str) -> bool:
        """Keep ``result`` if the claim ``token`` still holds the job; False (nothing
        written) if another worker took it meanwhile, or it was failed or requeued."""
        with self._transaction() as cursor:
            row = cursor.execute(
                f"SELECT 1 FROM analyses WHERE match_id = ? AND token = ?"
                f" AND state = 'running'{self._LOCK_ROW}",
                (result.match_id, token)).fetchone()
            if row is None:
                return False
            self._keep(cursor, result)
        return True

    def fail_analysis(self, match_id: int, token: str, reason: str, attempts: int,
                      final: bool = False) -> str | None:
        """The holder of ``token`` could not analyse the match: ``failed`` with
        ``reason`` once it has had its ``attempts`` (or at once if ``final``), else
        ``queued`` again.  The state it is left in; None if the token no longer holds
        the job."""
        with self._transaction() as cursor:
            cursor.execute(
                "UPDATE analyses SET lease_until = NULL, token = NULL, error = ?,"
                " state = CASE WHEN ? OR attempts >= ? THEN 'failed' ELSE 'queued' END"
                " WHERE match_id = ? AND token = ? AND state = 'running'",
                (reason, final, attempts, match_id, token))
            if cursor.rowcount == 0:
                return None
            (state,) = cursor.execute("SELECT state FROM analyses WHERE match_id = ?",
                                      (match_id,)).fetchone()
        return str(state)

    def release_analysis(self, match_id: int, token: str) -> None:
        """Give a job back untried (a worker stopping): queued, the attempt not counted."""
        with self._transaction() as cursor:
            cursor.execute(
                "UPDATE analyses SET state = 'queued', lease_until = NULL, token = NULL,"
                " attempts = attempts - 1 WHERE match_id = ? AND token = ?"
                " AND state = 'running'", (match_id, token))

    def analysis_done_mark(self) -> int:
        """The sequence of the newest result kept (0: none): where a poll starts."""
        (mark,) = self._one("SELECT coalesce(max(id), 0) FROM analysis_done")
        return int(mark)

    def analyses_done_after(self, seen: int, limit: int = 1000) -> list[tuple[int, int]]:
        """(sequence, match id) of the results kept after sequence ``seen``, in order
        (the server's poll for ``on_analysis_done``)."""
        rows = self._all("SELECT id, match_id FROM analysis_done WHERE id > ?"
                         " ORDER BY id LIMIT ?", (seen, limit))
        return [(int(i), int(m)) for i, m in rows]

    def analysis_counts(self) -> dict[str, int]:
        """How many jobs are in each state (the operator's view, the benchmarks)."""
        return {state: int(count) for state, count in
                self._all("SELECT state, count(*) FROM analyses GROUP BY state")}
