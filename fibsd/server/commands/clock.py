"""``clock``: both clocks of the match the user plays or watches (protocol/clock.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fibsd.server.commands import command, user_of
from fibsd.server.match import live_match
from fibsd.wire import clock_text
from fibsd.wire import game_text as text

if TYPE_CHECKING:
    from fibsd.server.session import Session


@command("clock")
def clock(session: Session, rest: str) -> None:
    user = user_of(session)
    match = live_match(session.lobby, user.name)
    if match is None and user.watching is not None:
        match = live_match(session.lobby, user.watching)
    if match is None:
        session.send(text.NOT_PLAYING)
    elif match.clocks is None:
        session.send(clock_text.NO_CLOCK)
    else:
        session.send(*match.clocks.lines())
