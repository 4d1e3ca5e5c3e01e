"""Group commit of saved matches, for the stores whose writes share one shape.

A store that mixes in ``GroupCommit`` has ``_transaction()`` (a context manager giving a
cursor, committing on success and rolling back on an exception), ``_save_many(cursor,
saves)`` (``save_match``'s writes for several pairs at once, inside a transaction) and
``save_match``.  ``fibsd.server.dbthread``
hands it the saves queued together; both SQLite and PostgreSQL then pay one commit (and,
on PostgreSQL, one flush to disk) for a reactor turn's game actions instead of one each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fibsd.store import SavedMatch


class NotWritten(Exception):
    """A save of a batch wrote nothing (it names an unknown player): the batch is made
    again save by save, so that each gets its own answer."""


class GroupCommit:
    _transaction: Any
    _save_many: Any
    save_match: Any

    def save_matches(self, saves: Sequence[SavedMatch]) -> list[BaseException | None]:
        """``save_match`` for each of ``saves``, in order, in one transaction; only the
        last save of a pair is written, as the earlier ones would be replaced before the
        commit anyway.  Returns each save's outcome: ``None``, or the exception
        ``save_match`` would have raised.  If the transaction fails, nothing of it is
        kept and each save is made again on its own, so that every save gets its own
        true answer (a full disk fails them all; an unknown player fails only his)."""
        latest = {tuple(sorted((s.player_a, s.player_b))): s for s in saves}
        try:
            with self._transaction() as cursor:
                self._save_many(cursor, latest.values())
        except Exception:  # noqa: BLE001 - every save below gets its own answer
            pass
        else:
            return [None] * len(saves)
        outcomes: list[BaseException | None] = []
        for saved in saves:
            try:
                self.save_match(saved)
            except Exception as error:  # the caller's answer, as from save_match
                outcomes.append(error)
            else:
                outcomes.append(None)
        return outcomes
