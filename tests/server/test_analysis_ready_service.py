"""The ready notice through the real server: a FibsService on a database file, a CLIP
user on loopback, and an analysis kept by another connection to the database (as a
worker process keeps it); the server's poll (``on_analysis_done``) finds it and the
player online hears one line, the one who ``set analysis off`` none."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted
from fibsd.store.sqlite import SQLiteStore
from tests.server.test_match_restart import connect
from tests.web.analysis_records import planted
from tests.web.conftest import seed, start_web, stop_web


@pytest_twisted.ensureDeferred
async def test_a_player_online_hears_that_his_analysis_is_ready(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    ids = seed(database)
    first, third = ids[0], ids[2]  # alice - bob, carol - alice
    web = await start_web(database, **{"analysis.poll_ms": 100})
    try:
        assert web.service.shared.analysis_on
        alice, bob = await connect(web.game_port, "alice"), await connect(web.game_port, "bob")
        bob.send("set analysis off")
        await bob.wait_line(lambda line: line == "Value of 'analysis' set to off.", "set")
        store = SQLiteStore(database)
        store.save_analysis(planted(first, store.finished_match(first).record))  # type: ignore[union-attr]
        store.close()
        notice = f"Analysis ready: match #{first}, alice - bob. Type 'analysis {first}' to read it."
        await alice.wait_line(lambda line: line == notice, "the ready notice")
        # A later result: once its notice is there, any repeat of the first would be too.
        store = SQLiteStore(database)
        store.save_analysis(planted(third, store.finished_match(third).record))  # type: ignore[union-attr]
        store.close()
        later = f"Analysis ready: match #{third}, carol - alice. Type 'analysis {third}' to read it."
        await alice.wait_line(lambda line: line == later, "the second notice")
        bob.send(f"analysis {first}")  # a reply after the notices: bob was told nothing
        await bob.wait_line(lambda line: line.startswith("Analysis of match"), "bob's reply")
        assert alice.lines.count(notice) == 1 and alice.lines.count(later) == 1
        assert not any(line.startswith("Analysis ready") for line in bob.lines)
    finally:
        for bot in (locals().get("alice"), locals().get("bob")):
            if bot is not None and bot.transport is not None:
                bot.transport.loseConnection()
        await stop_web(web)
