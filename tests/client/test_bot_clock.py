"""Two ``fibsd-bot`` processes play a clocked match on a server; one is stopped with
SIGSTOP and loses on time (protocol/clock.md section 5): the match ends as a loss on
time for him no earlier than his reserve allows and within the stated tolerance after
it (the lag allowance plus ``TOLERANCE`` for the reactor's timer on a busy machine)."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest
import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.protocol import ProcessProtocol
from twisted.python.failure import Failure

from fibsd.app import FibsService
from fibsd.rules.ending import ended
from fibsd.server.clocks import MatchClocks
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import Waits, make_settings

REPO = Path(__file__).resolve().parents[2]
CLOCK = "2s+10s"  # a 1-point match: 10 seconds of reserve each, 2 of delay a decision
TOLERANCE = 1.0  # seconds the end may come after the deadline (timer latency, load)


class BotProcess(ProcessProtocol):
    def __init__(self, waits: Waits) -> None:
        self.waits = waits
        self.output = b""
        self.ended = False

    def outReceived(self, data: bytes) -> None:
        self.output += data

    errReceived = outReceived

    def processEnded(self, reason: Failure) -> None:
        self.ended = True
        self.waits.poke()


def spawn(waits: Waits, port: int, *args: str) -> BotProcess:
    bot = BotProcess(waits)
    reactor.spawnProcess(bot, sys.executable,
                         [sys.executable, "-m", "fibsd.client.bot", "--server", "127.0.0.1",
                          "--port", str(port), "--password", "secret", *args],
                         env={**os.environ, "PYTHONUNBUFFERED": "1"}, path=str(REPO))
    return bot


@pytest_twisted.ensureDeferred
async def test_a_stopped_bot_loses_on_time(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    for name in ("alice", "bob"):
        store.create_user(name, argon2.using(type="ID", memory_cost=64, time_cost=1)
                          .hash("secret"), 1_700_000_000)
    store.close()
    settings = make_settings(port=0, interface="127.0.0.1", database=str(database),
                             **{"passwords.memory_kib": 64, "passwords.time_cost": 1})
    service = FibsService(settings, reactor)
    service.startService()
    port = int((await service.listening).getHost().port)
    lobby = service.shared.lobby
    waits = Waits(60.0)
    ticks = []

    def tick() -> None:  # the Waits are poked by the server's state, polled
        waits.poke()
        ticks.append(reactor.callLater(0.05, tick))

    tick()
    bob = spawn(waits, port, "--name", "bob", "--matches", "1")
    alice = spawn(waits, port, "--name", "alice", "--invite", "bob", "--length", "1",
                  "--matches", "1", "--clock", CLOCK)
    bob_pid = bob.transport.pid  # type: ignore[union-attr]
    stopped: list[bool] = []
    charge = MatchClocks.charge

    def charged(clocks: MatchClocks, actor: object = None) -> None:
        """After bob's third decision, before the lines of the next: stop him."""
        bob_index = clocks.match.names.index("bob")
        if clocks.state.running == bob_index:
            clocks.bob_decisions = getattr(clocks, "bob_decisions", 0) + 1  # type: ignore[attr-defined]
            if clocks.bob_decisions == 3 and not stopped:  # type: ignore[attr-defined]
                os.kill(bob_pid, signal.SIGSTOP)
                stopped.append(True)
        charge(clocks, actor)  # type: ignore[arg-type]

    monkeypatch.setattr(MatchClocks, "charge", charged)
    try:
        await waits.until(lambda: "alice" in lobby.matches, lambda: "the match to start")
        match = lobby.matches["alice"]
        assert match.clocks is not None
        assert match.clocks.state.spec.text() == CLOCK
        bob_index = match.names.index("bob")
        await waits.until(lambda: bool(stopped), lambda: "bob's third decision")
        await waits.until(lambda: match.clocks.state.running == bob_index  # type: ignore[union-attr]
                          or "alice" not in lobby.matches, lambda: "bob's turn")
        state = match.clocks.state
        deadline = state.deadline()
        assert deadline is not None, (state, match.rules, alice.output, bob.output)
        await waits.until(lambda: "alice" not in lobby.matches, lambda: "the loss on time")
        lost_at = reactor.seconds()
        assert deadline <= lost_at <= deadline + TOLERANCE, (lost_at - deadline)
        finished = SQLiteStore(database)
        try:
            (result,) = finished.finished_matches("bob")
        finally:
            finished.close()
        record = json.loads(result.record)
        assert (result.winner, result.loser, ended(record)) == ("alice", "bob", "time")
        assert record["clock"]["reserves_ms"][bob_index] == 0
        await waits.until(lambda: alice.ended, lambda: "alice to finish her one match")
        assert b"alice: 1 matches" in alice.output, alice.output
    finally:
        for call in ticks:
            if call.active():
                call.cancel()
        if stopped:
            os.kill(bob_pid, signal.SIGCONT)
        for bot in (alice, bob):
            if not bot.ended:
                bot.transport.signalProcess("TERM")  # type: ignore[union-attr]
        await waits.until(lambda: alice.ended and bob.ended, lambda: "the bots to end")
        await service.stopService()
