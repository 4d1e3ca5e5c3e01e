"""The supervisor's restarts (issue 24), with real processes and the waits on a
``task.Clock``: a program that keeps failing is started again after doubling waits up
to the cap, its state logged once per change; a stable run starts the count again."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor, task
from twisted.internet.defer import Deferred
from twisted.logger import globalLogPublisher

from fibsd.config import Bots, ResidentBot
from fibsd.residents.accounts import Seat
from fibsd.residents.supervisor import Keeper, Program, Supervisor

FAILING = Program("Crashy", (sys.executable, "-c", "print('no luck'); raise SystemExit(3)"))
SLEEPING = Program("Sleepy", (sys.executable, "-c", "import time; time.sleep(600)"))


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(seen.append)
    yield seen
    globalLogPublisher.removeObserver(seen.append)


def states(events: list[dict[str, Any]]) -> list[str]:
    return [e["state"] for e in events if e.get("event") == "resident_bot"]


async def ended(keeper: Keeper) -> None:
    """Until the keeper's current process has ended."""
    assert keeper.process is not None
    done: Deferred[None] = keeper.process.ended
    await done.addTimeout(30, reactor)


@pytest_twisted.ensureDeferred
async def test_a_crash_loop_backs_off_to_the_cap_and_is_logged_once(
        events: list[dict[str, Any]]) -> None:
    clock = task.Clock()
    bots = Bots(restart_min_seconds=1, restart_max_seconds=8, stable_seconds=60)
    keeper = Keeper(FAILING, reactor, clock, bots)
    keeper.start()
    for _ in range(6):
        await ended(keeper)
        clock.advance(keeper.delays[-1])  # the next start
    assert list(keeper.delays) == [1, 2, 4, 8, 8, 8]
    assert states(events) == ["running", "restarting", "crash-looping"]
    warnings = [e for e in events if e.get("state") in ("restarting", "crash-looping")]
    assert all(e["line"] == "no luck" and "3" in e["status"] for e in warnings)
    # its output is logged from the first run and the first restart, not while it
    # crash-loops (six runs)
    assert sum(e.get("event") == "resident_bot_log" for e in events) == 2
    await keeper.stop()
    assert states(events)[-1] == "stopped"
    clock.advance(100)
    assert keeper.process is None  # stopped for good


@pytest_twisted.ensureDeferred
async def test_a_stable_run_starts_the_count_again(events: list[dict[str, Any]]) -> None:
    clock = task.Clock()
    keeper = Keeper(SLEEPING, reactor, clock, Bots(restart_min_seconds=1, stable_seconds=60))
    keeper.start()
    keeper.failures = 3  # as after a crash loop
    clock.advance(60)
    assert keeper.failures == 0
    first = keeper.process
    assert first is not None
    keeper._signal(first, "KILL")
    await first.ended.addTimeout(30, reactor)
    assert list(keeper.delays) == [1]
    clock.advance(1)
    assert keeper.process is not None and keeper.process is not first
    assert states(events) == ["running", "restarting"]
    await keeper.stop()
    assert states(events) == ["running", "restarting", "stopped"]


@pytest_twisted.ensureDeferred
async def test_stop_ends_every_process(tmp_path: Path, events: list[dict[str, Any]]) -> None:
    bot = ResidentBot("Sleepy")
    seat = Seat("Sleepy", bot, tmp_path / "pw")
    supervisor = Supervisor(Bots(), reactor, make_programs=lambda *_: [SLEEPING])
    supervisor.start([seat], 4321)
    keeper = supervisor.keepers["Sleepy"]
    process = keeper.process
    assert process is not None
    await supervisor.stop()
    assert process.ended.called and keeper.process is None
    assert states(events) == ["running", "stopped"]
