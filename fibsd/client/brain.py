"""What decides for a bot: the ``Brain`` interface, in a module of its own so that the
bot (``fibsd.client.bot``) and each brain (``fibsd.client.gnubg_brain``) import it
without importing one another."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from fibsd.client import events as ev
from fibsd.client import strategy
from fibsd.rules.play import Play
from fibsd.rules.position import Position


class Brain(Protocol):
    """Decides for the bot; positions are from the bot's side."""

    def play(self, board: ev.Board, position: Position, dice: tuple[int, int],
             plays: Sequence[Play]) -> Play | None: ...

    def double(self, position: Position, state: strategy.CubeState) -> bool: ...

    def take(self, position: Position, state: strategy.CubeState) -> bool: ...

    def accept_resignation(self, position: Position, points: int,
                           state: strategy.CubeState) -> bool: ...
