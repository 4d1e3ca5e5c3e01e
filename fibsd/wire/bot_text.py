"""The lines about bot accounts (issue 24): the whois line and the replies of ``set
bot`` and ``admin bot``.  None exists on FIBS; protocol/bots.md says why no stock
client misreads them (protocol/catalogue/bots.toml)."""

from __future__ import annotations


def whois_line(level: str | None) -> str:
    """The whois line of a bot account, after FIBS's lines (KBackgammon ends its whois
    block on the e-mail line); ``level`` describes a resident bot's brain."""
    played = f" ({level})" if level else ""
    return f"  Bot: a program plays this account{played}."


def marked(bot: bool) -> str:
    """``set bot`` with a value: the account's new state."""
    return ("** This account is now marked as a bot." if bot
            else "** This account is no longer marked as a bot.")


def state(bot: bool) -> str:
    """``set bot`` alone."""
    return ("** This account is marked as a bot." if bot
            else "** This account is not marked as a bot.")


SET_USAGE = "** Usage: set bot yes|no"
ONLY_NEW = ("** Only an administrator can mark or unmark an account that has played "
            "a match ('admin bot').")


def admin_marked(name: str, bot: bool) -> str:
    return (f"** {name} is now marked as a bot." if bot
            else f"** {name} is no longer marked as a bot.")


ADMIN_USAGE = "** Usage: admin bot <name> yes|no"
