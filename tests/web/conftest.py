"""A real fibsd on loopback with its web face, over a store seeded with finished
matches (``tests/web/records.py``), and an HTTP client for it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.interfaces import IListeningPort
from twisted.web.client import Agent, readBody
from twisted.web.http_headers import Headers

from fibsd.app import FibsService
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import make_settings
from tests.web.records import finished_match

HOSTILE = "<b>x</b>&\"'"  # a name no registration allows; the store takes any


@dataclass
class Reply:
    code: int
    headers: Headers
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def header(self, name: str) -> str:
        return (self.headers.getRawHeaders(name) or [""])[0]


@dataclass
class Web:
    service: FibsService
    http: IListeningPort
    game_port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.http.getHost().port}"

    async def get(self, path: str, headers: dict[bytes, list[bytes]] | None = None) -> Reply:
        agent = Agent(reactor)
        response = await agent.request(b"GET", (self.base + path).encode("ascii"),
                                       Headers(headers) if headers else None)
        body = await readBody(response)
        return Reply(response.code, response.headers, body)


def seed(database: Path) -> list[int]:
    """alice, bob and carol with accounts and finished matches; one more match against
    a player with a hostile name and no account.  Returns the match ids, oldest first."""
    store = SQLiteStore(database)
    password = argon2.using(type="ID", memory_cost=64, time_cost=1).hash("secret")
    for name in ("alice", "bob", "carol"):
        store.create_user(name, password, 1_700_000_000)
    store.set_address("alice", "alice@example.com")
    store.record_login("alice", 1_700_000_100, "203.0.113.7")
    # Seeds whose first player wins (the 1-point match by a single game).
    matches = [
        finished_match(7, 3, ("alice", "bob"), 1_700_001_000, change=4.0),
        finished_match(2, 5, ("bob", "alice"), 1_700_002_000, change=6.5),
        finished_match(11, 1, ("carol", "alice"), 1_700_003_000, change=3.0),
        finished_match(9, 3, ("alice", HOSTILE), 1_700_004_000),
    ]
    for match in matches:
        store.record_finished_match(match)
    store.set_rating("alice", 1512.25, 60)
    store.set_rating("bob", 1490.0, 55)
    store.set_rating("carol", 1503.0, 10)
    ids = [m.id for m in store.finished_matches("alice")]
    store.close()
    return ids


async def start_web(database: Path, **overrides: Any) -> Web:
    settings = make_settings(port=0, interface="127.0.0.1", database=str(database),
                             **{"passwords.memory_kib": 64, "passwords.time_cost": 1},
                             **overrides)
    service = FibsService(settings, reactor)
    service.startService()
    port = await service.listening
    http = reactor.listenTCP(0, service.web_gate, interface="127.0.0.1")
    return Web(service, http, int(port.getHost().port))


async def stop_web(web: Web) -> None:
    await web.http.stopListening()
    await web.service.stopService()


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "fibsd.sqlite"


@pytest.fixture
def match_ids(database: Path) -> list[int]:
    return seed(database)


@pytest_twisted.async_yield_fixture
async def web(database: Path, match_ids: list[int]) -> AsyncIterator[Web]:
    running = await start_web(database, web_page_size=2)
    yield running
    await stop_web(running)
