"""Limits per address and per user count per site, not per node (issue 21: six
registrations from one address were accepted against a limit of five, three on each
node; a user's rate limits were new again on another node).  Two nodes on one
PostgreSQL database and one Redis broker, real sockets."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_twisted

from fibsd.server import ratelimit
from fibsd.wire import chat
from tests.cluster.site import Site

pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'fibsd[postgres]'")

REFUSED = "** Too many new accounts from your address. Please try again in 60 minutes."


async def _register(site: Site, name: str, node: int) -> str:
    """Register ``name`` as a guest on ``node`` (every guest comes from 127.0.0.1);
    the line that says whether it worked."""
    guest = await site.connect(name, node)
    for line in ("guest", f"name {name}", "secret", "secret"):
        guest.send(line)
    lines = await guest.expect(lambda line: "You are registered." in line
                               or "Too many new accounts" in line)
    guest.hang_up()
    return lines[-1].removeprefix("> ")


@pytest_twisted.ensureDeferred
async def test_registrations_from_one_address_count_across_nodes(
        tmp_path: Path, redis_url: str, postgres_url: str) -> None:
    site = Site(tmp_path, redis_url, nodes=2, database=postgres_url)
    await site.start()
    try:
        answers = [await _register(site, name, node % 2)
                   for node, name in enumerate(["ann", "ben", "cid", "dot", "eve", "fay"])]
        # A guest turned away at once, before his password, on either node.
        early = await site.connect("gil", 1)
        early.send("guest")
        early.send("name gil")
        refusal = await early.expect(lambda line: "Too many new accounts" in line)
    finally:
        await site.stop()
    assert answers == ["You are registered."] * 5 + [REFUSED]
    assert refusal[-1].removeprefix("> ") == REFUSED


@pytest_twisted.ensureDeferred
async def test_a_users_rate_limits_follow_him_to_another_node(
        tmp_path: Path, redis_url: str, postgres_url: str) -> None:
    site = Site(tmp_path, redis_url, nodes=2, database=postgres_url)
    site.settings_overrides = {"limits.shouts_per_minute": 2,
                               "archive.exports_per_minute": 1}
    await site.start()
    try:
        alice = await site.login("alice", node=0)
        for _ in range(2):
            alice.send("shout hello")
            await alice.expect("17 hello")  # CLIP 17: your own shout
        alice.send("export 1")
        await alice.expect("** There is no finished match #1.")
        alice.send("shout again")
        await alice.expect(chat.SHOUT_FLOOD)

        # He logs out and in again on the other node: nothing has refilled.
        alice.send("bye")
        await alice.gone()
        await site.waits.until(lambda: site.nowhere("alice"), lambda: "alice gone")
        alice = await site.login("alice", node=1)
        alice.send("shout hello")
        await alice.expect(chat.SHOUT_FLOOD)
        alice.send("export 1")
        await alice.expect("** You may export 1 matches a minute. Please wait a little.")

        # He logs in again on the first node while still on the second: the same.
        again = await site.login("alice", node=0)
        await alice.gone()
        await site.waits.until(lambda: bool(ratelimit.levels(site.lobby(0), "alice")),
                               lambda: "alice's buckets on node 0")
        again.send("shout hello")
        await again.expect(chat.SHOUT_FLOOD)
        # Another user's buckets are his own.
        bob = await site.login("bob", node=1)
        bob.send("shout hi")
        await bob.expect("17 hi")
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_failed_logins_count_on_every_node(tmp_path: Path, redis_url: str,
                                                 postgres_url: str) -> None:
    """A guesser whom the load balancer spreads over the nodes meets the delays of all
    his failures on each node, as on one server."""
    site = Site(tmp_path, redis_url, nodes=2, database=postgres_url)
    site.settings_overrides = {"access.login_free_failures": 1}
    await site.start()
    site.create_account("alice")
    throttles = [service.shared.throttle for service in site.services]
    try:
        for number in range(3):
            guesser = await site.connect("guess", (number + 1) % 2)  # 1, 0, 1
            guesser.send(f"login test 1008 alice wrong{number}")
            await site.waits.until(
                lambda number=number: all(t.failures("127.0.0.1") == number + 1
                                          for t in throttles),
                lambda: f"failures {[t.failures('127.0.0.1') for t in throttles]}")
            guesser.hang_up()
        # The next attempt on node 0 waits as after its own third failure (made on
        # node 1): 4 s after it, with one free failure.
        address = throttles[0]._addresses["127.0.0.1"]
        assert throttles[0].delay(3) == 4.0
        assert address.next_turn >= address.last_failure + 4.0
        assert throttles[0]._accounts["alice"].failures == 3
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_fairdice_of_a_finished_match_counts_on_the_players_own_node(
        tmp_path: Path, redis_url: str) -> None:
    """``fairdice <number>`` reads the database: it runs, and is counted, where the
    user is, even while his match lives on another node (it used to be forwarded there
    and counted in that node's buckets, a second allowance)."""
    site = Site(tmp_path, redis_url, nodes=2)
    site.dice.add([(3, 1), (6, 6), (5, 2), (4, 4)])
    await site.start()
    try:
        bob = await site.login("bob", node=0)
        alice = await site.login("alice", node=1)
        for player in (bob, alice):
            player.send("toggle ready")
            await player.expect(lambda line: line.startswith("** You're now ready"))
        # Both nodes know both players ready before bob invites: alice is told on node
        # 1 before node 0 hears of it through the broker.
        await site.waits.until(lambda: all(site.lobby(n).find(u).ready for n in (0, 1)
                                           for u in ("alice", "bob")), lambda: "ready")
        bob.send("invite alice 1")
        await alice.expect("Type 'join bob' to accept.")
        alice.send("join bob")  # the match lives on bob's node
        await alice.expect(lambda line: line.startswith("board:"))
        alice.send("fairdice 1")
        await alice.expect("** There is no finished match 1.")
        assert "fairdice_per_minute" in ratelimit.levels(site.lobby(1), "alice")
        assert "fairdice_per_minute" not in ratelimit.levels(site.lobby(0), "alice")
    finally:
        await site.stop()
