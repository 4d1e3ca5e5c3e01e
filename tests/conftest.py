"""Fixtures shared across test packages: fresh stores, throwaway servers."""

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import os

import pytest

from fibsd.store.sqlite import SQLiteStore

# Servers these tests start as processes run without resident bots (fibsd/__main__.py):
# they would log in, add log lines and accounts, and keep passwords in the home
# directory.  tests/residents/ starts them on purpose.
os.environ["FIBSD_BOTS"] = "off"

if TYPE_CHECKING:
    from tests.postgres_server import PostgresServer
    from tests.redis_server import RedisServer


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    """A new SQLite store in a file of its own."""
    opened = SQLiteStore(tmp_path / "fibsd.sqlite")
    yield opened
    opened.close()


@pytest.fixture
def memory_store() -> Iterator[SQLiteStore]:
    """A new SQLite store that lives in memory only."""
    opened = SQLiteStore(":memory:")
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def postgres() -> Iterator["PostgresServer"]:
    """A private PostgreSQL server for the whole session (tests/postgres_server.py);
    the tests that need it skip, saying why, where none can be started."""
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'fibsd[postgres]'")
    from tests.postgres_server import NoPostgres, PostgresServer

    try:
        server = PostgresServer.start()
    except NoPostgres as error:
        pytest.skip(f"no PostgreSQL server can be started: {error}")
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres: "PostgresServer") -> str:
    """The URL of a new, empty PostgreSQL database."""
    return postgres.new_database()


@pytest.fixture
def redis_server() -> Iterator["RedisServer"]:
    """A private Redis server for one test (tests/redis_server.py): the cluster's
    broker.  The tests that need it skip, saying why, where none can be started."""
    from tests.redis_server import NoRedis, RedisServer

    try:
        server = RedisServer.start()
    except NoRedis as error:
        pytest.skip(f"no Redis server can be started: {error}")
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: "RedisServer") -> str:
    """The ``--cluster`` URL of a private Redis server."""
    return redis_server.url


@pytest.fixture(autouse=True)
def _fresh_failure_log() -> Iterator[None]:
    """Each test starts with the once-a-minute limit of ``write_failed`` lines unused
    (``fibsd.server.dbthread``): it is per process, and a test expects its own lines."""
    from fibsd.server import dbthread

    dbthread._FAILURES.clear()  # noqa: SLF001
    yield
