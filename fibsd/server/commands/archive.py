"""The match archive for telnet and CLIP clients: ``archive [name] [page]`` lists a
player's finished matches with their numbers, newest first, one page at a time;
``export <number>`` sends one as GNU Backgammon ``.mat`` text (protocol/export.md).

Both are bounded by ``[archive]`` settings: a page reads at most ``page_size`` + 1 rows
(the extra one only says whether there is more); ``export`` replays the whole match
through the rules engine (some 10 ms of CPU a game), in the reactor's thread pool so that
play goes on meanwhile, and a user may ask for ``exports_per_minute`` at once and as many
a minute on average (his bucket of fibsd.server.ratelimit); a text longer than ``max_export_bytes`` is refused.  Any player's archive is open to everyone, like ``oldmoves``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from twisted.internet.defer import maybeDeferred
from twisted.internet.interfaces import IReactorThreads
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.server.commands import command, user_of
from fibsd.server.ratelimit import allow
from fibsd.wire import archive_text as text
from fibsd.wire.mat import mat_text

if TYPE_CHECKING:
    from fibsd.server.session import Session
    from fibsd.store import FinishedMatch

_log = Logger()
MAX_PAGE = 100_000  # keeps OFFSET a small integer; nobody pages this far by hand
MAX_MATCH_ID = 2**63 - 1  # SQLite's largest integer


def _page(word: str) -> int | None:
    if not word.isdigit() or len(word) > 6:
        return None
    page = int(word)
    return page if 1 <= page <= MAX_PAGE else None


@command("archive")
def archive(session: Session, rest: str) -> Any:
    me = user_of(session)
    words = rest.split()
    page: int | None = 1
    if words and words[-1].isdigit():
        page = _page(words.pop())
    if page is None or len(words) > 1:
        session.send(text.ARCHIVE_USAGE)
        return None
    name = me.name
    if words:
        online = session.lobby.complete(words[0])
        name = online.name if online is not None else words[0]
    size = session.settings.archive.page_size

    def listed(found: list[FinishedMatch]) -> None:
        if not found:
            session.send(text.no_archive(name, page))
            return
        rows = [text.archive_row(text.ArchiveRow(
            m.id or 0, m.finished, m.winner, m.loser, m.winner_points, m.loser_points,
            m.length)) for m in found[:size]]
        more = [text.archive_more(name, page + 1)] if len(found) > size else []
        session.send(text.archive_header(name), *rows, *more)

    return maybeDeferred(session.db.recent_finished_matches, name, size + 1,
                         (page - 1) * size).addCallback(listed)


@command("export")
def export(session: Session, rest: str) -> Any:
    words = rest.split()
    number = words[0].removeprefix("#") if len(words) == 1 else ""
    if not number.isdigit() or len(number) > 18 or not 0 < int(number) <= MAX_MATCH_ID:
        session.send(text.EXPORT_USAGE)
        return None
    match_id = int(number)
    settings = session.settings.archive
    me = user_of(session)
    if not allow(session, "archive.exports_per_minute"):
        session.send(text.export_flood(settings.exports_per_minute))
        return None

    def build(found: FinishedMatch | None) -> Any:
        if found is None:
            session.send(text.no_such_match(match_id))
            return None
        return _off_the_reactor(session, mat_text, found.record,
                                date=text.finished_at(found.finished), site=settings.site,
                                match_id=match_id, fair_dice=True).addCallbacks(send, damaged)

    def damaged(failure: Failure) -> None:
        failure.trap(ValueError, KeyError, TypeError)
        _log.failure("finished match {id} cannot be exported", failure, id=match_id,
                     event="error", user=me.name, command="export")
        session.send(text.export_damaged(match_id))

    def send(mat: str) -> None:
        size = len(mat.encode("utf-8"))
        if size > settings.max_export_bytes:
            _log.info("export of match {id} refused: {size} bytes", id=match_id, size=size,
                      event="limit", limit="archive.max_export_bytes",
                      user=me.name)
            session.send(text.export_too_long(match_id, size, settings.max_export_bytes))
            return
        lines = mat.splitlines()
        session.send(text.export_header(match_id, len(lines)), *lines,
                     text.export_end(match_id))

    return maybeDeferred(session.db.finished_match, match_id).addCallback(build)


def _off_the_reactor(session: Session, function: Any, *args: Any, **kwargs: Any) -> Any:
    """Run CPU work in the reactor's thread pool, so that play goes on meanwhile; a
    clock without threads (a test's) runs it at once."""
    reactor = session.clock
    if IReactorThreads.providedBy(reactor):
        return deferToThreadPool(reactor, reactor.getThreadPool(), function, *args, **kwargs)
    return maybeDeferred(function, *args, **kwargs)
