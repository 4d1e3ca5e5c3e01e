"""A user's toggles and ``set`` variables, and every line FIBS prints about them.

Clients track toggle state by matching the confirmation sentences (FIBS Cookie Monster
turns them into ``FIBS_<Toggle>True/False`` cookies), so the texts below are fixed
sentences, typos included: the ``allowpip`` YES text really lacks the word "of".
The two listings are matched with ``^<name> +YES`` and ``^boardstyle:`` style patterns,
so their padding is blanks only, never tabs.

Defaults are those of a fresh fibs.com account (own-info line of July 2020).
``telnet`` defaults to YES here; the session overrides it at every login from the
login mode, since a CLIP login means a client program.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from fibsd.rules.clock import ClockSpec, InvalidClock, format_spec


@dataclass(frozen=True)
class Toggle:
    name: str
    default: bool
    on_text: str
    off_text: str

    def confirmation(self, value: bool) -> str:
        """The single line FIBS answers after the toggle became ``value``."""
        return self.on_text if value else self.off_text


def _toggles(*rows: tuple[str, bool, str, str]) -> dict[str, Toggle]:
    return {name: Toggle(name, default, on, off) for name, default, on, off in rows}


TOGGLES: dict[str, Toggle] = _toggles(
    ("allowpip", True,
     "** You allow the use the server's 'pip' command.",
     "** You don't allow the use of the server's 'pip' command."),
    ("autoboard", True,
     "** The board will be refreshed after every move.",
     "** The board won't be refreshed after every move."),
    ("autodouble", False,
     "** You agree that doublets during opening double the cube.",
     "** You don't agree that doublets during opening double the cube."),
    ("automove", False,
     "** Forced moves will be done automatically.",
     "** Forced moves won't be done automatically."),
    ("bell", False,
     "** Your terminal will ring the bell if someone talks to you or invites you",
     "** Your terminal won't ring the bell if someone talks to you or invites you"),
    ("crawford", True,
     "** You insist on playing with the Crawford rule.",
     "** You would like to play without using the Crawford rule."),
    ("double", True,
     "** You will be asked if you want to double.",
     "** You won't be asked if you want to double."),
    ("greedy", False,
     "** Will use automatic greedy bearoffs.",
     "** Won't use automatic greedy bearoffs."),
    ("moreboards", True,
     "** Will send rawboards after rolling.",
     "** Won't send rawboards after rolling."),
    ("moves", False,
     "** You want a list of moves after this game.",
     "** You won't see a list of moves after this game."),
    ("notify", True,
     "** You'll be notified when new users log in.",
     "** You won't be notified when new users log in."),
    ("ratings", False,
     "** You'll see how the rating changes are calculated.",
     "** You won't see how the rating changes are calculated."),
    ("ready", False,
     "** You're now ready to invite or join someone.",
     "** You're now refusing to play with someone."),
    ("report", True,
     "** You will be informed about starting and ending matches.",
     "** You won't be informed about starting and ending matches."),
    ("silent", False,
     "** You won't hear what other players shout.",
     "** You will hear what other players shout."),
    ("telnet", True,
     "** You use telnet and don't need extra 'newlines'.",
     "** You use a client program and will receive extra 'newlines'."),
    ("wrap", False,
     "** Your terminal knows how to wrap long lines.",
     "** The server will wrap long lines."),
)

# Names that reach a toggle although they are not a unique prefix, as FIBS resolves
# command words (protocol/settings.md "Abbreviations"): the old name ``autoroll`` from
# the FIBS help of the 1990s, and the fixed short form ``r`` for ``ready`` (as ``r`` is
# ``roll`` among the commands; bots written against fibs.com send ``toggle r`` to flip
# their ready state at the end of every match).
TOGGLE_ALIASES: dict[str, str] = {"autoroll": "double", "r": "ready"}

# Reset at the start of every game, without a confirmation line.
PER_GAME_TOGGLES: dict[str, bool] = {"double": True, "greedy": False, "moves": False}


def default_toggles() -> dict[str, bool]:
    return {name: toggle.default for name, toggle in TOGGLES.items()}


def _unique_prefix(word: str, names: Iterable[str]) -> str | None:
    """FIBS's abbreviation rule: an exact name wins, else a prefix of exactly one name."""
    word = word.lower()
    names = list(names)
    if word in names:
        return word
    matches = [name for name in names if name.startswith(word)]
    return matches[0] if len(matches) == 1 and word else None


