"""``admin``: the administrators' commands, for the accounts listed in ``admins``.

One command word with subcommands, so FIBS's abbreviations stay exactly as they were
(``admin`` is matched only in full, and is an unknown command to everyone else):

    admin alert <text>                    every user gets it (CLIP 20 for clients)
    admin kick <name> [reason]            close a user's connection
    admin ban <name|address> [dur] [why]  refuse logins; online matches are kicked
    admin unban <name|address>
    admin bans                            the bans in force
    admin password <name> <password>      set a new password
    admin rename <name> <new name>        (an online user of <name> is kicked first)
    admin delete <name>                   (an online user of <name> is kicked first)
    admin reload                          read the MOTD again (help is read per use)
    admin shutdown <seconds> [reason]     a countdown every user sees, then shutdown
    admin shutdown cancel
    admin log [n]                         the last n admin actions (default 20)
    admin bot <name> yes|no               mark an account as a bot, or not (bots.py)

Every action is logged (event ``admin``, field ``action``) and stored in the admin
log; a password never is.  ``fibsd admin`` does the database operations offline.
Every answer to the admin is a ``** `` line, which every client shows as a message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.administration import (
    AdminUsage,
    action_line,
    ban_line,
    banned_text,
    new_name_problem,
    parse_ban,
    target_kind,
)
from fibsd.server.commands import command, user_of
from fibsd.server.dbthread import unattended
from fibsd.server.site_texts import help_problem, read_motd
from fibsd.server.tokens import password_changed
from fibsd.store import AdminAction, Ban, NameTaken, UnknownUser
from fibsd.wire.input import password_problem
from fibsd.wire.user_text import shown

if TYPE_CHECKING:
    from fibsd.server.session import Services, Session
    from fibsd.server.user import OnlineUser

_log = Logger()
USAGE = ("** Usage: admin alert|kick|ban|unban|bans|password|rename|delete|reload|"
         "shutdown|log|bot ...")
# Seconds before a shutdown at which every user is told again.
COUNTDOWN_MARKS = (3600, 1800, 600, 300, 120, 60, 30, 10, 5)
LOG_LINES = 20

# (session, the words after the subcommand, the text after its first argument)
Sub = Callable[["Session", list[str], str], object]
SUBCOMMANDS: dict[str, Sub] = {}


def sub(name: str) -> Callable[[Sub], Sub]:
    def register(function: Sub) -> Sub:
        SUBCOMMANDS[name] = function
        return function

    return register


@command("admin", admin_only=True)
def admin(session: Session, rest: str) -> object:
    words = rest.split()
    found = SUBCOMMANDS.get(words[0].lower()) if words else None
    if found is None:
        session.send(USAGE)
        return None
    after_first = rest.split(None, 2)[2].strip() if len(words) > 2 else ""
    try:
        return found(session, words[1:], after_first)
    except AdminUsage as problem:
        session.error(str(problem))
        return None


def record(session: Session, action: str, target: str = "", detail: str = "") -> None:
    """Log and store one admin action (never a password)."""
    name = user_of(session).name
    _log.info("admin {admin}: {action} {target} {detail}", event="admin", admin=name,
              action=action, target=target, detail=detail)
    unattended(maybeDeferred(session.db.log_admin, AdminAction(
        session.now(), name, action, target, detail)), "log_admin")


def _store_call(session: Session, method: str, *args: Any) -> Deferred[Any]:
    return maybeDeferred(getattr(session.db, method), *args)


def _online(session: Session, name: str) -> OnlineUser | None:
    return session.lobby.find(name)


def _this_node(session: Session, *lines: str) -> None:
    """``lines`` to every user of this server, the admin included: in a cluster, only
    the users connected to this node, whose connections a shutdown ends."""
    for user in session.lobby.local_users():
        if user.session is session:
            session.send(*lines)
        else:
            user.session.notify(*lines)


@sub("alert")
def alert(session: Session, words: list[str], rest: str) -> None:
    text = " ".join(words)
    if not text:
        raise AdminUsage("Usage: admin alert <text>")
    name = user_of(session).name
    for user in session.lobby.users():
        line = (f"20 {name} {text}" if user.session.is_clip
                else f"** Alert from {name}: {shown(text)}")
        if user.session is session:
            session.send(line)
        else:
            user.session.notify(line)
    record(session, "alert", detail=text)


@sub("kick")
def kick(session: Session, words: list[str], rest: str) -> None:
    if not words:
        raise AdminUsage("Usage: admin kick <name> [reason]")
    target = _online(session, words[0])
    if target is None:
        raise AdminUsage(f"{words[0]} is not logged in.")
    reason = f": {shown(rest)}" if rest else "."
    _cut_off(target, f"** You were kicked off the server by {user_of(session).name}{reason}")
    session.send(f"** {target.name} was kicked off the server.")
    record(session, "kick", target.name, rest)


def _cut_off(user: OnlineUser, line: str) -> None:
    """Tell ``user`` why and close the connection; the others see a logout."""
    if user.session is not None:
        user.session.notify(line)
        user.session.disconnect(goodbye=False)


@sub("ban")
def ban(session: Session, words: list[str], rest: str) -> Deferred[None]:
    request = parse_ban(words)
    now = session.now()
    until = None if request.seconds is None else now + request.seconds
    entry = Ban(request.kind, request.value, now, until, user_of(session).name, request.reason)

    def banned(_: object) -> None:
        session.send(f"** Banned {ban_line(entry)}")
        record(session, "ban", f"{entry.kind} {entry.value}",
               f"{'forever' if until is None else f'until {until}'} {entry.reason}".strip())
        cut_off_banned(session.lobby.users(), [entry], spare=session)

    return _store_call(session, "add_ban", entry).addCallback(banned)


def cut_off_banned(users: Iterable[OnlineUser], bans: list[Ban],
                   spare: Session | None = None) -> list[str]:
    """Close the connections of ``users`` (but ``spare``'s) that a ban of ``bans``
    names, by name or address, each told why; their names."""
    names = {ban.value.lower(): ban for ban in bans if ban.kind == "name"}
    addresses = {ban.value: ban for ban in bans if ban.kind == "address"}
    cut = []
    for user in users:
        found = names.get(user.name.lower()) or addresses.get(user.session.host)
        if found is not None and user.session is not spare:
            _cut_off(user, f"** {banned_text(found)}")
            cut.append(user.name)
    return cut


@sub("unban")
def unban(session: Session, words: list[str], rest: str) -> Deferred[None]:
    if len(words) != 1:
        raise AdminUsage("Usage: admin unban <name|address>")
    kind, value = target_kind(words[0]), words[0]

    def lifted(existed: bool) -> None:
        if not existed:
            session.error(f"There is no ban on {value}.")
            return
        session.send(f"** Lifted the ban on {value}.")
        record(session, "unban", f"{kind} {value}")

    return _store_call(session, "remove_ban", kind, value).addCallback(lifted)


@sub("bans")
def bans(session: Session, words: list[str], rest: str) -> Deferred[None]:
    def show(found: list[Ban]) -> None:
        session.send(*(["** Bans:", *(f"** {line}" for line in map(ban_line, found))]
                       if found else ["** No bans."]))

    return _store_call(session, "bans", session.now()).addCallback(show)


@sub("password")
def password(session: Session, words: list[str], rest: str) -> Deferred[None]:
    if len(words) != 2:
        raise AdminUsage("Usage: admin password <name> <new password>")
    name, new = words
    if password_problem(new) is not None:
        raise AdminUsage("A password needs 4 characters or more, no blank and no colon.")

    def stored(password_hash: str) -> Deferred[None]:
        return _store_call(session, "set_password_hash", name, password_hash).addCallback(
            lambda _: password_changed(session, name))  # his web session tokens go

    def done(_: object) -> None:
        session.send(f"** Changed the password of {name}.")
        record(session, "password", name)

    d = session.services.passwords.hash(new).addCallback(stored)
    return d.addCallbacks(done, unknown_user(session, name))


def unknown_user(session: Session, name: str) -> Callable[[Failure], None]:
    """The errback of an admin command about one account: ``There is no user <name>.``
    when the store knows no such account (shared by the admin and bot commands)."""
    def refuse(failure: Failure) -> None:
        failure.trap(UnknownUser)
        session.error(f"There is no user {name}.")

    return refuse


def _offline(session: Session, *names: str) -> None:
    for name in names:
        if _online(session, name) is not None:
            raise AdminUsage(f"{name} is logged in: 'admin kick {name}' first.")


def _kickable(session: Session, name: str) -> None:
    """Refuse to rename or delete the admin's own account, or one logged in on another
    node of a cluster (whose logout's writes that node makes), while online."""
    target = _online(session, name)
    if target is not None and (target.session is session or target.session.remote):
        raise AdminUsage(f"{name} is logged in: 'admin kick {name}' first.")


def _kick_first(session: Session, name: str, why: str) -> None:
    """Kick an online user of the account ``name`` before it is renamed or deleted, and
    end his session now rather than when his socket closes: his logout's writes (his
    match saved, his settings) are then queued before the change, and no session goes
    on for an account that is gone."""
    _kickable(session, name)
    target = _online(session, name)
    if target is None:
        return
    admin = user_of(session).name
    _cut_off(target, f"** You were kicked off the server by {admin}: {why}")
    session.send(f"** {name} was kicked off the server.")
    cast("Session", target.session).connection_lost()  # _kickable: a connection here
    record(session, "kick", name, why)


@sub("rename")
def rename(session: Session, words: list[str], rest: str) -> Deferred[None]:
    if len(words) != 2:
        raise AdminUsage("Usage: admin rename <name> <new name>")
    name, new = words
    problem = new_name_problem(new)
    if problem is not None:
        raise AdminUsage(problem)
    _offline(session, new)
    _kickable(session, name)

    def done(_: object) -> None:
        session.send(f"** Renamed {name} to {new}.")
        record(session, "rename", name, new)

    def taken(failure: Failure) -> None:
        failure.trap(NameTaken)
        session.error(f"The name {new} is taken.")

    def unless_taken(clash: bool) -> Deferred[None] | None:
        if clash and new.lower() != name.lower():  # no kick for a rename that must fail
            session.error(f"The name {new} is taken.")
            return None
        _kick_first(session, name, f"account renamed to {new}")
        d = _store_call(session, "rename_user", name, new)
        return d.addCallbacks(done, unknown_user(session, name)).addErrback(taken)

    return _store_call(session, "name_taken", new).addCallback(unless_taken)


@sub("delete")
def delete(session: Session, words: list[str], rest: str) -> Deferred[None]:
    if len(words) != 1:
        raise AdminUsage("Usage: admin delete <name>")
    name = words[0]
    _kick_first(session, name, "account deleted")

    def done(_: object) -> None:
        session.send(f"** Deleted the account {name}.")
        record(session, "delete", name)

    return _store_call(session, "delete_user", name).addCallbacks(done, unknown_user(session, name))


@sub("reload")
def reload(session: Session, words: list[str], rest: str) -> None:
    services = session.services
    services.motd = read_motd(services.settings.motd)
    problem = help_problem(services.settings.help_dir)
    if problem is not None:
        session.error(problem)
    session.send("** Reloaded the MOTD; help texts are read from "
                 f"{services.settings.help_dir} at each use.")
    record(session, "reload")


class Countdown:
    """A shutdown ``seconds`` from now, announced at the marks to everyone it will
    disconnect (in a cluster: this node's users)."""

    def __init__(self, services: Services, seconds: int, reason: str) -> None:
        self.services = services
        self.reason = reason
        self.end = services.clock.seconds() + seconds
        self.calls = [services.clock.callLater(seconds - mark, self.announce, mark)
                      for mark in COUNTDOWN_MARKS if mark < seconds]
        self.calls.append(services.clock.callLater(seconds, self.finish))

    def line(self, seconds: int) -> str:
        reason = f" ({shown(self.reason)})" if self.reason else ""
        return f"** The server will shut down in {seconds} seconds{reason}."

    def announce(self, seconds: int) -> None:
        for user in self.services.lobby.local_users():
            user.session.notify(self.line(seconds))

    def cancel(self) -> None:
        for call in self.calls:
            if call.active():
                call.cancel()

    def finish(self) -> None:
        self.services.countdown = None
        _log.info("shutting down: the countdown ended", event="admin", action="shutdown_now")
        if self.services.stop is not None:
            self.services.stop()


@sub("shutdown")
def shutdown(session: Session, words: list[str], rest: str) -> None:
    services = session.services
    if words[:1] == ["cancel"]:
        if services.countdown is None:
            raise AdminUsage("No shutdown is under way.")
        services.countdown.cancel()
        services.countdown = None
        _this_node(session, "** The shutdown was cancelled.")
        record(session, "shutdown_cancel")
        return
    if not words or not words[0].isdigit() or not 0 < int(words[0]) <= 86400:
        raise AdminUsage("Usage: admin shutdown <seconds, 1 to 86400> [reason] | cancel")
    if services.countdown is not None:
        services.countdown.cancel()
    seconds = int(words[0])
    services.countdown = Countdown(services, seconds, rest)
    _this_node(session, services.countdown.line(seconds))
    record(session, "shutdown", detail=f"{seconds} {rest}".strip())


@sub("log")
def admin_log(session: Session, words: list[str], rest: str) -> Deferred[None]:
    if words and not (words[0].isdigit() and 0 < int(words[0]) <= 1000):
        raise AdminUsage("Usage: admin log [1 to 1000]")
    count = int(words[0]) if words else LOG_LINES

    def show(actions: list[AdminAction]) -> None:
        session.send(*(["** Admin log:", *(f"** {line}" for line in map(action_line, actions))]
                       if actions else ["** The admin log is empty."]))

    return _store_call(session, "admin_log", count).addCallback(show)
