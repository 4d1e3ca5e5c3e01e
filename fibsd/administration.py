"""What the server's ``admin`` command and the operator's ``fibsd admin`` share: how
their arguments read and how bans are put in words.

A ban target is a user name (letters and ``_``) or an address (anything with a digit,
a dot or a colon: ``10.0.0.7``, ``2001:db8::1``).  A duration is a number with ``m``,
``h`` or ``d`` (``30m``, ``12h``, ``7d``) or ``forever``, the default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fibsd.store import AdminAction, Ban
from fibsd.wire import clip
from fibsd.wire.input import NameProblem, name_problem

_DURATION = re.compile(r"([1-9][0-9]{0,5})([mhd])")
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400}
CONSOLE = "console"  # the admin named in actions taken with ``fibsd admin``


class AdminUsage(ValueError):
    """Arguments an admin operation cannot use; the text says why."""


@dataclass(frozen=True)
class BanRequest:
    kind: str  # "name" or "address"
    value: str
    seconds: int | None  # None: until lifted
    reason: str


def target_kind(target: str) -> str:
    """``"name"`` for a user name, ``"address"`` for an address; AdminUsage else."""
    if name_problem(target) is None:
        return "name"
    if re.fullmatch(r"[0-9A-Fa-f.:]+", target) and any(c in target for c in ".:"):
        return "address"
    raise AdminUsage(f"'{target}' is neither a user name nor an address.")


def parse_ban(words: list[str]) -> BanRequest:
    """``<name|address> [duration] [reason ...]``."""
    if not words:
        raise AdminUsage("Usage: admin ban <name|address> [<n>m|<n>h|<n>d|forever] [reason]")
    target, rest = words[0], words[1:]
    seconds = None
    if rest and (rest[0] == "forever" or _DURATION.fullmatch(rest[0])):
        found = _DURATION.fullmatch(rest[0])
        if found is not None:
            seconds = int(found.group(1)) * _UNIT_SECONDS[found.group(2)]
        rest = rest[1:]
    return BanRequest(target_kind(target), target, seconds, " ".join(rest))


def new_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an account's new name, or None."""
    problem = name_problem(name)
    if problem is NameProblem.BAD_CHARACTERS or name.lower() == "guest":
        return f"'{name}' cannot be a user name (letters and _ only, not guest)."
    if problem is not None:
        return f"'{name}' is too long for a user name."
    return None


def banned_text(ban: Ban) -> str:
    """What a banned user is told (after ``** ``) before the connection closes."""
    until = "" if ban.until is None else f" until {clip.format_date(ban.until)}"
    return f"You are banned from this server{until}."


def ban_line(ban: Ban) -> str:
    """One line of ``admin bans``."""
    until = "until lifted" if ban.until is None else f"until {clip.format_date(ban.until)}"
    reason = f": {ban.reason}" if ban.reason else ""
    return f"{ban.kind} {ban.value} {until}, by {ban.admin}{reason}"


def action_line(action: AdminAction) -> str:
    """One line of ``admin log``."""
    words = " ".join(word for word in (action.target, action.detail) if word)
    return f"{clip.format_date(action.at)} {action.admin} {action.action} {words}".rstrip()
