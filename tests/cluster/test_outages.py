"""The broker hangs, restarts or is away for a while: every forwarded command gets an
answer (its deadline, or at once when the link is lost) and the session goes on; an
outage shorter than ``dead_after_ms`` costs no match and no player."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import deferLater

from fibsd.cluster.node import NO_ANSWER
from tests.cluster.site import Client, Site
from tests.cluster.test_nodes_failing import ROLLS
from tests.redis_server import RedisServer


async def _match(site: Site, inviter: Client, invitee: Client) -> None:
    """``inviter`` and ``invitee`` (of two nodes) start a 1-point match on the
    inviter's node."""
    for client in (inviter, invitee):
        client.send("toggle ready")
    await site.waits.until(lambda: all(site.lobby(n).find(c.name).ready for n in (0, 1)
                                       for c in (inviter, invitee)), lambda: "ready")
    inviter.send(f"invite {invitee.name} 1")
    await invitee.expect(f"Type 'join {inviter.name}' to accept.")
    invitee.send(f"join {inviter.name}")
    await invitee.expect(lambda line: line.startswith("board:"))
    await inviter.expect(lambda line: line.startswith("board:"))


async def _two_players(site: Site) -> tuple[Client, Client]:
    alice = await site.login("alice", node=0)
    bob = await site.login("bob", node=1)
    await _match(site, alice, bob)  # lives on node 0: bob's match commands go there
    return alice, bob


@pytest_twisted.ensureDeferred
async def test_a_forwarded_command_has_a_deadline(tmp_path: Path,
                                                  redis_server: RedisServer) -> None:
    """The broker hangs (SIGSTOP: no connection is lost, nothing is delivered): bob's
    ``board``, forwarded to the match's node, is answered after ``forward_timeout_ms``
    and his next line is handled."""
    site = Site(tmp_path, redis_server.url, nodes=2)
    site.settings_overrides = {"cluster.dead_after_ms": 60000,
                               "cluster.forward_timeout_ms": 300}
    site.dice.add(list(ROLLS))
    await site.start()
    try:
        _, bob = await _two_players(site)
        bob.new()
        redis_server.process.send_signal(signal.SIGSTOP)
        try:
            bob.send("board")
            bob.send("toggle ready")  # his next line waits for the first one's answer
            lines = await bob.expect(f"** {NO_ANSWER}")
            assert lines == [f"** {NO_ANSWER}"]
            await bob.expect("** You're now refusing to play with someone.")
        finally:
            redis_server.process.send_signal(signal.SIGCONT)
        bob.send("board")
        await bob.expect(lambda line: line.startswith("board:"))
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_a_forwarded_command_across_a_broker_restart(
        tmp_path: Path, redis_server: RedisServer) -> None:
    """The broker dies while bob's command waits for the match's node: he is answered
    when the link goes (not after the deadline, an hour here), and his match goes on
    once the broker is back."""
    site = Site(tmp_path, redis_server.url, nodes=2)
    site.settings_overrides = {"cluster.dead_after_ms": 60000,
                               "cluster.forward_timeout_ms": 600000}
    site.dice.add(list(ROLLS))
    await site.start()
    try:
        alice, bob = await _two_players(site)
        alice.send("move 8-5 6-5")
        await bob.expect("Please move 4 pieces.")
        bob.new()
        redis_server.process.send_signal(signal.SIGSTOP)  # the command cannot get through
        bob.send("move 1-7 1-7 12-18 12-18")
        await site.waits.until(lambda: site.services[1].cluster.pending,
                               lambda: "bob's move forwarded")
        redis_server.kill()
        assert await bob.expect(f"** {NO_ANSWER}") == [f"** {NO_ANSWER}"]
        redis_server.start_again()
        await site.waits.until(lambda: all(s.cluster.broker.connected for s in site.services),
                               lambda: "both nodes linked again")
        await site.services[1].cluster.round_trip()
        bob.send("move 1-7 1-7 12-18 12-18")
        await bob.expect("alice rolls 5 and 2.")
        await alice.expect("You roll 5 and 2.")
    finally:
        await site.stop()


