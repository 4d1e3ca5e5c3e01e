"""The web face's routes: one twisted.web resource that reads the path and answers.

Every page is rendered by a Jinja2 template with autoescaping on, so anything a user
wrote (names are the only such text shown) is escaped.  Nothing private is read or
shown: the pages use names, ratings, experience and match records, never addresses,
hosts or messages.  Lists are cut into pages of ``web_page_size`` rows; a bad id, an
unknown player, a page that cannot exist or an unknown path is a 404.  ``/metrics``
answers only the addresses of ``[web] metrics_from``.  protocol/web.md lists the routes
and the JSON shapes; the connection and request limits are fibsd.web.gate's.
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.internet.threads import deferToThread
from twisted.logger import Logger
from twisted.web import http
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request, Site

from fibsd.config import Settings
from fibsd.residents.levels import describe, resident
from fibsd.rules.ending import ended
from fibsd.store import FinishedMatch, Unavailable
from fibsd.tournament import pairing as formats
from fibsd.tournament.director import rounds_of
from fibsd.web import analysis_view as views
from fibsd.web import favicon, i18n, tournament_view
from fibsd.web import metrics as metrics_module
from fibsd.web.board_svg import draw_board, from_board_view, names_line
from fibsd.web.chart_svg import draw_chart, rating_path
from fibsd.web.gate import address_key, log_refused
from fibsd.web.health import Health
from fibsd.web.live import LiveBoards
from fibsd.web.replay import Replay, UnreadableRecord, replay
from fibsd.web.sgf import sgf_text
from fibsd.web.sources import Archive, LobbySource
from fibsd.wire.board import InvalidBoardLine, parse_board
from fibsd.wire.listings_text import rank_players
from fibsd.wire.archive_text import finished_at
from fibsd.wire.mat import mat_text

_log = Logger()
HERE = Path(__file__).resolve().parent
PLAY = HERE / "static" / "play"
PLAY_TYPES = {".js": b"text/javascript; charset=utf-8", ".css": b"text/css; charset=utf-8"}
MAX_NAME = 64  # longer path names are not looked up
MAX_ID_DIGITS = 18
ICON = favicon.ico()  # a few hundred bytes, drawn once
# Pages past this cannot hold anything (fifty million rows at the smallest page size)
# and their offset would not fit the database's integers: 404 before any query.
MAX_PAGE = 1_000_000
REPLAY_CACHE = 32  # replays kept (a record never changes once finished)
RATING_HISTORY = 200  # matches shown in a profile's chart
PR_HISTORY = 50  # analysed matches a profile reads: its averages (10, 50) and PR chart
PR_LADDER_ROWS = 200  # players the PR ladder shows
SKILL_KEYS = {"doubtful": "page.skill_doubtful", "bad": "page.skill_bad",
              "very bad": "page.skill_very_bad"}  # a decision's class, in the catalogs
Handler = Callable[..., Awaitable[None]]
# The catalog keys of the 404 messages (fibsd.web.i18n); others are shown as they are.
ERRORS = {"No such page.": "error.no_page", "No such player.": "error.no_player",
          "No such file.": "error.no_file", "This match cannot be replayed.": "error.no_replay",
          "Bad page.": "error.bad_page", "Bad step.": "error.bad_step",
          "No such page of the ladder.": "error.no_ladder_page", "No such match.": "error.no_match",
          "No such step.": "error.no_step", "This match cannot be exported.": "error.no_export",
          "No such tournament.": "error.no_tournament"}


class NotFound(Exception):
    """Answer 404 with this text."""


def _segment(value: str) -> str:
    return quote(value, safe="")


def _when(unix: int) -> str:
    return finished_at(unix).isoformat().replace("+00:00", "Z")


def make_environment() -> Environment:
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["segment"] = _segment
    env.filters["when"] = lambda unix: _when(unix).replace("T", " ").replace("Z", " UTC")
    return env


class Recent(OrderedDict[int, Any]):
    """The last ``size`` values made, by match id (a finished match never changes)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def keep(self, key: int, value: Any) -> Any:
        self[key] = value
        if len(self) > self.size:
            self.popitem(last=False)
        return value

    def find(self, key: int) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value


