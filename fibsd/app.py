"""The composition root: the one place that builds the parts and connects them.

``make_service(settings)`` returns a Twisted service that, when started, opens the
database thread and listens for connections; when stopped (Ctrl-C, SIGTERM, twistd
shutdown) it tells every connection goodbye, stops listening, lets the database
thread finish what is queued and closes the store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from twisted.application.internet import StreamServerEndpointService
from twisted.application.service import MultiService
from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.endpoints import TCP4ServerEndpoint, TCP6ServerEndpoint
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

from fibsd.config import PasswordCost, Settings
from fibsd.server import passwords
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
        lobby=Lobby(clock), db=db, passwords=passwords, clock=clock, settings=settings,
        motd=read_motd(settings.motd), banner=clip.BANNER,
    )


class Argon2Passwords:
    """``fibsd.server.passwords`` at the configured cost, as the sessions' hasher."""

    def __init__(self, cost: PasswordCost) -> None:
        self.cost = cost

    def hash(self, password: str) -> Deferred[str]:
        return passwords.hash_password(password, self.cost)

    def verify(self, password: str, password_hash: str) -> Deferred[bool]:
        return passwords.verify_password(password, password_hash)


class FibsService(MultiService):
    """The database thread plus the listening endpoint, stopped in the safe order."""

    def __init__(self, settings: Settings, reactor: Any = None) -> None:
        super().__init__()
        if reactor is None:
            from twisted.internet import reactor as global_reactor

            reactor = global_reactor
        self.settings = settings
        self.db = DatabaseThread(SQLiteStore(settings.database), reactor)
        self.db.setServiceParent(self)
        self.services = build_services(settings, self.db, Argon2Passwords(settings.passwords),
                                       reactor)
        self.factory = FibsFactory(self.services, settings.limits.max_line_length)
        endpoint_type = TCP6ServerEndpoint if ":" in settings.interface else TCP4ServerEndpoint
        endpoint = endpoint_type(reactor, settings.port, interface=settings.interface)
        self.listener = StreamServerEndpointService(endpoint, self.factory)
        self.listener.setServiceParent(self)

    def startService(self) -> None:
        super().startService()
        log.info("fibsd listening on {interface} port {port}, database {database}",
                 interface=self.settings.interface, port=self.settings.port,
                 database=str(self.settings.database))

    def stopService(self) -> Deferred[None]:
        """Goodbye to everyone (their logout is queued for the store), stop listening,
        then drain and close the database thread."""
        self.running = False
        self.factory.shutdown()
        stopping = maybeDeferred(self.listener.stopService)
        stopping.addBoth(lambda _: self.db.stopService())
        stopping.addCallback(lambda _: log.info("fibsd stopped; database closed"))
        return stopping


def make_service(settings: Settings, reactor: Any = None) -> FibsService:
    return FibsService(settings, reactor)