@pytest.mark.parametrize(("outage", "heartbeat_ms", "dead_after_ms"),
                         [(1.5, 1000, 3000), (1.2, 500, 2000)])
@pytest_twisted.ensureDeferred
async def test_a_short_broker_outage_costs_no_match_and_no_player(
        tmp_path: Path, redis_server: RedisServer, outage: float, heartbeat_ms: int,
        dead_after_ms: int) -> None:
    """Two matches across the nodes, the broker away for 1.5 s (half of the default
    ``dead_after_ms``, with the default heartbeat), or for 1.2 s of 2 s (where the
    nodes used to judge each other by heartbeats heard before the outage, and
    reconnected up to 2 s after the broker was back): no one drops, and both matches
    go on from where they were once the broker is back."""
    site = Site(tmp_path, redis_server.url, nodes=2)
    site.settings_overrides = {"cluster.heartbeat_ms": heartbeat_ms,
                               "cluster.dead_after_ms": dead_after_ms}
    site.dice.add(list(ROLLS))
    await site.start()
    try:
        alice, bob = await _two_players(site)
        carol = await site.login("carol", node=1)
        dave = await site.login("dave", node=0)
        await _match(site, carol, dave)  # lives on node 1: dave's commands go there
        everyone = [alice, bob, carol, dave]
        seen = {client.name: len(client.lines) for client in everyone}
        redis_server.kill()
        await deferLater(reactor, outage, lambda: None)
        redis_server.start_again()
        await site.waits.until(lambda: all(s.cluster.broker.connected for s in site.services),
                               lambda: "both nodes linked again")
        # Past the moment the nodes would have been taken for dead.
        await deferLater(reactor, (dead_after_ms + heartbeat_ms) / 1000, lambda: None)
        for service in site.services:
            assert len(service.cluster.peers) == 1
        assert set(site.lobby(0).matches) == {"alice", "bob"}
        assert set(site.lobby(1).matches) == {"carol", "dave"}
        dave.send("board")
        await dave.expect(lambda line: line.startswith("board:"))
        alice.send("move 8-5 6-5")  # her opening 3-1; bob rolls
        await bob.expect(lambda line: line.startswith("Please move "))
        bob.send("board")
        await bob.expect(lambda line: line.startswith("board:"))
        for client in everyone:
            new: list[Any] = client.lines[seen[client.name]:]
            assert not [line for line in new if "drops connection" in line
                        or line.startswith(("7 ", "8 "))], client.name
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_nodes_agree_after_one_took_the_other_for_dead(
        tmp_path: Path, redis_server: RedisServer) -> None:
    """Only bob's node takes alice's node for dead (as when only its own link was cut
    for long): once they hear each other, alice's node forgets bob's too, so both
    sides see the match saved, and it resumes."""
    site = Site(tmp_path, redis_server.url, nodes=2)
    site.settings_overrides = {"cluster.dead_after_ms": 60000}
    site.dice.add(list(ROLLS))
    await site.start()
    try:
        alice, bob = await _two_players(site)
        site.services[1].cluster._dead("n0")
        await bob.expect("alice drops connection. The game was saved.")
        await alice.expect("bob drops connection. The game was saved.")
        await site.waits.until(site.connected, lambda: "the nodes meet again")
        await site.waits.until(lambda: site.everywhere("alice") and site.everywhere("bob"),
                               lambda: "both users back on both nodes")
        assert not site.lobby(0).matches and not site.lobby(1).matches
        for node in (0, 1):
            assert site.lobby(node).find("alice").playing is None
            assert site.lobby(node).find("bob").playing is None
        alice.send("invite bob")
        await bob.expect("Type 'join alice' to accept.")
        bob.send("join alice")
        await bob.expect(lambda line: line.startswith("board:"))
        assert set(site.lobby(0).matches) == {"alice", "bob"}
    finally:
        await site.stop()
