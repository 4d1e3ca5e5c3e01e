"""Bot accounts (issue 24): ``admin bot <name> yes|no``, ``set bot yes|no`` and the
whois line of a bot.

Who may mark an account: an administrator, any account at any time; the account
itself only while it has played no match (experience 0), which is when a bot client
registers (``fibsd-bot --register`` sends ``set bot yes`` right after).  A player
cannot move his record between the people's and the bots' lists or tournaments once
it has one.  ``set bot`` is matched by its full word only and is not in the ``set``
listing, so FIBS's ``set`` output and abbreviations (``set b`` is boardstyle) stay
exactly as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from twisted.internet.defer import Deferred, maybeDeferred

from fibsd.administration import AdminUsage
from fibsd.residents.levels import describe, resident
from fibsd.server.commands import user_of
from fibsd.server.commands.admin import record, sub, unknown_user
from fibsd.server.ratelimit import allow
from fibsd.wire import bot_text, chat

if TYPE_CHECKING:
    from fibsd.server.session import Session

_VALUES = {"yes": True, "on": True, "no": False, "off": False}


def whois_lines(session: Session, name: str, bot: bool) -> list[str]:
    """The bot line of ``name``'s whois (none for a person's account)."""
    if not bot:
        return []
    bots = session.settings.bots
    found = resident(bots.resident, name) if bots.enabled else None
    return [bot_text.whois_line(describe(found) if found is not None else None)]


def help_lines(session: Session) -> list[str]:
    """What ``help bot`` adds to its text: this site's resident bots, each with the
    command that invites it and its strength."""
    bots = session.settings.bots
    if not bots.enabled or not bots.resident:
        return ["", "This server runs no resident bots: 'who' may show other ones."]
    lines = ["", "The bots of this server:"]
    for bot in bots.resident:
        lengths = ", ".join(map(str, bot.lengths))
        for account in bot.accounts():
            lines += [f"  invite {account} {bot.lengths[0]}",
                      f"      {describe(bot)}; matches of {lengths} points"]
    return lines


def set_bot(session: Session, words: list[str]) -> object:
    """``set bot`` (the state) or ``set bot yes|no`` (the account's own choice)."""
    user = user_of(session)
    if not words:
        session.send(bot_text.state(user.bot))
        return None
    value = _VALUES.get(words[0].lower())
    if value is None:
        session.send(bot_text.SET_USAGE)
        return None
    if user.experience != 0:
        session.send(bot_text.ONLY_NEW)
        return None
    if not allow(session, "sets_per_minute"):  # each change is a write
        session.send(chat.command_flood("set"))
        return None
    user.bot = value
    session.send(bot_text.marked(value))
    return maybeDeferred(session.db.set_bot, user.name, value)


@sub("bot")
def admin_bot(session: Session, words: list[str], rest: str) -> Deferred[None]:
    value = _VALUES.get(words[1].lower()) if len(words) == 2 else None
    if value is None:
        raise AdminUsage(bot_text.ADMIN_USAGE[3:])
    name = words[0]

    def done(_: object) -> None:
        online = session.lobby.find(name)
        if online is not None:
            online.bot = value
        session.send(bot_text.admin_marked(name, value))
        record(session, "bot", name, "yes" if value else "no")

    d = maybeDeferred(session.db.set_bot, name, value)
    return d.addCallbacks(done, unknown_user(session, name))
