"""Nodes of one fibsd site in this process, on real loopback sockets.

``Site(tmp_path, redis_url, nodes=2)`` starts that many ``FibsService``s on one
database (a SQLite file, or a PostgreSQL URL) and, with more than one node, one Redis
broker; ``nodes=1`` is a plain single server, for the same script to compare with.
Clients are real TCP connections that keep every line they receive::

    site = Site(tmp_path, redis_url, nodes=2)
    await site.start()
    alice = await site.login("alice", node=0)
    bob = await site.login("bob", node=1, clip=False)
    alice.send("tell bob hi")
    await bob.expect("12 alice hi")  # telnet: "alice tells: hi"
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol
from twisted.internet.task import LoopingCall
from twisted.python.failure import Failure

from fibsd.app import FibsService
from fibsd.store.opening import open_store
from tests.helpers import Waits, make_settings, strip_echo
from tests.server.transcript import DiceQueue

LIMIT = 10.0  # seconds any expected line may take
HEARTBEAT_MS = 100
# How long a silent node lives on: long enough that a stall of this process (a full
# collection, no CPU on a loaded machine) never takes a node for dead.  Tests of a
# node's death pass ``dead_after_ms=FAST_DEATH_MS`` and wait for it.
DEAD_AFTER_MS = 5_000
FAST_DEATH_MS = 500
SECRET = "tests-cluster-secret-0123456789"  # the nodes' shared [cluster] secret


class Client(Protocol):
    def __init__(self, site: Site, name: str, node: int) -> None:
        self.site = site
        self.name = name
        self.node = node
        self.lines: list[str] = []
        self.seen = 0  # lines already matched by ``expect``
        self._rest = b""
        self.closed = False

    def dataReceived(self, data: bytes) -> None:
        *complete, self._rest = (self._rest + data).split(b"\r\n")
        self.lines += [strip_echo(line).decode("ascii") for line in complete]
        self.site.waits.poke()

    def connectionLost(self, reason: Failure = Failure(ConnectionError())) -> None:
        self.closed = True
        self.site.waits.poke()

    def send(self, line: str) -> None:
        assert self.transport is not None
        self.transport.write(line.encode("latin-1") + b"\r\n")

    def new(self) -> list[str]:
        """The lines received since the last ``expect`` or ``new``."""
        lines = self.lines[self.seen:]
        self.seen = len(self.lines)
        return lines

    def _find(self, wanted: str | Callable[[str], bool]) -> int | None:
        test = wanted if callable(wanted) else (lambda line: line == wanted)
        for index in range(self.seen, len(self.lines)):
            if test(self.lines[index]):
                return index
        return None

    async def expect(self, wanted: str | Callable[[str], bool]) -> list[str]:
        """Wait for a line (equal to ``wanted``, or passing it); returns the lines up to
        and including it, from the last expectation on."""
        await self.site.waits.until(lambda: self._find(wanted) is not None,
                                    lambda: f"{self.name}: {wanted!r} after {self.lines[self.seen:]}")
        index = self._find(wanted)
        assert index is not None
        lines = self.lines[self.seen:index + 1]
        self.seen = index + 1
        return lines

    async def gone(self) -> None:
        await self.site.waits.until(lambda: self.closed, lambda: f"{self.name} closed")

    def hang_up(self) -> None:
        assert self.transport is not None
        self.transport.loseConnection()


class Site:
    def __init__(self, tmp_path: Path, redis_url: str | None, nodes: int,
                 database: str | None = None, dead_after_ms: int = DEAD_AFTER_MS) -> None:
        self.database = database or str(tmp_path / "site.sqlite")
        self.dead_after_ms = dead_after_ms
        self.redis_url = redis_url
        self.count = nodes
        self.services: list[FibsService] = []
        self.ports: list[int] = []
        self.dice = DiceQueue()
        self.waits = Waits(LIMIT)
        self.clients: list[Client] = []
        self.accounts: set[str] = set()
        self.settings_overrides: dict[str, Any] = {}  # for every node
        # Server state (who is online where) changes without a client hearing of it:
        # the conditions are looked at again every few milliseconds too.
        self._poker = LoopingCall(self.waits.poke)

    def settings(self, index: int) -> Any:
        overrides: dict[str, Any] = {
            "port": 0, "interface": "127.0.0.1", "database": self.database,
            "passwords.memory_kib": 64, "passwords.time_cost": 1, "presence_delay_ms": 0,
            # Several nodes share this process's gc: none takes it over (a node that
            # dies first would hand back the settings another one made).
            "gc_interval": 0}
        if self.count > 1:
            assert self.redis_url is not None
            overrides.update({"cluster.url": self.redis_url, "cluster.node": f"n{index}",
                              "cluster.heartbeat_ms": HEARTBEAT_MS,
                              "cluster.dead_after_ms": self.dead_after_ms,
                              "cluster.secret": SECRET})
        return make_settings(**{**overrides, **self.settings_overrides})

    async def start(self) -> None:
        self._poker.start(0.02, now=False)
        for index in range(self.count):
            await self.start_node(index)
        if self.count > 1:
            await self.waits.until(self.connected, lambda: "the nodes meet")

    def connected(self) -> bool:
        """Every running node knows every other running node."""
        running = [s for s in self.services if s.running]
        return all(len(s.cluster.peers) == len(running) - 1 for s in running)

    async def start_node(self, index: int) -> None:
        service = FibsService(self.settings(index), reactor)
        self.dice.install(service.shared.lobby)
        service.shared.lobby.coin = lambda: 0
        service.startService()
        port = await service.listening
        if index < len(self.services):
            self.services[index] = service
            self.ports[index] = port.getHost().port
        else:
            self.services.append(service)
            self.ports.append(port.getHost().port)

    async def crash(self, node: int) -> None:
        """The node dies: not another word to the broker (no logouts, no heartbeats),
        then its connections close."""
        cluster = self.services[node].cluster
        cluster._heartbeat.stop()
        cluster.broker.stop()
        cluster.broker = None
        await self.services[node].stopService()

    def lobby(self, node: int) -> Any:
        return self.services[node].shared.lobby

    def create_account(self, name: str, password: str = "secret") -> None:
        if name in self.accounts:
            return
        store = open_store(self.database)
        hashed = argon2.using(type="ID", memory_cost=64, time_cost=1).hash(password)
        store.create_user(name, hashed, 1_700_000_000)
        store.close()
        self.accounts.add(name)

    async def connect(self, name: str, node: int) -> Client:
        client = Client(self, name, node)
        self.clients.append(client)
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", self.ports[node]), client)
        return client

    async def login(self, name: str, node: int, clip: bool = True) -> Client:
        """Log ``name`` in on ``node``; returns once every node lists him."""
        self.create_account(name)
        client = await self.connect(name, node)
        if clip:
            client.send(f"login test 1008 {name} secret")
            await client.expect("6")
        else:
            await client.expect(lambda line: line.startswith("login:") or line == "")
            client.send(name)
            client.send("secret")
            await client.expect(lambda line: line.startswith("** User ") and "authenticated" in line)
        await self.waits.until(lambda: self.everywhere(name),
                               lambda: f"{name} online on every node")
        client.new()
        return client

    def everywhere(self, name: str) -> bool:
        return all(s.shared.lobby.find(name) is not None for s in self.services if s.running)

    def nowhere(self, name: str) -> bool:
        return all(s.shared.lobby.find(name) is None for s in self.services if s.running)

    async def stop(self) -> None:
        if self._poker.running:
            self._poker.stop()
        for client in self.clients:
            if not client.closed and client.transport is not None:
                client.transport.loseConnection()
        # In reverse: each node's collector gives back the gc settings it found.
        for service in reversed(self.services):
            if service.running:
                await service.stopService()


_TIME = re.compile(r"\b1[0-9]{9}\b|\b[0-9]{2}:[0-9]{2}(:[0-9]{2})?\b")


def normal(line: str) -> str:
    """A line with what differs between two runs (Unix times, clock times, CLIP 5's
    idle and login fields) replaced."""
    if line.startswith("5 "):
        fields = line.split(" ")
        fields[8:10] = ["IDLE", "LOGIN"]
        line = " ".join(fields)
    return _TIME.sub("TIME", line)


Wait = tuple[str, str]  # (client, the exact line it must receive, after ``normal``)


async def play(site: Site, placement: dict[str, int], script: list[tuple[Any, ...]]
               ) -> dict[str, list[str]]:
    """Run ``script`` with each user on his node in ``placement`` (all on node 0 when
    the site has one); returns every line each client received, ``normal``-ised.

    Steps: ``("login", name, clip[, node])``, ``("crash", name)`` (his node dies; on
    a single node he hangs up), ``("wait", "", wait, ...)`` (lines still to come),
    ``("came", "", wait, ...)`` (lines come by now, with those already seen), ``("send", name, line, wait, ...)`` where each
    wait is ``(client, line)`` (a line ending with ``*``: a line starting so), ``("bye", name)`` (he quits; every node forgets him).
    """
    clients: dict[str, Client] = {}
    clip_users: dict[str, bool] = {}
    for name in placement:
        site.create_account(name)
    for step in script:
        kind, name = step[0], step[1]
        if kind == "login":
            node = (step[3] if len(step) > 3 else placement[name]) if site.count > 1 else 0
            for other in clients.values():  # what the others are told comes first
                other.seen = len(other.lines)
            clients[name] = await site.login(name, node, clip=step[2])
            for other, client in clients.items():
                if other == name:
                    continue
                if clip_users[other]:
                    await client.expect(lambda got, name=name: got.startswith(f"5 {name} "))
                    await client.expect("6")
                else:
                    await client.expect(lambda got, name=name: _matches(got, f"{name} logs in*"))
            clip_users[name] = step[2]
        elif kind == "send":
            clients[name].send(step[2])
            for who, line in step[3:]:
                await clients[who].expect(lambda got, line=line: _matches(normal(got), line))
        elif kind == "wait":  # ("wait", "", wait, ...): lines that must come
            for who, line in step[2:]:
                await clients[who].expect(lambda got, line=line: _matches(normal(got), line))
        elif kind == "came":  # ("came", "", wait, ...): lines that must have come by now,
            for who, line in step[2:]:  # whenever (with a login's block, say)
                client = clients[who]
                await site.waits.until(
                    lambda client=client, line=line: any(
                        _matches(normal(got), line) for got in client.lines),
                    lambda who=who, line=line: f"{who}: {line!r}")
        elif kind == "crash":  # one node: he hangs up; a cluster: his node dies
            if site.count > 1:
                await site.crash(placement[name])
            else:
                clients[name].hang_up()
            await clients[name].gone()
            await site.waits.until(lambda: site.nowhere(name), lambda: f"{name} gone")
        elif kind == "bye":
            clients[name].send("bye")
            await clients[name].gone()
            await site.waits.until(lambda: site.nowhere(name), lambda: f"{name} gone")
    return {name: [normal(line) for line in client.lines] for name, client in clients.items()}


def _matches(got: str, wanted: str) -> bool:
    """``wanted`` is the line (after a telnet prompt, if one came first)."""
    got = got.removeprefix("> ")
    return got.startswith(wanted[:-1]) if wanted.endswith("*") else got == wanted
