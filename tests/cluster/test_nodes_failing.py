"""A node that dies, and a name that logs in again on another node: the others see
what they would see on one server when the user drops his connection or logs in
again, and a match saved by the death resumes on another node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_twisted

from tests.cluster.site import FAST_DEATH_MS, Site, play

START = [
    ("login", "alice", True),
    ("login", "bob", True),
    ("login", "carol", False),
    ("send", "alice", "toggle ready", ("alice", "6"), ("bob", "5 alice - - 1*"), ("bob", "6")),
    ("send", "bob", "toggle ready", ("bob", "6"), ("alice", "5 bob - - 1*"), ("alice", "6")),
    ("send", "carol", "watch bob", ("carol", "bob is not doing anything interesting."),
     ("alice", "5 carol - bob*"), ("alice", "6"), ("bob", "5 carol - bob*"), ("bob", "6")),
    ("send", "alice", "invite bob 1", ("bob", "Type 'join alice' to accept.")),
    ("send", "bob", "join alice", ("alice", "5 bob alice*"), ("alice", "6"),
     ("bob", "5 bob alice*"), ("bob", "6"), ("carol", "board:bob:alice:*")),
    ("send", "alice", "move 8-5 6-5", ("bob", "Please move 4 pieces."),
     ("alice", "bob rolls 6 and 6."), ("alice", "board:*"),
     ("carol", "bob rolls 6 and 6."), ("carol", "board:*")),
]
ROLLS = [(3, 1), (6, 6), (5, 2), (4, 4), (2, 1), (6, 5)]
# The match lives on alice's node (she invited); carol watches bob from his node.
PLACES = {"alice": 0, "bob": 1, "carol": 1}

DEATH = START + [
    ("crash", "alice"),
    ("wait", "", ("bob", "alice drops connection. The game was saved."), ("bob", "6"),
     ("carol", "alice drops connection. The game was saved.")),
    ("send", "bob", "rawwho", ("bob", "6")),
    ("login", "alice", True, 1),
    ("send", "alice", "invite bob", ("bob", "Type 'join alice' to accept.")),
    ("send", "bob", "join alice", ("alice", "5 bob alice*"), ("alice", "6"),
     ("bob", "5 bob alice*"), ("bob", "6"),
     ("carol", "alice and bob are resuming their 1-point match.")),
    ("send", "bob", "move 1-7 1-7 12-18 12-18", ("bob", "alice rolls 5 and 2."),
     ("bob", "board:*"), ("alice", "You roll 5 and 2."), ("alice", "board:*"),
     ("carol", "alice rolls 5 and 2."), ("carol", "board:*")),
]

TAKEOVER = START + [
    ("login", "bob", True, 0),
    ("send", "bob", "board", ("bob", "board:*")),
    ("send", "bob", "move 1-7 1-7 12-18 12-18", ("bob", "alice rolls 5 and 2."),
     ("bob", "board:*"), ("alice", "You roll 5 and 2."), ("alice", "board:*"),
     ("carol", "alice rolls 5 and 2."), ("carol", "board:*")),
]


async def _run(tmp_path: Path, redis_url: str | None, nodes: int, places: dict[str, int],
               script: list[tuple[Any, ...]], database: str | None = None
               ) -> dict[str, list[str]]:
    tmp_path.mkdir(exist_ok=True)
    site = Site(tmp_path, redis_url, nodes=nodes, database=database,
                dead_after_ms=FAST_DEATH_MS)
    site.dice.add(list(ROLLS))
    await site.start()
    try:
        return await play(site, places, script)
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_a_dead_node_drops_its_users_and_its_match_resumes_elsewhere(
        tmp_path: Path, redis_url: str) -> None:
    alone = await _run(tmp_path / "one", None, 1, PLACES, DEATH)
    cluster = await _run(tmp_path / "two", redis_url, 2, PLACES, DEATH)
    for name in alone:
        assert cluster[name] == alone[name], name
    assert "8 alice alice drops connection." in cluster["bob"]
    assert "alice drops connection. The game was saved." in cluster["bob"]
    assert "You are now playing with alice. Your running match was loaded." in cluster["bob"]


@pytest_twisted.ensureDeferred
async def test_a_dead_node_without_the_match(tmp_path: Path, redis_url: str) -> None:
    """bob's node dies; the match on alice's node is saved as on a dropped connection."""
    script = START[:-1] + [
        ("crash", "bob"),
        ("wait", "", ("alice", "bob drops connection. The game was saved."), ("alice", "6"),
         ("carol", "bob logs out. You're not watching anymore.")),
        ("send", "alice", "rawwho", ("alice", "6"))]
    places = {"alice": 0, "bob": 1, "carol": 0}
    alone = await _run(tmp_path / "one", None, 1, places, script)
    cluster = await _run(tmp_path / "two", redis_url, 2, places, script)
    for name in ("alice", "carol"):
        assert cluster[name] == alone[name], name
    assert "bob drops connection. The game was saved." in cluster["alice"]


@pytest_twisted.ensureDeferred
async def test_logging_in_again_on_another_node(tmp_path: Path, redis_url: str) -> None:
    alone = await _run(tmp_path / "one", None, 1, PLACES, TAKEOVER)
    cluster = await _run(tmp_path / "two", redis_url, 2, PLACES, TAKEOVER)
    for name in alone:
        assert cluster[name] == alone[name], name
    assert "** Warning: You are already logged in." in cluster["bob"]


@pytest_twisted.ensureDeferred
async def test_a_dead_node_on_postgresql(tmp_path: Path, redis_url: str,
                                         postgres_url: str) -> None:
    """The same, with both nodes on one PostgreSQL database (the match saved by one
    node's writes is loaded by the other)."""
    alone = await _run(tmp_path / "one", None, 1, PLACES, DEATH)
    cluster = await _run(tmp_path / "two", redis_url, 2, PLACES, DEATH, database=postgres_url)
    for name in alone:
        assert cluster[name] == alone[name], name


@pytest_twisted.ensureDeferred
async def test_a_command_waiting_on_a_dead_node_is_answered(tmp_path: Path,
                                                            redis_url: str) -> None:
    """bob's ``board`` goes to the match's node, which dies before answering: once it is
    taken for dead his session says so and goes on."""
    site = Site(tmp_path, redis_url, nodes=2, dead_after_ms=FAST_DEATH_MS)
    site.dice.add(list(ROLLS))
    await site.start()
    try:
        clients = {}
        for name in ("alice", "bob"):
            clients[name] = await site.login(name, node=PLACES[name])
            clients[name].send("toggle ready")
        alice, bob = clients["alice"], clients["bob"]
        await site.waits.until(lambda: all(site.lobby(n).find(u).ready for n in (0, 1)
                                           for u in ("alice", "bob")), lambda: "ready")
        alice.send("invite bob 1")
        await bob.expect("Type 'join alice' to accept.")
        bob.send("join alice")
        await bob.expect(lambda line: line.startswith("board:"))
        cluster = site.services[0].cluster
        cluster._heartbeat.stop()
        cluster.broker.stop()
        cluster.broker = None  # node 0 hears nothing more and says nothing more
        bob.new()
        bob.send("board")
        lines = await bob.expect("** Sorry, the server could not complete that command.")
        assert "8 alice alice drops connection." in lines
        bob.send("tell alice hello?")
        await bob.expect("** There is no one called alice.")
    finally:
        await site.stop()
