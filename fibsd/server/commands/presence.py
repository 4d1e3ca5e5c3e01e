"""Who is here: ``who``, ``rawwho`` and ``whois``.

Client programs get who-info as CLIP ``5`` lines closed by a ``6`` (JavaFIBS sends a
plain ``who`` and waits for the ``6``); telnet users get FIBS's table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import maybeDeferred

from fibsd.server.access import shown_host
from fibsd.server.commands import command
from fibsd.server.commands.bots import whois_lines
from fibsd.server.user import OnlineUser
from fibsd.store import UserRecord
from fibsd.wire import chat, clip, fair_text

if TYPE_CHECKING:
    from fibsd.server.session import Session

_OPTIONS = frozenset({"ready", "away", "playing", "count", "from"})
WHO_USAGE = "** usage: who [ready | away | playing | count | from <host>]"
NAME_NEEDED = "** please give a name as an argument."

_SORT_KEYS: dict[str, Callable[[OnlineUser], Any]] = {
    "login": lambda user: user.login_time,
    "name": lambda user: user.name.lower(),
    "rating": lambda user: -user.rating,
    "rrating": lambda user: user.rating,
}


def _sorted(session: Session, users: Iterable[OnlineUser]) -> list[OnlineUser]:
    """In the order the viewer chose with ``set sortwho`` (stable: login order breaks ties)."""
    assert session.user is not None
    key = _SORT_KEYS.get(session.user.variables.get("sortwho", "login"), _SORT_KEYS["login"])
    return sorted(users, key=key)


def _show(session: Session, users: list[OnlineUser]) -> None:
    now = session.clock.seconds()
    if session.is_clip:
        session.send(*(u.who_line_for(session.user, now) for u in users), clip.WHO_END)
    else:
        session.send(clip.WHO_HEADER, *(
            clip.format_who_row(number, u.who_info(now, own=u is session.user))
            for number, u in enumerate(users, 1)))


@command("who", aliases=("w",))
def who(session: Session, rest: str) -> None:
    words = rest.split()
    users = _sorted(session, session.lobby.users())
    if not words:
        _show(session, users)
        return
    option = words[0].lower()
    if option == "count" and len(words) == 1:
        session.send(clip.format_user_count(len(users)))
    elif option == "ready" and len(words) == 1:
        _show(session, [u for u in users if u.ready and u.playing is None])
    elif option == "away" and len(words) == 1:
        _show(session, [u for u in users if u.away is not None])
    elif option == "playing" and len(words) == 1:
        _show(session, [u for u in users if u.playing is not None])
    elif option == "from" and len(words) == 2:
        part = words[1].lower()
        # Against what the viewer sees: a search must not reveal a hidden address.
        _show(session, [u for u in users if part in _host_seen(session, u).lower()])
    elif len(words) == 1 and option not in _OPTIONS:
        # fibs.com's rawwho help: rawwho takes "the same arguments as the who command";
        # bots (MatchDog) send `who <opponent>` and wait for his 5 line.
        found = session.lobby.complete(words[0])
        if found is None:
            session.send(chat.no_one_called(words[0]))
        else:
            _show(session, [found])
    else:
        session.send(WHO_USAGE)


@command("rawwho")
def rawwho(session: Session, rest: str) -> None:
    """CLIP who-info in either mode; an absent name gives just the closing ``6``."""
    words = rest.split()
    now = session.clock.seconds()
    if words:
        found = session.lobby.complete(words[0])
        users = [found] if found is not None else []
    else:
        users = _sorted(session, session.lobby.users())
    session.send(*(u.who_line_for(session.user, now) for u in users), clip.WHO_END)


def _host_seen(session: Session, user: OnlineUser) -> str:
    return user.host if user is session.user else user.shown_host


def _zone(session: Session) -> str:
    """The reader's ``set timezone``: whois dates are shown in it."""
    assert session.user is not None
    return session.user.variables.get("timezone", "UTC")


def _online_lines(session: Session, user: OnlineUser) -> list[str]:
    idle = clip.format_idle(max(0, int(session.clock.seconds() - user.last_active)))
    if user.playing is not None:
        doing = f"  {user.name} is playing with {user.playing}."
    elif user.watching is not None:
        doing = f"  {user.name} is watching {user.watching}."
    elif user.ready:
        doing = f"  {user.name} is ready to play, not watching, not playing."
    else:
        doing = f"  {user.name} is not ready to play, not watching, not playing."
    return [
        f"  Last login:  {clip.format_date(user.login_time, _zone(session))} from "
        f"{_host_seen(session, user)}",
        f"  Still logged in. {idle} minutes idle.",
        doing,
        *_rating_and_address(user.rating, user.experience, user.address),
    ]


def _offline_lines(session: Session, record: UserRecord, zone: str) -> list[str]:
    host = record.last_host
    if session.user is None or session.user.name != record.name:
        host = shown_host(host, session.settings.privacy.show_addresses)
    if record.last_login is not None:
        login = f"  Last login:  {clip.format_date(record.last_login, zone)} from {host}"
    else:
        login = "  Last login:  never"
    logout = ([f"  Last logout: {clip.format_date(record.last_logout, zone)}"]
              if record.last_logout is not None else [])
    return [login, *logout, "  Not logged in right now.",
            *_rating_and_address(record.rating, record.experience, record.address)]


def _rating_and_address(rating: float, experience: int, address: str) -> list[str]:
    """The last two whois lines; KBackgammon ends its whois block on the e-mail line."""
    return [f"  Rating: {rating:.2f} Experience: {experience}",
            f"  Email address: {address}" if address else "  No email address."]


@command("whois")
def whois(session: Session, rest: str) -> object:
    words = rest.split()
    if not words:
        session.send(NAME_NEEDED)
        return None
    online = session.lobby.complete(words[0])
    if online is not None:
        lines = [f"Information about {online.name}:", *_online_lines(session, online),
                 *whois_lines(session, online.name, online.bot)]
        return _with_reliability(session, online.name, lines)

    def show(record: UserRecord | None) -> object:
        if record is None:
            session.send(f"No information found on user {words[0]}.")
            return None
        lines = [f"Information about {record.name}:",
                 *_offline_lines(session, record, _zone(session)),
                 *whois_lines(session, record.name, record.bot)]
        return _with_reliability(session, record.name, lines)

    return session.db.get_user(words[0]).addCallback(show)


def _with_reliability(session: Session, name: str, lines: list[str]) -> object:
    """Send the whois lines, followed by the abandonment line where the site shows it
    (protocol/fair-dice.md): after FIBS's lines, so clients that stop reading at the
    e-mail line lose nothing of FIBS's."""
    if not session.settings.fair.reliability:
        session.send(*lines)
        return None

    def send(counts: tuple[int, int, int]) -> None:
        abandoned, adjudicated, finished = counts
        matches = finished - adjudicated + abandoned
        session.send(*lines, fair_text.reliability(abandoned, matches))

    return maybeDeferred(session.db.reliability, name).addCallback(send)
