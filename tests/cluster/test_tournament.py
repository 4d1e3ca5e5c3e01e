"""A tournament driven by one node of a cluster, its players on the other: they get
their pairing, forfeit and winner lines, and one ``join`` starts the match the director
set up (the invitation, copied to every node with its tournament tag, is joined on the
inviter's node)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_twisted

from fibsd.store.tournaments import PairingRecord

from tests.cluster.site import Client, Site

CREATE = "admin tournament create --name Cup --format knockout --lengths 1 --max-players {n}"


async def _site(tmp_path: Path, redis_url: str, database: str | None = None,
                tick_ms: int = 50) -> Site:
    site = Site(tmp_path, redis_url, nodes=2, database=database)
    site.settings_overrides = {"admins": ["boss"], "tournaments.tick_ms": tick_ms,
                               "tournaments.start_timeout": 5}
    site.dice.add([(3, 1), (6, 6)])
    await site.start()
    site.services[1].shared.tournaments.stop()  # node 0 drives every tournament
    return site


async def _create(site: Site, boss: Client, players: int) -> None:
    """Created, its lease taken by node 0 (node 1 still drives at a ``tournament join``
    there, but finds the lease taken)."""
    boss.send(CREATE.format(n=players))
    await boss.expect("tournament: 1 created: Cup")
    director = site.services[0].shared.tournaments
    # A drive asked for while the director's own look drives it returns at once (it
    # runs again after): wait for the lease rather than for this drive.
    await director.drive(1)
    await site.waits.until(lambda: 1 in director._leases, lambda: "node 0's lease")


@pytest.mark.parametrize("places", [{"alice": 1, "bob": 1}, {"alice": 1, "bob": 0},
                                    {"alice": 0, "bob": 1}])
@pytest_twisted.ensureDeferred
async def test_pairing_join_and_winner_reach_another_node(
        tmp_path: Path, redis_url: str, places: dict[str, int]) -> None:
    await _pairing_join_and_winner(await _site(tmp_path, redis_url), places)


@pytest_twisted.ensureDeferred
async def test_pairing_join_and_winner_on_postgresql(tmp_path: Path, redis_url: str,
                                                     postgres_url: str) -> None:
    site = await _site(tmp_path, redis_url, postgres_url)
    await _pairing_join_and_winner(site, {"alice": 1, "bob": 0})


async def _pairing_join_and_winner(site: Site, places: dict[str, int]) -> None:
    try:
        boss = await site.login("boss", node=0)
        dan = await site.login("dan", node=1, clip=False)
        dan.send("tournament notify on")
        await dan.expect(lambda line: line.endswith(
            "tournament: you will hear who wins every tournament."))
        alice = await site.login("alice", node=places["alice"])
        bob = await site.login("bob", node=places["bob"])
        await _create(site, boss, 2)
        alice.send("tournament join 1")
        await alice.expect("tournament: you joined 1, 1/2 players.")
        bob.send("tournament join 1")  # full: node 0's director starts it
        await bob.expect("tournament: you joined 1, 2/2 players.")
        lines = await bob.expect("Type 'join alice' to accept.")
        assert [line.split("; start it by")[0] for line in lines] == [
            "tournament: 1 starts: 2 players, 1 rounds: Cup",
            "tournament: 1 round 1: you meet alice in a 1 point match",
            "alice wants to play a 1 point match with you.", "Type 'join alice' to accept."]
        lines = await alice.expect(lambda line: "you meet bob" in line)
        assert lines[0] == "tournament: 1 starts: 2 players, 1 rounds: Cup"
        bob.send("join alice")  # once: the match starts on alice's node
        await alice.expect(lambda line: line.startswith("5 bob alice"))
        host = site.lobby(places["alice"])
        assert host.matches["alice"].tournament == (1, 1)
        await site.waits.until(lambda: site.lobby(0).find("bob").playing == "alice",
                               lambda: "the match known on node 0")
        assert site.services[0].shared.tournaments.live(PairingRecord(1, 0, "alice", "bob"))
        await bob.expect(lambda line: line.startswith("board:"))
        bob.send("resign n")
        await alice.expect(lambda line: "wants to resign" in line)
        alice.send("accept")
        won = "tournament: 1 is won by alice: Cup"
        await alice.expect(won)
        await bob.expect(won)
        await dan.expect(lambda line: line.removeprefix("> ") == won)
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_forfeit_lines_reach_another_node(tmp_path: Path, redis_url: str) -> None:
    site = await _site(tmp_path, redis_url)
    try:
        boss = await site.login("boss", node=0)
        alice = await site.login("alice", node=1)
        bob = await site.login("bob", node=1)
        await _create(site, boss, 2)
        alice.send("tournament join 1")
        await alice.expect("tournament: you joined 1, 1/2 players.")
        bob.send("tournament join 1")
        await bob.expect("Type 'join alice' to accept.")
        alice.send("bye")  # gone: past the deadline he who is still here wins
        await alice.gone()
        await bob.expect("tournament: 1 round 1: you win against alice by forfeit.")
        await bob.expect("tournament: 1 is won by bob: Cup")
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_a_result_on_another_node_moves_the_tournament_at_once(
        tmp_path: Path, redis_url: str) -> None:
    """The driving node looks only once an hour here: the final's result, stored by the
    node hosting the match, reaches it by the ``tr`` item, and the winner is told."""
    site = await _site(tmp_path, redis_url, tick_ms=3_600_000)
    try:
        boss = await site.login("boss", node=0)
        alice = await site.login("alice", node=1)
        bob = await site.login("bob", node=1)
        await _create(site, boss, 2)
        alice.send("tournament join 1")
        await alice.expect("tournament: you joined 1, 1/2 players.")
        bob.send("tournament join 1")
        await bob.expect("tournament: you joined 1, 2/2 players.")
        await site.services[0].shared.tournaments.drive(1)  # full: node 0 starts it
        await bob.expect("Type 'join alice' to accept.")
        bob.send("join alice")
        await bob.expect(lambda line: line.startswith("board:"))
        bob.send("resign n")
        await alice.expect(lambda line: "wants to resign" in line)
        alice.send("accept")
        await alice.expect("tournament: 1 is won by alice: Cup")
        await bob.expect("tournament: 1 is won by alice: Cup")
    finally:
        await site.stop()
