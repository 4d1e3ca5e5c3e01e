"""Nodes that join late, and one name logging in on two nodes at once."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted

from tests.cluster.site import Site


@pytest_twisted.ensureDeferred
async def test_a_node_that_starts_late_learns_who_is_online(tmp_path: Path,
                                                             redis_url: str) -> None:
    site = Site(tmp_path, redis_url, nodes=2)
    site.count = 2
    site._poker.start(0.02, now=False)
    await site.start_node(0)
    try:
        alice = await site.login("alice", node=0)
        await site.start_node(1)
        await site.waits.until(site.connected, lambda: "the nodes meet")
        await site.waits.until(lambda: site.everywhere("alice"), lambda: "alice on node 1")
        bob = await site.login("bob", node=1)
        bob.send("rawwho")
        listed = await bob.expect("6")
        assert [line.split(" ")[:2] for line in listed] == [["5", "alice"], ["5", "bob"], ["6"]]
        assert await alice.expect(lambda line: line.startswith("7 bob "))
        # Three nodes: a third one learns both, and its user is seen by both.
        site.count = 3
        await site.start_node(2)
        await site.waits.until(site.connected, lambda: "three nodes meet")
        carol = await site.login("carol", node=2)
        carol.send("rawwho")
        listed = await carol.expect("6")
        assert [line.split(" ")[1] for line in listed[:-1]] == ["alice", "bob", "carol"]
        # One node (the first name) checks abandoned matches for all.
        assert [s.cluster.leads() for s in site.services] == [True, False, False]
        carol.send("shout hello both")
        await alice.expect("13 carol hello both")
        await bob.expect("13 carol hello both")
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_one_name_logging_in_on_two_nodes_at_once(tmp_path: Path, redis_url: str) -> None:
    """Both logins succeed where they are made; as soon as the nodes hear of each
    other's, every node keeps the same one (the later login key) and the other
    connection is closed as replaced."""
    site = Site(tmp_path, redis_url, nodes=2)
    await site.start()
    try:
        site.create_account("alice")
        first = await site.connect("alice", 0)
        second = await site.connect("alice", 1)
        first.send("login test 1008 alice secret")
        second.send("login test 1008 alice secret")
        await site.waits.until(lambda: first.closed or second.closed, lambda: "one closed")
        loser, winner = (first, second) if first.closed else (second, first)
        assert "** You logged in again from another connection; closing this one." \
            in loser.lines
        assert not winner.closed
        for node in (0, 1):
            user = site.lobby(node).find("alice")
            assert user is not None
            assert user.session.remote == (node != winner.node)
            if user.session.remote:
                assert user.session.home == f"n{winner.node}"
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_a_node_that_stops_says_so(tmp_path: Path, redis_url: str) -> None:
    """A node shut down logs its users out (as on one server) and is forgotten at once,
    long before it would be taken for dead."""
    site = Site(tmp_path, redis_url, nodes=2)
    await site.start()
    try:
        alice = await site.login("alice", node=0)
        await site.login("bob", node=1)
        alice.new()
        await site.services[1].stopService()
        lines = await alice.expect(lambda line: line.startswith("8 bob "))
        assert lines[-1] == "8 bob bob logs out."
        await site.waits.until(lambda: not site.services[0].cluster.peers,
                               lambda: "node 1 forgotten")
        assert site.services[0].cluster.leads()
    finally:
        await site.stop()
