"""``fibsd admin ...``: the administrators' database operations from the command line.

For an operator locked out of his own server, or a script: the same operations as the
server's ``admin`` command that touch only the database, run directly on it (the
server may be running: SQLite's locking, or PostgreSQL's, keeps both consistent; a ban
takes effect at the next login, and for users online at the server's next SIGHUP).  Alerts, kicks, MOTD
reloads and shutdowns need the running server: ``admin`` in a session, or SIGTERM.

``rename`` and ``delete`` refuse an account the database shows logged in (a login
later than its last logout): the shell cannot reach the running server's sessions, and
a session left playing for a renamed or deleted account would write for a name that
is gone, or that a newcomer has taken meanwhile.  ``--force`` is for a server that
stopped without recording the logout (a crash).
Every action is written to the admin log as done by ``console``.
"""

from __future__ import annotations

import getpass
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from twisted.logger import Logger
from twisted.python import usage

from fibsd.administration import (
    CONSOLE,
    AdminUsage,
    action_line,
    ban_line,
    new_name_problem,
    parse_ban,
    target_kind,
)
from fibsd.config import Settings
from fibsd.store import AdminAction, Ban, NameTaken, Store, UnknownUser
from fibsd.store.opening import DatabaseUnavailable, is_postgres_url, masked, open_store
from fibsd.wire import clip
from fibsd.wire.input import password_problem

_log = Logger()
SERVER_ONLY = ("alert", "kick", "reload", "shutdown")


class AdminOptions(usage.Options):
    synopsis = ("ban <name|address> [<n>m|<n>h|<n>d|forever] [reason] | unban <name|address> | "
                "bans | password <name> | rename <name> <new name> | delete <name> | log [n] | "
                "bot <name> yes|no")
    longdesc = ("Administer the database of a stopped or running server (the one "
                "--config/--data-dir/--database select). `password` reads the new password "
                "from the terminal, or one line of standard input. `rename` and `delete` "
                "refuse an account that is logged in, unless --force.")
    optFlags = [
        ["force", None, "rename or delete even an account the database shows logged in "
                        "(only when no server runs: it stopped without recording a logout)"],
    ]

    def parseArgs(self, *words: str) -> None:
        if not words:
            raise usage.UsageError("which admin operation?")
        self["words"] = list(words)


def run_admin(settings: Settings, options: AdminOptions, stdin: TextIO | None = None,
              out: TextIO | None = None) -> int:
    """Run one operation; 0 when done, 1 when refused (the reason is printed)."""
    stdin, out = stdin or sys.stdin, out or sys.stdout
    operation, *words = options["words"]
    if operation in SERVER_ONLY:
        print(f"fibsd admin: '{operation}' needs the running server: log in as an account "
              "listed in admins and type 'admin " + operation + " ...'", file=sys.stderr)
        return 1
    found = OPERATIONS.get(operation)
    if found is None:
        print(f"fibsd admin: unknown operation '{operation}'\n{options}", file=sys.stderr)
        return 2
    if not is_postgres_url(settings.database) and not Path(settings.database).is_file():
        print(f"fibsd admin: no database at {settings.database}", file=sys.stderr)
        return 1
    try:
        store = open_store(settings.database)
    except DatabaseUnavailable as error:
        print(f"fibsd admin: cannot open the database: {masked(str(error), settings.database)}",
              file=sys.stderr)
        return 1
    try:
        if operation in ACCOUNT_CHANGES and words and not options["force"]:
            _refuse_if_logged_in(store, operation, words[0])
        print(found(store, settings, words, stdin), file=out)
        return 0
    except AdminUsage as problem:
        print(f"fibsd admin: {problem}", file=sys.stderr)
        return 1
    finally:
        store.close()


Operation = Callable[[Store, Settings, list[str], TextIO], str]
ACCOUNT_CHANGES = ("rename", "delete")


def _refuse_if_logged_in(store: Store, operation: str, name: str) -> None:
    """Raise ``AdminUsage`` if the database shows ``name`` logged in (a logout in the
    same second as the login counts as logged out)."""
    record = store.get_user(name)
    if record is None or record.last_login is None:
        return
    if record.last_logout is not None and record.last_logout >= record.last_login:
        return
    raise AdminUsage(
        f"{name} is logged in (since {clip.format_date(record.last_login)}): type "
        f"'admin {operation} {name} ...' in the server (it kicks him first); if no server "
        f"is running, add --force (fibsd admin --force {operation} ...)")



