"""Python's cycle collector on a clock, for a process that must answer within milliseconds.

A full collection walks every object the collector tracks.  With 2,000 connections and
500 matches that is 100 ms in which no command is answered, and Python starts one each
time a quarter more objects have survived into its oldest generation: every few seconds
under load (benchmarks/README.md, "Second round", item 10).  So once the
process is set up, its objects (modules, classes, configuration) are moved out of the
collector's sight with ``gc.freeze``, the young generations keep Python's schedule (a
few milliseconds each), and full collections run every ``interval`` seconds instead.
Reference counting frees everything without cycles at once, as before; garbage with
cycles that reaches the oldest generation waits for the next scheduled collection.
"""

from __future__ import annotations

import gc

from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall

# No automatic full collection: the oldest generation's threshold is never reached.
NEVER = 2**31 - 1


class ScheduledCollection:
    def __init__(self, clock: IReactorTime, interval: float) -> None:
        self.clock = clock
        self.interval = interval
        self._saved: tuple[int, int, int] | None = None
        self._loop: LoopingCall | None = None

    def start(self) -> None:
        if self.interval <= 0 or self._saved is not None:
            return
        self._saved = gc.get_threshold()
        gc.collect()
        gc.freeze()
        gc.set_threshold(self._saved[0], self._saved[1], NEVER)
        self._loop = LoopingCall(gc.collect)
        self._loop.clock = self.clock
        self._loop.start(self.interval, now=False)

    def stop(self) -> None:
        """Python's own schedule again, every object in sight (tests run services in-process)."""
        if self._saved is None:
            return
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        gc.set_threshold(*self._saved)
        gc.unfreeze()
        self._saved = self._loop = None
