"""Replay every transcript in protocol/transcripts twice: over in-memory transports (with a
``task.Clock``) and over real loopback sockets to a running server; then check that every
line any of them received is in the message catalogue."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol
from twisted.internet.task import deferLater
from twisted.python.failure import Failure

from fibsd.app import FibsService
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import FakeClient, FakeServer, make_settings
from tests.server.transcript import (
    DiceQueue,
    Token,
    Tokenizer,
    TranscriptMismatch,
    parse,
    parse_rolls,
    replay,
    transcripts,
)

CATALOGUE = Path(__file__).resolve().parent.parent.parent / "protocol" / "catalogue"
RECEIVED: list[Token] = []  # everything the transcript runs received, for the catalogue test
WAIT = 10.0  # seconds a loopback run may wait for an expected line


class MemoryDriver:
    def __init__(self, database: Path) -> None:
        self.database = database
        self.dice = DiceQueue()
        self.coin = 0
        self.server = self._start()
        self.clients: dict[str, FakeClient] = {}
        self.tokenizers: dict[str, Tokenizer] = {}
        self.tokens: dict[str, list[Token]] = {}
        self.closed: set[str] = set()

    def _start(self) -> FakeServer:
        server = FakeServer(store=SQLiteStore(self.database))
        self.dice.install(server.lobby)
        server.lobby.coin = lambda: self.coin
        return server

    def reinstall(self) -> None:
        self.dice.install(self.server.lobby)

    def create_account(self, name: str, password: str) -> None:
        self.server.register(name, password)

    def connect(self, client: str) -> None:
        self.tokens[client] = []
        self.tokenizers[client] = Tokenizer()
        self.closed.discard(client)
        self.clients[client] = self.server.connect()
        self._collect()

    def send(self, client: str, line: str) -> None:
        self.clients[client].send(line)
        self._collect()

    def close(self, client: str) -> None:
        self.clients[client].close()
        self._collect()

    def restart(self) -> Deferred[None]:
        self.server.factory.shutdown(self.server.clock)
        self.server.settle()
        self.server.store.close()
        self.server = self._start()
        self.clients.clear()
        self.tokens.clear()
        self.closed.clear()
        return succeed(None)

    def wait(self, seconds: float) -> Deferred[None]:
        self.server.advance(seconds)
        self._collect()
        return succeed(None)

    def _collect(self) -> None:
        for name, client in self.clients.items():
            new = self.tokenizers[name].feed(client.received())
            self.tokens[name] += new
            RECEIVED.extend(new)
            if client.closed:
                self.closed.add(name)

    def wait_until(self, done: Callable[[], bool], what: str) -> Deferred[None]:
        self._collect()
        try:
            if done():
                return succeed(None)
        except TranscriptMismatch:
            return fail()
        return fail(TranscriptMismatch(f"still waiting for output at {what}: {self.tokens}"))

    def stop(self) -> None:
        self.server.store.close()


class _Client(Protocol):
    def __init__(self, driver: LoopbackDriver, name: str) -> None:
        self.driver = driver
        self.name = name
        self.tokenizer = Tokenizer()

    def dataReceived(self, data: bytes) -> None:
        new = self.tokenizer.feed(data)
        self.driver.tokens[self.name] += new
        RECEIVED.extend(new)
        self.driver.poke()

    def connectionLost(self, reason: Failure = Failure(ConnectionError())) -> None:
        self.driver.closed.add(self.name)
        self.driver.poke()


class LoopbackDriver:
    def __init__(self, database: Path) -> None:
        self.settings = make_settings(
            port=0, interface="127.0.0.1", database=str(database),
            **{"passwords.memory_kib": 64, "passwords.time_cost": 1})
        self.database = database
        self.service: FibsService | None = None
        self.clients: dict[str, _Client] = {}
        self.tokens: dict[str, list[Token]] = {}
        self.closed: set[str] = set()
        self.dice = DiceQueue()
        self.coin = 0
        self._waiter: tuple[Callable[[], bool], Deferred[None]] | None = None

    def create_account(self, name: str, password: str) -> None:
        store = SQLiteStore(self.database)
        hashed = argon2.using(type="ID", memory_cost=64, time_cost=1).hash(password)
        store.create_user(name, hashed, 1_700_000_000)
        store.close()

    async def _port(self) -> int:
        if self.service is None:
            self.service = FibsService(self.settings, reactor)
            self.dice.install(self.service.shared.lobby)
            self.service.shared.lobby.coin = lambda: self.coin
            self.service.startService()
        port = await self.service.listening
        return int(port.getHost().port)

    async def _connect(self, client: str) -> None:
        port = await self._port()
        self.tokens[client] = []
        self.closed.discard(client)
        protocol = _Client(self, client)
        self.clients[client] = protocol
        await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), protocol)

    def connect(self, client: str) -> Deferred[None]:
        return Deferred.fromCoroutine(self._connect(client))

    def send(self, client: str, line: str) -> None:
        transport = self.clients[client].transport
        assert transport is not None
        transport.write(line.encode("latin-1") + b"\r\n")

    def close(self, client: str) -> None:
        transport = self.clients[client].transport
        assert transport is not None
        transport.loseConnection()

    async def _restart(self) -> None:
        await self.stop()
        self.clients.clear()
        self.tokens.clear()
        self.closed.clear()
        self.service = None

    def restart(self) -> Deferred[None]:
        return Deferred.fromCoroutine(self._restart())

    def reinstall(self) -> None:
        if self.service is not None:
            self.dice.install(self.service.shared.lobby)

    def wait(self, seconds: float) -> Deferred[None]:
        """Real time passes: the server's clock is the reactor's."""
        return deferLater(reactor, seconds, lambda: None)

    async def stop(self) -> None:
        if self.service is not None:
            await self.service.stopService()
            for protocol in self.clients.values():
                if protocol.transport is not None:
                    protocol.transport.loseConnection()
            await self.wait_until(lambda: self.closed >= set(self.clients), "the shutdown")

    def poke(self) -> None:
        if self._waiter is None:
            return
        done, deferred = self._waiter
        try:
            finished = done()
        except TranscriptMismatch:
            self._waiter = None
            deferred.errback()
            return
        if finished:
            self._waiter = None
            deferred.callback(None)

    def wait_until(self, done: Callable[[], bool], what: str) -> Deferred[None]:
        try:
            if done():
                return succeed(None)
        except TranscriptMismatch:
            return fail()
        deferred: Deferred[None] = Deferred()
        self._waiter = (done, deferred)

        def too_late() -> None:
            if self._waiter is not None and self._waiter[1] is deferred:
                self._waiter = None
                deferred.errback(TranscriptMismatch(
                    f"no expected output within {WAIT}s at {what}: {self.tokens}"))

        call = reactor.callLater(WAIT, too_late)
        deferred.addBoth(lambda result: (call.active() and call.cancel(), result)[1])
        return deferred


PATHS = transcripts()


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_transcript_in_memory(path: Path, tmp_path: Path) -> None:
    driver = MemoryDriver(tmp_path / "fibsd.sqlite")
    try:
        result = Deferred.fromCoroutine(replay(parse(path), driver))
        failures: list[Failure] = []
        result.addErrback(failures.append)
        if failures:
            failures[0].raiseException()
        assert result.called
    finally:
        driver.stop()


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
@pytest_twisted.ensureDeferred
async def test_transcript_over_loopback(path: Path, tmp_path: Path) -> None:
    driver = LoopbackDriver(tmp_path / "fibsd.sqlite")
    try:
        await replay(parse(path), driver)
    finally:
        await driver.stop()


def catalogue() -> list[tuple[str, re.Pattern[str], bool]]:
    entries = []
    for path in sorted(CATALOGUE.glob("*.toml")):
        with path.open("rb") as file:
            for entry in tomllib.load(file).get("line", []):
                entries.append((f"{path.stem}:{entry['id']}", re.compile(entry["pattern"]),
                                bool(entry.get("prompt", False))))
    return entries


def test_catalogue_examples_match_their_patterns() -> None:
    for path in sorted(CATALOGUE.glob("*.toml")):
        with path.open("rb") as file:
            for entry in tomllib.load(file).get("line", []):
                assert re.fullmatch(entry["pattern"], entry["example"]), (path.name, entry["id"])


def test_every_received_line_is_catalogued(tmp_path: Path) -> None:
    """Checks what the transcript runs so far received, plus an in-memory run of each
    (so this test holds whatever order the tests run in)."""
    for path in PATHS:
        driver = MemoryDriver(tmp_path / f"{path.stem}.sqlite")
        Deferred.fromCoroutine(replay(parse(path), driver)).addErrback(lambda _: None)
        driver.stop()
    entries = catalogue()
    unknown = sorted({
        str(token) for token in RECEIVED
        if not any(is_prompt == (token.kind == "prompt") and pattern.fullmatch(token.text)
                   for _, pattern, is_prompt in entries)
    })
    assert RECEIVED
    assert unknown == []



def test_dice_statements_are_read_strictly() -> None:
    assert parse_rolls("33 52  64") == [(3, 3), (5, 2), (6, 4)]
    for bad in ("", "3", "07", "3-1", "31,66", "317"):
        with pytest.raises(ValueError):
            parse_rolls(bad)


def test_rolls_left_unused_fail_the_transcript(tmp_path: Path) -> None:
    path = tmp_path / "unused.txt"
    path.write_text("coin 1\ndice 31 66\n", encoding="ascii")
    driver = MemoryDriver(tmp_path / "fibsd.sqlite")
    try:
        failures: list[Failure] = []
        Deferred.fromCoroutine(replay(parse(path), driver)).addErrback(failures.append)
        assert len(failures) == 1
        assert failures[0].check(TranscriptMismatch)
        assert "2 scripted rolls or seeds were never used" in str(failures[0].value)
        assert driver.server.lobby.coin() == 1
    finally:
        driver.stop()