def _record(store: Store, action: str, target: str = "", detail: str = "") -> None:
    _log.info("admin {admin}: {action} {target} {detail}", event="admin", admin=CONSOLE,
              action=action, target=target, detail=detail)
    store.log_admin(AdminAction(int(time.time()), CONSOLE, action, target, detail))


def ban(store: Store, settings: Settings, words: list[str], stdin: TextIO) -> str:
    request = parse_ban(words)
    now = int(time.time())
    until = None if request.seconds is None else now + request.seconds
    entry = Ban(request.kind, request.value, now, until, CONSOLE, request.reason)
    store.add_ban(entry)
    _record(store, "ban", f"{entry.kind} {entry.value}",
            f"{'forever' if until is None else f'until {until}'} {entry.reason}".strip())
    return f"Banned {ban_line(entry)}"


def unban(store: Store, settings: Settings, words: list[str], stdin: TextIO) -> str:
    if len(words) != 1:
        raise AdminUsage("usage: admin unban <name|address>")
    kind = target_kind(words[0])
    if not store.remove_ban(kind, words[0]):
        raise AdminUsage(f"There is no ban on {words[0]}.")
    _record(store, "unban", f"{kind} {words[0]}")
    return f"Lifted the ban on {words[0]}."


def bans(store: Store, settings: Settings, words: list[str], stdin: TextIO) -> str:
    found = store.bans(int(time.time()))
    return "\n".join(["Bans:", *map(ban_line, found)]) if found else "No bans."


def password(store: Store, settings: Settings, words: list[str], stdin: TextIO) -> str:
    from fibsd.server.passwords import hash_password_now

    if len(words) != 1:
        raise AdminUsage("usage: admin password <name> (the password is read, not given)")
    name = words[0]
    if store.get_user(name) is None:
        raise AdminUsage(f"There is no user {name}.")
    if stdin.isatty():
        new = getpass.getpass(f"New password for {name}: ")
        if getpass.getpass("Again: ") != new:
            raise AdminUsage("The two passwords differ.")
    else:
        new = stdin.readline().rstrip("\r\n")
    if password_problem(new) is not None:
        raise AdminUsage("A password needs 4 characters or more, no blank and no colon.")
    store.set_password_hash(name, hash_password_now(new, settings.passwords))
    store.revoke_tokens(name)  # his web session tokens (protocol/web.md, "Reconnecting")
    _record(store, "password", name)
    return f"Changed the password of {name}."


def rename(store: Store, settings: Settings, words: list[str], stdin: TextIO) -> str:
    if len(words) != 2:
        raise AdminUsage("usage: admin rename <name> <new name>")
    name, new = words
    problem = new_name_problem(new)
    if problem is not None:
        raise AdminUsage(problem)
    try:
        store.rename_user(name, new)
    except UnknownUser:
        raise AdminUsage(f"There is no user {name}.") from None
    except NameTaken:
        raise AdminUsage(f"The name {new} is taken.") from None
    _record(store, "rename", name, new)
    return f"Renamed {name} to {new}."


def delete(store: Store, settings: Settings, words: list[str], stdin: TextIO) -> str:
    if len(words) != 1:
        raise AdminUsage("usage: admin delete <name>")
    try:
        store.delete_user(words[0])
    except UnknownUser:
        raise AdminUsage(f"There is no user {words[0]}.") from None
    _record(store, "delete", words[0])
    return f"Deleted the account {words[0]}."


def log(store: Store, settings: Settings, words: list[str], stdin: TextIO) -> str:
    if words and not (words[0].isdigit() and 0 < int(words[0]) <= 100000):
        raise AdminUsage("usage: admin log [n]")
    actions = store.admin_log(int(words[0]) if words else 20)
    return "\n".join(["Admin log:", *map(action_line, actions)]) if actions else (
        "The admin log is empty.")


def bot(store: Store, settings: Settings, words: list[str], stdin: TextIO) -> str:
    """Mark an account as played by a program, or not (fibsd/server/commands/bots.py)."""
    if len(words) != 2 or words[1].lower() not in ("yes", "no"):
        raise AdminUsage("usage: admin bot <name> yes|no")
    name, value = words[0], words[1].lower() == "yes"
    try:
        store.set_bot(name, value)
    except UnknownUser:
        raise AdminUsage(f"There is no user {name}.") from None
    _record(store, "bot", name, words[1].lower())
    return f"{name} is {'now' if value else 'no longer'} marked as a bot."


OPERATIONS: dict[str, Operation] = {
    "ban": ban, "unban": unban, "bans": bans, "password": password, "rename": rename,
    "delete": delete, "log": log, "bot": bot,
}