def resolve_toggle(word: str) -> Toggle | None:
    """The toggle ``toggle <word>`` means, or None (unknown or ambiguous)."""
    alias = TOGGLE_ALIASES.get(word.lower())
    if alias is not None:
        return TOGGLES[alias]
    name = _unique_prefix(word, TOGGLES)
    return TOGGLES[name] if name is not None else None


def format_unknown_toggle(word: str) -> str:
    return f"** Don't know how to toggle {word}"


def format_toggle_listing(toggles: Mapping[str, bool]) -> list[str]:
    """The reply to a bare ``toggle``: names padded with blanks to 16 columns."""
    return ["The current settings are:"] + [
        f"{name:<16}{'YES' if toggles[name] else 'NO'}" for name in TOGGLES
    ]


# --- set variables ---------------------------------------------------------------

VARIABLES: dict[str, str] = {
    "boardstyle": "3",
    "linelength": "0",
    "pagelength": "0",
    "redoubles": "none",
    "sortwho": "login",
    "timezone": "UTC",
    # fibsd's own: a line when one's match analysis is ready (protocol/analysis-command.md).
    # Not in the listing, which stays FIBS's six lines that clients match one by one.
    "analysis": "on",
}
LISTED = ("boardstyle", "linelength", "pagelength", "redoubles", "sortwho", "timezone")

SORTWHO_VALUES = ("login", "name", "rating", "rrating")
INVALID_VARIABLE = "** Invalid argument. Type 'help set'."


class InvalidValue(ValueError):
    """``set <variable> <value>`` with a value FIBS refuses; ``reply`` is what it prints."""

    def __init__(self, variable: str, value: str, reply: tuple[str, ...]) -> None:
        super().__init__(variable, value)
        self.variable = variable
        self.value = value
        self.reply = reply


def default_variables() -> dict[str, str]:
    return dict(VARIABLES)


def resolve_variable(word: str) -> str | None:
    """The variable ``set <word>`` means, or None (unknown or ambiguous)."""
    return _unique_prefix(word, VARIABLES)


def _number(text: str, low: int, high: int) -> int | None:
    if not text.isascii() or not text.isdigit():
        return None
    number = int(text)
    return number if low <= number <= high else None


@cache
def known_timezones() -> tuple[str, ...]:
    """Time-zone database names, sorted; UTC alone where no database is installed."""
    zones = zoneinfo.available_timezones() | {"UTC"}
    return tuple(sorted(zones))


def _timezone_error(value: str) -> tuple[str, ...]:
    lines = [f"** Can't find timezone '{value}'. Try one of:"]
    current = ""
    for zone in known_timezones():
        if current and len(current) + 1 + len(zone) > 79:
            lines.append(current)
            current = zone
        else:
            current = f"{current} {zone}" if current else zone
    lines.append(current)
    return tuple(lines)


def parse_variable(name: str, value: str) -> str:
    """The canonical stored text for ``set <name> <value>``; raises InvalidValue."""
    if name == "boardstyle":
        number = _number(value, 1, 3)
        reply = "** Valid arguments are the numbers 1 to 3."
    elif name in ("linelength", "pagelength"):
        number = _number(value, 0, 999)
        reply = f"** Valid arguments are the numbers 0 to 999. Use 0 for no {name}."
    elif name == "redoubles":
        if value.lower() in ("none", "unlimited"):
            return value.lower()
        number = _number(value, 1, 99)
        reply = "** Valid arguments are 'none', 'unlimited' and the numbers 1 to 99."
    elif name == "sortwho":
        if value.lower() in SORTWHO_VALUES:
            return value.lower()
        raise InvalidValue(name, value, (
            f"** Unknown value '{value}'. Try 'login', 'name', 'rating' or 'rrating'.",))
    elif name == "analysis":
        if value.lower() in ("on", "off"):
            return value.lower()
        raise InvalidValue(name, value, ("** Valid arguments are 'on' and 'off'.",))
    elif name == "timezone":
        by_lower = {zone.lower(): zone for zone in known_timezones()}
        if value.lower() in by_lower:
            return by_lower[value.lower()]
        raise InvalidValue(name, value, _timezone_error(value))
    else:
        raise KeyError(name)
    if number is None:
        raise InvalidValue(name, value, (reply,))
    return str(number)


