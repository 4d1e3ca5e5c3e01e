"""The composition root: the one place that builds the parts and connects them.

``make_service(settings)`` returns a Twisted service that, when started, opens the
database thread and listens for connections; when stopped (Ctrl-C, SIGTERM, twistd
shutdown) it tells every connection goodbye, stops listening, lets the database
thread finish what is queued and closes the store.
"""

from __future__ import annotations

import resource
from collections.abc import Callable
from functools import partial
from typing import Any

from twisted.application.service import MultiService
from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.endpoints import SSL4ServerEndpoint, TCP4ServerEndpoint, TCP6ServerEndpoint
from twisted.internet.error import CannotListenError
from twisted.internet.interfaces import IListeningPort, IProtocolFactory, IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.analysis.supervisor import AnalysisService
from fibsd.collector import ScheduledCollection
from fibsd.config import PasswordCost, Settings
from fibsd.residents.service import Residents
from fibsd.server import passwords
from fibsd.server.analysis_notice import tell_ready
from fibsd.server.access import (
    LoginThrottle, RefusalLog, RegistrationLimit, connection_caps, network)
from fibsd.server.commands.admin import cut_off_banned
from fibsd.server.commands.play import Invitation
from fibsd.server.dbthread import DatabaseThread
from fibsd.server.fairplay import AbandonmentCheck
from fibsd.server.lobby import Lobby
from fibsd.server.lobby_view import LobbyView
from fibsd.server.match import database_down
from fibsd.server.protocol import FibsFactory
from fibsd.server.ports import GameSockets
from fibsd.server.proxy_header import ProxyHeaderFactory
from fibsd.server.session import PasswordHasher, Services
from fibsd.server.site_texts import help_problem, read_motd
from fibsd.server.tls import TlsError, TlsFiles
from fibsd.server.websocket import logged_in, websocket_resource
from fibsd.store.opening import open_store, shown
from fibsd.store.timeouts import Timeouts
from fibsd.tournament import commands as tournament_commands  # noqa: F401 - registers them
from fibsd.tournament.director import Director
from fibsd.web.gate import WebGate
from fibsd.web.metrics import Metrics
from fibsd.web.pages import make_site
from fibsd.wire import clip

log = Logger()


def build_services(settings: Settings, db: Any, passwords: PasswordHasher,
                   clock: IReactorTime) -> Services:
    problem = help_problem(settings.help_dir)
    if problem is not None:
        log.warn("{problem}", problem=problem)
    services = Services(
        lobby=Lobby(clock, presence_delay=settings.presence_delay_ms / 1000), db=db,
        passwords=passwords, clock=clock, settings=settings,
        motd=read_motd(settings.motd), banner=clip.BANNER,
        throttle=LoginThrottle(clock, settings.access),
        registrations=RegistrationLimit(clock, settings.access.registrations_per_hour, db),
        refusals=RefusalLog(clock),
    )
    # Tournaments (fibsd/tournament/): started with the service (tests start it by hand).
    services.tournaments = Director(services.lobby, db, clock, settings.tournaments,
                                    node=settings.cluster.node or "local",
                                    invitation=Invitation)
    return services


class Argon2Passwords:
    """``fibsd.server.passwords`` at the configured cost, as the sessions' hasher."""

    def __init__(self, cost: PasswordCost) -> None:
        self.cost = cost

    def hash(self, password: str) -> Deferred[str]:
        return passwords.hash_password(password, self.cost)

    def verify(self, password: str, password_hash: str) -> Deferred[bool]:
        return passwords.verify_password(password, password_hash)

    def needs_rehash(self, password_hash: str) -> bool:
        return passwords.needs_rehash(password_hash, self.cost)


