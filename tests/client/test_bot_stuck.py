"""The fragile cases of issue 24, each against a real fibsd on loopback: fibsd-bot with a
saved match, restarted bots, a MatchDog-like bot that waits for logins, a refused length,
a new connection that replaced one the server still held.  Each test waited in vain (or
saw a saved match discarded) with the bot as it was before the issue.

A "restarted" bot is a new ``Bot`` object on a new connection: it knows nothing of the
match the old one was playing, as a new process would not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import gatherResults

from fibsd.client import events as ev
from fibsd.client.protocol import ClipClientProtocol, Credentials, connect
from tests.client.test_bot import RecordingBot, hang_up, online, ready, seeded_server
from tests.client.test_fibscom_bot import MatchDogLike
from tests.client.test_loopback import log_in
from tests.helpers import Waits

WAIT = 60.0  # any one wait, on a slow shared machine


class Watched(RecordingBot):
    """A bot whose every event wakes the test's waits, and who keeps what it sent."""

    def __init__(self, *args: Any, waits: Waits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waits = waits
        self.sent: list[str] = []

    def __call__(self, event: ev.Event) -> None:
        super().__call__(event)
        self.waits.poke()

    def send(self, command: str) -> None:
        self.sent.append(command)
        super().send(command)

    def saw(self, kind: type[ev.Event], **fields: Any) -> bool:
        return any(isinstance(event, kind) and all(getattr(event, k) == v for k, v in fields.items())
                   for event in self.events)


class WatchedDog(MatchDogLike, Watched):
    pass


async def leave_saved(waits: Waits, first: Watched, second: Watched, boards: int = 8) -> None:
    """``first`` (inviting) and ``second`` are playing: both hang up after ``boards``
    boards, and the server keeps their match saved."""
    await waits.until(lambda: first.boards >= boards, lambda: f"{boards} boards; {first.boards}")
    hang_up(first, second)
    await closed(first, second)


async def closed(*bots: Watched) -> None:
    await gatherResults([p.closed.wait() for bot in bots for p in bot.protocols]).addTimeout(
        WAIT, reactor)


async def start(port: int, *bots: Watched, again: bool = False) -> None:
    """Register and log in; ``again``: log in to the existing account."""
    for bot in bots:
        if not again:
            await online(port, bot)
            continue
        factory, ready_now = connect(reactor, "127.0.0.1", port,
                                     Credentials(bot.name, "secret", "fibsd-bot"), bot,
                                     reconnect=True, connected=bot.attach)
        factory.initialDelay = factory.delay = 0.05
        await ready_now.addTimeout(WAIT, reactor)


@pytest_twisted.ensureDeferred
async def test_restarted_bots_resume_instead_of_starting_a_new_match(tmp_path: Path) -> None:
    """A restarted --invite bot used to invite with a length, and the other joined in
    spite of ``WARNING: Don't accept ...``: the saved match was discarded."""
    service, port = await seeded_server(tmp_path, seed=7)
    waits = Waits(WAIT)
    alice = Watched("alice", invite="bob", length=5, clock=reactor, waits=waits)
    bob = Watched("bob", clock=reactor, waits=waits)
    try:
        await start(port, bob)
        await ready(bob)
        await start(port, alice)
        await leave_saved(waits, alice, bob)
        assert len(await service.db.saved_matches("alice")) == 1

        alice = Watched("alice", invite="bob", length=3, matches=1, clock=reactor, waits=waits)
        bob = Watched("bob", matches=1, clock=reactor, waits=waits)
        await start(port, alice, bob, again=True)
        await waits.until(lambda: alice.finished.done and bob.finished.done,
                          lambda: f"the resumed match to end; alice sent {alice.sent}")
        assert not any(command == "invite bob 3" for command in alice.sent)
        assert not alice.saw(ev.NewMatch) and not bob.saw(ev.NewMatch)
        finished = await service.db.finished_matches("alice")
        assert [m.length for m in finished] == [5]
        assert await service.db.saved_matches("alice") == []
    finally:
        hang_up(alice, bob)
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_two_restarted_bots_that_only_accept_do_not_deadlock(tmp_path: Path) -> None:
    """Neither had --invite: both waited to be invited, for ever."""
    service, port = await seeded_server(tmp_path, seed=8)
    waits = Waits(WAIT)
    alice = Watched("alice", invite="bob", length=3, clock=reactor, waits=waits)
    bob = Watched("bob", clock=reactor, waits=waits)
    try:
        await start(port, bob)
        await ready(bob)
        await start(port, alice)
        await leave_saved(waits, alice, bob)

        alice = Watched("alice", matches=1, clock=reactor, waits=waits)
        bob = Watched("bob", matches=1, clock=reactor, waits=waits)
        await start(port, alice, bob, again=True)
        await waits.until(lambda: alice.finished.done and bob.finished.done,
                          lambda: "the resumed match to end")
        assert alice.saw(ev.MatchResumed) and bob.saw(ev.MatchResumed)
        assert [m.length for m in await service.db.finished_matches("alice")] == [3]
    finally:
        hang_up(alice, bob)
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_a_surviving_bot_invites_a_matchdog_that_waits_for_its_login(tmp_path: Path) -> None:
    """The MatchDog-like bot comes back and waits for its opponent's login, which it
    will never see; the surviving fibsd-bot used to wait for its re-invitation."""
    service, port = await seeded_server(tmp_path, seed=9)
    waits = Waits(WAIT)
    bot = Watched("bot", matches=1, clock=reactor, waits=waits)
    dog = WatchedDog("dog", invite="bot", length=3, clock=reactor, waits=waits)
    try:
        await start(port, bot)
        await ready(bot)
        await start(port, dog)
        await waits.until(lambda: dog.boards >= 8, lambda: "8 boards")
        hang_up(dog)
        await waits.until(lambda: bot.saw(ev.GameSaved, player="dog"), lambda: "the drop")

        dog = WatchedDog("dog", matches=1, clock=reactor, waits=waits)
        await start(port, dog, again=True)
        await waits.until(lambda: bot.finished.done and dog.finished.done,
                          lambda: f"the resumed match to end; bot sent {bot.sent[-5:]}")
        assert dog.saw(ev.MatchResumed, opponent="bot") and dog.joined_after_who == ["bot"]
        assert [m.length for m in await service.db.finished_matches("bot")] == [3]
    finally:
        hang_up(bot, dog)
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_a_bot_holding_a_saved_match_plays_others_and_resumes_later(tmp_path: Path) -> None:
    """The saved opponent is away: another player's invitation used to go unanswered."""
    service, port = await seeded_server(tmp_path, seed=10)
    waits = Waits(WAIT)
    alice = Watched("alice", invite="bob", length=5, clock=reactor, waits=waits)
    bob = Watched("bob", matches=2, clock=reactor, waits=waits)
    carol = Watched("carol", invite="bob", length=1, matches=1, clock=reactor, waits=waits)
    try:
        await start(port, bob)
        await ready(bob)
        await start(port, alice)
        await waits.until(lambda: alice.boards >= 8, lambda: "8 boards")
        hang_up(alice)
        await waits.until(lambda: bob.saw(ev.GameSaved, player="alice"), lambda: "the drop")

        await start(port, carol)
        await waits.until(lambda: carol.finished.done, lambda: f"carol's match; bob sent {bob.sent}")
        alice = Watched("alice", matches=1, clock=reactor, waits=waits)
        await start(port, alice, again=True)
        await waits.until(lambda: bob.finished.done and alice.finished.done,
                          lambda: "the resumed match to end")
        assert [m.length for m in await service.db.finished_matches("bob")] == [1, 5]
        assert await service.db.saved_matches("bob") == []
    finally:
        hang_up(alice, bob, carol)
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_invitations_it_does_not_take_get_a_tell(tmp_path: Path) -> None:
    """A length it does not play, and a match while it resumes another: each inviter is
    told why (the bot used to say nothing)."""
    service, port = await seeded_server(tmp_path, seed=11)
    waits = Waits(WAIT)
    bob = Watched("bob", lengths=frozenset({1, 2, 3}), clock=reactor, waits=waits)
    carol: ClipClientProtocol | None = None
    try:
        await start(port, bob)
        await ready(bob)
        carol = await log_in(port, Credentials("carol", "secret", "test"), register=True)
        told = carol.wait_for(ev.Says).addTimeout(WAIT, reactor)
        carol.send("toggle ready")
        carol.send("invite bob 5")
        assert await told == ev.Says(
            "bob", "Sorry, I play 1-3 point matches only; please invite me to one of those.")
        joined = carol.wait_for(ev.NewMatch).addTimeout(WAIT, reactor)
        carol.send("invite bob 2")
        assert await joined == ev.NewMatch("bob", 2, you_joined=False)
    finally:
        hang_up(bob)
        if carol is not None:
            carol.transport.loseConnection()
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_a_refused_length_is_not_retried_and_the_bot_says_why(tmp_path: Path) -> None:
    """``** You're not experienced enough ...`` used to be retried 120 times in silence."""
    service, port = await seeded_server(tmp_path, seed=12)
    waits = Waits(WAIT)
    alice = Watched("alice", invite="bob", length=11, clock=reactor, waits=waits)
    bob: ClipClientProtocol | None = None
    try:
        bob = await log_in(port, Credentials("bob", "secret", "test"), register=True)
        ready_now = bob.wait_for(ev.ToggleChanged).addTimeout(WAIT, reactor)
        bob.send("toggle ready")
        await ready_now
        told = bob.wait_for(ev.Says).addTimeout(WAIT, reactor)
        await start(port, alice)
        assert await told == ev.Says(
            "alice", "I wanted to invite you to a 11 point match, but the server refuses it: "
                     "You're not experienced enough to play a match of that length.")
        assert [c for c in alice.sent if c.startswith("invite")] == ["invite bob 11"]
        assert alice.retry_call is None and alice.want_match is None
        assert alice.invite_refused == "You're not experienced enough to play a match of that length."
    finally:
        hang_up(alice)
        if bob is not None:
            bob.transport.loseConnection()
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_a_connection_that_replaced_a_held_one_finishes_and_takes_the_next(
        tmp_path: Path) -> None:
    """The bot came back while the server still held its old connection: the match went
    on with no resume lines, the bot never saw it as its own, missed its end, and from
    then on ignored every inviter though no saved match was left anywhere."""
    service, port = await seeded_server(tmp_path, seed=13)
    waits = Waits(WAIT)
    alice = Watched("alice", invite="bob", length=1, matches=1, clock=reactor, waits=waits)
    bob = Watched("bob", matches=2, clock=reactor, waits=waits)
    carol = Watched("carol", invite="bob", length=1, matches=1, clock=reactor, waits=waits)
    try:
        await start(port, bob)
        await ready(bob)
        await start(port, alice)
        await waits.until(lambda: bob.boards >= 3, lambda: "3 boards")
        held = bob.protocols[-1]
        held.factory.stopTrying()  # the server closes it: no reconnection from there
        factory, again = connect(reactor, "127.0.0.1", port, Credentials("bob", "secret", "fibsd-bot"),
                                 bob, reconnect=True, connected=bob.attach)
        await again.addTimeout(WAIT, reactor)
        await held.closed.wait().addTimeout(WAIT, reactor)  # the server dropped it
        await waits.until(lambda: alice.finished.done, lambda: "the match to end")
        assert bob.saw(ev.AlreadyLoggedIn) and not bob.saw(ev.MatchResumed)
        assert bob.matches_played == 1 and bob.opponent is None

        await start(port, carol)
        await waits.until(lambda: bob.finished.done and carol.finished.done,
                          lambda: f"carol's match; bob sent {bob.sent[-5:]}")
        assert [m.length for m in await service.db.finished_matches("bob")] == [1, 1]
    finally:
        hang_up(alice, bob, carol)
        await service.stopService()
