"""Which ``Store`` a ``database`` setting names: a SQLite file's path, or a PostgreSQL
URL (``postgresql://user@host/db``, or ``postgres://...``).

PostgreSQL is optional (``pip install 'fibsd[postgres]'``): psycopg is imported only
when a URL is opened, and its absence is a ``DatabaseUnavailable`` that says so.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from fibsd.store import Store
from fibsd.store.timeouts import Timeouts

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class DatabaseUnavailable(Exception):
    """The PostgreSQL database cannot be used (no psycopg, no server, refused login)."""


def is_postgres_url(database: Path | str) -> bool:
    return isinstance(database, str) and database.startswith(_POSTGRES_SCHEMES)


# A password in a URL's user part, or given as a ``password=`` parameter.
_URL_PASSWORD = re.compile(r"(://[^:/@\s]*):[^@\s]*@")
_PARAMETER_PASSWORD = re.compile(r"(\bpassword=)[^&\s'\"]*", re.IGNORECASE)
# Shorter passwords are not searched for as plain words in a message: "ab" would mask
# every "ab" of it (they are still masked where a URL or parameter holds them).
_SEARCHED_LENGTH = 3


def shown(database: Path | str) -> str:
    """``database`` for logs and messages: a URL's password replaced by ``***``."""
    return masked(str(database), database)


def masked(text: str, database: Path | str) -> str:
    """``text`` (a message, or a driver's error, that may quote the database URL or
    its password) with every password shown as ``***``: in a URL, in a ``password=``
    parameter, and the URL's passwords themselves wherever the text repeats them."""
    text = _PARAMETER_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1:***@", text))
    if not is_postgres_url(database):
        return text
    url = urlsplit(str(database))
    found = [url.password or ""] + [value for key, value in parse_qsl(url.query)
                                    if key.lower() == "password"]
    for password in {each for word in found for each in (word, unquote(word))}:
        if len(password) >= _SEARCHED_LENGTH:
            text = text.replace(password, "***")
    return text


def open_store(database: Path | str, timeouts: Timeouts = Timeouts()) -> Store:
    """The store ``database`` names (its schema brought up to date); ``timeouts``
    apply to PostgreSQL (the server passes its ``[db]`` keys; the admin commands keep
    the defaults, which never cut a statement)."""
    if not is_postgres_url(database):
        from fibsd.store.sqlite import SQLiteStore

        return SQLiteStore(database)
    try:
        import psycopg

        from fibsd.store.postgres import PostgresStore
    except ImportError as error:
        raise DatabaseUnavailable(
            "PostgreSQL needs psycopg: pip install 'fibsd[postgres]'") from error
    try:
        return PostgresStore(str(database), timeouts)
    except psycopg.Error as error:
        raise DatabaseUnavailable(masked(str(error).strip(), database)) from error
