"""``analysis [number] [deeper]``: a finished match's engine analysis for telnet and CLIP
clients (protocol/analysis-command.md), and asking one's own match again, deeper.

Without a number it is the user's last finished match.  A finished analysis prints a
header, both players' summaries (record order) and the ``WORST`` decisions that lost
equity, worst first; a match without one says where its job is.  ``deeper`` queues one
of the user's own matches again at ``[analysis] deeper_plies``, at most
``deeper_per_day`` times a day: the count is the store's (``analysis_requests``), so
neither logging in again nor another node of a cluster resets it.  The lines are in
``fibsd.wire.analysis_text``; the store is read on the database thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from twisted.internet.defer import maybeDeferred
from twisted.logger import Logger

from fibsd.server.commands import command, user_of
from fibsd.wire import analysis_text as text

if TYPE_CHECKING:
    from fibsd.analysis.model import MatchAnalysis
    from fibsd.server.session import Session
    from fibsd.store import FinishedMatch

_log = Logger()
WORST = 5  # decisions shown
DAY = 86400.0
MAX_MATCH_ID = 2**63 - 1


@command("analysis")
def analysis(session: Session, rest: str) -> Any:
    me = user_of(session)
    words = rest.split()
    deeper = bool(words) and words[-1].lower() == "deeper"
    if deeper:
        words.pop()
    number = words[0].removeprefix("#") if len(words) == 1 else ""
    if len(words) > 1 or (words and not _valid(number)):
        session.send(text.USAGE)
        return None
    if words:
        found = maybeDeferred(session.db.finished_match, int(number))
    else:
        found = maybeDeferred(session.db.recent_finished_matches, me.name, 1, 0).addCallback(
            lambda rows: rows[0] if rows else None)

    def chosen(match: FinishedMatch | None) -> Any:
        if match is None:
            session.send(text.no_match(int(number)) if words else text.no_matches(me.name))
            return None
        if deeper:
            return _deeper(session, match)
        return maybeDeferred(session.db.analysis, match.id).addCallback(
            lambda result: session.send(*lines(match, result)))

    return found.addCallback(chosen)


def _valid(number: str) -> bool:
    return number.isdigit() and len(number) <= 19 and 0 < int(number) <= MAX_MATCH_ID


def lines(match: FinishedMatch, result: MatchAnalysis | None) -> list[str]:
    """What ``analysis`` prints for ``match``."""
    match_id = match.id or 0
    if result is None or result.state != "done":
        state = "off" if result is None else result.state
        return [text.state_line(match_id, state, _one_line(result.error if result else None))]
    players = tuple(p.name for p in result.players) or (match.winner, match.loser)
    shown = [text.header(match_id, players, match.length, result.plies)]
    shown += [text.summary(text.SummaryRow(
        p.name, p.pr, p.checker_error_rate, p.cube_error_rate, p.luck_rate, p.decisions,
        p.doubtful, p.bad, p.very_bad)) for p in result.players]
    worst = sorted((m for m in result.marks if m.error > 0), key=lambda m: -m.error)[:WORST]
    shown.append(text.worst_header(len(worst)))
    shown += [text.decision(text.Decision(m.game, m.player, m.kind, m.played, m.best,
                                          m.error, m.skill)) for m in worst]
    return shown


def _one_line(reason: str | None) -> str | None:
    """A worker's reason as one short line of plain text (it may quote gnubg)."""
    if reason is None:
        return None
    flat = "".join(c if c.isprintable() and c.isascii() else " " for c in reason)
    return " ".join(flat.split())[:200] or None


def _deeper(session: Session, match: FinishedMatch) -> Any:
    me = user_of(session)
    match_id = match.id or 0
    if me.name not in (match.winner, match.loser):
        session.send(text.NOT_YOURS)
        return None
    settings = session.settings.analysis
    if not session.services.analysis_on or settings.matches == "none":
        session.send(text.OFF)
        return None
    plies = settings.deeper_plies

    def counted(asked: int) -> Any:
        if asked >= settings.deeper_per_day:
            _log.info("{user} refused by {limit}", event="limit",
                      limit="analysis.deeper_per_day", user=me.name)
            session.send(text.deeper_flood(settings.deeper_per_day))
            return None
        return maybeDeferred(session.db.request_analysis, match_id, plies, me.name,
                             session.now()).addCallback(answered)

    def answered(outcome: str) -> None:
        if outcome == "queued":
            session.send(text.deeper_queued(match_id, plies))
        elif outcome == "pending":
            session.send(text.state_line(match_id, "queued"))
        elif outcome == "deep":
            session.send(text.deeper_refused(match_id, plies))
        else:
            session.send(text.no_match(match_id))

    return maybeDeferred(session.db.analysis_requests, me.name,
                         session.now() - DAY).addCallback(counted)
