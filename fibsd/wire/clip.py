"""CLIP lines 1-8 (login and presence) and the sentences telnet users get instead.

Client programs read these lines with regular expressions anchored at column 0 (FIBS
Cookie Monster and its descendants), so the rules are strict: the code, one blank,
fields separated by single blanks; ``3``, ``4`` and ``6`` are alone on their line;
names never contain digits.  Chat lines 9-19 live in ``fibsd.wire.chat``.
"""

from __future__ import annotations

import datetime
import zoneinfo
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fibsd.wire.settings import redoubles_clip_field

MOTD_START = "3"
MOTD_END = "4"
WHO_END = "6"

# Field order of the CLIP 2 own-info line after the name; "away" is not a toggle.
_OWN_INFO_TOGGLES = (
    "allowpip", "autoboard", "autodouble", "automove", "away", "bell", "crawford", "double",
    "experience", "greedy", "moreboards", "moves", "notify", "rating", "ratings", "ready",
    "redoubles", "report", "silent", "timezone",
)


def _flag(value: bool) -> str:
    return "1" if value else "0"


def format_welcome(name: str, last_login: int, last_host: str) -> str:
    """CLIP 1.  The host must never be empty: FCM needs a blank after the time.

    >>> format_welcome("myself", 1041253132, "192.168.1.308")
    '1 myself 1041253132 192.168.1.308'
    """
    return f"1 {name} {last_login} {last_host or '-'}"


def format_own_info(
    name: str,
    toggles: Mapping[str, bool],
    variables: Mapping[str, str],
    rating: float,
    experience: int,
    away: bool = False,
) -> str:
    """CLIP 2: twenty fields in FIBS's order (telnet, wrap and most variables absent).

    >>> from fibsd.wire.settings import default_toggles, default_variables
    >>> format_own_info("jonathanballs", default_toggles(), default_variables(), 1500, 0)
    '2 jonathanballs 1 1 0 0 0 0 1 1 0 0 1 0 1 1500.00 0 0 0 1 0 UTC'
    """
    fields = []
    for field in _OWN_INFO_TOGGLES:
        if field == "away":
            fields.append(_flag(away))
        elif field == "experience":
            fields.append(str(experience))
        elif field == "rating":
            fields.append(f"{rating:.2f}")
        elif field == "redoubles":
            fields.append(redoubles_clip_field(variables["redoubles"]))
        elif field == "timezone":
            fields.append(variables["timezone"])
        else:
            fields.append(_flag(toggles[field]))
    return f"2 {name} " + " ".join(fields)


MOTD_WIDTH = 64  # text columns inside the 70-column box


def format_motd_box(text: str) -> list[str]:
    """The message of the day framed as on fibs.com: 70 columns, ``|`` sides.

    >>> box = format_motd_box("Hello.")
    >>> box[:3] == ["+" + "-" * 68 + "+", "|" + " " * 68 + "|", "|  Hello." + " " * 60 + "|"]
    True
    """
    rule = "+" + "-" * 68 + "+"
    empty = "|" + " " * 68 + "|"
    body = [f"|  {line[:MOTD_WIDTH].rstrip():<66}|" for line in text.rstrip().splitlines()]
    return [rule, empty, *body, empty, rule, ""]


def format_motd(lines: Iterable[str]) -> list[str]:
    """CLIP 3, the MOTD (box and empty line), CLIP 4 and the empty line FIBS sends
    before the who list."""
    return [MOTD_START, *lines, MOTD_END, ""]


@dataclass(frozen=True)
class WhoInfo:
    """Everything the CLIP 5 line and the telnet ``who`` table say about one user."""

    name: str
    opponent: str | None
    watching: str | None
    ready: bool
    away: bool
    rating: float
    experience: int
    idle: int  # seconds since the last command
    login: int  # Unix time of this login
    host: str
    client: str | None  # the client word of a CLIP login, None on telnet
    email: str  # "" when none


def format_who_info(info: WhoInfo) -> str:
    """CLIP 5.  An opponent and a watched player are never both shown (FCM has no
    pattern for that); the opponent wins.

    >>> format_who_info(WhoInfo("bonehead", "Noah", None, True, False, 2093.333, 316317,
    ...                         139, 1591321090, "grid9.example.net", None, ""))
    '5 bonehead Noah - 1 0 2093.33 316317 139 1591321090 grid9.example.net - -'
    """
    head, tail = who_info_parts(info)
    return f"{head} {info.idle} {tail}"


def who_info_parts(info: WhoInfo) -> tuple[str, str]:
    """The CLIP 5 line before and after its idle field: the server keeps them per user
    and only splices the idle time in, since every CLIP login lists every user."""
    watching = None if info.opponent else info.watching
    return (
        f"5 {info.name} {info.opponent or '-'} {watching or '-'} {_flag(info.ready)} "
        f"{_flag(info.away)} {info.rating:.2f} {info.experience}",
        f"{info.login} {info.host or '-'} {info.client or '-'} {info.email or '-'}",
    )


# --- login and logout notices (CLIP 7 and 8; telnet: the text alone) ----------------

def logs_in(name: str) -> str:
    return f"{name} logs in."


def logs_in_again(name: str) -> str:
    return f"{name} logs in again."


def just_registered(name: str) -> str:
    return f"{name} just registered and logs in."


def logs_out(name: str) -> str:
    return f"{name} logs out."


def drops_connection(name: str) -> str:
    return f"{name} drops connection."


def timed_out(name: str) -> str:
    return f"Connection with {name} timed out."


