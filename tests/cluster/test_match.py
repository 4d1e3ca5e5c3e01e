"""A match between users on two nodes, watched and talked about from either node: every
client receives the same lines, in the same order, as when all are on one node."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted

from tests.cluster.site import Site, play

MATCH = [
    ("login", "alice", True),
    ("login", "bob", True),
    ("login", "carol", False),
    ("send", "alice", "toggle ready", ("alice", "6"), ("bob", "5 alice - - 1*"), ("bob", "6")),
    ("send", "bob", "toggle ready", ("bob", "6"), ("alice", "5 bob - - 1*"), ("alice", "6")),
    ("send", "carol", "watch alice", ("carol", "alice is not doing anything interesting."),
     ("alice", "5 carol - alice*"), ("alice", "6"), ("bob", "5 carol - alice*"), ("bob", "6")),
    ("send", "alice", "invite bob 1", ("bob", "Type 'join alice' to accept.")),
    ("send", "bob", "join alice", ("alice", "5 bob alice*"), ("alice", "6"),
     ("bob", "5 bob alice*"), ("bob", "6"), ("carol", "board:alice:bob:*")),
    ("send", "alice", "move 8-5 6-5", ("bob", "Please move 4 pieces."),
     ("alice", "bob rolls 6 and 6."), ("alice", "board:*"),
     ("carol", "bob rolls 6 and 6."), ("carol", "board:*")),
    ("send", "carol", "show games", ("carol", "alice*")),
    ("send", "bob", "stat", ("bob", "Matches being played: 1")),
    ("send", "carol", "kibitz nice", ("carol", "** 2 users heard you."),
     ("alice", "15 carol nice"), ("bob", "15 carol nice")),
    ("send", "bob", "whisper she is good", ("bob", "** 1 user heard you."),
     ("carol", "bob whispers: she is good")),
    ("send", "alice", "say hi bob", ("bob", "12 alice hi bob")),
    ("send", "bob", "move 24-18 24-18 13-7 13-7",
     ("bob", "** You can't move home in your first move.")),
    ("send", "bob", "move 1-7 1-7 12-18 12-18", ("bob", "alice rolls 5 and 2."),
     ("bob", "board:*"), ("alice", "You roll 5 and 2."), ("alice", "board:*"),
     ("carol", "alice rolls 5 and 2."), ("carol", "board:*")),
    ("send", "alice", "board", ("alice", "board:*")),
    ("send", "bob", "pip", ("bob", "Your pip count is*")),
    ("send", "bob", "clock", ("bob", "** This match has no clock.")),
    ("send", "carol", "clock", ("carol", "** This match has no clock.")),
    ("send", "carol", "board", ("carol", "board:alice:bob:*")),
    ("send", "bob", "resign n", ("alice", "bob wants to resign.*"),
     ("carol", "bob wants to resign. alice will win 1 point.")),
    ("send", "alice", "accept", ("alice", "5 bob - - 1 0 1490.00 1*"), ("alice", "6"),
     ("bob", "5 bob - - 1 0 1490.00 1*"), ("bob", "6"),
     ("carol", "alice wins the 1 point match 1-0 .")),
    ("send", "bob", "rawwho", ("bob", "6")),
    ("send", "bob", "dicetest", ("bob", "Chi-square of the 36 rolls*")),
    ("send", "alice", "dicetest", ("alice", "Chi-square of the 36 rolls*")),
    ("send", "carol", "unwatch", ("carol", "You stop watching alice."),
     ("alice", "carol stops watching you."), ("alice", "5 carol - - *"), ("alice", "6"),
     ("bob", "5 carol - - *"), ("bob", "6")),
]
PLACES = {"alice": 0, "bob": 1, "carol": 1}


async def _run(tmp_path: Path, redis_url: str | None, nodes: int, places: dict[str, int],
               dice_queue: list[tuple[int, int]], database: str | None = None
               ) -> dict[str, list[str]]:
    tmp_path.mkdir(exist_ok=True)
    site = Site(tmp_path, redis_url, nodes=nodes, database=database)
    site.dice.add(dice_queue)
    await site.start()
    try:
        return await play(site, places, MATCH)
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_a_match_across_nodes_as_on_one(tmp_path: Path, redis_url: str) -> None:
    rolls = [(3, 1), (6, 6), (5, 2), (4, 4), (2, 1), (6, 5)]
    alone = await _run(tmp_path / "one", None, 1, PLACES, list(rolls))
    cluster = await _run(tmp_path / "two", redis_url, 2, PLACES, list(rolls))
    for name in alone:
        assert cluster[name] == alone[name], name
    assert "15 carol nice" in cluster["bob"]
    assert "n: 1" in cluster["bob"]  # his roll, counted on the match's node and his
    assert "alice wins the 1 point match 1-0 ." in cluster["carol"]
    # The other split: the watcher beside the inviter, the match on the joiner's side.
    other = await _run(tmp_path / "three", redis_url, 2, {"alice": 1, "bob": 0, "carol": 1},
                       list(rolls))
    for name in alone:
        assert other[name] == alone[name], name


@pytest_twisted.ensureDeferred
async def test_a_match_across_nodes_on_postgresql(tmp_path: Path, redis_url: str,
                                                  postgres_url: str) -> None:
    rolls = [(3, 1), (6, 6), (5, 2), (4, 4), (2, 1), (6, 5)]
    alone = await _run(tmp_path / "one", None, 1, PLACES, list(rolls))
    cluster = await _run(tmp_path / "two", redis_url, 2, PLACES, list(rolls),
                         database=postgres_url)
    for name in alone:
        assert cluster[name] == alone[name], name


@pytest_twisted.ensureDeferred
async def test_match_reports_reach_users_of_other_nodes(tmp_path: Path, redis_url: str) -> None:
    """A user who logged in with ``report`` off turns it on: the start of a match on
    another node is reported to him, once."""
    site = Site(tmp_path, redis_url, nodes=2)
    site.dice.add([(3, 1), (6, 6)])
    await site.start()
    try:
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=0)
        dave = await site.login("dave", node=1, clip=False)
        dave.send("toggle report")
        await dave.expect(lambda line: "won't be informed" in line)
        dave.send("bye")
        await dave.gone()
        await site.waits.until(lambda: site.nowhere("dave"), lambda: "dave gone")
        dave = await site.login("dave", node=1, clip=False)
        assert not site.lobby(0).find("dave").toggles["report"]
        dave.send("toggle report")
        await dave.expect(lambda line: "will be informed" in line)
        for user in (alice, bob):
            user.send("toggle ready")
        await site.waits.until(lambda: all(site.lobby(1).find(n).ready for n in ("alice", "bob"))
                               and site.lobby(0).find("dave").toggles["report"],
                               lambda: "the toggles everywhere")
        alice.send("invite bob 1")
        await bob.expect("Type 'join alice' to accept.")
        bob.send("join alice")
        lines = await dave.expect(lambda line: "start a 1 point match" in line)
        assert lines[-1].removeprefix("> ") == "alice and bob start a 1 point match."
        assert sum("start a 1 point match" in line for line in dave.lines) == 1
    finally:
        await site.stop()
