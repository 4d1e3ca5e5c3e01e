"""The command registry: every command a logged-in user can type, found by FIBS's rules.

A command module registers its commands with ``@command`` at import time; this package
imports every module named in ``FAMILIES`` (at the end of this file).  ``resolve``
applies FIBS's abbreviation rules: the exact name, one of FIBS's fixed short forms
(``t`` is tell although ``toggle`` also starts with ``t``), or a prefix of exactly one
command.  Prefixes are judged against every FIBS command word, implemented here or not,
so an abbreviation never means something here that it would not mean on FIBS
(``re`` stays ambiguous between reject, resign and redouble).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from fibsd.server.user import OnlineUser

# The registry hands a command its session (``fibsd.server.session.Session``) and
# needs nothing of it.
Run = Callable[[Any, str], object]
F = TypeVar("F", bound=Run)


@dataclass(frozen=True)
class Command:
    name: str  # the full FIBS command word, lower case
    run: Run  # (session, rest of the line); may return a Deferred
    aliases: tuple[str, ...] = ()  # FIBS's fixed short forms
    # Only for the accounts in ``admins``: matched by its exact word, never listed, and
    # to anyone else an unknown command, so stock clients see exactly what FIBS does.
    admin_only: bool = False


COMMANDS: dict[str, Command] = {}
_ALIASES: dict[str, Command] = {}

# FIBS command words that no module implements yet; they take part in prefix matching.
FIBS_WORDS = frozenset({
    "about", "accept", "address", "average", "away", "back", "beaver", "blind", "board",
    "bye", "cls", "dicetest", "double", "gag", "help", "invite", "join", "kibitz", "last",
    "leave", "look", "matrix", "message", "motd", "move", "off", "oldboard", "oldmoves",
    "password", "pip", "quit", "ratings", "rawboard", "rawwho", "redouble", "reject",
    "resign", "roll", "say", "set", "shout", "show", "stat", "tell", "tellx", "time",
    "toggle", "unwatch", "version", "waitfor", "watch", "wave", "whisper", "who", "whois",
})


def command(name: str, *, aliases: tuple[str, ...] = (),
            admin_only: bool = False) -> Callable[[F], F]:
    """Register the decorated function as the command ``name``."""

    def register(run: F) -> F:
        entry = Command(name, run, aliases, admin_only)
        if name in COMMANDS or any(alias in _ALIASES for alias in aliases):
            raise ValueError(f"command {name!r} or one of its aliases is registered twice")
        COMMANDS[name] = entry
        for alias in aliases:
            _ALIASES[alias] = entry
        return run

    return register


def resolve(word: str) -> Command | None:
    """The command ``word`` means, or None (unknown or ambiguous)."""
    word = word.lower()
    if not word:
        return None
    found = COMMANDS.get(word) or _ALIASES.get(word)
    if found is not None:
        return found
    candidates = [name for name in FIBS_WORDS | COMMANDS.keys()
                  if name.startswith(word) and not (name in COMMANDS and COMMANDS[name].admin_only)]
    if len(candidates) == 1:
        return COMMANDS.get(candidates[0])
    return None


def command_words() -> frozenset[str]:
    """Every FIBS command word and every command fibsd has: no user may be named so
    (``help <name>``, ``tell <name>`` and the like must keep one meaning)."""
    return FIBS_WORDS | COMMANDS.keys()


class Typist(Protocol):
    """The session a command is typed on, as ``user_of`` reads it."""

    user: OnlineUser | None


def user_of(session: Typist) -> OnlineUser:
    """The user typing a command: commands run only once the session is logged in."""
    assert session.user is not None
    return session.user


def command_names() -> list[str]:
    """The commands ``help`` lists: every one but the administrators'."""
    return sorted(name for name, entry in COMMANDS.items() if not entry.admin_only)


FAMILIES = ("account", "presence", "info", "social", "settings", "play", "watching", "listings",
            "admin", "archive", "fair", "analysis", "clock", "bots")

for _family in FAMILIES:
    importlib.import_module(f"{__name__}.{_family}")
