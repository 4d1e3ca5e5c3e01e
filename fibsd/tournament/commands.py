"""The tournament commands: ``tournaments``, ``tournament ...`` and ``admin tournament``.

Registered through the server's command registry (imported by ``fibsd.app``).  Every
change is one store call that checks and writes in one transaction, so a refusal is
the store's answer, never a guess from a read made before (protocol/tournaments.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred, maybeDeferred

from fibsd.server.commands import command, user_of
from fibsd.server.commands.admin import record, sub
from fibsd.store import tournaments as answers
from fibsd.tournament import pairing as formats
from fibsd.tournament.director import NOTIFY_KEY, rounds_of
from fibsd.tournament.spec import SpecError, parse_create, start_text
from fibsd.wire import tournament_text as text

if TYPE_CHECKING:
    from fibsd.server.session import Session
    from fibsd.store.tournaments import PairingRecord, TournamentRecord

FINISHED_LISTED = 10  # finished tournaments ``tournaments`` shows, newest first


def _listing(store: Any) -> list[tuple[TournamentRecord, int]]:
    """On the database thread: open, running, then the last finished tournaments."""
    shown = []
    for states, limit in ((("open",), 1000), (("running",), 1000),
                          (("finished",), FINISHED_LISTED)):
        for record in reversed(store.tournaments(states, limit)):
            shown.append((record, len(store.tournament_entries(record.id))))
    return shown


def describe(record: TournamentRecord, players: int) -> str:
    return text.describe(record.id, record.name, record.format, record.state, players,
                         record.max_players, record.lengths, record.bots,
                         start_text(record.start_at), record.clock)


@command("tournaments")
def tournaments(session: Session, rest: str) -> Deferred[None]:
    def show(rows: list[tuple[TournamentRecord, int]]) -> None:
        session.send(*([describe(r, n) for r, n in rows] or [text.NONE]))

    return session.db.run(_listing).addCallback(show)


def _whole(store: Any, number: int) -> tuple[Any, list[tuple[str, float]], list[Any]] | None:
    record = store.tournament(number)
    if record is None:
        return None
    return record, store.tournament_entries(number), store.tournament_pairings(number)


def draw_lines(record: TournamentRecord, entries: list[tuple[str, float]],
               pairings: list[PairingRecord], live: Any, group_size: int) -> list[str]:
    """``tournament <id>``: its row, every pairing, the standings (Swiss, round robin)
    and the winner."""
    lines = [describe(record, len(entries))]
    for p in pairings:
        lines.append(text.round_line(p.round, p.first, p.second, p.winner, p.forfeit,
                                     p.match_id, live(p)))
    if record.format != "knockout" and pairings:
        seeds = [name for name, _ in entries]
        for place, (name, points, tie) in enumerate(
                formats.standings(seeds, rounds_of(pairings)), start=1):
            lines.append(text.standing(place, name, points, tie))
    if record.winner:
        lines.append(text.winner_line(record.winner))
    return lines


def _number(word: str) -> int | None:
    return int(word) if word.isdigit() and len(word) < 10 else None


@command("tournament")
def tournament(session: Session, rest: str) -> Any:
    words = rest.split()
    if not words:
        return session.send(text.TOURNAMENT_USAGE)
    verb = words[0].lower()
    if verb in ("join", "leave") and len(words) == 2:
        number = _number(words[1])
        if number is None:
            return session.send(text.no_tournament(words[1]))
        return (_join if verb == "join" else _leave)(session, number)
    if verb == "notify" and len(words) == 2 and words[1].lower() in ("on", "off"):
        on = words[1].lower() == "on"
        return maybeDeferred(session.db.save_settings, user_of(session).name,
                             {NOTIFY_KEY: "1" if on else "0"}).addCallback(
            lambda _: session.send(text.NOTIFY_ON if on else text.NOTIFY_OFF))
    if len(words) != 1:
        return session.send(text.TOURNAMENT_USAGE)
    number = _number(words[0])
    if number is None:
        return session.send(text.no_tournament(words[0]))
    director = session.services.tournaments

    def show(found: Any) -> None:
        if found is None:
            session.send(text.no_tournament(words[0]))
            return
        record, entries, pairings = found
        live = director.live if director is not None else (lambda p: False)
        session.send(*draw_lines(record, entries, pairings, live,
                                 session.settings.tournaments.group_size))

    return session.db.run(_whole, number).addCallback(show)


def _join(session: Session, number: int) -> Deferred[None]:
    user = user_of(session)

    def joined(outcome: str) -> Any:
        if outcome != answers.JOINED:
            return session.send(_refusal(outcome, number))

        def told(record: Any) -> None:
            players, limit = record
            session.send(text.joined(number, players, limit))
            director = session.services.tournaments
            if director is not None:
                director.drive(number)  # full: it starts now

        return session.db.run(_count, number).addCallback(told)

    return maybeDeferred(session.db.run, _join_unless_barred, number, user.name,
                         user.rating, session.now(), _is_bot(user)).addCallback(joined)


def _is_bot(user: Any) -> bool:
    """Whether the account is a bot (wt-resident's account flag; until it has landed,
    every account counts as human)."""
    return bool(getattr(user, "bot", False))


NO_BOTS = "no bots"


def _join_unless_barred(store: Any, number: int, name: str, rating: float, now: int,
                        bot: bool) -> str:
    record = store.tournament(number)
    if record is not None and bot and not record.bots and record.state == "open":
        return NO_BOTS
    outcome: str = store.join_tournament(number, name, rating, now)
    if outcome == answers.ELSEWHERE:
        return f"{answers.ELSEWHERE} {store.entered_tournament(name)}"
    return outcome


def _count(store: Any, number: int) -> tuple[int, int]:
    record = store.tournament(number)
    return len(store.tournament_entries(number)), record.max_players


def _refusal(outcome: str, number: int) -> str:
    if outcome == answers.NO_TOURNAMENT:
        return text.no_tournament(str(number))
    if outcome == answers.STARTED:
        return text.started(number)
    if outcome == answers.FULL:
        return text.full(number)
    if outcome == NO_BOTS:
        return text.no_bots(number)
    if outcome == answers.NOT_ENTERED:
        return text.not_entered(number)
    if outcome.startswith(answers.ELSEWHERE):
        return text.elsewhere(int(outcome.split()[-1]))
    return text.already(number)


def _leave(session: Session, number: int) -> Deferred[None]:
    def left(outcome: str) -> None:
        session.send(text.left(number) if outcome == answers.LEFT else _refusal(outcome, number))

    return maybeDeferred(session.db.leave_tournament, number,
                         user_of(session).name).addCallback(left)


@sub("tournament")
def admin_tournament(session: Session, words: list[str], rest: str) -> Any:
    """``admin tournament create --name ... --format ... --lengths ...``."""
    if not words or words[0].lower() != "create":
        return session.send(text.CREATE_USAGE)
    limits = session.settings.tournaments
    try:
        spec = parse_create(rest if len(words) > 1 else "", limits.max_players)
    except SpecError as problem:
        return session.send(text.create_refused(str(problem)))

    def created(number: int | None) -> None:
        if number is None:
            session.send(text.create_refused(
                f"{limits.max_open} tournaments are open or running"))
            return
        session.send(text.created(number, spec.name))
        record(session, "tournament", target=str(number), detail=spec.name)

    return maybeDeferred(
        session.db.create_tournament, name=spec.name, fmt=spec.fmt, lengths=spec.lengths,
        rounds=spec.rounds, max_players=spec.max_players, start_at=spec.start_at,
        bots=spec.bots, clock=spec.clock, created=session.now(),
        limit=limits.max_open).addCallback(created)
