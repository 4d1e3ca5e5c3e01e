"""The server's poll for analyses kept: each is told once, on the reactor's clock, also
when results become visible out of their sequence (PostgreSQL numbers rows at insert,
workers commit in any order)."""

from __future__ import annotations

from twisted.internet.task import Clock

from fibsd.analysis.supervisor import AnalysisService
from fibsd.config import Analysis
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import ImmediateDatabase


def test_each_result_is_told_once_even_out_of_order() -> None:
    store = SQLiteStore(":memory:")
    clock = Clock()
    told: list[int] = []
    service = AnalysisService(Analysis(workers=0, poll_ms=1000), ":memory:",
                              ImmediateDatabase(store), clock, told.append)

    def kept(sequence: int, match_id: int) -> None:
        store._conn.execute("INSERT INTO analysis_done (id, match_id, at) VALUES (?, ?, 0)",
                            (sequence, match_id))

    kept(1, 10)  # before the server started: not told
    service.startService()
    kept(2, 20)
    kept(5, 50)
    clock.advance(1)
    assert told == [20, 50]
    kept(3, 30)  # committed late, below the highest seen
    clock.advance(1)
    clock.advance(1)
    assert told == [20, 50, 30]
    service.stopService()
    store.close()
