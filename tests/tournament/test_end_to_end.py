"""Done-when: a 32-player knockout and a 24-player, 5-round Swiss played end to end by
fibsd-bots over real sockets against a ``python -m fibsd`` process, 1-point matches.

Some entrants never come (they lose by forfeit), one bot leaves for good after its first
match, and the server is killed with SIGKILL while a round's matches are being played,
then started again on the same database and port: the bots reconnect, the interrupted
matches are resumed, and the tournament goes on to a champion.  Then the draw is checked
against the pure pairing and the archive, and every rating against its recorded changes
(tests/tournament/field.py)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest_twisted

from tests.helpers import Waits
from tests.tournament import field

LIMIT = 600.0  # seconds for a whole tournament on a loaded two-core machine
ABSENT = 3  # entrants who never log in


async def play(tmp_path: Path, fmt: str, players: int, rounds: int | None) -> None:
    names = field.bot_names(players)
    database, config, number = field.prepare(tmp_path, names, fmt=fmt, lengths=[1],
                                             rounds=rounds)
    # the absent ones are entered (they signed up, then never came)
    from fibsd.store.sqlite import SQLiteStore
    store = SQLiteStore(database)
    for name in names[:ABSENT]:
        store.join_tournament(number, name, 1500.0, 1_700_000_000)
    store.close()
    port = field.free_port()
    waits = Waits(LIMIT)
    server = field.start_server(waits, config, port)
    bots = []
    try:
        await field.until(lambda: server.port is not None or server.ended, "the server", 60)
        assert server.port == port, server.output[-2000:]
        bots = [field.bot(name, number, port) for name in names[ABSENT:]]
        leaver = bots[0]

        def round_two_under_way() -> bool:
            _, _, pairings = field.read(database, number)
            return any(p.round == 2 for p in pairings) and any(b.playing for b in bots)

        def first_match_done() -> bool:
            if leaver.matches_played and leaver.factory is not None and leaver.factory.continueTrying:
                field.drop_out(leaver)
            return round_two_under_way()

        await field.until(first_match_done, "round 2 to be under way", LIMIT)
        server.signal(signal.SIGKILL)
        await field.until(lambda: server.ended, "the killed server to end", 30)
        server = field.start_server(waits, config, port)
        await field.until(lambda: server.port is not None or server.ended, "the restart", 60)
        assert server.port == port, server.output[-2000:]

        def finished() -> bool:
            record, _, _ = field.read(database, number)
            return record.state == "finished"

        await field.until(finished, "the tournament to finish", LIMIT)
        champion = field.check_consistent(database, number, names)
        await field.until(lambda: all(b.over or b is leaver for b in bots),
                          "every bot to hear the winner", 60)
        assert {b.winner for b in bots if b is not leaver} == {champion}
        _, _, pairings = field.read(database, number)
        assert any(p.forfeit for p in pairings)  # the absent and the leaver lost so
        assert sum(p.match_id is not None for p in pairings) >= len(pairings) // 3
    finally:
        for player in bots:
            field.drop_out(player)
        if not server.ended:
            server.signal(signal.SIGTERM)
            await field.until(lambda: server.ended, "the server to stop", 60)


@pytest_twisted.ensureDeferred
async def test_a_32_player_knockout_with_forfeits_and_a_kill(tmp_path: Path) -> None:
    await play(tmp_path, "knockout", 32, None)


@pytest_twisted.ensureDeferred
async def test_a_24_player_swiss_of_5_rounds_with_forfeits_and_a_kill(tmp_path: Path) -> None:
    await play(tmp_path, "swiss", 24, 5)
