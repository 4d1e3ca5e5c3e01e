"""The resident bots' accounts and passwords.

Each account's password is random, made at its first start and kept in
``<data_dir>/bots/<account>.password`` (the directory mode 0700, the file 0600): the
bot reads it from there (``fibsd-bot --password-file``), so it is on no command line
and in no environment.  ``prepare`` runs with the store (on the database thread in
the server, directly in ``fibsd bots``): it creates a missing account marked as a bot,
gives a bot account the file's password when its hash differs (a copied database, a
lost file), and never touches an account that is not marked as a bot: a person who
registered the name first keeps it, and that bot is not started.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fibsd.config import ResidentBot
from fibsd.store import NameTaken, Store, UserRecord


@dataclass(frozen=True)
class Seat:
    """One account a resident bot plays as, ready to start."""

    account: str
    bot: ResidentBot
    password_file: Path


@dataclass(frozen=True)
class Refusal:
    account: str
    reason: str


def password_file(data_dir: Path, account: str) -> Path:
    return data_dir / "bots" / f"{account}.password"


def read_or_make_password(path: Path) -> str:
    """The password in ``path``, made (mode 0600, in a 0700 directory) if missing."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        os.chmod(path, 0o600)
        password = path.read_text(encoding="utf-8").strip()
        if password:
            return password
        descriptor = os.open(path, os.O_WRONLY | os.O_TRUNC)
    password = secrets.token_urlsafe(24)  # letters, digits, - and _: no blank, no colon
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(password + "\n")
    return password


PERSON = ("a person's account (not marked as a bot) has this name; rename the bot, or "
          "mark the account with 'fibsd admin bot'")


def refusal(account: str, record: UserRecord | None, taken: bool,
            command_words: frozenset[str]) -> Refusal | None:
    """Why ``account`` cannot be a resident bot's (``record``: its account, ``taken``:
    another account has the name in another case), or None."""
    if account.lower() in command_words:
        return Refusal(account, "a command has this name")
    if record is None and taken:
        return Refusal(account, "another account has this name in another case")
    if record is not None and not record.bot:
        return Refusal(account, PERSON)
    return None


def prepare(store: Store, bots: tuple[ResidentBot, ...], data_dir: Path,
            hash_password: Callable[[str], str], verify: Callable[[str, str], bool],
            command_words: frozenset[str] = frozenset()) -> tuple[list[Seat], list[Refusal]]:
    """Every account of ``bots`` ready to log in, and those that cannot be played
    (``command_words``: the server's, which no account may be named).  The server does
    the same call by call (fibsd.residents.service); this is ``fibsd bots``'s."""
    seats: list[Seat] = []
    refused: list[Refusal] = []
    for bot in bots:
        for account in bot.accounts():
            path = password_file(data_dir, account)
            password = read_or_make_password(path)
            record = store.get_user(account)
            why = refusal(account, record, record is None and store.name_taken(account),
                          command_words)
            if why is None and record is None:
                try:
                    store.create_user(account, hash_password(password), int(time.time()))
                    store.set_bot(account, True)
                except NameTaken:
                    why = Refusal(account, "the name was just taken")
            elif why is None and record is not None and not verify(password,
                                                                   record.password_hash):
                store.set_password_hash(account, hash_password(password))
            if why is not None:
                refused.append(why)
            else:
                seats.append(Seat(account, bot, path))
    return seats, refused
