"""The server's side: it starts its worker process, a match it stores is analysed, and
``on_analysis_done`` tells its listeners on the reactor thread; stopping the server
stops the worker.  The real engine runs, at 0 plies."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.task import deferLater
from twisted.logger import formatEvent, globalLogPublisher

from fibsd.analysis.engine import find_gnubg
from fibsd.app import FibsService
from tests.analysis.matches import finished, played
from tests.helpers import make_settings

pytestmark = pytest.mark.skipif(find_gnubg() is None, reason="gnubg is not installed")


@pytest_twisted.ensureDeferred
async def test_a_stored_match_is_analysed_and_the_server_told(tmp_path: Path) -> None:
    settings = make_settings(port=0, interface="127.0.0.1",
                             database=str(tmp_path / "fibsd.sqlite"),
                             **{"analysis.workers": 1, "analysis.plies": 0,
                                "analysis.poll_ms": 100})
    service = FibsService(settings, reactor)
    told: Deferred[tuple[int, bool]] = Deferred()
    service.analysis_listeners.append(
        lambda match_id: told.callback(
            (match_id, threading.current_thread() is threading.main_thread())))
    service.startService()
    try:
        await service.listening
        (worker,) = service.analysis.workers.values()
        await service.db.record_finished_match(finished(played(2, 1, double=0.2, resign=0.0)))
        (stored,) = await service.db.finished_matches("alice")
        match_id, on_reactor = await told.addTimeout(300, reactor)
        assert (match_id, on_reactor) == (stored.id, True)
        analysis = await service.db.analysis(stored.id)
        assert analysis.state == "done" and analysis.plies == 0
    finally:
        await service.stopService()
    assert worker.ended.called and not service.analysis.workers


async def _until(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    """Wait, polling the reactor's time, until ``condition()`` holds."""
    for _ in range(int(seconds * 10)):
        if condition():
            return
        await deferLater(reactor, 0.1, lambda: None)
    raise AssertionError("the condition never held")


@pytest_twisted.ensureDeferred
async def test_a_worker_that_dies_is_started_again(tmp_path: Path) -> None:
    settings = make_settings(port=0, interface="127.0.0.1",
                             database=str(tmp_path / "fibsd.sqlite"),
                             **{"analysis.workers": 1, "analysis.plies": 0,
                                "analysis.poll_ms": 100})
    service = FibsService(settings, reactor)
    told: Deferred[int] = Deferred()
    service.analysis_listeners.append(told.callback)
    service.startService()
    try:
        await service.listening
        (first,) = service.analysis.workers.values()
        assert first.transport is not None
        first.transport.signalProcess("KILL")
        await first.ended
        await _until(lambda: bool(service.analysis.workers))
        (second,) = service.analysis.workers.values()
        assert second is not first
        await service.db.record_finished_match(finished(played(3, 1, double=0.2, resign=0.0)))
        await told.addTimeout(300, reactor)
    finally:
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_without_gnubg_the_server_runs_and_says_once_analysis_is_off(
        tmp_path: Path) -> None:
    settings = make_settings(port=0, interface="127.0.0.1",
                             database=str(tmp_path / "fibsd.sqlite"),
                             **{"analysis.workers": 1, "analysis.engine": "/nonexistent/gnubg"})
    said: list[str] = []

    def observe(event: dict[str, Any]) -> None:
        said.append(formatEvent(event))

    globalLogPublisher.addObserver(observe)
    service = FibsService(settings, reactor)
    service.startService()
    try:
        await service.listening
        await service.db.record_finished_match(finished(played(2, 1, double=0.2, resign=0.0)))
        (stored,) = await service.db.finished_matches("alice")
        assert await service.db.analysis(stored.id) is None  # nothing queued
        assert not service.analysis.workers
    finally:
        await service.stopService()
        globalLogPublisher.removeObserver(observe)
    off = [line for line in said if "analysis is off" in line]
    assert off == ["fibsd: analysis is off: no gnubg program ([analysis] engine ="
                   " '/nonexistent/gnubg'); install GNU Backgammon (README)"]
