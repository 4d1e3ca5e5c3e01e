"""The web face's pages and JSON over real HTTP on loopback, against a seeded store."""

from __future__ import annotations

import json
import re
import socket
from html import unescape

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.task import deferLater
from twisted.logger import Logger, globalLogPublisher
from twisted.web.client import Agent, readBody

from fibsd.__main__ import Options
from fibsd.app import FibsService
from fibsd.wire.mat import parse_mat
from tests.helpers import make_settings
from tests.server.test_app import _Recorder as Stream
from tests.web.conftest import HOSTILE, Web, start_web, stop_web
from tests.web.live_match import start_match

_log = Logger()


def rows(html: str) -> list[list[str]]:
    """The text of each table body row's cells."""
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [[unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>",
                                                                      row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


@pytest_twisted.ensureDeferred
async def test_the_ladder_follows_the_ratings_command(web: Web) -> None:
    reply = await web.get("/ratings")
    assert reply.code == 200
    assert reply.header("content-type") == "text/html; charset=utf-8"
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in reply.text
    # carol (experience 10) is below rated_experience (50), as in `ratings`.
    assert rows(reply.text) == [["1", "alice", "1512.25", "60"], ["2", "bob", "1490.00", "55"]]
    assert 'rel="next"' not in reply.text
    assert (await web.get("/ratings?page=2")).code == 404
    assert (await web.get("/ratings?page=x")).code == 404


@pytest_twisted.ensureDeferred
async def test_a_profile_shows_rating_chart_and_recent_matches_never_private_data(
        web: Web, match_ids: list[int]) -> None:
    reply = await web.get("/players/alice")
    assert reply.code == 200
    html = reply.text
    assert '<dd class="rating">1512.25</dd>' in html
    assert '<dd class="experience">60</dd>' in html
    # Four matches: the chart has the rating before them and after each.
    assert 'class="chart"' in html and 'data-points="5"' in html
    assert 'aria-label="rating from 1517.75 to 1512.25 over 4 matches"' in html
    listed = rows(html)
    assert [row[1] for row in listed] == [HOSTILE, "carol"]  # newest first, 2 a page
    assert listed[1][2:4] == ["lost 0–1 (1)", "-3.00"]
    assert 'href="/players/alice?page=2"' in html
    assert f'href="/matches/{match_ids[3]}?step=0"' in html
    older = rows((await web.get("/players/alice?page=2")).text)
    assert [row[1] for row in older] == ["bob", "bob"]
    for private in ("alice@example.com", "203.0.113.7"):
        assert private not in html
    assert (await web.get("/players/nobody")).code == 404
    assert (await web.get("/players/" + "a" * 65)).code == 404


@pytest_twisted.ensureDeferred
async def test_user_written_text_is_escaped(web: Web) -> None:
    reply = await web.get("/players/%3Cb%3Ex%3C%2Fb%3E%26%22'")
    assert reply.code == 200
    assert "<b>x</b>" not in reply.text
    assert "<h1>&lt;b&gt;x&lt;/b&gt;&amp;&#34;&#39;</h1>" in reply.text
    ladder_json = await web.get("/api/matches?player=%3Cb%3Ex%3C%2Fb%3E%26%22'")
    assert json.loads(ladder_json.body)["matches"][0]["players"][1] == HOSTILE
    live = await web.get("/live/%3Cscript%3E")
    assert "<script>" not in live.text.split("<main>")[1].split("<script>\n(function")[0]
    assert "&lt;script&gt; is not playing now." in live.text


@pytest_twisted.ensureDeferred
async def test_a_replay_steps_through_every_action(web: Web, match_ids: list[int]) -> None:
    first = match_ids[0]
    data = json.loads((await web.get(f"/matches/{first}.json")).body)
    actions = [a for game in data["games"] for a in game["actions"]]
    start = await web.get(f"/matches/{first}?step=0")
    assert start.code == 200
    assert "The match is about to start." in start.text
    assert 'data-board="0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0"' in start.text
    assert 'href="?step=1" rel="next"' in start.text and 'rel="prev"' not in start.text
    one = await web.get(f"/matches/{first}?step=1")
    opening = data["games"][0]["actions"][0]
    assert opening["action"] == "opening"
    dice = opening["dice"]
    assert f"alice rolled {dice['alice']}, bob rolled {dice['bob']}" in one.text
    end = await web.get(f"/matches/{first}")
    last = int(re.search(r"step (\d+) of (\d+)", end.text).group(1))
    # A step per recorded action, one for each game's opening rolls (ties included);
    # what follows from an action (a win, a roll that cannot be played) is in its step.
    derived = ("opening", "win", "cannot_move", "autodouble")
    assert last == len(data["games"]) + sum(1 for a in actions if a["action"] not in derived)
    assert "wins the game and gets" in end.text
    assert 'rel="next"' not in end.text
    assert (await web.get(f"/matches/{first}?step={last + 1}")).code == 404
    assert (await web.get("/matches/abc")).code == 404
    assert (await web.get(f"/matches/{match_ids[-1] + 1}")).code == 404
    assert (await web.get(f"/matches/{match_ids[-1] + 1}.json")).code == 404
    assert (await web.get("/matches/" + "9" * 30)).code == 404


@pytest_twisted.ensureDeferred
async def test_the_json_record_holds_the_whole_match(web: Web, match_ids: list[int]) -> None:
    reply = await web.get(f"/matches/{match_ids[1]}.json")
    assert reply.header("content-type") == "application/json; charset=utf-8"
    data = json.loads(reply.body)
    assert data["id"] == match_ids[1]
    assert data["players"] == ["bob", "alice"] and data["length"] == 5
    assert data["finished"] == "2023-11-14T22:46:40Z"
    winner = data["winner"]
    loser = "alice" if winner == "bob" else "bob"
    assert data["score"][winner] >= 5
    assert data["rating_changes"] == {winner: 6.5, loser: -6.5}
    points = {"alice": 0, "bob": 0}
    for number, game in enumerate(data["games"], 1):
        assert game["number"] == number
        assert game["score"] == [points["bob"], points["alice"]]
        assert {game["O"], game["X"]} == {"alice", "bob"}
        assert game["actions"][-1] == {"action": "win", "player": game["winner"],
                                       "points": game["points"],
                                       "kind": game["actions"][-1]["kind"]}
        points[game["winner"]] += game["points"]
    assert points == data["score"]
    kinds = {a["action"] for game in data["games"] for a in game["actions"]}
    assert {"opening", "roll", "move", "win"} <= kinds


@pytest_twisted.ensureDeferred
async def test_the_mat_export_is_gnubgs_match_text(web: Web, match_ids: list[int]) -> None:
    reply = await web.get(f"/matches/{match_ids[0]}.mat")
    assert reply.code == 200
    assert reply.header("content-type") == "text/plain; charset=utf-8"
    assert reply.header("content-disposition") == (
        f'attachment; filename="fibsd-{match_ids[0]}.mat"')
    parsed = parse_mat(reply.text)
    assert parsed.players == ("alice", "bob")
    data = json.loads((await web.get(f"/matches/{match_ids[0]}.json")).body)
    assert len(parsed.games) == len(data["games"])
    assert f'[Match ID "{match_ids[0]}"]' in reply.text
    assert (await web.get(f"/matches/{match_ids[-1] + 1}.mat")).code == 404


@pytest_twisted.ensureDeferred
async def test_the_match_list_api_pages_newest_first(web: Web, match_ids: list[int]) -> None:
    reply = await web.get("/api/matches?player=alice")
    data = json.loads(reply.body)
    assert [m["id"] for m in data["matches"]] == [match_ids[3], match_ids[2]]
    newest = data["matches"][0]
    assert newest == {"id": match_ids[3], "players": ["alice", HOSTILE], "winner": "alice",
                      "length": 3, "score": newest["score"],
                      "finished": "2023-11-14T23:20:00Z", "mat": f"/matches/{match_ids[3]}.mat",
                      "json": f"/matches/{match_ids[3]}.json",
                      "sgf": f"/matches/{match_ids[3]}.sgf"}
    assert newest["score"][0] >= 3
    assert data["next"] == "/api/matches?player=alice&page=2"
    rest = json.loads((await web.get(data["next"])).body)
    assert [m["id"] for m in rest["matches"]] == [match_ids[1], match_ids[0]]
    assert rest["next"] is None
    assert json.loads((await web.get("/api/matches?player=nobody")).body)["matches"] == []
    assert (await web.get("/api/matches")).code == 400


# ... and the switch to the other languages (i18n: /play's page has them all and drops its own).
NAV = re.compile(r'<nav aria-label="site"[^>]*><a class="site" href="/">fibsd</a> '
                 r'<a href="/play"[^>]*>Play</a> <a href="/"[^>]*>Who</a> '
                 r'<a href="/ratings"[^>]*>Ratings</a> <a href="/ratings/pr"[^>]*>PR ladder</a>'
                 r' <a href="/tournaments"[^>]*>Tournaments</a>'
                 r'(?: <a class="lang" href="[^"]*\?lang=fr" hreflang="fr" lang="fr">Français</a>)'
                 r'</nav>|'
                 r'<nav aria-label="site"[^>]*><a class="site" href="/">fibsd</a> '
                 r'<a href="/play"[^>]*>Play</a> <a href="/"[^>]*>Who</a> '
                 r'<a href="/ratings"[^>]*>Ratings</a> <a href="/ratings/pr"[^>]*>PR ladder</a>'
                 r' <a href="/tournaments"[^>]*>Tournaments</a>'
                 r' <a class="lang" href="/play\?lang=en" '
                 r'hreflang="en" lang="en">English</a> <a class="lang" href="/play\?lang=fr" '
                 r'hreflang="fr" lang="fr">Français</a></nav>')


@pytest_twisted.ensureDeferred
async def test_one_site_one_navigation_bar_and_an_icon(web: Web, match_ids: list[int]) -> None:
    for path in ("/", "/ratings", "/players/alice", f"/matches/{match_ids[0]}", "/live/alice",
                 "/play", "/nothing"):
        page = (await web.get(path)).text
        assert NAV.search(page), path
        assert '<link rel="stylesheet" href="/static/style.css">' in page, path
        assert '<link rel="icon" href="/favicon.ico">' in page, path
    assert '<a class="play" href="/play">' in (await web.get("/")).text
    assert '<a href="/ratings" aria-current="page">' in (await web.get("/ratings")).text
    icon = await web.get("/favicon.ico")
    assert icon.code == 200
    assert icon.header("content-type") == "image/x-icon"
    # ICO header (reserved 0, type 1 = icon, 1 image), a 32x32 entry, then the PNG it names.
    assert icon.body[:6] == b"\x00\x00\x01\x00\x01\x00"
    assert icon.body[6:8] == b"\x20\x20"
    size = int.from_bytes(icon.body[14:18], "little")
    offset = int.from_bytes(icon.body[18:22], "little")
    assert offset == 22 and size == len(icon.body) - 22
    assert icon.body[22:30] == b"\x89PNG\r\n\x1a\n"


@pytest_twisted.ensureDeferred
async def test_unknown_paths_are_404(web: Web) -> None:
    for path in ("/nothing", "/players/", "/matches/", "/static/other.css", "/players/%ff",
                 "/api/matches?player=%ff", "/players/alice?page=-1"):
        assert (await web.get(path)).code == 404, path


@pytest_twisted.ensureDeferred
async def test_metrics_count_the_operator_events(web: Web) -> None:
    _log.info("login of {user}", event="login", user="alice")
    _log.info("login of {user}", event="login", user="bob")
    _log.info("failed login for {user}", event="login_failed", user="x", address="h")
    _log.warn("limit {limit}", event="limit", limit="limits.max_users")
    _log.info("refused {count}", event="limit", limit="access.registrations_per_hour", count=7)
    _log.info("unrelated")
    reply = await web.get("/metrics")
    assert reply.header("content-type").startswith("text/plain; version=")
    text = reply.text
    assert "fibsd_logins_total 2.0" in text
    assert "fibsd_failed_logins_total 1.0" in text
    assert 'fibsd_limits_hit_total{limit="limits.max_users"} 1.0' in text
    assert 'fibsd_limits_hit_total{limit="access.registrations_per_hour"} 7.0' in text
    assert "fibsd_users_online 0.0" in text
    assert "fibsd_matches_running 0.0" in text
    assert "fibsd_game_actions_total 0.0" in text


async def open_stream(web: Web, path: str) -> Stream:
    """A raw HTTP client that keeps what arrives (a Server-Sent Events stream)."""
    stream = Stream()
    port = web.http.getHost().port
    await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), stream)
    assert stream.transport is not None
    stream.transport.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return stream


