"""A gnubg resident bot's gnubg (issue 24): started with its strength's commands, it
listens for that bot alone and answers; at beginner's noise it makes another play than
the expert's.  Skipped where gnubg is not installed (.ci/run installs it)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.threads import deferToThread

from fibsd.client.bot import HeuristicBrain
from fibsd.client.gnubg_brain import GnubgBrain
from fibsd.config import Bots, ResidentBot
from fibsd.residents.accounts import Seat
from fibsd.residents.supervisor import Keeper, find_gnubg, programs

pytestmark = pytest.mark.skipif(find_gnubg("") is None, reason="gnubg is not installed "
                                "(apt-get install gnubg; .ci/run does)")

# alice (O) to play 6-5 from the opening position: 24/18 18/13 is gnubg's choice
OPENING = ("board:You:opp:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:"
           "1:6:5:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0")


def ask(port: int, times: int) -> list[str]:
    """gnubg's answers to the same board line, over one connection (gnubg serves one
    at a time: the first that gets through is kept)."""
    brain = GnubgBrain("127.0.0.1", port, fallback=HeuristicBrain(), timeout=30.0)
    deadline = time.monotonic() + 60.0
    while brain._sock is None:
        try:
            brain._sock = socket.create_connection(("127.0.0.1", port), timeout=30.0)
        except OSError:
            assert time.monotonic() < deadline, "gnubg never listened"
            time.sleep(0.1)  # gnubg loads its networks before it listens
    try:
        return [brain.ask(OPENING).strip() for _ in range(times)]
    finally:
        brain.close()


async def answers(tmp_path: Path, strength: str, times: int) -> list[str]:
    seat = Seat("Gnu", ResidentBot("Gnu", brain="gnubg", strength=strength), tmp_path / "pw")
    gnubg, bot = programs(seat, "127.0.0.1", 4321, find_gnubg(""))
    port = int(gnubg.stdin.decode().split(":")[-1])
    assert bot.argv[bot.argv.index("--gnubg-port") + 1] == str(port)
    assert gnubg.stdin.decode().splitlines()[0] == (
        f"set evaluation chequerplay evaluation plies {0 if strength != 'worldclass' else 2}")
    keeper = Keeper(gnubg, reactor, reactor, Bots())
    keeper.start()
    try:
        return await deferToThread(ask, port, times)
    finally:
        await keeper.stop()


@pytest_twisted.ensureDeferred
async def test_beginner_plays_with_noise_and_expert_without(tmp_path: Path) -> None:
    expert = await answers(tmp_path, "expert", 6)
    assert set(expert) == {"24/18 18/13"}
    beginner = await answers(tmp_path, "beginner", 6)
    # noise 0.060, deterministic as in gnubg's own levels: the same error for the same
    # position, here another play than the expert's
    assert len(set(beginner)) == 1 and beginner[0] != expert[0]