def format_variable_set(name: str, value: str) -> str:
    """Confirmation of a change; ``none``/``unlimited`` are quoted, numbers are not."""
    shown = f"'{value}'" if name == "redoubles" and not value.isdigit() else value
    return f"Value of '{name}' set to {shown}."


def format_variable_value(name: str, value: str) -> str:
    """The reply to ``set <variable>``; FIBS prints no final period here."""
    return f"Value of '{name}' is {value}"


def format_variable_listing(variables: Mapping[str, str]) -> list[str]:
    """The reply to a bare ``set``: ``<name>:`` padded to 11 columns, a blank, the value."""
    return ["Settings of variables:"] + [
        f"{name + ':':<11} {variables[name]}" for name in LISTED
    ]


def redoubles_clip_field(value: str) -> str:
    """Field 18 of the CLIP own-info line: ``0`` for none, else the number or ``unlimited``."""
    return "0" if value == "none" else value


# --- persistence -------------------------------------------------------------------

def toggles_to_text(toggles: Mapping[str, bool], variables: Mapping[str, str]) -> dict[str, str]:
    """The store's settings dict: ``toggle.<name>`` -> ``1``/``0``, ``set.<name>`` -> value."""
    text = {f"toggle.{name}": "1" if toggles[name] else "0" for name in TOGGLES}
    text.update({f"set.{name}": variables[name] for name in VARIABLES})
    if "clock" in variables:  # kept apart from FIBS's listing (protocol/clock.md)
        text["set.clock"] = variables["clock"]
    return text


def toggles_from_text(
    text: Mapping[str, str], variable_defaults: Mapping[str, str] | None = None,
) -> tuple[dict[str, bool], dict[str, str]]:
    """Toggles and variables from the store; missing or unreadable entries get defaults.

    ``variable_defaults`` replaces FIBS's variable defaults (a site's choice for new
    accounts, e.g. ``boardstyle``).  Lenient on purpose: an account saved by an older
    server version, or edited by hand, must still log in.
    """
    toggles = default_toggles()
    for name in TOGGLES:
        stored = text.get(f"toggle.{name}")
        if stored in ("0", "1"):
            toggles[name] = stored == "1"
    variables = default_variables()
    for name, value in (variable_defaults or {}).items():
        variables[name] = parse_variable(name, value)
    for name in VARIABLES:
        stored = text.get(f"set.{name}")
        if stored is None:
            continue
        try:
            variables[name] = parse_variable(name, stored)
        except InvalidValue:
            pass
    clock = text.get("set.clock")
    if clock is not None:
        try:
            variables["clock"] = format_spec(ClockSpec.parse(clock))
        except InvalidClock:
            pass
    return toggles, variables


# --- address and password ----------------------------------------------------------

ADDRESS_MISSING = "** You didn't give your address."
PASSWORD_CHANGED = "Password changed."
PASSWORD_USAGE = (
    "** usage: password <old password>:<new password>:<new password>",
    "** NOTE: The character between the passwords is now a colon!",
)
OLD_PASSWORD_WRONG = "** Sorry. Old password not correct."
NEW_PASSWORD_TWICE = "** Please give your new password twice."
PASSWORD_TOO_SHORT = "** Minimal password length is 4 characters."
PASSWORD_BLANK = "** Your password may not contain blanks."


def is_email_address(text: str) -> bool:
    """FIBS checked little; refuse only what breaks the CLIP 5 line or is plainly no address.

    >>> is_email_address("ann@example.org"), is_email_address("http://foobar")
    (True, False)
    """
    printable = all("!" <= c <= "~" for c in text)
    return printable and "@" in text and "://" not in text


def format_address_set(address: str) -> str:
    return f"Your email address is '{address}'."


def format_not_an_address(text: str) -> str:
    return f"** '{text}' is not an email address."
