"""A match played over telnet (CLIP bots on loopback) for the live-board tests: both
players logged in, the match started, and nobody moving until a test says so."""

from __future__ import annotations

from dataclasses import dataclass

from fibsd.app import FibsService
from tests.server.test_match_restart import Bot, connect, rolls


@dataclass
class Players:
    alice: Bot
    bob: Bot

    async def one_move(self, bot: Bot) -> None:
        """``bot`` makes one move; returns once the server has answered it."""
        before = len(bot.lines)
        bot.moves_left = 1
        bot.move()
        await bot.wait(lambda: any(line.startswith("board:") for line in bot.lines[before:]),
                       "the board after the move")


async def start_match(service: FibsService, game_port: int, length: int = 3,
                      seed: int = 5) -> Players:
    service.shared.lobby.dice = rolls(seed)
    service.shared.lobby.coin = lambda: 0
    alice, bob = await connect(game_port, "alice"), await connect(game_port, "bob")
    for bot in (alice, bob):
        bot.send("toggle ready")
        await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
        bot.active = True
        bot.moves_left = 0
    alice.send(f"invite bob {length}")
    await bob.wait_line(lambda line: line == "Type 'join alice' to accept.", "invitation")
    bob.send("join alice")
    # Opening 3-5 (rolls()): bob, player 1, wins it and is asked to move.
    await bob.wait(lambda: "It's your turn to move." in bob.lines
                   and bob.lines[-1] != "It's your turn to move." and bob.board != "",
                   "bob's opening move")
    return Players(alice, bob)