@pytest_twisted.ensureDeferred
async def test_live_viewers_are_capped(database, match_ids: list[int]) -> None:  # noqa: ANN001
    web = await start_web(database, web_live_viewers=1)
    try:
        first = await open_stream(web, "/live/alice/events")
        await first.expect(b"is not playing now.")
        assert b"content-type: text/event-stream" in first.data.lower()
        refused = await web.get("/live/bob/events")
        assert refused.code == 503
        assert refused.body == b"Too many live viewers; try again later.\n"
        assert web.service.web.live.count == 1
        assert first.transport is not None
        first.transport.loseConnection()
        for _ in range(500):  # the server sees the close within a few reactor turns
            if not web.service.web.live.count:
                break
            await deferLater(reactor, 0.01)
        again = await open_stream(web, "/live/bob/events")
        await again.expect(b"bob is not playing now.")
    finally:
        await stop_web(web)


def boards(stream: Stream) -> list[str]:
    return re.findall(r'data-board="([-0-9:]+)"', stream.data.decode("utf-8"))


@pytest_twisted.ensureDeferred
async def test_a_live_board_follows_a_match_played_over_telnet(web: Web) -> None:
    stream = await open_stream(web, "/live/alice/events")
    await stream.expect(b"alice is not playing now.")
    players = await start_match(web.service, web.game_port)
    await stream.expect(b"data-board=")
    start = boards(stream)[-1]
    assert start == "0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0"
    seen = len(boards(stream))
    alice_rolls = players.alice.wait_line(lambda line: line.startswith("You roll"), "a roll")
    await players.one_move(players.bob)
    for _ in range(500):
        if len(boards(stream)) > seen:
            break
        await deferLater(reactor, 0.01)
    after = boards(stream)[-1]
    assert after != start
    # The watcher's view of alice: her name, never "You".
    assert "alice (O)" in stream.data.decode() or "alice (X)" in stream.data.decode()
    await alice_rolls  # the bot rolls when its turn comes
    index = await web.get("/")
    assert '<a href="/live/alice">alice – bob</a>' in index.text
    assert rows(index.text)[0][:3] == ["alice", "1512.25", "60"]
    live = await web.get("/live/alice")
    assert f'data-board="{after}"' in live.text
    metrics = (await web.get("/metrics")).text
    assert "fibsd_users_online 2.0" in metrics
    assert "fibsd_matches_running 1.0" in metrics
    assert "fibsd_game_actions_total 3.0" in metrics  # bob's join and move, alice's roll
    assert 'fibsd_command_seconds_count{command="move"} 1.0' in metrics
    assert 'fibsd_command_seconds_count{command="toggle"} 2.0' in metrics