class FibsService(MultiService):
    """The database thread plus the listening port, started and stopped in a safe order."""

    def __init__(self, settings: Settings, reactor: Any = None) -> None:
        super().__init__()
        if reactor is None:
            from twisted.internet import reactor as global_reactor

            reactor = global_reactor
        self.reactor = reactor
        self.settings = settings
        # A TLS mistake stops the start here, before the database is opened or anything
        # listens (TlsError: one line, a non-zero exit).
        # The same files serve the game's TLS port and the web face's HTTPS port, so one
        # SIGHUP reloads both.
        self.tls_files = (TlsFiles(settings.tls) if settings.tls.enabled or settings.web.tls
                          else None)
        db = settings.db
        timeouts = Timeouts(db.connect_timeout, db.statement_timeout_ms, db.keepalives_idle,
                            db.keepalives_interval, db.keepalives_count)
        store = open_store(settings.database, timeouts)
        self.db = DatabaseThread(store, reactor,
                                 stall_ms=db.stall_ms, retry_max_ms=db.retry_max_ms,
                                 statement_timeout_ms=db.statement_timeout_ms)
        self.db.setServiceParent(self)
        # Engine analysis (fibsd/analysis/): the jobs queued with each result, the
        # worker processes, and the hook the face's "analysis ready" notice hangs on.
        self.analysis_listeners: list[Callable[[int], None]] = []
        self.analysis = AnalysisService(settings.analysis, str(settings.database), self.db,
                                        reactor, self.on_analysis_done)
        if self.analysis.queueing:
            store.queue_analyses(settings.analysis.matches, settings.analysis.plies)
        self.analysis.setServiceParent(self)
        self.shared = build_services(settings, self.db, Argon2Passwords(settings.passwords),
                                       reactor)
        self.shared.stop = reactor.stop  # `admin shutdown`; the stop triggers stopService
        self.shared.analysis_on = self.analysis.queueing
        self.analysis_listeners.append(self._tell_analysis_ready)
        self.db.on_down(partial(database_down, self.shared.lobby))  # matches say they wait
        self.factory = FibsFactory(self.shared, settings.limits.max_line_length)
        self.sockets = GameSockets(self.factory, self.shared.refusals)
        self.port: IListeningPort | None = None
        self.listening: Deferred[IListeningPort] = Deferred()
        self.tls_port: IListeningPort | None = None
        self.tls_listening: Deferred[IListeningPort] = Deferred()  # fires only with [tls]
        # Fires only with [web] tls: the HTTPS port, or None when it cannot be opened
        # (a certificate that cannot be read fails ``listening`` instead).
        self.web_tls_listening: Deferred[IListeningPort | None] = Deferred()
        self.web_tls_port: IListeningPort | None = None
        self._stopping = False  # a failed listener has asked the reactor to stop
        self.collector = ScheduledCollection(reactor, settings.gc_interval)
        self.abandonment = AbandonmentCheck(self.shared)
        # The web face: read-only views of the lobby and the store (fibsd/web/).
        lobby_view = LobbyView(self.shared.lobby)
        self.metrics = Metrics(lobby_view)
        self.shared.command_observers.append(self.metrics.command_done)
        # The game itself over WebSocket at /ws: sessions of the same factory as telnet.
        ws = websocket_resource(self.factory, settings.limits.websocket_max_message)
        self.site, self.web = make_site(lobby_view, self.db, settings, reactor, self.metrics,
                                        rooms={b"ws": ws})
        # What the web port listens with: the site behind its connection and request caps.
        _, web_cap = connection_caps(settings, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        self.web_gate = WebGate(self.site, reactor, settings.web, web_cap,
                                self.shared.refusals, network, logged_in)
        self.web_port: IListeningPort | None = None
        self.proxied: list[ProxyHeaderFactory] = []  # with access.proxy_protocol
        # Resident bots (fibsd/residents/): processes that log in once the port listens.
        bots = settings.bots
        self.residents = (Residents(settings, self.db, self.shared.passwords, reactor)
                          if bots.enabled and bots.resident else None)
        # A cluster of nodes over a broker (fibsd/cluster/), only with ``--cluster``.
        self.cluster: Any = None
        if settings.cluster.url:
            from fibsd.cluster.node import ClusterNode

            self.cluster = ClusterNode(self.shared, reactor)
            self.shared.cluster = self.cluster
            self.shared.lobby.cluster = self.cluster

    def on_analysis_done(self, match_id: int) -> None:
        """On the reactor thread: the analysis of finished match ``match_id`` was kept
        (by any worker, on any machine); each of ``analysis_listeners`` hears it."""
        for listener in list(self.analysis_listeners):
            listener(match_id)

    def _tell_analysis_ready(self, match_id: int) -> None:
        """The players of the match on this node hear that its analysis is ready."""
        tell_ready(self.shared.lobby, self.db, match_id).addErrback(
            lambda failure: log.failure("analysis ready notice for {id}", failure,
                                         id=match_id))

    def startService(self) -> None:
        super().startService()
        # argon2's backend is loaded now, in the pool, not by the first registrations
        passwords.warm_up().addErrback(
            lambda failure: log.failure("argon2 could not be loaded", failure))
        self.metrics.start()
        self.shared.tournaments.start()
        d = self._endpoint(self.settings.port).listen(self._listener(self.factory))
        if self.settings.web_port:
            d.addCallback(lambda port: Deferred.fromCoroutine(self._listen_web(port)))
        if self.settings.web.tls:
            d.addCallback(lambda port: Deferred.fromCoroutine(self._listen_https(port)))
        d.addCallback(self._listening)
        d.addErrback(self._cannot_listen)
        if self.settings.tls.enabled:
            self._listen_tls()

    def _listen_tls(self) -> None:
        """The second listener: the same factory (and so the same limits and lobby)
        behind TLS, with the certificate read in ``__init__``."""
        tls = self.settings.tls
        options = self.tls_files
        from twisted.protocols.tls import TLSMemoryBIOFactory

        # Behind a balancer it passes TLS through after its header: the header comes
        # first, in the clear, so TLS starts only once it has been read.
        d = self._endpoint(tls.port).listen(
            self._listener(TLSMemoryBIOFactory(options, False, self.factory)))
        d.addCallback(self._listening_tls)
        d.addErrback(self._cannot_listen_tls)

    def _listening_tls(self, port: IListeningPort) -> None:
        self.tls_port = port
        address = port.getHost()
        log.info("fibsd listening with TLS on {interface} port {port}",
                 interface=getattr(address, "host", self.settings.interface),
                 port=getattr(address, "port", self.settings.tls.port))
        self.tls_listening.callback(port)

    def _cannot_listen_tls(self, failure: Failure) -> None:
        log.error("fibsd cannot start: TLS port {port}: {error}", port=self.settings.tls.port,
                  error=failure.getErrorMessage())
        self.tls_listening.errback(failure)
        self._stop_soon()

    def _listener(self, factory: IProtocolFactory) -> IProtocolFactory:
        """What a game listener listens with: ``factory`` (the game's, or TLS around it),
        behind the PROXY header reader if asked for, its sockets counted and capped
        together with the other game listener's (fibsd/server/ports.py)."""
        return self.sockets.counted(self._behind_proxy(factory))

    def _behind_proxy(self, factory: IProtocolFactory) -> IProtocolFactory:
        """``factory``, or with ``access.proxy_protocol`` the same behind a reader of
        the PROXY header that must start every connection (fibsd/server/proxy_header.py)."""
        access = self.settings.access
        if not access.proxy_protocol:
            return factory
        proxied = ProxyHeaderFactory(factory, self.reactor, access.login_timeout,
                                     self.shared.refusals)
        self.proxied.append(proxied)
        return proxied

    def _endpoint(self, port: int, interface: str = "") -> Any:
        """A listener on ``port`` of ``interface`` (empty: the game's ``interface``)."""
        interface = interface or self.settings.interface
        endpoint_type = TCP6ServerEndpoint if ":" in interface else TCP4ServerEndpoint
        return endpoint_type(self.reactor, port, backlog=self.settings.limits.listen_backlog,
                             interface=interface)

    async def _listen_web(self, port: IListeningPort) -> IListeningPort:
        """The web face on ``web_port`` (after the game port, which then is ``port``); a
        web port that cannot be opened is logged, and the server runs without it."""
        self.port = port
        self.web_port = await self._open_web(
            self._endpoint(self.settings.web_port, self.settings.web.interface), "")
        return port

    async def _listen_https(self, port: IListeningPort) -> IListeningPort:
        """The web face over TLS on ``[web] tls_port``: the same gate (and so the same
        caps, shared with the plain web port) around the same site.  The reactor's own
        TLS transport sits below the gate: the caps refuse a connection before its
        handshake, and the requests it carries know they are secure (``isSecure``)."""
        self.port = port
        web = self.settings.web
        endpoint = SSL4ServerEndpoint(
            self.reactor, web.tls_port, self.tls_files,
            backlog=self.settings.limits.listen_backlog,
            interface=web.interface or self.settings.interface)
        self.web_tls_port = await self._open_web(endpoint, "with TLS ")
        self.web_tls_listening.callback(self.web_tls_port)
        return port

    async def _open_web(self, endpoint: Any, how: str) -> IListeningPort | None:
        try:
            listening: IListeningPort = await endpoint.listen(self.web_gate)
        except CannotListenError as error:
            # The game matters more than its web face: it goes on without one.
            log.error("fibsd web face cannot start: {error}", error=str(error), event="error")
            return None
        address = listening.getHost()
        log.info("fibsd web face " + how + "on {interface} port {port}",
                 interface=getattr(address, "host", self.settings.interface),
                 port=getattr(address, "port", "?"))
        return listening

    def _listening(self, port: IListeningPort) -> None:
        self.port = port
        address = port.getHost()
        log.info("fibsd listening on {interface} port {port}, database {database}",
                 interface=getattr(address, "host", self.settings.interface),
                 port=getattr(address, "port", self.settings.port),
                 database=shown(self.settings.database))
        self.collector.start()
        self.abandonment.start()
        if self.cluster is not None:
            self.cluster.start(int(getattr(address, "port", self.settings.port)))
        if self.residents is not None:
            self.residents.start(int(getattr(address, "port", self.settings.port)))
        self.listening.callback(port)

    def _cannot_listen(self, failure: Failure) -> None:
        if failure.check(CannotListenError):  # a port in use: no traceback needed
            log.error("fibsd cannot start: {error}", error=failure.getErrorMessage())
        else:
            log.failure("fibsd cannot listen on {interface} port {port}", failure,
                        interface=self.settings.interface, port=self.settings.port)
        self.listening.errback(failure)
        self._stop_soon()

    def _stop_soon(self) -> None:
        """Stop the reactor once it runs (fibsd's own script starts the service once the
        reactor runs, twistd before), once: both game ports failing stop it once."""
        if not self._stopping:
            self._stopping = True
            self.reactor.callWhenRunning(self.reactor.stop)

    def reload(self, reopen_log: Callable[[], None] | None = None) -> Deferred[None]:
        """SIGHUP: open the log file again (``reopen_log``, after logrotate), read the
        MOTD and the TLS certificate again, check the help directory (its texts are
        read at each use), and close the connections of users that bans in the
        database (``fibsd admin ban`` from the shell) now name.  One operator event,
        ``reload``, says what was done and what could not be (that part stays as it
        was; a warning then)."""
        return Deferred.fromCoroutine(self._reload(reopen_log))

    async def _reload(self, reopen_log: Callable[[], None] | None) -> None:
        problems: list[str] = []
        log_file = "unchanged"
        if reopen_log is not None:
            try:
                reopen_log()
                log_file = "reopened"
            except OSError as error:
                problems.append(f"the log file cannot be opened again ({error}); "
                                "still writing to the old one")
        self.shared.motd = read_motd(self.settings.motd)
        problem = help_problem(self.settings.help_dir)
        if problem is not None:
            problems.append(problem)
        tls = "off"
        if self.tls_files is not None:
            try:
                self.tls_files.reload()
                tls = "read again"
            except TlsError as error:
                tls = "kept"
                problems.append(f"{error}: the certificate in use stays")
        cut: list[str] = []
        try:
            bans = await self.db.bans(int(self.reactor.seconds()))
            cut = cut_off_banned(self.shared.lobby.local_users(), bans)
        except Exception as error:  # the database is down: the bans wait for the next try
            problems.append(f"bans not read: {error}")
        emit = log.warn if problems else log.info
        emit("fibsd reloaded on SIGHUP: log file {log_file}, MOTD {motd} lines, TLS {tls}, "
             "banned users cut off: {cut}{problems}", event="reload",
             log_file=log_file,
             motd=len(self.shared.motd), tls=tls, cut=", ".join(cut) or "none",
             problems="".join(f"; {each}" for each in problems))

    async def _stop(self) -> None:
        if self.residents is not None:  # they leave before the goodbyes
            await self.residents.stop()
        self.abandonment.stop()
        self.shared.tournaments.stop()
        await self.analysis.stopService()
        for web_port in (self.web_port, self.web_tls_port):
            if web_port is not None:
                await maybeDeferred(web_port.stopListening)
        self.web.live.close_all()
        self.metrics.stop()
        if self.port is not None:
            await maybeDeferred(self.port.stopListening)
        if self.tls_port is not None:
            await maybeDeferred(self.tls_port.stopListening)
        for proxied in self.proxied:
            proxied.close_waiting()
        await self.factory.shutdown(self.reactor)
        if self.cluster is not None:
            self.cluster.stop()
        await self.db.stopService()
        self.collector.stop()
        log.info("fibsd stopped; database closed")

    def stopService(self) -> Deferred[None]:
        """Stop listening, tell every connection goodbye and wait until they are gone
        (their logouts are queued for the store), then drain and close the database."""
        self.running = False
        return Deferred.fromCoroutine(self._stop())


def make_service(settings: Settings, reactor: Any = None) -> FibsService:
    return FibsService(settings, reactor)
