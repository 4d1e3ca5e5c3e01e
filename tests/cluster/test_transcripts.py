"""Every transcript in protocol/transcripts, replayed over real sockets with its clients
spread over two, then three cluster nodes (the first client on node 0, the second on
node 1, and so on): each client must receive exactly the lines the transcript expects of
one server.  Three nodes add what two cannot show: lines for one user made on two other
nodes (a login that several waiters elsewhere were waiting for)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_twisted
from typing import Any

from twisted.internet import reactor
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.task import deferLater

from fibsd.app import FibsService
from tests.cluster.site import HEARTBEAT_MS, SECRET
from tests.server.test_transcripts import LoopbackDriver, _Client
from tests.server.transcript import parse, replay, transcripts

PATHS = transcripts()
# No transcript has a node die (a stopped node says goodbye), so none is judged dead for
# being unheard: this process's reactor, all the nodes' own, may stall for longer than
# tests.cluster.site's DEAD_AFTER_MS on a loaded machine (no CPU, a full collection),
# and its nodes would then take each other for dead and drop each other's users.
DEAD_AFTER_MS = 60_000


class ClusterDriver(LoopbackDriver):
    def __init__(self, database: Path, redis_url: str, nodes: int) -> None:
        super().__init__(database)
        self.redis_url = redis_url
        self.count = nodes
        self.nodes: list[FibsService] = []
        self.ports: list[int] = []
        self.placed: dict[str, int] = {}  # client -> node, by order of first connection

    async def _start(self) -> None:
        for index in range(self.count):
            settings = self.settings.__class__(**{
                **{f: getattr(self.settings, f) for f in self.settings.__dataclass_fields__},
                "cluster": self.settings.cluster.__class__(
                    url=self.redis_url, node=f"n{index}", heartbeat_ms=HEARTBEAT_MS,
                    dead_after_ms=DEAD_AFTER_MS, secret=SECRET)})
            service = FibsService(settings, reactor)
            self.dice.install(service.shared.lobby)
            service.shared.lobby.coin = lambda: self.coin
            service.startService()
            port = await service.listening
            self.nodes.append(service)
            self.ports.append(int(port.getHost().port))
        for _ in range(1000):  # ten seconds at most
            if all(len(s.cluster.peers) == self.count - 1 for s in self.nodes):
                break
            await deferLater(reactor, 0.01, lambda: None)
        else:
            raise AssertionError("the nodes did not meet")

    async def _connect(self, client: str) -> None:
        if not self.nodes:
            await self._start()
        node = self.placed.setdefault(client, len(self.placed) % self.count)
        self.tokens[client] = []
        self.closed.discard(client)
        protocol = _Client(self, client)
        self.clients[client] = protocol
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", self.ports[node]),
                              protocol)

    def wait_until(self, done: Any, what: str) -> Deferred[None]:
        """What the transcript expects so far has come, and then the nodes have
        caught up with each other (``ClusterNode.round_trip``): a user's state changed
        on his node is known everywhere before the next line is typed.  (A client
        quicker than one trip through the broker can act on the old state: see
        docs/cluster-internals.md.)"""
        caught_up = super().wait_until(done, what)
        if not self.nodes:
            return caught_up

        def barrier(_: object) -> Deferred[Any]:
            return DeferredList([s.cluster.round_trip() for s in self.nodes if s.running])

        return caught_up.addCallback(barrier).addCallback(lambda _: None)

    def reinstall(self) -> None:
        for service in self.nodes:
            self.dice.install(service.shared.lobby)

    async def _restart(self) -> None:
        await self.stop()
        self.clients.clear()
        self.tokens.clear()
        self.closed.clear()
        self.nodes, self.ports = [], []

    async def stop(self) -> None:
        # In reverse: each node's collector gives back the gc settings it found.
        for service in reversed(self.nodes):
            await service.stopService()
        for protocol in self.clients.values():
            if protocol.transport is not None:
                protocol.transport.loseConnection()
        await self.wait_until(lambda: self.closed >= set(self.clients), "the shutdown")


@pytest.mark.parametrize("nodes", [2, 3])
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
@pytest_twisted.ensureDeferred
async def test_transcript_on_several_nodes(path: Path, nodes: int, tmp_path: Path,
                                           redis_url: str) -> None:
    driver = ClusterDriver(tmp_path / "fibsd.sqlite", redis_url, nodes)
    try:
        await replay(parse(path), driver)
    finally:
        await driver.stop()