def test_the_web_port_option() -> None:
    options = Options()
    options.parseOptions(["--web-port", "8181"])
    assert options.settings().web_port == 8181
    options = Options()
    options.parseOptions([])
    assert options.settings().web_port == 8080  # config/fibsd.toml's default


@pytest_twisted.ensureDeferred
async def test_the_server_listens_on_web_port(database, match_ids: list[int]) -> None:  # noqa: ANN001
    with socket.socket() as probe:  # a port free a moment ago
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    settings = make_settings(port=0, interface="127.0.0.1", database=str(database),
                             web_port=free)
    service = FibsService(settings, reactor)
    service.startService()
    try:
        await service.listening
        assert service.web_port is not None and service.web_port.getHost().port == free
        response = await Agent(reactor).request(b"GET", f"http://127.0.0.1:{free}/ratings"
                                                .encode())
        assert response.code == 200
        await readBody(response)
    finally:
        await service.stopService()
    assert service.web_port.connected == 0  # stopped listening


@pytest_twisted.ensureDeferred
async def test_a_reader_who_leaves_before_the_page_is_ready_costs_nothing(web: Web) -> None:
    """The page waits for the database thread; the connection is gone by then."""
    errors: list[dict] = []
    observer = errors.append
    globalLogPublisher.addObserver(observer)
    try:
        stream = await open_stream(web, "/players/alice")
        assert stream.transport is not None
        stream.transport.loseConnection()  # after the request is sent
        await stream.lost
        assert (await web.get("/players/alice")).code == 200  # after the first one's turn
    finally:
        globalLogPublisher.removeObserver(observer)
    assert [e for e in errors if e.get("log_failure") is not None] == []


@pytest_twisted.ensureDeferred
async def test_a_busy_web_port_leaves_the_game_running(database, match_ids: list[int]) -> None:  # noqa: ANN001
    events: list[dict] = []
    globalLogPublisher.addObserver(events.append)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        service = FibsService(make_settings(port=0, interface="127.0.0.1",
                                            database=str(database), web_port=busy), reactor)
        service.startService()
        try:
            port = await service.listening
            assert service.web_port is None
            players = await start_match(service, port.getHost().port)
            assert players.bob.board.startswith("board:You:alice:3:")
        finally:
            await service.stopService()
            globalLogPublisher.removeObserver(events.append)
    [error] = [e for e in events if e.get("event") == "error"]
    assert error["log_format"] == "fibsd web face cannot start: {error}"
    assert f"127.0.0.1:{busy}" in error["error"]
