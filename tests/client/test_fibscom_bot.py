"""A bot written against fibs.com plays a 5-point match on fibsd to the end.

``FibsComBot`` behaves as MatchDog (a Java bot driving GNU Backgammon on fibs.com)
does: it answers an invitation with ``who <inviter>`` and joins only once the
inviter's ``5`` line has come back, and when it needs one point to win (the leader
after the Crawford game) it never rolls by itself: it waits for the server's roll
and ignores a prompt.  A server that refuses ``who <name>`` or asks that leader to
roll leaves the match stalled, and the test runs out of time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import gatherResults

from fibsd.client import events as ev
from fibsd.client.protocol import ClipClientProtocol
from tests.client.test_bot import RecordingBot, hang_up, online, ready, seeded_server

WAIT = 90.0  # a whole 5-point match on a slow, shared machine
SEED = 2  # dice under which the match has a post-Crawford game


class FibsComBot(RecordingBot):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.asked_who: str | None = None
        self.joined_after_who: list[str] = []
        self.prompts_at_one_point = 0
        self.server_rolls_at_one_point = 0

    def _needs_one_point(self) -> bool:
        board = self.board
        return (board is not None and not board.is_unlimited
                and board.match_length - board.player_score == 1)

    def _join(self, inviter: str) -> None:
        self.asked_who = inviter
        self.send(f"who {inviter}")

    def on_WhoInfo(self, event: ev.WhoInfo) -> None:
        super().on_WhoInfo(event)
        if self.asked_who is not None and event.name == self.asked_who:
            self.asked_who = None
            self.joined_after_who.append(event.name)
            self.send(f"join {event.name}")

    def on_RollOrDouble(self, event: ev.RollOrDouble) -> None:
        if self._needs_one_point():
            self.prompts_at_one_point += 1  # MatchDog waits for the server's roll
            return
        super().on_RollOrDouble(event)

    def on_Rolls(self, event: ev.Rolls) -> None:
        super().on_Rolls(event)
        board = self.board
        if event.player == ev.YOU and self._needs_one_point() and board is not None \
                and board.did_crawford:
            self.server_rolls_at_one_point += 1



class MatchDogLike(FibsComBot):
    """As MatchDog treats saved matches: it never reads ``show saved`` (with ``invite``
    it invites with a length, as told), remembers a match its opponent dropped or a
    lost connection cut, and invites that opponent to resume only when it sees him log
    in.  Restarted, it knows of no saved match and waits to be invited."""

    def _look(self) -> None:
        self.looked = True
        self._next()

    def _lost(self, protocol: ClipClientProtocol) -> None:
        if protocol is self.protocol and self.playing:
            self._keep_saved(online=False)  # wait for his login
        super()._lost(protocol)


@pytest_twisted.ensureDeferred
async def test_a_fibs_com_bot_plays_a_five_point_match_to_the_end(tmp_path: Path) -> None:
    service, port = await seeded_server(tmp_path, seed=SEED)
    bob = FibsComBot("bob", matches=1, clock=reactor)
    alice = FibsComBot("alice", invite="bob", length=5, matches=1, clock=reactor)
    try:
        await online(port, bob)
        await ready(bob)
        await online(port, alice)
        done = [bot.finished.wait() for bot in (alice, bob)]
        await gatherResults(done).addTimeout(WAIT, reactor)

        assert bob.joined_after_who == ["alice"]
        for bot in (alice, bob):
            assert [p.unknown_lines for p in bot.protocols] == [[] for _ in bot.protocols]
            assert bot.matches_played == 1
            assert bot.prompts_at_one_point == 0
            won = [e for e in bot.events if isinstance(e, ev.MatchWon)]
            assert len(won) == 1 and won[0].match_length == 5 and won[0].winner_score >= 5
        # the seed makes the server roll for a post-Crawford leader at least once
        assert alice.server_rolls_at_one_point + bob.server_rolls_at_one_point > 0
        finished = await service.db.finished_matches("alice")
        assert [m.length for m in finished] == [5]
    finally:
        hang_up(alice, bob)
        await service.stopService()