def _gone(request: Request) -> bool:
    """The reader left while the page was being made (twisted.web drops ``channel``
    when the connection is lost or the request finished)."""
    return getattr(request, "channel", None) is None


class WebFace(Resource):
    isLeaf = True

    def __init__(self, lobby: LobbySource, archive: Archive, settings: Settings,
                 clock: IReactorTime, metrics: metrics_module.Metrics) -> None:
        super().__init__()
        self.lobby = lobby
        self.archive = archive
        self.page_size = settings.web_page_size
        self.threshold = settings.rated_experience
        self.metrics = metrics
        self.env = make_environment()
        self.catalogs = i18n.load()
        self.live = LiveBoards(clock, lobby.board_line, self._live_fragment,
                               settings.web_live_viewers, settings.web.live_per_address)
        self.health = Health(archive, clock)
        self.metrics_from = [ipaddress.ip_network(allowed, strict=False)
                             for allowed in settings.web.metrics_from]
        self.site = settings.archive.site
        self.bots = settings.bots  # resident bots: /api/bots, profiles, the ladder
        self.pr_min_matches = settings.analysis.ladder_min_matches
        self._unavailable_logged = float("-inf")  # a lost database: one line a minute
        # Replays and .mat texts cost ~10 ms of CPU a game: made in a thread, kept.
        self._replays = Recent(REPLAY_CACHE)
        self._mats = Recent(REPLAY_CACHE)
        self._routes: list[tuple[re.Pattern[str], Handler]] = [
            (re.compile(r"/"), self.index),
            (re.compile(r"/ratings"), self.ratings),
            (re.compile(r"/players/([^/]+)"), self.profile),
            (re.compile(r"/matches/(\d{1,%d})" % MAX_ID_DIGITS), self.match_page),
            (re.compile(r"/matches/(\d{1,%d})\.json" % MAX_ID_DIGITS), self.match_json),
            (re.compile(r"/matches/(\d{1,%d})\.mat" % MAX_ID_DIGITS), self.match_mat),
            (re.compile(r"/matches/(\d{1,%d})\.sgf" % MAX_ID_DIGITS), self.match_sgf),
            (re.compile(r"/ratings/pr"), self.pr_ladder),
            (re.compile(r"/tournaments"), self.tournaments),
            (re.compile(r"/tournaments/(\d{1,%d})" % MAX_ID_DIGITS), self.tournament_page),
            (re.compile(r"/tournaments/(\d{1,%d})\.json" % MAX_ID_DIGITS), self.tournament_json),
            (re.compile(r"/live/([^/]+)"), self.live_page),
            (re.compile(r"/live/([^/]+)/events"), self.live_events),
            (re.compile(r"/api/matches"), self.api_matches),
            (re.compile(r"/api/bots"), self.api_bots),
            (re.compile(r"/metrics"), self.metrics_text),
            (re.compile(r"/healthz"), self.healthz),
            (re.compile(r"/static/style\.css"), self.style),
            (re.compile(r"/favicon\.ico"), self.icon),
            (re.compile(r"/play/?"), self.play_page),
            (re.compile(r"/play/([a-z0-9_]+\.(?:js|css))"), self.play_file),
            (re.compile(r"/play/i18n/([a-z]{2})\.json"), self.play_catalog),
        ]

    # -- dispatch ------------------------------------------------------------------------

    def render_GET(self, request: Request) -> Any:
        try:
            path = request.path.decode("utf-8")
        except UnicodeDecodeError:
            path = ""
        for pattern, handler in self._routes:
            found = pattern.fullmatch(path)
            if found is not None:
                try:
                    args = [unquote(arg, errors="strict") for arg in found.groups()]
                except UnicodeDecodeError:
                    break
                Deferred.fromCoroutine(self._answer(request, handler, *args))
                return NOT_DONE_YET
        return self._not_found(request, "No such page.")

    def render_HEAD(self, request: Request) -> Any:
        return self.render_GET(request)

    async def _answer(self, request: Request, handler: Handler, *args: str) -> None:
        try:
            await handler(request, *args)
        except NotFound as error:
            if not _gone(request):
                self._not_found(request, str(error))
                request.finish()
        except Unavailable as error:  # lost or hung (fibsd.server.dbthread): no traceback
            now = time.monotonic()
            if now - self._unavailable_logged >= 60:
                self._unavailable_logged = now
                _log.warn("web page {path}: the database is not available ({error})",
                          path=request.path.decode("ascii", "replace"), error=str(error),
                          event="web_database_unavailable")
            request.setResponseCode(503)
            request.setHeader(b"retry-after", b"60")
            self._send(request, self._page("error.html", request,
                                           title="page.database_unavailable",
                                           message="error.database_down"))
        except Exception:
            _log.failure("web page {path} failed", path=request.path.decode("ascii", "replace"))
            request.setResponseCode(500)
            self._send(request, self._page("error.html", request, title="page.server_error",
                                           message="error.failed"))

    def _not_found(self, request: Request, message: str) -> bytes:
        request.setResponseCode(404)
        body = self._page("error.html", request, title="page.not_found",
                          message=ERRORS.get(message, message))
        request.setHeader(b"content-type", b"text/html; charset=utf-8")
        if not request.startedWriting and request.method != b"HEAD":
            request.write(body)
        return b""

    def _page(self, template: str, request: Request, **context: Any) -> bytes:
        """``template`` in the reader's language (fibsd.web.i18n); a ``title`` that is a
        catalog key is translated, a name stays as it is."""
        lang = self._language(request)
        t = i18n.translator(self.catalogs[lang])
        title = context.pop("title")
        if isinstance(title, tuple):  # (key, values)
            title = t(title[0], **title[1])
        elif title in self.catalogs[lang]:
            title = t(title)
        return self.env.get_template(template).render(
            lang=lang, t=t, title=title, switch=self._switch(request, lang),
            **context).encode("utf-8")

    def _language(self, request: Request) -> str:
        """``?lang=`` (kept in a cookie), the cookie, Accept-Language, English."""
        request.setHeader(b"vary", b"Accept-Language, Cookie")
        asked = i18n.known(self._arg(request, "lang"))
        if asked:
            request.addCookie(i18n.COOKIE, asked, path="/", max_age="31536000",
                              sameSite="lax")
            return asked
        return (i18n.known(request.getCookie(i18n.COOKIE.encode()))
                or i18n.from_accept(request.getHeader(b"accept-language"))
                or i18n.LANGUAGES[0])

    def _switch(self, request: Request, lang: str) -> list[tuple[str, str, str]]:
        """The other languages as (code, name, link to this page in it)."""
        given: dict[bytes, list[bytes]] = request.args or {}
        kept = [f"{quote(name)}={quote(values[0])}" for name, values in given.items()
                if name != b"lang" and values]
        path = request.path.decode("utf-8", "replace")
        return [(code, i18n.NAMES[code], path + "?" + "&".join([*kept, f"lang={code}"]))
                for code in i18n.LANGUAGES if code != lang]

    @staticmethod
    def _send(request: Request, body: bytes,
              content_type: bytes = b"text/html; charset=utf-8") -> None:
        if _gone(request):
            return
        request.setHeader(b"content-type", content_type)
        request.setHeader(b"x-content-type-options", b"nosniff")
        request.setHeader(b"content-length", b"%d" % len(body))
        if request.method != b"HEAD":
            request.write(body)
        request.finish()

    @staticmethod
    def _arg(request: Request, name: str) -> bytes | None:
        """The first value of the query argument ``name``."""
        args: dict[bytes, list[bytes]] = request.args or {}
        values = args.get(name.encode())
        return values[0] if values else None

    def _int_arg(self, request: Request, name: str) -> int | None:
        value = self._arg(request, name)
        if value is None:
            return None
        raw = value.decode("ascii", "replace")
        if not raw.isdigit() or len(raw) > MAX_ID_DIGITS:
            raise NotFound(f"Bad {name}.")
        return int(raw)

    def _page_arg(self, request: Request) -> int:
        """The ``page`` asked for, 1 if none; a page that cannot exist is a 404."""
        page = self._int_arg(request, "page")
        if page is None:
            return 1
        if not 1 <= page <= MAX_PAGE:
            raise NotFound("No such page.")
        return page

    # -- pages ---------------------------------------------------------------------------

    async def index(self, request: Request) -> None:
        online = list(self.lobby.online())[: self.page_size * 4]
        self._send(request, self._page("index.html", request, title="page.who_title",
                                       online=online,
                                       total=self.lobby.online_count(),
                                       running=self.lobby.running()))

    async def ratings(self, request: Request) -> None:
        page = self._page_arg(request)
        accounts = await self.archive.ratings()
        bots: list[Any] = []
        if self.bots.ladder == "apart":
            marked = await self.archive.bot_names()
            bots = [account for account in accounts if account[0] in marked]
            accounts = [account for account in accounts if account[0] not in marked]
        ranked = rank_players(accounts, self.threshold)
        first = (page - 1) * self.page_size
        if page > 1 and first >= len(ranked):
            raise NotFound("No such page of the ladder.")
        rows = ranked[first:first + self.page_size]
        self._send(request, self._page(
            "ratings.html", request, title="nav.ratings", rows=rows, page=page,
            threshold=self.threshold, bots=rank_players(bots, 0) if page == 1 else [],
            more=first + self.page_size < len(ranked), total=len(ranked)))

    async def profile(self, request: Request, name: str) -> None:
        self._check_name(name)
        page = self._page_arg(request)
        user = await self.archive.get_user(name)
        matches = await self.archive.recent_finished_matches(
            name, self.page_size + 1, (page - 1) * self.page_size)
        if user is None and not matches:
            raise NotFound("No such player.")
        if page > 1 and not matches:
            raise NotFound("No such page.")
        rating = user.rating if user is not None else None
        chart = None
        if user is not None:
            steps = await self.archive.rating_steps(name, RATING_HISTORY)
            chart = Markup(draw_chart(rating_path(user.rating, [s.change for s in steps])))
        online = self.lobby.is_online(name)
        playing = online and self.lobby.board_line(name) is not None
        bot = user is not None and user.bot
        resident_bot = resident(self.bots.resident, name) if bot and self.bots.enabled else None
        analysed = await self.archive.analyses_of(name, PR_HISTORY)
        self._send(request, self._page(
            "profile.html", request, title=name, name=name, rating=rating, bot=bot,
            level=describe(resident_bot) if resident_bot is not None else None,
            experience=user.experience if user is not None else None, chart=chart,
            pr=views.pr_profile(analysed),
            matches=[self._row(m, name) for m in matches[: self.page_size]], page=page,
            older=len(matches) > self.page_size,
            online=online, playing=playing))

    @staticmethod
    def _row(m: FinishedMatch, name: str) -> dict[str, Any]:
        won = m.winner == name
        change = m.winner_rating_change if won else m.loser_rating_change
        return {"id": m.id, "opponent": m.loser if won else m.winner, "won": won,
                "length": m.length, "score": (m.winner_points, m.loser_points),
                "finished": m.finished, "change": change}

    async def _finished(self, match_id: int) -> FinishedMatch:
        found = await self.archive.finished_match(match_id)
        if found is None:
            raise NotFound("No such match.")
        return found

    async def _replay(self, match_id: int) -> tuple[FinishedMatch, Replay]:
        found = await self._finished(match_id)
        played = self._replays.find(match_id)
        if played is None:
            try:
                played = self._replays.keep(match_id, await deferToThread(replay, found.record))
            except UnreadableRecord as error:
                _log.warn("match {id} cannot be replayed: {error}", id=match_id,
                          error=str(error))
                raise NotFound("This match cannot be replayed.") from error
        return found, played

    async def match_page(self, request: Request, raw_id: str) -> None:
        m, played = await self._replay(int(raw_id))
        last = len(played.steps) - 1
        step = self._int_arg(request, "step")
        step = last if step is None else step
        if step > last:
            raise NotFound("No such step.")
        shown = played.steps[step]
        found = await self.archive.analysis(int(raw_id))
        marks = found.marks if found is not None and found.state == "done" else ()
        by_step = views.marks_by_step(played, marks)
        self._send(request, self._page(
            "match.html", request, title=f"{m.winner} - {m.loser}", id=m.id, match=m,
            replay=played, step=step, last=last, shown=shown,
            board=Markup(draw_board(shown.picture, names_line(shown.picture))),
            names=names_line(shown.picture), starts=played.game_starts(),
            analysis=views.analysis_object(found), step_marks=by_step.get(step, []),
            marked=views.marked_steps(by_step), skill_class=views.SKILL_CLASS,
            skill_key=SKILL_KEYS,
            error_chart=Markup(views.error_chart(played, by_step, step)) if marks else None))

    async def match_json(self, request: Request, raw_id: str) -> None:
        m, played = await self._replay(int(raw_id))
        found = await self.archive.analysis(int(raw_id))
        marks = found.marks if found is not None and found.state == "done" else ()
        data = {
            "id": m.id,
            "players": list(played.players),
            "length": m.length,
            "finished": _when(m.finished),
            "winner": m.winner,
            "score": {m.winner: m.winner_points, m.loser: m.loser_points},
            "rating_changes": {m.winner: m.winner_rating_change,
                               m.loser: m.loser_rating_change},
            "crawford_game": played.crawford_game,
            "ended": ended(json.loads(m.record)),  # replay() read it: it is JSON
            "games": views.annotated_games(played.games, marks),
            "analysis": views.analysis_object(found),
            "tournament": (None if m.tournament is None
                           else {"id": m.tournament, "round": m.tournament_round}),
        }
        self._send(request, json.dumps(data, indent=1).encode("utf-8"),
                   b"application/json; charset=utf-8")

    # -- tournaments (fibsd/web/tournament_view.py) -------------------------------------

    async def tournaments(self, request: Request) -> None:
        rows = []
        for states, limit in ((("open",), 1000), (("running",), 1000),
                              (("finished",), self.page_size)):
            rows += list(reversed(await self.archive.tournaments(states, limit)))
        self._send(request, self._page("tournaments.html", request,
                                       title="page.tournaments_title", rows=rows))

    async def _tournament(self, raw_id: str) -> tuple[Any, list[Any], list[Any], Any]:
        number = int(raw_id)
        record = await self.archive.tournament(number)
        if record is None:
            raise NotFound("No such tournament.")
        entries = await self.archive.tournament_entries(number)
        pairings = await self.archive.tournament_pairings(number)
        standings = None
        if record.format != "knockout":
            standings = formats.standings([n for n, _ in entries], rounds_of(pairings))
        return record, entries, pairings, standings

    def _is_live(self, pairing: Any) -> bool:
        return any(set(m.players) == {pairing.first, pairing.second}
                   for m in self.lobby.running())

    async def tournament_page(self, request: Request, raw_id: str) -> None:
        record, entries, pairings, standings = await self._tournament(raw_id)
        bracket = None
        if record.format == "knockout" and entries:
            total = formats.round_count("knockout", len(entries))
            bracket = Markup(tournament_view.bracket_svg(pairings, total, self._is_live,
                                                         record.name))
        rounds = [[(p, tournament_view.match_link(p, self._is_live)) for p in pairings
                   if p.round == number] for number in sorted({p.round for p in pairings})]
        self._send(request, self._page(
            "tournament.html", request, title=record.name, t_record=record,
            entries=entries, rounds=rounds, standings=standings, bracket=bracket))

    async def tournament_json(self, request: Request, raw_id: str) -> None:
        record, entries, pairings, standings = await self._tournament(raw_id)
        data = tournament_view.tournament_data(record, entries, pairings, standings)
        self._send(request, json.dumps(data, indent=1).encode("utf-8"),
                   b"application/json; charset=utf-8")

    async def match_mat(self, request: Request, raw_id: str) -> None:
        match_id = int(raw_id)
        text = self._mats.find(match_id)
        if text is None:
            found = await self._finished(match_id)
            try:
                text = self._mats.keep(match_id, await deferToThread(
                    mat_text, found.record, date=finished_at(found.finished), site=self.site,
                    match_id=match_id, fair_dice=True))
            except (ValueError, KeyError, TypeError) as error:
                _log.warn("match {id} cannot be exported: {error}", id=match_id,
                          error=str(error))
                raise NotFound("This match cannot be exported.") from error
        request.setHeader(b"content-disposition",
                          f'attachment; filename="fibsd-{match_id}.mat"'.encode())
        self._send(request, text.encode("utf-8"), b"text/plain; charset=utf-8")

    async def match_sgf(self, request: Request, raw_id: str) -> None:
        """The match in gnubg's SGF with its analysis (fibsd.web.sgf), for gnubg's GUI."""
        m, played = await self._replay(int(raw_id))
        found = await self.archive.analysis(int(raw_id))
        done = found is not None and found.state == "done"
        # ~10 ms of CPU for a 25-game match with every play marked: in a thread, like .mat
        text = await deferToThread(
            sgf_text, played.players, played.length, played.games,
            found.marks if found is not None and done else (),
            plies=(found.plies or 0) if found is not None else 0,
            date=_when(m.finished)[:10], site=self.site)
        request.setHeader(b"content-disposition",
                          f'attachment; filename="fibsd-{m.id}.sgf"'.encode())
        self._send(request, text.encode("utf-8"), b"application/x-go-sgf; charset=utf-8")

    async def pr_ladder(self, request: Request) -> None:
        rows = await self.archive.pr_ladder(self.pr_min_matches, PR_LADDER_ROWS)
        self._send(request, self._page("pr_ladder.html", request, title="nav.pr",
                                       rows=rows, min_matches=self.pr_min_matches))

    async def live_page(self, request: Request, player: str) -> None:
        self._check_name(player)
        fragment = Markup(self._live_fragment(player, self.lobby.board_line(player)))
        self._send(request, self._page("live.html", request,
                                       title=("page.live_title", {"player": player}),
                                       player=player,
                                       fragment=fragment))

    async def live_events(self, request: Request, player: str) -> None:
        self._check_name(player)
        if request.method == b"HEAD":
            request.setHeader(b"content-type", b"text/event-stream; charset=utf-8")
            request.finish()
            return
        key = address_key(request)
        if not self.live.open(player, request, key):
            log_refused(request, "live board stream from {address} refused ({limit}; {count} "
                        "since the last report)", self.live.full(key) or "web_live_viewers")
            request.setResponseCode(503)
            self._send(request, b"Too many live viewers; try again later.\n",
                       b"text/plain; charset=utf-8")

    def _live_fragment(self, player: str, line: str | None) -> str:
        picture = None
        if line is not None:
            try:
                picture = from_board_view(parse_board(line))
            except InvalidBoardLine:
                _log.warn("live board of {player} unreadable", player=player)
        board = Markup(draw_board(picture, names_line(picture))) if picture else None
        # One fragment goes to every viewer of the stream, whatever his language: it says
        # its words in each, and the stylesheet shows the page's (html[lang]).
        speakers = [(code, i18n.translator(self.catalogs[code])) for code in i18n.LANGUAGES]
        return self.env.get_template("live_fragment.html").render(
            player=player, board=board, names=names_line(picture) if picture else "",
            speakers=speakers)

    async def api_matches(self, request: Request) -> None:
        value = self._arg(request, "player")
        if value is None:
            request.setResponseCode(400)
            self._send(request, b'{"error": "player is required"}\n',
                       b"application/json; charset=utf-8")
            return
        try:
            name = value.decode("utf-8")
        except UnicodeDecodeError:
            raise NotFound("No such player.") from None
        self._check_name(name)
        try:
            page = self._page_arg(request)
        except NotFound:
            page = 0
        found = [] if page == 0 else await self.archive.recent_finished_matches(
            name, self.page_size + 1, (page - 1) * self.page_size)
        if page != 1 and not found:
            request.setResponseCode(404)
            self._send(request, b'{"error": "no such page"}\n',
                       b"application/json; charset=utf-8")
            return
        shown = found[: self.page_size]
        data = {
            "player": name,
            "matches": [{
                "id": m.id,
                "players": [m.winner, m.loser],
                "winner": m.winner,
                "length": m.length,
                "score": [m.winner_points, m.loser_points],
                "finished": _when(m.finished),
                "mat": f"/matches/{m.id}.mat",
                "json": f"/matches/{m.id}.json",
                "sgf": f"/matches/{m.id}.sgf",
            } for m in shown],
            "next": (f"/api/matches?player={_segment(name)}&page={page + 1}"
                     if len(found) > self.page_size else None),
        }
        self._send(request, json.dumps(data).encode("utf-8"),
                   b"application/json; charset=utf-8")

    async def api_bots(self, request: Request) -> None:
        """The site's resident bots, for the web client's "Play a bot": each with its
        strength, the lengths it plays and whether it is logged in now."""
        bots = self.bots.resident if self.bots.enabled else ()
        data = {"bots": [{
            "name": account,
            "brain": bot.brain,
            "strength": bot.strength,
            "level": describe(bot),
            "lengths": list(bot.lengths),
            "online": self.lobby.is_online(account),
        } for bot in bots for account in bot.accounts()]}
        self._send(request, json.dumps(data).encode("utf-8"),
                   b"application/json; charset=utf-8")

    async def metrics_text(self, request: Request) -> None:
        if not self._may_scrape(request):
            raise NotFound("No such page.")
        self._send(request, self.metrics.text(), metrics_module.CONTENT_TYPE.encode())

    def _may_scrape(self, request: Request) -> bool:
        """Whether the reader's address is in ``[web] metrics_from``."""
        host = getattr(request.getClientAddress(), "host", "")
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in allowed for allowed in self.metrics_from)

    async def healthz(self, request: Request) -> None:
        """``ok`` when the database answers, for balancers and service managers."""
        ok = await self.health.check()
        request.setHeader(b"cache-control", b"no-store")
        if not ok:
            request.setResponseCode(503)
        self._send(request, b"ok\n" if ok else b"the database does not answer\n",
                   b"text/plain; charset=utf-8")

    async def style(self, request: Request) -> None:
        request.setHeader(b"cache-control", b"max-age=3600")
        self._send(request, (HERE / "static" / "style.css").read_bytes(),
                   b"text/css; charset=utf-8")

    async def icon(self, request: Request) -> None:
        request.setHeader(b"cache-control", b"max-age=86400")
        self._send(request, ICON, b"image/x-icon")

    async def play_page(self, request: Request) -> None:
        """The web client (static/play/): plain files, the page names its modules."""
        request.setHeader(b"cache-control", b"no-cache")
        lang = self._language(request)
        page = (PLAY / "index.html").read_bytes().replace(
            b'<html lang="en">', b'<html lang="%s">' % lang.encode(), 1).replace(
            b'/play/i18n/en.json', b'/play/i18n/%s.json' % lang.encode(), 1)  # preloaded
        self._send(request, page, b"text/html; charset=utf-8")

    async def play_catalog(self, request: Request, lang: str) -> None:
        """The client's message catalog (the pages' too)."""
        if lang not in self.catalogs:
            raise NotFound("No such file.")
        request.setHeader(b"cache-control", b"no-cache")
        self._send(request, (i18n.CATALOGS / f"{lang}.json").read_bytes(),
                   b"application/json; charset=utf-8")

    async def play_file(self, request: Request, name: str) -> None:
        path = PLAY / name
        if not path.is_file():
            raise NotFound("No such file.")
        request.setHeader(b"cache-control", b"no-cache")
        self._send(request, path.read_bytes(), PLAY_TYPES[path.suffix])

    @staticmethod
    def _check_name(name: str) -> None:
        if not name or len(name) > MAX_NAME:
            raise NotFound("No such player.")


class Root(Resource):
    """The web face at every path but the rooms ``app.py`` mounts beside it (``/ws``,
    the game over WebSocket, which fibsd/web must not build: it is the server's)."""

    def __init__(self, face: WebFace, rooms: dict[bytes, Resource]) -> None:
        super().__init__()
        self.face = face
        self.rooms = rooms

    def getChild(self, path: bytes, request: Request) -> Resource:
        room = self.rooms.get(path)
        if room is not None and not request.postpath:
            return room
        return self.face


class WebSite(Site):
    """No access log: the operator log carries operator events only (and no reader's
    address is written anywhere)."""

    noisy = False

    def log(self, request: http.Request) -> None:
        pass


def make_site(lobby: LobbySource, db: Any, settings: Settings, clock: IReactorTime,
              metrics: metrics_module.Metrics,
              rooms: dict[bytes, Resource] | None = None) -> tuple[WebSite, WebFace]:
    face = WebFace(lobby, Archive(db), settings, clock, metrics)
    return WebSite(Root(face, rooms or {}), timeout=settings.web.idle_timeout), face
