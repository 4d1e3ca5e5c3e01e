"""Information about the server: ``help``, ``show``, ``motd``, ``time`` (``date``),
``version`` and ``about`` (``stat``, which counts matches, is with the listings).

Help texts are files, one per topic (``config/help/<topic>.txt``), so they can be
edited without touching code.  ``show`` dispatches on its first word; other command
families add their own topics with ``@show_topic`` (``show games`` belongs to the
match commands).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fibsd import __version__
from fibsd.server.commands import command, command_names, resolve, user_of
from fibsd.server.commands.bots import help_lines
from fibsd.wire import clip

if TYPE_CHECKING:
    from fibsd.server.session import Session

ShowTopic = Callable[["Session", str], object]
SHOW_TOPICS: dict[str, ShowTopic] = {}
# A topic is a command word or a file name in help_dir: letters and _, short enough to
# be a file name on any file system (a longer one made is_file() raise OSError).
_TOPIC_NAME = re.compile(r"[a-z_]{1,64}")


def show_topic(name: str) -> Callable[[ShowTopic], ShowTopic]:
    """Register ``show <name>``; the function gets the words after the topic."""

    def register(function: ShowTopic) -> ShowTopic:
        SHOW_TOPICS[name] = function
        return function

    return register


def _help_file(help_dir: Path, topic: str) -> Path | None:
    topic = topic.lower()
    if not _TOPIC_NAME.fullmatch(topic):
        return None
    path = help_dir / f"{topic}.txt"
    if path.is_file():
        return path
    found = resolve(topic)
    if found is not None and (help_dir / f"{found.name}.txt").is_file():
        return help_dir / f"{found.name}.txt"
    return None


def _help_text(help_dir: Path, topic: str) -> str | None:
    """The text of ``help <topic>``, or None: whatever the topic, nothing raises (a help
    file that cannot be read is no help)."""
    try:
        path = _help_file(help_dir, topic)
        return None if path is None else path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None


@command("help")
def help_(session: Session, rest: str) -> None:
    words = rest.split()
    help_dir = Path(session.settings.help_dir)
    if not words:
        listing = textwrap.wrap("  ".join(command_names()), width=72)
        session.send("Commands:", *listing, "",
                     "Type 'help <command>' for more about one of them, "
                     "'help beginner' to get started.")
        return
    text = _help_text(help_dir, words[0])
    if text is None:
        session.send(f"** No help available on '{words[0]}'.")
        return
    lines = text.rstrip("\n").split("\n")
    if words[0].lower() == "bot":
        lines += help_lines(session)  # the site's resident bots
    session.send(*lines)


@command("motd")
def motd(session: Session, rest: str) -> None:
    box = session.services.motd
    if session.is_clip:
        session.send(*clip.format_motd(box))
    elif box:
        session.send(*box)


@command("show")
def show(session: Session, rest: str) -> object:
    words = rest.split()
    if not words:
        session.send("** show what?")
        return None
    topic = SHOW_TOPICS.get(words[0].lower())
    if topic is None:
        session.send(f"** Don't know how to show {words[0]}")
        return None
    return topic(session, " ".join(words[1:]))


@show_topic("watchers")
def show_watchers(session: Session, rest: str) -> None:
    session.send("Watching players:", *(
        f"{user.name} is watching {user.watching}."
        for user in session.lobby.users() if user.watching is not None))


@show_topic("max")
def show_max(session: Session, rest: str) -> None:
    online = len(session.lobby.online)
    session.send(f"max_logins is {online} (maximum: {session.settings.limits.max_users})")


# -- time, version, about (chat-and-social.md 16: free text) ----------------------------

@command("time")
def time_(session: Session, rest: str) -> None:
    """The banner's date line: the time in the user's ``set timezone``, then UTC."""
    zone = user_of(session).variables.get("timezone", "UTC")
    session.send(clip.format_banner_date(session.now(), zone))


@command("date")
def date(session: Session, rest: str) -> None:
    """FIBS: ``date`` is the same as ``time``."""
    time_(session, rest)


@command("version")
def version(session: Session, rest: str) -> None:
    session.send(clip.format_version(__version__))


@command("about")
def about(session: Session, rest: str) -> None:
    session.send(*clip.ABOUT)