# What every connection is told when the server stops (error lines, without their
# ``** ``); clients match FIBS's own words, name included (between-games.md 6.2).
SHUTDOWN = (
    "System administrator causes shutdown. FIBS is terminating.",
    "All running games will be saved.",
    "It will be back when the computer is rebooted.",
)


def closed_old_connection(name: str) -> str:
    return f"Closed old connection with user {name}."


def format_login(name: str, text: str) -> str:
    """CLIP 7, e.g. ``7 HALIS HALIS logs in.``"""
    return f"7 {name} {text}"


def format_logout(name: str, text: str) -> str:
    """CLIP 8, e.g. ``8 Barger Connection with Barger timed out.``"""
    return f"8 {name} {text}"


# --- telnet-mode presence texts --------------------------------------------------------

def format_date(timestamp: int, zone: str = "UTC") -> str:
    """A ctime-style date in the reader's ``set timezone`` zone, ended by the zone's
    abbreviation, as used by ``** Last login:`` and ``whois``.

    >>> format_date(1593792267)
    'Fri Jul  3 16:04:27 2020 UTC'
    >>> format_date(1593792267, "Europe/Stockholm")
    'Fri Jul  3 18:04:27 2020 CEST'
    """
    when = _local_time(timestamp, zone)
    return f"{when:%a %b} {when.day:2d} {when:%H:%M:%S %Y %Z}"


def _local_time(timestamp: int, zone: str) -> datetime.datetime:
    """``timestamp`` in ``zone`` (its ``%Z`` is the zone's abbreviation, ``UTC`` for UTC)."""
    where = datetime.timezone.utc if zone == "UTC" else zoneinfo.ZoneInfo(zone)
    return datetime.datetime.fromtimestamp(timestamp, where)


def format_idle(seconds: int) -> str:
    """Idle time as FIBS shows it: minutes and seconds, ``2:12``."""
    return f"{seconds // 60}:{seconds % 60:02d}"


WHO_HEADER = "No  S  username        rating  exp login    idle  from"


def format_who_row(number: int, info: WhoInfo) -> str:
    """One row of the telnet ``who`` table.

    Status columns: ``P`` playing, ``R`` ready, ``-`` neither; ``W`` watching; ``A`` away.

    >>> format_who_row(23, WhoInfo("BlunderBot_XI", "x", None, True, False, 1515.82, 10025,
    ...                            4, 1593792540, "47.199.51.61", None, ""))
    '23 P   BlunderBot_XI  1515.82 10025 16:09  0:04 47.199.51.61'
    """
    status = ("P" if info.opponent else "R" if info.ready else "-") + (
        "W" if info.watching and not info.opponent else " ") + ("A" if info.away else " ")
    login = datetime.datetime.fromtimestamp(info.login, datetime.timezone.utc)
    return (
        f"{number:2d} {status} {info.name:<14} {info.rating:7.2f} {info.experience:5d} "
        f"{login:%H:%M}{format_idle(info.idle):>6} {info.host}"
    )


def format_user_count(count: int) -> str:
    """FIBS's sentence is only known in the plural; one user gets the singular."""
    if count == 1:
        return "There is 1 user logged on."
    return f"There are {count} users logged on."


# --- before login -------------------------------------------------------------------------

BANNER = (
    "",
    "WELCOME TO fibsd, A SERVER FOR THE FIBS BACKGAMMON PROTOCOL",
    "",
    "      This server is on the net to meet people from all countries.",
    "       Rude language will not be tolerated on this server. Be nice.",
    "",
    "            LOGIN AS guest IF YOU ARE NEW TO THIS SERVER!",
    "                   One account per person only!",
    "",
)


def format_banner_date(timestamp: int, zone: str = "UTC") -> str:
    """The date line above the first ``login:`` prompt, and the answer to ``time``:
    the time in ``zone`` (the server's, or the user's ``set timezone``), then UTC
    in parentheses (no client parses it).

    >>> format_banner_date(1593792267)
    'Friday, July 03 16:04:27 UTC   ( Fri Jul  3 16:04:27 2020 UTC )'
    >>> format_banner_date(1593792267, "Europe/Stockholm")
    'Friday, July 03 18:04:27 CEST   ( Fri Jul  3 16:04:27 2020 UTC )'
    """
    when = _local_time(timestamp, zone)
    return f"{when:%A, %B %d %H:%M:%S %Z}   ( {format_date(timestamp)} )"


# --- time, version, about, stat -------------------------------------------------------------

ABOUT = (
    "This is fibsd, an open-source backgammon server that speaks the line protocol of",
    "FIBS, the First Internet Backgammon Server (1992-), and its client protocol CLIP,",
    "so FIBS client programs and bots connect to it unchanged. Every move is checked by",
    "a rules engine; matches are rated with the FIBS rating formula.",
    "Type 'help' for the commands, 'help beginner' to get started.",
)


def format_version(version: str) -> str:
    """FIBS's wording is unknown (free text for every client); it starts with a letter.

    >>> format_version("0.1.0")
    'fibsd version 0.1.0, a FIBS-compatible backgammon server (CLIP 1008).'
    """
    return f"fibsd version {version}, a FIBS-compatible backgammon server (CLIP 1008)."


def format_stat(registered: int, online: int, matches: int) -> list[str]:
    """``stat``: the one FIBS line fibsd can fill (FCM ``^[0-9]+ registered users.``),
    then fibsd's own lines, each starting with a word.

    >>> format_stat(12, 3, 1)
    ['12 registered users.', 'Users logged in: 3', 'Matches being played: 1']
    """
    return [f"{registered} registered users.", f"Users logged in: {online}",
            f"Matches being played: {matches}"]
