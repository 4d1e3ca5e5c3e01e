"""The broker dies and comes back: the nodes keep running, take each other's users for
gone meanwhile, and show them again once they hear each other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_twisted

from tests.cluster.site import FAST_DEATH_MS, Site


@pytest_twisted.ensureDeferred
async def test_a_lost_broker_is_survived(tmp_path: Path, redis_server: Any) -> None:
    site = Site(tmp_path, redis_server.url, nodes=2, dead_after_ms=FAST_DEATH_MS)
    await site.start()
    try:
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=1, clip=False)
        alice.new()
        redis_server.kill()
        await alice.expect("8 bob bob drops connection.")
        await bob.expect(lambda line: line.removeprefix("> ") == "alice drops connection.")
        alice.send("rawwho")  # the node still answers, on its own
        listed = await alice.expect("6")
        assert [line.split(" ")[1] for line in listed[:-1]] == ["alice"]
        redis_server.start_again()
        await alice.expect("7 bob bob logs in.")
        await bob.expect(lambda line: line.removeprefix("> ") == "alice logs in.")
        bob.send("tell alice back again")
        await alice.expect("12 bob back again")
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_what_was_missed_during_a_short_outage_is_caught_up(
        tmp_path: Path, redis_server: Any) -> None:
    """The broker is away for less than ``dead_after_ms``: a logout said meanwhile is
    lost, and the nodes' syncs afterwards put it right."""
    site = Site(tmp_path, redis_server.url, nodes=2)
    site.settings_overrides = {"cluster.dead_after_ms": 60000}
    await site.start()
    try:
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=1)
        alice.new()
        redis_server.kill()
        bob.send("bye")
        await bob.gone()
        await site.waits.until(lambda: site.lobby(1).find("bob") is None, lambda: "bob out")
        redis_server.start_again()
        assert await alice.expect("8 bob bob drops connection.")
        assert site.nowhere("bob")
    finally:
        await site.stop()
