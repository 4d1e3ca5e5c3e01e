"""``/metrics``: the server's figures in the Prometheus text format.

Users online and matches running are read from the lobby view when scraped.  Command
latency and game actions come from the sessions' command observers (``fibsd.app``
connects ``command_done``); logins, failed logins and limits hit are counted from the
operator log events (the ``event`` field: ``login``, ``login_failed``, ``limit``), so
whoever emits those events needs to know nothing about metrics.  Each site has its own
registry, so several servers in one process (the tests) keep their own counts.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE
from twisted.logger import ILogObserver, LogPublisher, globalLogPublisher
from zope.interface import provider

from fibsd.web.sources import LobbySource

__all__ = ["CONTENT_TYPE", "GAME_ACTIONS", "Metrics"]

# The commands that act in a game, counted as game actions (refused ones included).
GAME_ACTIONS = frozenset({"move", "roll", "double", "redouble", "accept", "reject",
                          "resign", "beaver", "join", "leave"})
# Distinct ``limit`` label values kept; any further ones are counted as "other" (the
# values come from log events, which must not grow the registry without bound).
MAX_LIMIT_LABELS = 64
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
                   2.5, 5.0)


class Metrics:
    def __init__(self, lobby: LobbySource,
                 publisher: LogPublisher = globalLogPublisher) -> None:
        self.registry = CollectorRegistry()
        self._publisher = publisher
        online = Gauge("fibsd_users_online", "Users logged in now", registry=self.registry)
        online.set_function(lambda: float(lobby.online_count()))
        running = Gauge("fibsd_matches_running", "Matches being played now",
                        registry=self.registry)
        running.set_function(lambda: float(lobby.running_count()))
        self.game_actions = Counter("fibsd_game_actions", "Game commands handled",
                                    registry=self.registry)
        self.latency = Histogram("fibsd_command_seconds", "Time to handle a command",
                                 ["command"], buckets=LATENCY_BUCKETS, registry=self.registry)
        self.logins = Counter("fibsd_logins", "Successful logins", registry=self.registry)
        self.failed_logins = Counter("fibsd_failed_logins", "Failed logins",
                                     registry=self.registry)
        self.limits = Counter("fibsd_limits_hit", "Refusals and cuts by a configured limit",
                              ["limit"], registry=self.registry)
        self._limit_labels: set[str] = set()

        @provider(ILogObserver)
        def observer(event: dict[str, Any]) -> None:
            self.observe(event)

        self._observer = observer

    def command_done(self, name: str, seconds: float) -> None:
        self.latency.labels(command=name).observe(seconds)
        if name in GAME_ACTIONS:
            self.game_actions.inc()

    def observe(self, event: dict[str, Any]) -> None:
        """A twisted.logger observer: counts the operator events it knows."""
        kind = event.get("event")
        if kind == "login":
            self.logins.inc()
        elif kind == "login_failed":
            self.failed_logins.inc()
        elif kind == "limit":
            label = str(event.get("limit", ""))[:64]
            if label not in self._limit_labels:
                if len(self._limit_labels) >= MAX_LIMIT_LABELS:
                    label = "other"
                self._limit_labels.add(label)
            # A refusal event may stand for several refusals (``count``: fibsd.server.access
            # logs floods of refusals once a minute).
            count = event.get("count", 1)
            self.limits.labels(limit=label).inc(count if isinstance(count, int) and count > 0
                                                else 1)

    def start(self) -> None:
        self._publisher.addObserver(self._observer)

    def stop(self) -> None:
        self._publisher.removeObserver(self._observer)

    def text(self) -> bytes:
        return generate_latest(self.registry)
