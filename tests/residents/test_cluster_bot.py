"""A bot account's mark crosses the nodes of a cluster (issue 24): marked on one node,
whois on the other shows the bot line."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted

from tests.cluster.site import Site


@pytest_twisted.ensureDeferred
async def test_whois_on_another_node_shows_the_bot_line(tmp_path: Path, redis_url: str) -> None:
    site = Site(tmp_path, redis_url, nodes=2)
    await site.start()
    try:
        alice = await site.login("alice", node=0, clip=False)
        robo = await site.login("robo", node=1, clip=False)
        robo.send("set bot yes")
        await robo.expect(lambda line: line.endswith("** This account is now marked as a bot."))
        # the change reaches node 0 a broker trip later
        await site.waits.until(lambda: site.lobby(0).find("robo").bot,
                               lambda: "robo marked on node 0")
        alice.send("whois robo")
        lines = await alice.expect(lambda text: text.startswith("  Abandoned matches:"))
        assert lines[-2].endswith("  Bot: a program plays this account.")
    finally:
        await site.stop()
