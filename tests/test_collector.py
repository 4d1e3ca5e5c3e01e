"""Full garbage collections on a clock (fibsd.collector)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from twisted.internet.task import Clock

from fibsd.collector import NEVER, ScheduledCollection


@pytest.fixture
def clock() -> Iterator[Clock]:
    before = gc.get_threshold()
    yield Clock()
    gc.set_threshold(*before)
    gc.unfreeze()


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_start_freezes_and_stops_automatic_full_collections(clock: Clock) -> None:
    young = gc.get_threshold()[:2]
    collection = ScheduledCollection(clock, 300)
    collection.start()
    assert gc.get_threshold() == (*young, NEVER)
    assert gc.get_freeze_count() > 0
    collection.stop()
    assert gc.get_threshold()[2] != NEVER
    assert gc.get_freeze_count() == 0
    assert clock.getDelayedCalls() == []


def test_full_collections_run_on_the_clock(clock: Clock) -> None:
    collection = ScheduledCollection(clock, 300)
    collection.start()
    try:
        cycle = Cycle()
        gc.collect(1)  # survivors of generation 1 move to the oldest one
        gone = weakref.ref(cycle)
        del cycle
        full = gc.get_stats()[2]["collections"]
        gc.collect(1)
        clock.advance(299)
        assert gone() is not None
        assert gc.get_stats()[2]["collections"] == full
        clock.advance(1)
        assert gone() is None
        assert gc.get_stats()[2]["collections"] == full + 1
    finally:
        collection.stop()


def test_an_interval_of_zero_leaves_python_in_charge(clock: Clock) -> None:
    before = gc.get_threshold()
    ScheduledCollection(clock, 0).start()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    assert clock.getDelayedCalls() == []
