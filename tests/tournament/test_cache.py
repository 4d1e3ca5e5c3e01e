"""The director's cache of a running tournament: looks while every pairing is under way
read nothing; a result, its own writes and a pairing not under way make it read the
store again (what another node stored is seen: tests/cluster/test_tournament.py)."""

from __future__ import annotations

from typing import Any

from fibsd.rules.dice import ScriptedDice
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import FakeServer, make_settings
from tests.server.test_social import clip_user


class CountingStore(SQLiteStore):
    """The real store, counting the director's reads of entries and pairings."""

    reads = 0

    def tournament_entries(self, tournament_id: int) -> Any:
        self.reads += 1
        return super().tournament_entries(tournament_id)

    def tournament_pairings(self, tournament_id: int) -> Any:
        self.reads += 1
        return super().tournament_pairings(tournament_id)


def test_looks_at_matches_under_way_read_nothing() -> None:
    store = CountingStore(":memory:")
    server = FakeServer(store=store, settings=make_settings(admins=["boss"]))
    server.lobby.dice = ScriptedDice([(3, 5)] * 50)
    server.lobby.coin = lambda: 1
    boss, alice, bob = (clip_user(server, name) for name in ("boss", "alice", "bob"))
    server.services.tournaments.start()
    boss.send("admin tournament create --name Duel --format knockout --lengths 1"
              " --max-players 2")
    alice.send("tournament join 1")
    bob.send("tournament join 1")  # full: it starts, alice invites bob
    bob.send("join alice")
    assert server.lobby.matches["alice"].tournament == (1, 1)
    server.advance(1)
    before = store.reads
    for _ in range(5):
        server.advance(1)
    assert store.reads == before  # five looks at a match under way: no read
    for client in (boss, alice, bob):
        client.received()
    bob.send("resign n")
    alice.send("accept")
    assert "tournament: 1 is won by alice: Duel" in alice.lines()
    assert store.reads > before  # the result: read again, the final decided
    assert store.tournament(1).winner == "alice"
    after = store.reads
    server.advance(1)
    assert store.reads == after  # finished: looked at no more
