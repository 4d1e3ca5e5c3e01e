"""The resident bots as part of a running server, or on their own (``fibsd bots``).

In the server (``fibsd.app``), the accounts are prepared on the database thread once
the game port listens (argon2 runs there too, for a new account or a password that
changed, and to check each bot's password: a few tenths of a second per start, before
the bots' processes exist), then the processes start; when the server stops they are
stopped first, so they leave before the goodbyes.  ``fibsd bots --config FILE`` does
the same with the site's configuration on another machine (its ``[bots] server``
names the game server; the database must be the site's, e.g. its PostgreSQL URL, so
that the accounts and passwords agree) until Ctrl-C or SIGTERM.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from twisted.internet.defer import Deferred
from twisted.logger import Logger

from fibsd.config import Settings
from fibsd.residents.accounts import Refusal, Seat, prepare
from fibsd.residents.supervisor import Supervisor

log = Logger()


def _prepare_with(settings: Settings) -> Any:
    from fibsd.server.commands import command_words
    from fibsd.server.passwords import hash_password_now, verify_password_now

    return partial(prepare, bots=settings.bots.resident, data_dir=settings.data_dir,
                   hash_password=partial(hash_password_now, cost=settings.passwords),
                   verify=verify_password_now, command_words=command_words())


def log_refusals(refused: list[Refusal]) -> None:
    for refusal in refused:
        log.error("resident bot {bot} not started: {reason}", bot=refusal.account,
                  reason=refusal.reason, event="resident_bot", state="refused")


class Residents:
    """The server's resident bots (only when ``[bots] enabled`` lists some)."""

    def __init__(self, settings: Settings, db: Any, reactor: Any) -> None:
        self.settings = settings
        self.db = db
        self.supervisor = Supervisor(settings.bots, reactor)
        self._starting: Deferred[None] | None = None

    def start(self, port: int) -> Deferred[None]:
        self._starting = Deferred.fromCoroutine(self._start(port))
        self._starting.addErrback(lambda failure: log.failure(
            "resident bots not started", failure, event="resident_bot", state="not-started"))
        return self._starting

    async def _start(self, port: int) -> None:
        seats: list[Seat]
        seats, refused = await self.db.run(_prepare_with(self.settings))
        log_refusals(refused)
        self.supervisor.start(seats, port)

    async def stop(self) -> None:
        if self._starting is not None and not self._starting.called:
            await self._starting
        await self.supervisor.stop()


def run_bots(settings: Settings) -> int:
    """``fibsd bots``: prepare the accounts, run the bots until Ctrl-C or SIGTERM."""
    from twisted.internet import reactor

    from fibsd.store.opening import Timeouts, open_store

    if not settings.bots.resident:
        print("fibsd bots: the configuration lists no [[bots.resident]]")
        return 1
    store = open_store(settings.database, Timeouts())
    try:
        seats, refused = _prepare_with(settings)(store)
    finally:
        store.close()
    log_refusals(refused)
    supervisor = Supervisor(settings.bots, reactor)
    stopping: list[Deferred[Any]] = []

    def stop() -> Deferred[Any]:
        stopping.append(supervisor.stop())
        return stopping[0]

    reactor.callWhenRunning(supervisor.start, seats, settings.port)  # type: ignore[attr-defined]
    reactor.addSystemEventTrigger("before", "shutdown", stop)  # type: ignore[attr-defined]
    reactor.run()  # type: ignore[attr-defined]
    return 0
