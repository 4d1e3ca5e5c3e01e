"""The director: drives every tournament this node holds the lease of, from its stored state.

It keeps nothing that a restart would need: each look (every ``tick_ms``, and at once
after a tournament match's result) does what the stored state calls for, with writes
that check the state they change from.  A running tournament's record, entries and
pairings are cached between looks while every undecided pairing is under way here
(or its result being stored); its own writes, a result told here, a lease taken and a
pairing not under way make it read the store again:

* an open tournament starts when full (``start_at`` None) or at ``start_at``: the
  entries still with an account are seeded by their rating now, round 1 is paired
  (``fibsd.tournament.pairing``) and stored with the start in one transaction; fewer
  than two players cancel it;
* an undecided pairing whose players are both here and free gets an invitation set up
  by the server (the better-placed player invites; FIBS's own invitation lines go to
  the other, so ``join`` starts it as any match, and a saved match of the pair is
  resumed instead); the match carries its tournament and round, and its result moves
  the pairing in the transaction that stores it (``fibsd.store.tournaments``);
* a pairing not started by its deadline (``start_timeout`` after the pairing; after a
  restart, or while the match is live, never less than ``start_timeout`` from then) is
  decided by forfeit: a player with a deleted or banned account loses; else one who is
  logged in beats one who is not; else the better seed wins;
* a round whose pairings are all decided makes the next one (or the champion), which
  is a pure function of the stored results, so a crash anywhere in between pairs the
  same round again.

Every look first takes (or renews) the tournament's lease for ``lease`` seconds; on a
cluster another node drives it once this one stops renewing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.rules.clock import ClockSpec
from fibsd.server.dbthread import OUTAGES, DatabaseStopped

from fibsd.store.tournaments import PairingRecord, TournamentRecord
from fibsd.tournament import pairing as formats
from fibsd.wire import clock_text, game_text
from fibsd.wire import tournament_text as text

if TYPE_CHECKING:
    from twisted.internet.interfaces import IDelayedCall, IReactorTime

    from fibsd.config import Tournaments
    from fibsd.server.lobby import Lobby

_log = Logger()
NOTIFY_KEY = "tournament.notify"  # the stored setting of ``tournament notify on``


def utc_clock(seconds: float) -> str:
    """A deadline as players read it: ``22:18:20 UTC``."""
    return time.strftime("%H:%M:%S UTC", time.gmtime(seconds))


def rounds_of(pairings: Sequence[PairingRecord]) -> list[list[formats.Pairing]]:
    """The stored pairings as the pure module's rounds."""
    rounds: list[list[formats.Pairing]] = []
    for p in pairings:
        while len(rounds) < p.round:
            rounds.append([])
        rounds[p.round - 1].append(formats.Pairing(p.first, p.second, p.winner, p.forfeit))
    return rounds


def _tag_of(invitation: Any) -> tuple[int, int] | None:
    return getattr(invitation, "tournament", None)


