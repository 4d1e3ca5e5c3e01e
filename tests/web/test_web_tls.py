"""The web face over TLS (``[web] tls``): HTTPS and WSS on a port of its own with
``[tls]``'s certificate and key, behind the same gate as the plain web port; a
certificate that cannot be used stops the server with one line and a non-zero exit.
Chromium (when installed) is warned on /play over plain HTTP to a name that is not
loopback, and not over HTTPS, where it registers and logs in over WSS."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from autobahn.twisted.websocket import WebSocketClientFactory
from twisted.internet import reactor, ssl
from twisted.internet.endpoints import SSL4ClientEndpoint, TCP4ClientEndpoint, connectProtocol
from twisted.internet.threads import deferToThread
from twisted.logger import globalLogPublisher
from twisted.web._newclient import ResponseNeverReceived
from twisted.web.client import Agent, BrowserLikePolicyForHTTPS, readBody

from fibsd.app import FibsService
from fibsd.server.tls import TlsError
from fibsd.web.gate import LINGER, GatedRequest
from tests.helpers import make_settings
from tests.server.test_app import _Recorder as Stream
from tests.server.test_match_restart import Bot
from tests.server.test_tls import self_signed
from tests.web import test_browser
from tests.web.conftest import Reply
from tests.web.test_browser import CHROMIUM, DRIVER
from tests.web.test_web_flood import free_port
from tests.web.test_play_browser import open_and_register
from tests.web.test_web_limits import until
from tests.web.ws_client import BotSocket, Messages

async def start_https(tmp_path: Path, database: Path, **overrides: Any) -> FibsService:
    """A server with its web face on a plain port and an HTTPS port, on 127.0.0.1."""
    cert_path, key_path = self_signed(tmp_path)
    settings = make_settings(**{
        "port": 0, "interface": "127.0.0.1", "database": str(database),
        "passwords.memory_kib": 64, "passwords.time_cost": 1,
        "web_port": free_port(), "web.tls": True, "web.tls_port": free_port(),
        "tls.certificate": str(cert_path), "tls.key": str(key_path), **overrides})
    service = FibsService(settings, reactor)
    service.startService()
    await service.listening
    assert (await service.web_tls_listening) is not None
    return service


def client_tls(service: FibsService, alpn: list[bytes] | None = None) -> Any:
    return ssl.optionsForClientTLS("localhost", trustRoot=ssl.Certificate.loadPEM(
        service.settings.tls.certificate.read_bytes()), acceptableProtocols=alpn)


async def https_get(service: FibsService, path: str, source: str = "127.0.0.1") -> Reply:
    trust = ssl.Certificate.loadPEM(service.settings.tls.certificate.read_bytes())
    agent = Agent(reactor, contextFactory=BrowserLikePolicyForHTTPS(trustRoot=trust),
                  bindAddress=(source, 0))
    url = f"https://127.0.0.1:{service.settings.web.tls_port}{path}"
    response = await agent.request(b"GET", url.encode("ascii"))
    return Reply(response.code, response.headers, await readBody(response))


async def tls_stream(service: FibsService, alpn: list[bytes] | None = None) -> Stream:
    """A raw TLS connection to the HTTPS port, handshake done."""
    stream = Stream()
    endpoint = SSL4ClientEndpoint(reactor, "127.0.0.1", service.settings.web.tls_port,
                                  client_tls(service, alpn))
    await connectProtocol(endpoint, stream)
    return stream


@pytest_twisted.ensureDeferred
async def test_pages_and_a_clip_login_over_https_and_wss(
        tmp_path: Path, database: Path, match_ids: list[int]) -> None:
    service = await start_https(tmp_path, database)
    socket = None
    try:
        reply = await https_get(service, "/healthz")
        assert (reply.code, reply.body) == (200, b"ok\n")
        # The game over WSS: a CLIP login, as the browser client does it on https://.
        bot = Bot("alice")
        factory = WebSocketClientFactory(f"wss://127.0.0.1:{service.settings.web.tls_port}/ws")
        socket = BotSocket(bot)
        socket.factory = factory
        bot.transport = Messages(socket)  # type: ignore[assignment]
        await connectProtocol(SSL4ClientEndpoint(
            reactor, "127.0.0.1", service.settings.web.tls_port, client_tls(service)), socket)
        await socket.opened
        bot.send("login wsbot 1008 alice secret")
        await bot.wait_line(lambda line: line == "6", "login")
        assert "1 alice 1700000100 203.0.113.7" in bot.lines  # the last login, seeded
        assert any(line.startswith("5 alice ")
                   and line.endswith(" 127.0.0.1 wsbot alice@example.com") for line in bot.lines)
        assert [p.session.user.name for p in service.factory.connections
                if p.session is not None and p.session.user is not None] == ["alice"]
        # The plain port serves the same site beside it.
        plain = await get_from_port(service.settings.web_port, "/healthz")
        assert plain.body == b"ok\n"
    finally:
        if socket is not None and socket.state != socket.STATE_CLOSED:
            socket.sendClose(1000)
            await socket.closed
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_sighup_gives_the_https_port_a_renewed_certificate(
        tmp_path: Path, database: Path, match_ids: list[int]) -> None:
    service = await start_https(tmp_path, database)
    try:
        assert (await https_get(service, "/healthz")).body == b"ok\n"
        self_signed(tmp_path)  # renewed in place, as certbot does
        # https_get trusts only the file's certificate: the port still serves the old one
        with pytest.raises(ResponseNeverReceived):
            await https_get(service, "/healthz")
        await service.reload()
        assert (await https_get(service, "/healthz")).body == b"ok\n"
    finally:
        await service.stopService()


async def get_from_port(port: int, path: str) -> Reply:
    response = await Agent(reactor).request(b"GET", f"http://127.0.0.1:{port}{path}".encode())
    return Reply(response.code, response.headers, await readBody(response))


@pytest_twisted.ensureDeferred
async def test_a_browser_offering_h2_over_alpn_is_answered_in_http_1_1(
        tmp_path: Path, database: Path, match_ids: list[int]) -> None:
    service = await start_https(tmp_path, database)
    try:
        stream = await tls_stream(service, [b"h2", b"http/1.1"])  # what Chromium offers
        assert stream.transport is not None
        stream.transport.write(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        await stream.expect(b"\r\n\r\nok\n")
        assert stream.data.startswith(b"HTTP/1.1 200 OK\r\n")
        assert stream.transport.negotiatedProtocol == b"http/1.1"
        stream.transport.loseConnection()
    finally:
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_the_https_port_is_behind_the_web_ports_caps(
        tmp_path: Path, database: Path, match_ids: list[int]) -> None:
    service = await start_https(tmp_path, database, **{"web.connections_per_address": 3})
    gate = service.web_gate
    held: list[Stream] = []
    try:
        held.append(await tls_stream(service))
        held.append(await tls_stream(service))
        await until(lambda: gate.count == 2)
        held.append(Stream())
        await connectProtocol(
            TCP4ClientEndpoint(reactor, "127.0.0.1", service.settings.web_port), held[2])
        await until(lambda: gate.count == 3)
        # The requests of each connection know whether it is over TLS.
        connections = list(gate.protocols)
        assert [c.secure for c in connections] == [True, True, False]
        # (twisted.web's channel, inside its protocol switcher; a request's channel)
        assert [GatedRequest(c.wrappedProtocol._channel).isSecure()
                for c in connections] == [True, True, False]
        # One more, over TLS or not, is refused: the two ports share one gate.
        refused = await tls_stream(service)
        await refused.lost
        assert refused.data.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
        plain = Stream()
        await connectProtocol(
            TCP4ClientEndpoint(reactor, "127.0.0.1", service.settings.web_port), plain)
        await plain.lost
        assert plain.data.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
        # A held connection is served over TLS.
        assert held[0].transport is not None
        held[0].transport.write(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        await held[0].expect(b"\r\n\r\nok\n")
    finally:
        for stream in held:
            if stream.transport is not None:
                stream.transport.loseConnection()
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_a_connection_that_never_shakes_hands_is_closed_when_idle(
        tmp_path: Path, database: Path, match_ids: list[int]) -> None:
    service = await start_https(tmp_path, database, **{"web.idle_timeout": 1})
    try:
        silent = Stream()
        await connectProtocol(
            TCP4ClientEndpoint(reactor, "127.0.0.1", service.settings.web.tls_port), silent)
        await until(lambda: service.web_gate.count == 1)
        await silent.lost.addTimeout(10, reactor)  # closed after idle_timeout (1 s)
        assert silent.data == b""
        assert service.web_gate.count == 0
    finally:
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_a_refused_connection_that_never_shakes_hands_is_dropped(
        tmp_path: Path, database: Path, match_ids: list[int]) -> None:
    service = await start_https(tmp_path, database, **{"web.connections_per_address": 1})
    gate = service.web_gate
    try:
        held = await tls_stream(service)
        await until(lambda: gate.count == 1)
        silent = Stream()  # its 503 waits for a handshake that never comes
        await connectProtocol(
            TCP4ClientEndpoint(reactor, "127.0.0.1", service.settings.web.tls_port), silent)
        await until(lambda: gate.busy == 1)
        await silent.lost.addTimeout(LINGER + 5, reactor)  # dropped after LINGER
        assert silent.data == b""
        assert gate.busy == 0
        assert held.transport is not None
        held.transport.loseConnection()
    finally:
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_a_busy_https_port_leaves_the_game_and_the_plain_port_running(
        tmp_path: Path, database: Path, match_ids: list[int]) -> None:
    events: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(events.append)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        cert_path, key_path = self_signed(tmp_path)
        service = FibsService(make_settings(**{
            "port": 0, "interface": "127.0.0.1", "database": str(database),
            "web_port": free_port(), "web.tls": True, "web.tls_port": busy,
            "tls.certificate": str(cert_path), "tls.key": str(key_path)}), reactor)
        service.startService()
        try:
            await service.listening
            assert (await service.web_tls_listening) is None
            assert service.web_tls_port is None
            assert (await get_from_port(service.settings.web_port, "/healthz")).body == b"ok\n"
        finally:
            await service.stopService()
            globalLogPublisher.removeObserver(events.append)
    [error] = [e for e in events if e.get("event") == "error"]
    assert error["log_format"] == "fibsd web face cannot start: {error}"
    assert f"127.0.0.1:{busy}" in error["error"]


def test_a_missing_certificate_stops_the_server_with_one_line(tmp_path: Path) -> None:
    config = tmp_path / "fibsd.toml"
    config.write_text(f'[web]\ntls = true\n[tls]\ncertificate = "{tmp_path}/none.crt"\n'
                      f'key = "{tmp_path}/none.key"\n')
    result = subprocess.run(
        [sys.executable, "-m", "fibsd", "--config", str(config), "--port", "0",
         "--web-port", "0", "--interface", "127.0.0.1",
         "--database", str(tmp_path / "fibsd.sqlite")],
        capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"fibsd: cannot read the TLS certificate "
                                          f"{tmp_path}/none.crt: No such file or directory"]
    assert "listening" not in result.stdout  # nothing listened
    assert "Traceback" not in result.stdout + result.stderr
    assert "Unhandled error" not in result.stdout + result.stderr


def test_a_key_that_is_not_the_certificates_stops_the_start(
        tmp_path: Path, database: Path) -> None:
    """The web face's HTTPS port alone (no game TLS port) reads the files when the
    service is made, before the database is opened or anything listens."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    cert_path, _ = self_signed(tmp_path / "a")
    _, other_key = self_signed(tmp_path / "b")
    settings = make_settings(**{
        "port": 0, "interface": "127.0.0.1", "database": str(database),
        "web_port": free_port(), "web.tls": True, "web.tls_port": free_port(),
        "tls.certificate": str(cert_path), "tls.key": str(other_key)})
    with pytest.raises(TlsError) as error:
        FibsService(settings, reactor)
    assert str(error.value) == (f"the TLS key {other_key} does not belong to the "
                                f"certificate {cert_path}")


