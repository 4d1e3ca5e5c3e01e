"""Droppers: offers to resume, the abandonment count, adjudication and login notices.

A saved match that one player left is a ``Departure`` in the store
(``LiveMatch.suspend`` and ``claim`` record it, a resume clears it).  His opponent
offers to resume by logging in or by inviting him.  ``AbandonmentCheck`` runs every
``fair.abandon_check_interval`` seconds on the reactor's clock: a departure older than
``fair.abandon_days`` (or one that counts at once) is counted as abandoned when the
opponent offered, and forgotten when he did not; with ``fair.adjudicate`` the match is
also scored as a loss for the dropper at its current score, rated as a match of its
length, and removed from the saved matches, and both players find a notice at their
next login.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred, gatherResults, maybeDeferred, succeed
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from fibsd.rating import rate_match
from fibsd.rules.ending import marked
from fibsd.rules.match import Match
from fibsd.server.dbthread import unattended
from fibsd.server.lobby import Lobby, on_login
from fibsd.store import Departure, FinishedMatch, SavedMatch, UserRecord
from fibsd.wire import fair_text

if TYPE_CHECKING:
    from fibsd.server.session import Services
    from fibsd.server.user import OnlineUser

_log = Logger()
DAY = 86400


@on_login
def _offer_and_tell(lobby: Lobby, user: OnlineUser) -> None:
    """Logging in offers to resume every match left with this user; notices of
    adjudicated matches wait for the login.  In a cluster, only on his own node."""
    if user.session.remote:
        return
    db = user.session.db
    if user.session.settings.fair.abandon_days > 0:
        unattended(db.offer_resume(user.name), "offer_resume")

    def tell(notices: list[str]) -> None:
        if notices and lobby.find(user.name) is user:
            user.session.notify(*notices)

    unattended(db.take_notices(user.name).addCallback(tell), "take_notices")


class AbandonmentCheck:
    def __init__(self, services: Services) -> None:
        self.services = services
        self._loop = LoopingCall(self.check)
        self._loop.clock = services.clock

    def start(self) -> None:
        fair = self.services.settings.fair
        if fair.abandon_days > 0 and not self._loop.running:
            self._loop.start(fair.abandon_check_interval, now=False)

    def stop(self) -> None:
        if self._loop.running:
            self._loop.stop()

    def check(self) -> Deferred[Any]:
        """Count (and adjudicate) every departure whose time ran out."""
        fair = self.services.settings.fair
        cluster = self.services.cluster
        if fair.abandon_days <= 0 or cluster is not None and not cluster.leads():
            return succeed(None)  # in a cluster, one node checks for all
        now = int(self.services.clock.seconds())
        found = maybeDeferred(self.services.db.due_departures, now - fair.abandon_days * DAY)
        # A failure (the database is down) is logged, and the loop goes on: a failed
        # call would stop the LoopingCall for good.
        return unattended(found.addCallback(
            lambda due: gatherResults([self._settle(d) for d in due], consumeErrors=True)),
            "abandonment_check")

    def _settle(self, departure: Departure) -> Deferred[Any]:
        db = self.services.db
        lobby = self.services.lobby
        if lobby.matches.get(departure.player_a) is not None and \
                lobby.matches.get(departure.player_a) is lobby.matches.get(departure.player_b):
            return succeed(None)  # being played again right now: its begin clears it
        if not (departure.offered or departure.counts_now):
            return maybeDeferred(db.clear_departure, departure.player_a, departure.player_b)
        if not self.services.settings.fair.adjudicate:
            return self._count(departure)
        saved = maybeDeferred(db.load_match, departure.player_a, departure.player_b)
        return saved.addCallback(self._adjudicate, departure)

    def _count(self, departure: Departure, *args: Any) -> Deferred[Any]:
        return maybeDeferred(self.services.db.count_abandonment, departure, *args)

    def _adjudicate(self, saved: SavedMatch | None, departure: Departure) -> Deferred[Any]:
        if saved is None:
            return self._count(departure)
        dropper = departure.dropper
        winner = departure.player_b if dropper == departure.player_a else departure.player_a
        try:
            data = json.loads(saved.record)
            names = [str(name) for name in data["players"]]
            rules = Match.from_record(data["match"])
            score = dict(zip(names, rules.score, strict=True))
            if not {winner, dropper} <= score.keys():
                raise ValueError("the record has other players")
        except (ValueError, KeyError, TypeError):
            return self._count(departure)
        db = self.services.db
        users = gatherResults([maybeDeferred(db.get_user, winner),
                               maybeDeferred(db.get_user, dropper)])

        def finish(records: list[UserRecord | None]) -> Deferred[Any]:
            won, lost = records
            length = rules.length
            change = None
            if length and won is not None and lost is not None:
                change = rate_match(won.rating, won.experience, lost.rating, lost.experience,
                                    length)
            finished = FinishedMatch(
                winner=winner, loser=dropper, length=length, winner_points=score[winner],
                loser_points=score[dropper], finished=int(self.services.clock.seconds()),
                record=marked(saved.record, "adjudication"),
                winner_rating_change=change.winner_change if change else 0.0,
                loser_rating_change=change.loser_change if change else 0.0)
            ratings = None
            if change is not None:
                ratings = {winner: (change.new_winner_rating, change.new_winner_experience),
                           dropper: (change.new_loser_rating, change.new_loser_experience)}
                self._update_online(ratings)
            notices = {
                winner: fair_text.adjudicated(dropper, winner, (score[winner], score[dropper]),
                                              length),
                dropper: fair_text.adjudicated(winner, winner, (score[dropper], score[winner]),
                                               length),
            }
            _log.info("{winner} wins an abandoned match against {loser} by adjudication",
                      event="match_end", winner=winner, loser=dropper, reason="adjudicated")
            return self._count(departure, finished, ratings, notices)

        return users.addCallback(finish)

    def _update_online(self, ratings: dict[str, tuple[float, int]]) -> None:
        for name, (rating, experience) in ratings.items():
            user = self.services.lobby.find(name)
            if user is not None:
                user.rating, user.experience = rating, experience
                if self.services.cluster is not None:
                    self.services.cluster.changed(user)
