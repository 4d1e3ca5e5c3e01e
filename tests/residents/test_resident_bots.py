"""Resident bots with real processes (issue 24): the server starts fibsd-bot, a newcomer
on telnet invites it and plays a 1-point match to the end, a killed bot comes back; a
person's account of the bot's name is never taken over."""

from __future__ import annotations

import os
import re
import signal
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor, task
from twisted.logger import globalLogPublisher

from fibsd.app import FibsService
from fibsd.residents.accounts import password_file
from fibsd.store.sqlite import SQLiteStore
from tests.client.test_bot_vs_telnet import Terminal, play_to_the_end, register, telnet_login
from tests.helpers import make_settings

LIMIT = 60.0  # seconds a bot process may take to start and log in on a busy machine
HEURISTIC = {"name": "HeuristicBot", "brain": "heuristic", "lengths": [1, 3]}


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(seen.append)
    yield seen
    globalLogPublisher.removeObserver(seen.append)


def states(events: list[dict[str, Any]], bot: str) -> list[str]:
    return [e["state"] for e in events if e.get("event") == "resident_bot" and e.get("bot") == bot]


async def until(done: Callable[[], bool], what: str, limit: float = LIMIT) -> None:
    """Look again every 50 ms until ``done()``; fail after ``limit`` seconds."""
    waited = 0.0
    while not done():
        if waited > limit:
            raise AssertionError(f"waited {limit}s for {what}")
        await task.deferLater(reactor, 0.05, lambda: None)
        waited += 0.05


async def resident_server(tmp_path: Path, *bots: dict[str, Any]) -> tuple[FibsService, int]:
    settings = make_settings(
        port=0, interface="127.0.0.1", database=str(tmp_path / "fibsd.sqlite"),
        data_dir=str(tmp_path), **{"passwords.memory_kib": 64, "passwords.time_cost": 1,
                                   "bots.enabled": True, "bots.resident": list(bots)})
    service = FibsService(settings, reactor)
    service.startService()
    port = await service.listening
    return service, int(port.getHost().port)


def ready_bot(service: FibsService, name: str) -> Callable[[], bool]:
    def ready() -> bool:
        user = service.shared.lobby.find(name)
        return user is not None and user.toggles["ready"]

    return ready


@pytest_twisted.ensureDeferred
async def test_a_newcomer_on_telnet_plays_a_resident_bot_which_comes_back_when_killed(
        tmp_path: Path, events: list[dict[str, Any]]) -> None:
    service, port = await resident_server(tmp_path, HEURISTIC)
    person: Terminal | None = None
    try:
        await until(ready_bot(service, "HeuristicBot"), "the bot to log in and be ready")
        record = await service.db.get_user("HeuristicBot")
        assert record.bot is True
        secret = password_file(tmp_path, "HeuristicBot")
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
        assert stat.S_IMODE(secret.parent.stat().st_mode) == 0o700
        keeper = service.residents.supervisor.keepers["HeuristicBot"]  # type: ignore[union-attr]
        password = secret.read_text().strip()
        assert password not in " ".join(keeper.program.argv)  # on no command line

        await register(port, "newbie")
        person = await telnet_login(port, "newbie")
        person.type("help bot")
        help_lines = await person.expect("  invite HeuristicBot 1")  # the site's own bots
        assert any("whois" in line for line in help_lines)
        person.type("whois HeuristicBot")
        await person.expect("  Bot: a program plays this account (fibsd's heuristic, the weakest).")
        person.type("invite HeuristicBot 1")
        await person.expect("** Player HeuristicBot has joined you for a 1 point match.")
        last = await play_to_the_end(person, "newbie")
        assert re.fullmatch(r"(You win|HeuristicBot wins) the 1 point match [123]-0 \.", last)
        finished = await service.db.finished_matches("newbie")
        assert [(m.loser if m.winner == "newbie" else m.winner) for m in finished] == ["HeuristicBot"]

        # killed: the supervisor starts it again, and it logs in again
        old = service.shared.lobby.find("HeuristicBot")
        pid = keeper.process.transport.pid  # type: ignore[union-attr]
        os.kill(pid, signal.SIGKILL)
        await until(lambda: "restarting" in states(events, "HeuristicBot"), "the restart")
        await until(lambda: service.shared.lobby.find("HeuristicBot") not in (None, old),
                    "the bot to log in again")
        assert keeper.process is not None and keeper.process.transport.pid != pid
        assert states(events, "HeuristicBot") == ["running", "restarting"]
    finally:
        if person is not None:
            person.transport.loseConnection()
        await service.stopService()
    assert states(events, "HeuristicBot")[-1] == "stopped"
    assert keeper.process is None


@pytest_twisted.ensureDeferred
async def test_a_persons_account_of_the_bots_name_is_never_taken_over_nor_a_command_word(
        tmp_path: Path, events: list[dict[str, Any]]) -> None:
    store = SQLiteStore(tmp_path / "fibsd.sqlite")
    store.create_user("HeuristicBot", "a person's hash", 1)
    store.close()
    other = {"name": "Blunder", "brain": "heuristic"}
    service, _ = await resident_server(tmp_path, HEURISTIC, other, {"name": "who"})
    try:
        await until(ready_bot(service, "Blunder"), "the other bot")
        record = await service.db.get_user("HeuristicBot")
        assert (record.password_hash, record.bot) == ("a person's hash", False)
        assert service.shared.lobby.find("HeuristicBot") is None
        assert "HeuristicBot" not in service.residents.supervisor.keepers  # type: ignore[union-attr]
        refused = [e for e in events if e.get("state") == "refused"]
        assert [(e["bot"], e["log_level"].name) for e in refused] == [
            ("HeuristicBot", "error"), ("who", "error")]
        assert "a person's account" in refused[0]["reason"]
        assert refused[1]["reason"] == "a command has this name"
        assert await service.db.get_user("who") is None
    finally:
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_preparing_many_accounts_never_holds_the_database(
        tmp_path: Path, events: list[dict[str, Any]]) -> None:
    """At the shipped argon2 cost each hash takes a tenth of a second or more: made on the
    database thread, four accounts' hashes would hold it past ``stall_ms``."""
    settings = make_settings(
        port=0, interface="127.0.0.1", database=str(tmp_path / "fibsd.sqlite"),
        data_dir=str(tmp_path), **{"db.stall_ms": 100, "bots.enabled": True,
                                   "bots.resident": [{**HEURISTIC, "at_once": 4}]})
    service = FibsService(settings, reactor)
    service.startService()
    await service.listening
    try:
        supervisor = service.residents.supervisor  # type: ignore[union-attr]
        await until(lambda: len(supervisor.keepers) == 4, "the four accounts")
        assert sorted(await service.db.bot_names()) == [
            "HeuristicBot", "HeuristicBot_b", "HeuristicBot_c", "HeuristicBot_d"]
        assert [e for e in events if e.get("event") == "database_down"] == []
    finally:
        await service.stopService()
