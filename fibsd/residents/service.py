"""The resident bots as part of a running server, or on their own (``fibsd bots``).

In the server (``fibsd.app``), the accounts are prepared once the game port listens
(one store call at a time on the database thread, argon2 in the sessions' hasher), then
the processes start; when the server stops they are stopped first, so they leave
before the goodbyes.  ``fibsd bots --config FILE`` does
the same with the site's configuration on another machine (its ``[bots] server``
names the game server; the database must be the site's, e.g. its PostgreSQL URL, so
that the accounts and passwords agree) until Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from twisted.internet.defer import Deferred
from twisted.logger import Logger

from fibsd.config import Settings
from fibsd.residents.accounts import (
    Refusal, Seat, password_file, prepare, read_or_make_password, refusal,
)
from fibsd.residents.supervisor import Supervisor
from fibsd.store import NameTaken

log = Logger()


def _prepare_with(settings: Settings) -> Any:
    from fibsd.server.commands import command_words
    from fibsd.server.passwords import hash_password_now, verify_password_now

    return partial(prepare, bots=settings.bots.resident, data_dir=settings.data_dir,
                   hash_password=partial(hash_password_now, cost=settings.passwords),
                   verify=verify_password_now, command_words=command_words())


def log_refusals(refused: list[Refusal]) -> None:
    for each in refused:
        log.error("resident bot {bot} not started: {reason}", bot=each.account,
                  reason=each.reason, event="resident_bot", state="refused")


class Residents:
    """The server's resident bots (only when ``[bots] enabled`` lists some)."""

    def __init__(self, settings: Settings, db: Any, passwords: Any, reactor: Any) -> None:
        self.settings = settings
        self.db = db
        self.passwords = passwords  # the sessions' hasher: argon2 in its thread pool
        self.supervisor = Supervisor(settings.bots, reactor)
        self._starting: Deferred[None] | None = None

    def start(self, port: int) -> Deferred[None]:
        self._starting = Deferred.fromCoroutine(self._start(port))
        self._starting.addErrback(lambda failure: log.failure(
            "resident bots not started", failure, event="resident_bot", state="not-started"))
        return self._starting

    async def _start(self, port: int) -> None:
        from fibsd.server.commands import command_words

        seats: list[Seat] = []
        refused: list[Refusal] = []
        words = command_words()
        for bot in self.settings.bots.resident:
            for account in bot.accounts():
                why = await self._prepare(account, words)
                if why is None:
                    seats.append(Seat(account, bot, password_file(self.settings.data_dir,
                                                                  account)))
                else:
                    refused.append(why)
        log_refusals(refused)
        self.supervisor.start(seats, port)

    async def _prepare(self, account: str, words: frozenset[str]) -> Refusal | None:
        """One account, as ``accounts.prepare`` does it, each store call on its own on
        the database thread and argon2 in the hasher's pool, so a long list of bots
        never holds the database for long."""
        password = read_or_make_password(password_file(self.settings.data_dir, account))
        db = self.db
        record = await db.get_user(account)
        taken = record is None and await db.name_taken(account)
        why = refusal(account, record, taken, words)
        if why is not None:
            return why
        if record is None:
            try:
                await db.create_user(account, await self.passwords.hash(password),
                                     int(time.time()))
            except NameTaken:
                return Refusal(account, "the name was just taken")
            await db.set_bot(account, True)
        elif not await self.passwords.verify(password, record.password_hash):
            await db.set_password_hash(account, await self.passwords.hash(password))
        return None

    async def stop(self) -> None:
        if self._starting is not None and not self._starting.called:
            await self._starting
        await self.supervisor.stop()


def run_bots(settings: Settings) -> int:
    """``fibsd bots``: prepare the accounts, run the bots until Ctrl-C or SIGTERM."""
    from twisted.internet import reactor

    from fibsd.store.opening import open_store
    from fibsd.store.timeouts import Timeouts

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