class Director:
    def __init__(self, lobby: Lobby, db: Any, clock: IReactorTime, settings: Tournaments,
                 node: str = "local",
                 invitation: Callable[..., Any] | None = None) -> None:
        self.lobby = lobby
        self.db = db
        self.clock = clock
        self.settings = settings
        self.node = node
        # play.Invitation, handed in by fibsd.app so that this room imports no command
        self._invitation = invitation
        self._call: IDelayedCall | None = None
        self._running = False
        self._busy: set[int] = set()
        self._again: set[int] = set()
        # pairings seen live (or this director's start): their deadline counts from then
        self._started_at = clock.seconds()
        self._live_seen: dict[tuple[int, int, int], float] = {}
        self._outbox: dict[str, list[str]] = {}
        # tournament -> until when this node's lease runs (renewed once half of it is left)
        self._leases: dict[int, float] = {}
        # pairs whose tournament match has ended here (tournament, round, players): a
        # look that read the pairing before its result was stored must not invite again
        self._decided: set[tuple[int, int, frozenset[str]]] = set()
        # Running tournament -> (record, entries, pairings) as last read: a look with
        # every pairing under way (or ending) here reads nothing.  Dropped before each
        # write of this director, at each result told here, each lease taken and
        # whenever an undecided pairing is not under way here; the store stays the truth.
        self._cache: dict[int, tuple[TournamentRecord, list[tuple[str, float]],
                                     list[PairingRecord]]] = {}
        lobby.result_hooks.append(self.result)

    # -- the looks -----------------------------------------------------------------

    def start(self) -> None:
        self._running = True
        self._schedule()

    def stop(self) -> None:
        """No more looks (one under way does not schedule the next)."""
        self._running = False
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None
        self._leases.clear()
        self._cache.clear()

    def _schedule(self) -> None:
        self._call = self.clock.callLater(self.settings.tick_ms / 1000, self._tick)

    def _tick(self) -> None:
        self._call = None
        d = self.look()
        d.addErrback(_failed, "tournament look failed")
        d.addBoth(lambda _: self._schedule() if self._call is None and self._running
                  else None)

    @inlineCallbacks
    def look(self) -> Any:
        """One look at every open or running tournament."""
        records = yield self.db.tournaments(("open", "running"), 1000)
        for record in records:
            yield self.drive(record.id)

    def result(self, finished: Any) -> None:
        """A match ended (``lobby.result_hooks``): a tournament's is acted on at once."""
        if getattr(finished, "tournament", None) is not None:
            self._cache.pop(finished.tournament, None)
            self._decided.add((finished.tournament, finished.tournament_round,
                               frozenset((finished.winner, finished.loser))))
            self.drive(finished.tournament).addErrback(_failed, "tournament result failed")

    def stored_elsewhere(self, tournament_id: int) -> None:
        """Another node stored a result of the tournament (``fibsd.cluster``): if this
        node drives it, it reads the store and acts now."""
        if tournament_id in self._leases:
            self._cache.pop(tournament_id, None)
            self.drive(tournament_id).addErrback(_failed, "tournament result failed")

    def drive(self, tournament_id: int) -> Deferred[None]:
        """Do what the tournament's stored state calls for; one drive at a time per
        tournament (a drive asked for meanwhile runs once after it)."""
        if tournament_id in self._busy:
            self._again.add(tournament_id)
            return Deferred.fromCoroutine(_nothing())
        self._busy.add(tournament_id)
        d = self._drive(tournament_id)

        def done(result: object) -> object:
            self._flush()
            self._busy.discard(tournament_id)
            if tournament_id in self._again:
                self._again.discard(tournament_id)
                return self.drive(tournament_id).addCallback(lambda _: result)
            return result

        d.addBoth(done)
        return d

    @inlineCallbacks
    def _drive(self, tournament_id: int) -> Any:
        now = self.clock.seconds()
        lease = self.settings.lease
        if self._leases.get(tournament_id, 0.0) - now < lease / 2:  # renewed half-way
            self._cache.pop(tournament_id, None)  # another node may have driven it
            held = yield self.db.take_lease(tournament_id, self.node, now, now + lease)
            if not held:
                self._leases.pop(tournament_id, None)
                return
            self._leases[tournament_id] = now + lease
        while True:
            fresh = tournament_id not in self._cache
            if fresh:
                record = yield self.db.tournament(tournament_id)
                if record is None or record.state == "finished":
                    return
                if record.state == "open":
                    yield self._maybe_start(record, now)
                    return
                entries = yield self.db.tournament_entries(tournament_id)
                pairings = yield self.db.tournament_pairings(tournament_id)
                self._cache[tournament_id] = (record, entries, pairings)
            record, entries, pairings = self._cache[tournament_id]
            seeds = [name for name, _ in entries]
            played = rounds_of(pairings)
            current = [p for p in pairings if p.round == len(played)]
            if any(p.winner is None for p in current):
                if not fresh and any(self._waiting(record.id, p) for p in current):
                    # not under way here: its result may be stored by another node, or
                    # a player renamed; the store says
                    self._cache.pop(tournament_id, None)
                    continue
                yield self._tend(record, seeds, current, now)
                return
            self._cache.pop(tournament_id, None)  # the director writes now
            fmt_args = {"rounds": record.rounds, "group_size": self.settings.group_size}
            upcoming = formats.next_round(record.format, seeds, played, **fmt_args)
            if upcoming is None:
                winner = formats.champion(record.format, seeds, played, **fmt_args)
                finished = yield self.db.finish_tournament(tournament_id, winner, int(now))
                if finished:
                    yield self._announce_winner(record, seeds, winner)
                return
            number = len(played) + 1
            deadline = int(now) + self.settings.start_timeout
            added = yield self.db.add_round(
                tournament_id, number, [(p.first, p.second, p.winner) for p in upcoming],
                int(now), deadline)
            if not added:  # another node (or a stop) was first: the next look sees it
                return
            self._tell_round(record, number, upcoming, deadline)

    @inlineCallbacks
    def _maybe_start(self, record: TournamentRecord, now: float) -> Any:
        entries = yield self.db.tournament_entries(record.id)
        due = (record.start_at is not None and now >= record.start_at) or (
            record.start_at is None and len(entries) >= record.max_players)
        if not due:
            return
        current = yield self.db.run(_current_ratings, [name for name, _ in entries])
        seeds = formats.seed_order(current)
        if len(seeds) < 2:
            if (yield self.db.finish_tournament(record.id, None, int(now))):
                self._tell(seeds, text.cancelled(record.id, record.name))
            return
        ratings = dict(current)
        first = formats.next_round(record.format, seeds, [], rounds=record.rounds,
                                   group_size=self.settings.group_size)
        assert first is not None
        deadline = int(now) + self.settings.start_timeout
        started = yield self.db.start_tournament(
            record.id, [(n, ratings[n]) for n in seeds],
            [(p.first, p.second, p.winner) for p in first], int(now), deadline)
        if not started:
            return
        rounds = formats.round_count(record.format, len(seeds), record.rounds,
                                     self.settings.group_size)
        self._tell(seeds, text.starts(record.id, record.name, len(seeds), rounds))
        self._tell_round(record, 1, first, deadline)
        _log.info("tournament {id} starts with {players} players", event="tournament_start",
                  id=record.id, players=len(seeds))

    # -- telling -----------------------------------------------------------------------

    def _tell(self, names: Sequence[str], *lines: str) -> None:
        """``lines`` for each of ``names`` here, sent by the next ``_flush`` (so that a
        telnet user gets one block, one prompt)."""
        for name in names:
            self._outbox.setdefault(name, []).extend(lines)

    def _flush(self) -> None:
        """On a cluster a user of another node is told through his proxy's session
        (``fibsd.cluster.remote``: a signed delivery to his node)."""
        outbox, self._outbox = self._outbox, {}
        for name, lines in outbox.items():
            user = self.lobby.find(name)
            if user is not None:
                user.session.notify(*lines)

    def _tell_round(self, record: TournamentRecord, number: int,
                    pairs: Sequence[formats.Pairing], deadline: int) -> None:
        length = formats.length_of(record.lengths, number - 1)
        until = utc_clock(deadline)
        for slot, p in enumerate(pairs):
            if p.second is None:
                self._tell([p.first], text.bye(record.id, number))
                continue
            self._tell([p.first], text.paired(record.id, number, p.second, length, until))
            self._tell([p.second], text.paired(record.id, number, p.first, length, until))
            self._invite(record, PairingRecord(number, slot, p.first, p.second,
                                               deadline=deadline))

    @inlineCallbacks
    def _announce_winner(self, record: TournamentRecord, seeds: Sequence[str],
                         winner: str | None) -> Any:
        if winner is None:
            return
        listeners = yield self.db.names_with_setting(NOTIFY_KEY, "1")
        line = text.won_by(record.id, record.name, winner)
        told = set(seeds) | set(listeners)
        self._tell([u.name for u in self.lobby.users() if u.name in told], line)
        _log.info("tournament {id} is won by {winner}", event="tournament_end",
                  id=record.id, winner=winner)

    # -- pairings under way ------------------------------------------------------------

    def live(self, pairing: PairingRecord) -> bool:
        """Whether the pair plays: a match here, or (on a cluster) on another node,
        as the two players' replicated ``playing`` says."""
        match = self.lobby.matches.get(pairing.first)
        if match is not None:
            return set(getattr(match, "names", ())) == {pairing.first, pairing.second}
        first, second = self.lobby.find(pairing.first), self.lobby.find(pairing.second)
        return (first is not None and second is not None
                and first.playing == second.name and second.playing == first.name)

    def _waiting(self, tournament_id: int, p: PairingRecord) -> bool:
        """An undecided pairing not under way here (nor its result being stored)."""
        return (p.winner is None and p.second is not None and not self.live(p)
                and not self._ending(tournament_id, p))

    def _standing(self, inviter: str, tag: tuple[int, int]) -> bool:
        return _tag_of(self.lobby.invitations.get(inviter)) == tag

    def _ending(self, tournament_id: int, p: PairingRecord) -> bool:
        """Whether the pair's match has ended here, its result stored or being stored."""
        pair = {p.first, p.second}
        return ((tournament_id, p.round, frozenset(pair)) in self._decided
                or any(set(getattr(m, "names", ())) == pair for m in self.lobby.writing))

    @inlineCallbacks
    def _tend(self, record: TournamentRecord, seeds: Sequence[str],
              current: Sequence[PairingRecord], now: float) -> Any:
        for p in current:
            if p.winner is not None or p.second is None:
                continue
            key = (record.id, p.round, p.slot)
            if self.live(p) or self._ending(record.id, p):
                self._live_seen[key] = now
                continue
            since = max(self._live_seen.get(key, 0.0), self._started_at)
            if now >= max(p.deadline, since + self.settings.start_timeout):
                yield self._forfeit(record, seeds, p, now)
                self._live_seen.pop(key, None)
            else:
                self._invite(record, p)

    @inlineCallbacks
    def _forfeit(self, record: TournamentRecord, seeds: Sequence[str], p: PairingRecord,
                 now: float) -> Any:
        assert p.second is not None
        gone = yield self.db.run(_barred, [p.first, p.second], int(now))
        here = [n for n in (p.first, p.second) if self.lobby.find(n) is not None
                and n not in gone]
        if len(gone) == 1:
            winner = p.second if p.first in gone else p.first
        elif len(here) == 1:
            winner = here[0]
        else:
            winner = min((p.first, p.second), key=lambda n: seeds.index(n)
                         if n in seeds else len(seeds))
        loser = p.second if winner == p.first else p.first
        self._cache.pop(record.id, None)
        decided = yield self.db.record_forfeit(record.id, p.round, p.slot, winner)
        if decided:
            self._tell([winner], text.forfeit_won(record.id, p.round, loser))
            self._tell([loser], text.forfeit_lost(record.id, p.round, winner))
            self._again.add(record.id)  # the round may be complete now

    def _invite(self, record: TournamentRecord, p: PairingRecord) -> None:
        """Set up the invitation of an undecided pairing whose players are both here and
        free (unless one stands already)."""
        if self._invitation is None or p.second is None:
            return
        first, second = self.lobby.find(p.first), self.lobby.find(p.second)
        if first is None or second is None or first.playing or second.playing:
            return
        # On a cluster either may be a user of another node: the invitation is copied to
        # every node with its tag (``fibsd.cluster.node.InvitationTable``) and ``join``
        # runs on the inviter's node, where the match then lives.
        tag = (record.id, p.round)
        if self._ending(record.id, p) or self._standing(first.name, tag):
            return
        length = formats.length_of(record.lengths, p.round - 1)

        def set_up(saved: Any) -> None:
            if (self.lobby.find(p.first) is not first or self.lobby.find(p.second) is not second
                    or first.playing or second.playing or self._ending(record.id, p)
                    or self._standing(first.name, tag)):  # set up meanwhile
                return
            if saved is not None and _saved_tag(saved.record) == tag:
                terms: int | None = None  # resume the round's match where it stopped
                clock = None  # a saved match keeps its own clocks
            else:
                terms = length
                clock = ClockSpec.parse(record.clock) if record.clock else None
            lines = [game_text.invitation(first.name, terms), game_text.type_join(first.name)]
            if clock is not None and terms is not None:  # after FIBS's lines, as ``invite``'s
                lines.append(clock_text.invitation_clock(clock, clock.reserve(terms)))
            self.lobby.invitations[first.name] = self._invitation(
                first.name, second.name, terms, sent=self.lobby.now(), clock=clock,
                tournament=tag)
            self._tell([second.name], *lines)
            self._flush()

        self.db.load_match(first.name, second.name).addCallback(set_up).addErrback(
            _failed, "tournament invitation failed")


def _saved_tag(record: str) -> tuple[int, int] | None:
    try:
        tag = json.loads(record).get("tournament")
        return None if tag is None else (int(tag[0]), int(tag[1]))
    except (ValueError, TypeError, AttributeError, IndexError):
        return None


def _current_ratings(store: Any, names: Sequence[str]) -> list[tuple[str, float]]:
    """On the database thread: (name, rating) of each entrant who still has an account."""
    found = []
    for name in names:
        user = store.get_user(name)
        if user is not None:
            found.append((name, user.rating))
    return found


def _barred(store: Any, names: Sequence[str], now: int) -> list[str]:
    """On the database thread: the names whose account is deleted or banned."""
    return [n for n in names if store.get_user(n) is None or store.ban_for(n, "", now)]


def _failed(failure: Failure, what: str) -> None:
    """A look the database could not answer (down, or stopping) is simply made again at
    the next tick; anything else is a bug, logged."""
    if failure.check(DatabaseStopped, *OUTAGES) is None:
        _log.failure(what, failure)


async def _nothing() -> None:
    return None
