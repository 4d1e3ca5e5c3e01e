"""On a cluster one node drives each tournament: the lease in the store.  Two servers on
one database: the first to look takes the lease and starts the tournament; the second
only watches until the first stops renewing (it died), then takes the tournament over
and carries it on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fibsd.store.sqlite import SQLiteStore
from tests.helpers import FakeServer, make_settings


def driver(database: Path) -> str | None:
    with sqlite3.connect(database) as conn:
        return conn.execute("SELECT driver FROM tournaments WHERE id = 1").fetchone()[0]


def test_a_dead_nodes_tournament_passes_to_another(tmp_path: Path) -> None:
    database = tmp_path / "f.sqlite"
    setup = SQLiteStore(database)
    for name in ("ann", "bea"):
        setup.create_user(name, "h", 1)
    setup.create_tournament(name="Cup", fmt="knockout", lengths=[1], rounds=None,
                            max_players=2, start_at=None, bots=False, clock="", created=1)
    for name in ("ann", "bea"):
        setup.join_tournament(1, name, 1500.0, 1)
    setup.close()
    nodes = [FakeServer(store=SQLiteStore(database),
                        settings=make_settings(**{"cluster.node": name}))
             for name in ("node-a", "node-b")]
    for node in nodes:
        node.services.tournaments.start()
    first, second = nodes
    first.advance(1)
    assert driver(database) == "node-a"
    assert first.store.tournament(1).state == "running"
    second.advance(1)
    second.advance(20)
    assert driver(database) == "node-a"  # a live lease is not taken
    first.services.tournaments.stop()  # the node dies: no more renewals
    second.advance(10)  # the lease runs to the second of its last renewal plus 30
    assert driver(database) == "node-a"
    second.advance(1)
    assert driver(database) == "node-b"
    second.advance(300)  # nobody came: the better seed goes through, by node-b
    (pairing,) = second.store.tournament_pairings(1)
    assert (pairing.winner, pairing.forfeit) == ("ann", True)
    assert second.store.tournament(1).winner == "ann"
    for node in nodes:
        node.store.close()
