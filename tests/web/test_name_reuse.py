"""A newcomer who registers a deleted account's name inherits none of its history on
the web face either (issue 19): profile, rating chart, match list API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest_twisted

from fibsd.store.sqlite import SQLiteStore
from tests.web.conftest import start_web, stop_web


@pytest_twisted.ensureDeferred
async def test_a_newcomer_of_a_deleted_name_starts_with_an_empty_profile(
        database: Path, match_ids: list[int]) -> None:
    store = SQLiteStore(database)
    store.delete_user("alice")
    store.create_user("alice", "new-hash", 1_800_000_000)
    store.close()
    web = await start_web(database, web_page_size=2)
    try:
        profile = await web.get("/players/alice")
        api = json.loads((await web.get("/api/matches?player=alice")).body)
        bobs = json.loads((await web.get("/api/matches?player=bob")).body)
    finally:
        await stop_web(web)
    assert profile.code == 200
    assert '<dd class="rating">1500.00</dd>' in profile.text
    assert '<dd class="experience">0</dd>' in profile.text
    assert 'aria-label="no rated matches yet"' in profile.text
    assert "<p>No finished matches.</p>" in profile.text
    assert not any(f"/matches/{match_id}" in profile.text for match_id in match_ids)
    assert api["matches"] == []
    # bob keeps his matches against the old alice
    assert [m["id"] for m in bobs["matches"]] == [match_ids[1], match_ids[0]]
    assert bobs["matches"][0]["players"] == ["bob", "alice"]
