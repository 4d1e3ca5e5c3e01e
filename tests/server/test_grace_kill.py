"""A crash during a drop grace (issue 23): a real ``python -m fibsd`` with the grace on
(config/fibsd.toml's 60 s) is killed with SIGKILL while a dropped player's match waits
for him.  Restarted on the same file, the match is a saved match at its last action,
resumed by ``invite`` and ``join`` as after any crash (tests/server/test_kill_drill.py)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest_twisted
from passlib.hash import argon2

from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.board import parse_board
from tests.helpers import Waits
from tests.server.test_kill_drill import WAIT, start_server, write_config
from tests.server.test_match_restart import Bot, connect

WAITS = "** bob lost the connection; the match waits 60 seconds for bob to log in again."


async def both(server_port: int) -> tuple[Bot, Bot]:
    alice, bob = await connect(server_port, "alice"), await connect(server_port, "bob")
    for bot in (alice, bob):
        bot.send("toggle ready")
        await bot.wait_line(lambda line: line.startswith("** You're now"), "ready")
        if bot.lines[-1].startswith("** You're now refusing"):  # ready was saved
            bot.send("toggle ready")
            await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
    return alice, bob


@pytest_twisted.ensureDeferred
async def test_sigkill_during_a_grace_keeps_the_match_at_its_last_action(
        tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    password_hash = argon2.using(type="ID", memory_cost=64, time_cost=1).hash("secret")
    for name in ("alice", "bob"):
        store.create_user(name, password_hash, 1_700_000_000)
    store.close()
    config = write_config(tmp_path, database)
    waits = Waits(WAIT)
    server = start_server(waits, config)
    try:
        await waits.until(lambda: server.port is not None or server.ended,
                          lambda: f"the server to listen: {server.output[-300:]!r}")
        assert server.port is not None
        alice, bob = await both(server.port)
        for bot in (alice, bob):
            bot.active = True
            bot.moves_left = 3  # a few moves each, then the match waits for a move
        alice.send("invite bob 5")
        await bob.wait_line(lambda line: line == "Type 'join alice' to accept.", "invitation")
        bob.send("join alice")
        def stuck(bot: Bot) -> bool:  # asked to move a fourth time: moves no more
            asks = sum(1 for line in bot.lines
                       if line.startswith("Please move ") or line == "It's your turn to move.")
            return asks > 3 and bot.lines[-1].startswith("Please move ")

        await alice.wait(lambda: stuck(alice) or stuck(bob), "a move nobody makes")
        mover = "alice" if stuck(alice) else "bob"
        last_board = (alice if stuck(alice) else bob).board
        bob.transport.abortConnection()  # bob's network is gone
        await alice.wait_line(lambda line: line == WAITS, "the grace line")
        server.signal(signal.SIGKILL)
        await waits.until(lambda: server.ended, lambda: "the server to die")
    finally:
        if not server.ended:
            server.signal(signal.SIGKILL)
    store = SQLiteStore(database)
    try:
        assert store.load_match("alice", "bob") is not None
    finally:
        store.close()

    server = start_server(waits, config)
    try:
        await waits.until(lambda: server.port is not None or server.ended,
                          lambda: f"the server to listen again: {server.output[-300:]!r}")
        assert server.port is not None
        alice, bob = await both(server.port)
        alice.send("invite bob")
        await bob.wait_line(lambda line: line == "Type 'join alice' to accept.", "resume")
        start = len(alice.lines)
        moving = alice if mover == "alice" else bob
        since = len(moving.lines)
        bob.send("join alice")
        await moving.wait(lambda: any(line.startswith("Please move ")
                                      for line in moving.lines[since:]),
                          f"{mover} asked to move again")
        await alice.wait(lambda: "bob has joined you. Your running match was loaded."
                         in alice.lines[start:], "the resume, for alice")
        resumed = parse_board(moving.board)
        before = parse_board(last_board)
        assert (resumed.board, resumed.player_dice, resumed.opponent_dice) == (
            before.board, before.player_dice, before.opponent_dice)
        server.signal(signal.SIGTERM)
        await waits.until(lambda: server.ended, lambda: "the server to stop")
        assert server.exit_code == 0
    finally:
        if not server.ended:
            server.signal(signal.SIGKILL)
