"""The web face while the database hangs (issue 19): a page that needs the database
answers 503 with a plain sentence at once, the log gets a line a minute at most and no
traceback, and pages work again once the database is back.  A real server; the
database thread's worker held on a gate stands for a hung database."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet.defer import Deferred
from twisted.logger import globalLogPublisher

from tests.web.conftest import start_web, stop_web


@pytest_twisted.ensureDeferred
async def test_pages_say_the_database_is_down_and_come_back(
        database: Path, match_ids: list[int]) -> None:
    web = await start_web(database, **{"db.stall_ms": 200})
    events: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(events.append)
    gate = threading.Event()
    try:
        db = web.service.db
        down: Deferred[None] = Deferred()
        db.on_down(lambda: down.called or down.callback(None))
        hung = db.run(lambda _: gate.wait(30))
        await down
        for _ in range(20):
            reply = await web.get("/players/alice")
            assert reply.code == 503
            assert "database is not available at the moment" in reply.text
        gate.set()
        await hung
        await db.when_up()
        assert (await web.get("/players/alice")).code == 200
    finally:
        gate.set()
        globalLogPublisher.removeObserver(events.append)
        await stop_web(web)
    assert [e.get("event") for e in events].count("web_database_unavailable") == 1
    assert not any(e.get("log_failure") is not None for e in events)
