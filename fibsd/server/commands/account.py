"""Leaving the server: ``bye`` and ``quit`` (KBackgammon sends ``quit`` to disconnect)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fibsd.server.commands import command

if TYPE_CHECKING:
    from fibsd.server.session import Session


@command("bye")
def bye(session: Session, rest: str) -> None:
    session.disconnect(goodbye=True)


@command("quit")
def quit_(session: Session, rest: str) -> None:
    session.disconnect(goodbye=True)
