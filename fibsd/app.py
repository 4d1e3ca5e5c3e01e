"""The composition root: the one place that builds the parts and connects them.

``make_service(settings)`` returns a Twisted service that, when started, opens the
database thread and listens for connections; when stopped (Ctrl-C, SIGTERM, twistd
shutdown) it tells every connection goodbye, stops listening, lets the database
thread finish what is queued and closes the store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from twisted.application.service import MultiService
from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.endpoints import (
    SSL4ServerEndpoint, TCP4ServerEndpoint, TCP6ServerEndpoint)
from twisted.internet.error import CannotListenError
from twisted.internet.interfaces import IListeningPort, IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.collector import ScheduledCollection
from fibsd.config import PasswordCost, Settings
from fibsd.server import passwords
from fibsd.server.access import LoginThrottle, RefusalLog, RegistrationLimit
from fibsd.server.dbthread import DatabaseThread
from fibsd.server.lobby import Lobby
from fibsd.server.protocol import FibsFactory
from fibsd.server.session import PasswordHasher, Services
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire import clip

log = Logger()


def read_motd(path: Path) -> tuple[str, ...]:
    """The MOTD box; no box at all when the file is missing or empty."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        log.warn("No message of the day: cannot read {path}", path=str(path))
        return ()
    return tuple(clip.format_motd_box(text)) if text.strip() else ()


def build_services(settings: Settings, db: Any, passwords: PasswordHasher,
                   clock: IReactorTime) -> Services:
    return Services(
        lobby=Lobby(clock, presence_delay=settings.presence_delay_ms / 1000), db=db,
        passwords=passwords, clock=clock, settings=settings,
        motd=read_motd(settings.motd), banner=clip.BANNER,
        throttle=LoginThrottle(clock, settings.access),
        registrations=RegistrationLimit(clock, settings.access.registrations_per_hour),
        refusals=RefusalLog(clock),
    )


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
        self.db = DatabaseThread(SQLiteStore(settings.database), reactor)
        self.db.setServiceParent(self)
        self.shared = build_services(settings, self.db, Argon2Passwords(settings.passwords),
                                       reactor)
        self.factory = FibsFactory(self.shared, settings.limits.max_line_length)
        self.port: IListeningPort | None = None
        self.listening: Deferred[IListeningPort] = Deferred()
        self.tls_port: IListeningPort | None = None
        self.tls_listening: Deferred[IListeningPort] = Deferred()  # fires only with [tls]
        self.collector = ScheduledCollection(reactor, settings.gc_interval)

    def startService(self) -> None:
        super().startService()
        endpoint_type = TCP6ServerEndpoint if ":" in self.settings.interface else TCP4ServerEndpoint
        endpoint = endpoint_type(self.reactor, self.settings.port,
                                 backlog=self.settings.limits.listen_backlog,
                                 interface=self.settings.interface)
        d = endpoint.listen(self.factory)
        d.addCallback(self._listening)
        d.addErrback(self._cannot_listen)
        if self.settings.tls.enabled:
            self._listen_tls()

    def _listen_tls(self) -> None:
        """The second listener: the same factory (and so the same limits and lobby)
        behind TLS.  A certificate that cannot be read stops the server at once."""
        tls = self.settings.tls
        try:
            from cryptography import x509
            from cryptography.hazmat.primitives.serialization import load_pem_private_key
            from twisted.internet import ssl

            # The certificate file may hold the chain after it (a "fullchain.pem").
            leaf, *chain = x509.load_pem_x509_certificates(tls.certificate.read_bytes())
            options = ssl.CertificateOptions(
                privateKey=load_pem_private_key(tls.key.read_bytes(), password=None),
                certificate=leaf, extraCertChain=chain)
        except Exception as error:  # OSError, or OpenSSL's own errors for a bad file
            log.error("fibsd cannot start: TLS certificate {certificate} or key {key}: {error}",
                      certificate=str(tls.certificate), key=str(tls.key), error=error)
            self.tls_listening.errback(Failure(error))
            self.reactor.callWhenRunning(self.reactor.stop)
            return
        endpoint = SSL4ServerEndpoint(self.reactor, tls.port, options,
                                      backlog=self.settings.limits.listen_backlog,
                                      interface=self.settings.interface)
        d = endpoint.listen(self.factory)
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
        self.reactor.callWhenRunning(self.reactor.stop)

    def _listening(self, port: IListeningPort) -> None:
        self.port = port
        address = port.getHost()
        log.info("fibsd listening on {interface} port {port}, database {database}",
                 interface=getattr(address, "host", self.settings.interface),
                 port=getattr(address, "port", self.settings.port),
                 database=str(self.settings.database))
        self.collector.start()
        self.listening.callback(port)

    def _cannot_listen(self, failure: Failure) -> None:
        if failure.check(CannotListenError):  # a port in use: no traceback needed
            log.error("fibsd cannot start: {error}", error=failure.getErrorMessage())
        else:
            log.failure("fibsd cannot listen on {interface} port {port}", failure,
                        interface=self.settings.interface, port=self.settings.port)
        self.listening.errback(failure)
        # fibsd's own script starts the service once the reactor runs, twistd before.
        self.reactor.callWhenRunning(self.reactor.stop)

    async def _stop(self) -> None:
        if self.port is not None:
            await maybeDeferred(self.port.stopListening)
        if self.tls_port is not None:
            await maybeDeferred(self.tls_port.stopListening)
        await self.factory.shutdown(self.reactor)
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