IN_CLEAR = "return document.getElementById('in-clear').hidden"


@pytest.mark.skipif(CHROMIUM is None or not DRIVER.exists(), reason="Chromium is not installed")
@pytest_twisted.ensureDeferred
async def test_chromium_is_warned_over_plain_http_and_plays_over_https_and_wss(
        tmp_path: Path, database: Path, match_ids: list[int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    service = await start_https(tmp_path, database)
    # fibs.test stands for a public name: Chromium resolves it to this machine's
    # loopback, where the server listens. The certificate is this test's own.
    monkeypatch.setattr(test_browser, "FLAGS", test_browser.FLAGS + (
        "--ignore-certificate-errors", "--host-resolver-rules=MAP fibs.test 127.0.0.1"))
    browser = await deferToThread(test_browser.Browser, tmp_path / "chromium-profile")
    try:
        await browser.open(f"http://fibs.test:{service.settings.web_port}/play")
        await browser.wait_for(lambda: browser.driver.execute_script(
            "return document.body.dataset.state") == "login", "the login form")
        assert await browser.script(IN_CLEAR) is False
        assert "password travels in clear" in await browser.text("#in-clear")
        await open_and_register(browser, f"https://fibs.test:{service.settings.web.tls_port}",
                                "dora")
        assert await browser.script("return location.protocol") == "https:"
        assert await browser.script(IN_CLEAR) is True
        assert [p.session.user.name for p in service.factory.connections
                if p.session is not None and p.session.user is not None] == ["dora"]
    finally:
        await deferToThread(browser.driver.quit)
        await service.stopService()
