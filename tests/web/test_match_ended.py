"""``"ended"`` in ``/matches/<id>.json`` (protocol/web.md): kept in the record for a loss
on time and an adjudication, read from the last game for the records of before."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest_twisted

from fibsd.rules.ending import ended, marked
from fibsd.store.sqlite import SQLiteStore
from tests.web.conftest import start_web, stop_web
from tests.web.records import finished_match


def test_old_records_end_by_points_or_resignation() -> None:
    by_play = json.loads(finished_match(7, 3, resign=0.0).record)
    resigned = json.loads(finished_match(7, 1, resign=1.0).record)
    assert resigned["match"]["games"][-1][-2][0] == "resign"
    assert (ended(by_play), ended(resigned)) == ("points", "resignation")
    assert ended(json.loads(marked(json.dumps(by_play), "time"))) == "time"
    assert ended({"ended": "nonsense", "match": by_play["match"]}) == "points"


@pytest_twisted.ensureDeferred
async def test_the_match_json_says_how_each_match_ended(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    for name in ("alice", "bob"):
        store.create_user(name, "x", 1_700_000_000)
    plain = finished_match(7, 3, resign=0.0)
    rows = [plain, finished_match(7, 1, resign=1.0),
            replace(plain, record=marked(plain.record, "time")),
            replace(plain, record=marked(plain.record, "adjudication"))]
    for row in rows:
        store.record_finished_match(row)
    ids = sorted(m.id for m in store.finished_matches("alice"))
    store.close()
    web = await start_web(database)
    try:
        got = [json.loads((await web.get(f"/matches/{i}.json")).body)["ended"] for i in ids]
    finally:
        await stop_web(web)
    assert got == ["points", "resignation", "time", "adjudication"]
