"""A user's own preferences: toggle, set, address, password.

Texts, defaults and validation are in ``fibsd.wire.settings``; here they are applied
to the online user, saved at once (a crash must not lose a change) and, where the
change is visible in who-info (``ready``, the address), pushed to the CLIP users.
FIBS has no one-word commands for single toggles, so none are registered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fibsd.rules.clock import ClockSpec, InvalidClock, format_spec
from fibsd.server import tokens
from fibsd.server.clocks import chosen_clock
from fibsd.server.commands import command, user_of
from fibsd.server.commands.bots import set_bot
from fibsd.server.ratelimit import allow
from fibsd.store import UserRecord
from fibsd.wire import chat, clock_text
from fibsd.wire import settings as texts
from fibsd.wire.input import PasswordProblem, password_problem

if TYPE_CHECKING:
    from fibsd.server.session import Session

# Toggles shown in the CLIP 5 who-info line.
_WHO_TOGGLES = frozenset({"ready"})


@command("toggle", aliases=("to",))
def toggle(session: Session, rest: str) -> object:
    user = user_of(session)
    words = rest.split()
    if not words:
        session.send(*texts.format_toggle_listing(user.toggles))
        return None
    if not allow(session, "toggles_per_minute"):
        session.send(chat.command_flood("toggle"))
        return None
    changed = False
    for word in words:
        found = texts.resolve_toggle(word)
        if found is None:
            session.send(texts.format_unknown_toggle(word))
            continue
        value = not user.toggles[found.name]
        user.set_toggles({found.name: value})
        changed = True
        session.send(found.confirmation(value))
        if found.name == "report":
            session.lobby.report_toggled(user)
        if found.name in _WHO_TOGGLES:
            session.lobby.broadcast_who(user)
    return user.save_settings() if changed else None


@command("set")
def set_variable(session: Session, rest: str) -> object:
    user = user_of(session)
    words = rest.split()
    if not words:
        session.send(*texts.format_variable_listing(user.variables))
        return None
    if words[0].lower() == "bot":  # its full word only (fibsd/server/commands/bots.py)
        return set_bot(session, words[1:])
    if words[0].lower() == "clock" and session.settings.clock.enabled:
        return _set_clock(session, words[1:])
    name = texts.resolve_variable(words[0])
    if name is None:
        session.send(texts.INVALID_VARIABLE)
        return None
    if len(words) == 1:
        session.send(texts.format_variable_value(name, user.variables[name]))
        return None
    try:
        value = texts.parse_variable(name, words[1])
    except texts.InvalidValue as invalid:
        session.send(*invalid.reply)
        return None
    if not allow(session, "sets_per_minute"):
        session.send(chat.command_flood("set"))
        return None
    user.set_variables({name: value})
    session.send(texts.format_variable_set(name, value))
    return user.save_settings()


def _set_clock(session: Session, words: list[str]) -> object:
    """``set clock [DELAY+RESERVE|off]``: apart from FIBS's variables, so that a bare
    ``set`` lists exactly FIBS's (protocol/clock.md)."""
    user = user_of(session)
    if not words:
        session.send(clock_text.clock_value(chosen_clock(user)))
        return None
    try:
        spec = ClockSpec.parse(words[0])
    except InvalidClock:
        session.send(clock_text.CLOCK_USAGE)
        return None
    if not allow(session, "sets_per_minute"):
        session.send(chat.command_flood("set"))
        return None
    user.set_variables({"clock": format_spec(spec)})
    session.send(clock_text.clock_set(spec))
    return user.save_settings()


@command("address")
def address(session: Session, rest: str) -> object:
    user = user_of(session)
    words = rest.split()
    if not words:
        session.send(texts.ADDRESS_MISSING)
        return None
    given = words[0]
    if not texts.is_email_address(given):
        session.send(texts.format_not_an_address(given))
        return None
    user.address = given
    session.send(texts.format_address_set(given))
    session.lobby.broadcast_who(user)
    return session.db.set_address(user.name, given)


@command("password")
def password(session: Session, rest: str) -> object:
    """``password <old>:<new>:<new>``; argon2 runs off the reactor thread."""
    user = user_of(session)
    parts = rest.strip().split(":")
    if len(parts) != 3 or not all(parts):
        session.send(*texts.PASSWORD_USAGE)
        return None
    old, new, again = parts
    hasher = session.services.passwords

    def check(record: UserRecord | None) -> object:
        if record is None:  # the account vanished meanwhile: nothing to compare with
            session.send(texts.OLD_PASSWORD_WRONG)
            return None
        return hasher.verify(old, record.password_hash).addCallback(decide)

    def decide(right: bool) -> object:
        if not right:
            session.send(texts.OLD_PASSWORD_WRONG)
        elif new != again:
            session.send(texts.NEW_PASSWORD_TWICE)
        elif password_problem(new) is PasswordProblem.BLANK:
            session.send(texts.PASSWORD_BLANK)
        elif password_problem(new) is not None:  # too short: colons split the parts
            session.send(texts.PASSWORD_TOO_SHORT)
        else:
            return hasher.hash(new).addCallback(store)
        return None

    def store(password_hash: str) -> object:
        return session.db.set_password_hash(user.name, password_hash).addCallback(
            lambda _: tokens.password_changed(session, user.name)).addCallback(
            lambda _: session.send(texts.PASSWORD_CHANGED))

    return session.db.get_user(user.name).addCallback(check)
