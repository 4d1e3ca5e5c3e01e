"""PostgreSQL lost or hung under a running server (issue 19): nothing shown is taken
back, no dice are shown twice, the players are told within seconds, and the match goes
on once the database is back; the log stays a few lines per outage.

A private PostgreSQL server of this module's own (``tests/postgres_server.py``), since
the tests stop it (``pg_ctl stop -m immediate``, a crash for its clients) and hang it
(SIGSTOP to the postmaster and its backends).  The store-level tests call
``PostgresStore`` directly; the others run ``python -m fibsd`` on it with two of the
client library's bots playing a match over real sockets (``tests/cluster_nodes.py``).
"""

from __future__ import annotations

import json
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor

from fibsd.client.bot import Stats
from fibsd.server.session import DATABASE_DOWN
from fibsd.store import Unavailable, WriteFailed
from fibsd.store.opening import open_store
from fibsd.store.timeouts import Timeouts
from fibsd.wire import game_text as text
from tests.cluster_nodes import (
    HeldBot,
    Recording,
    check_finished,
    create_accounts,
    listening,
    log_in,
    start_node,
)
from tests.helpers import REPO, Waits
from tests.server.test_kill_drill import Server

psycopg = pytest.importorskip("psycopg",
                              reason="psycopg is not installed: pip install 'fibsd[postgres]'")

from fibsd.store.postgres import PostgresStore  # noqa: E402
from tests.postgres_server import NoPostgres, PostgresServer  # noqa: E402

WAIT = 60.0  # seconds any one wait for the match may take
TOLD_WITHIN = 5.0  # seconds in which the players must hear that the match waits
ROLL = re.compile(r"(You|\w+) rolls? (\d) and (\d)\.$")


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresServer]:
    try:
        server = PostgresServer.start(durable=True)  # a crash keeps what was committed
    except NoPostgres as error:
        pytest.skip(f"no PostgreSQL server can be started: {error}")
    yield server
    server.thaw()
    server.stop()


@pytest.fixture
def url(own_postgres: PostgresServer) -> str:
    return own_postgres.new_database()


# -- the store ----------------------------------------------------------------------------

def test_timeouts_and_keepalives_are_set_on_the_connection(url: str) -> None:
    store = PostgresStore(url, Timeouts(connect_timeout=3, statement_timeout_ms=1500))
    conn = store._conn  # noqa: SLF001
    assert conn.execute("SHOW statement_timeout").fetchone() == ("1500ms",)
    parameters = conn.info.get_parameters()
    assert parameters["connect_timeout"] == "3"
    assert (parameters["keepalives"], parameters["keepalives_idle"],
            parameters["keepalives_interval"], parameters["keepalives_count"]) == (
        "1", "10", "5", "3")
    with pytest.raises(Unavailable, match="statement timeout"):
        with store._reads() as cursor:  # noqa: SLF001
            cursor.execute("SELECT pg_sleep(3)")
    store.close()
    plain = open_store(url)  # the admin commands: no statement is cut
    assert plain._conn.execute("SHOW statement_timeout").fetchone() == ("0",)  # type: ignore[attr-defined]
    plain.close()


def test_a_stopped_server_is_one_clear_error_per_call_then_the_store_reconnects(
        own_postgres: PostgresServer, url: str) -> None:
    store = PostgresStore(url, Timeouts(statement_timeout_ms=5000))
    store.create_user("alice", "h", 1)
    own_postgres.halt()
    try:
        for _ in range(3):  # the first finds the connection gone, the next cannot connect
            with pytest.raises(Unavailable):
                store.get_user("alice")
            with pytest.raises(WriteFailed):
                store.set_rating("alice", 1600.0, 1)
            with pytest.raises(WriteFailed):
                store.probe()
    finally:
        own_postgres.restart()
    store.probe()
    alice = store.get_user("alice")
    assert alice is not None and alice.rating == 1500.0
    store.close()


def test_a_hung_server_is_left_by_interrupt(own_postgres: PostgresServer, url: str) -> None:
    store = PostgresStore(url, Timeouts(statement_timeout_ms=5000))
    store.create_user("alice", "h", 1)
    outcome: list[BaseException | None] = []

    def call() -> None:
        try:
            store.set_rating("alice", 1600.0, 1)
        except BaseException as error:  # noqa: BLE001 - the test looks at it
            outcome.append(error)
        else:
            outcome.append(None)

    own_postgres.freeze()
    try:
        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        store.interrupt()  # whether the call waits already or is about to
        worker.join(30)
        assert not worker.is_alive()
    finally:
        own_postgres.thaw()
    assert len(outcome) == 1 and isinstance(outcome[0], WriteFailed)
    store.probe()  # a new connection
    alice = store.get_user("alice")
    assert alice is not None and alice.rating == 1500.0  # the interrupted write: undone
    store.close()


# -- a server on it -----------------------------------------------------------------------

def write_config(directory: Path, database: str) -> Path:
    config = directory / "fibsd.toml"
    config.write_text(
        f'database = "{database}"\nmotd = "{REPO / "config" / "motd.txt"}"\n'
        "web_port = 0\nidle_timeout = 0\n"
        "[passwords]\ntime_cost = 1\nmemory_kib = 64\n"
        "[db]\nstall_ms = 1000\nretry_max_ms = 1000\nstatement_timeout_ms = 2000\n"
        "connect_timeout = 2\n")
    return config


def rolls_seen(client: Recording, me: str, names: tuple[str, str]) -> list[list[int]]:
    """The rolls ``client`` was shown, as the record writes them: [player, d1, d2]."""
    seen = []
    for line in client.received:
        found = ROLL.match(line)
        if found:
            who = me if found[1] == "You" else found[1]
            seen.append([names.index(who), int(found[2]), int(found[3])])
    return seen


def stored_rolls(record: str) -> list[list[int]]:
    games = json.loads(record)["match"]["games"]
    return [entry[1:] for game in games for entry in game if entry[0] == "roll"]


async def play_through_outage(tmp_path: Path, server: PostgresServer, database: str,
                              outage: str) -> tuple[dict[str, Recording], bytes]:
    """A 3-point match of two bots; mid-match the database goes (``halt``) or hangs
    (``freeze``) until both players are told, and comes back; the match plays out."""
    waits = Waits(WAIT)
    create_accounts(database, ("alice", "bob", "carol", "dave"))
    node = start_node(waits, write_config(tmp_path, database))
    port = await listening(waits, node)
    try:
        stats = Stats()
        bots = {"alice": HeldBot("alice", matches=1, clock=reactor, stats=stats),
                "bob": HeldBot("bob", invite="alice", length=3, matches=1, clock=reactor,
                               stats=stats)}
        c = {name: await log_in(waits, port, name, bots[name]) for name in bots}
        carol = await log_in(waits, port, "carol")
        await waits.until(lambda: c["alice"].boards() + c["bob"].boards() >= 10,
                          lambda: f"10 boards: alice {c['alice'].received[-10:]}")
        assert not bots["alice"].finished.done, "the match ended before the outage"
        (server.halt if outage == "halt" else server.freeze)()
        try:
            # Mid-match some command always comes: the bots play on their own.
            waits.limit = TOLD_WITHIN
            await waits.until(lambda: all(client.saw(text.MATCH_WAITS) for client in c.values()),
                              lambda: f"both told: {c['alice'].received[-5:]}"
                                      f" {c['bob'].received[-5:]}")
            waits.limit = WAIT
            # A command that reads the database, and a login, are answered meanwhile.
            carol.send("ratings")
            down = "** " + DATABASE_DOWN
            await waits.until(lambda: carol.saw(down), lambda: f"carol: {carol.received[-5:]}")
            dave = telnet_login(waits, port)
            await waits.until(lambda: dave.told, lambda: f"dave answered: {dave.data!r}")
            assert down.encode() in dave.data
        finally:
            (server.restart if outage == "halt" else server.thaw)()
        await waits.until(lambda: all(bot.finished.done for bot in bots.values()),
                          lambda: f"the match to end: alice {c['alice'].received[-10:]}"
                                  f" bob {c['bob'].received[-10:]}")
        for client in c.values():
            assert client.saw(text.MATCH_GOES_ON)
    finally:
        if not node.ended:
            node.signal(signal.SIGTERM)
        await waits.until(lambda: node.ended, lambda: "the server to stop")
    return c, node.output


class _Login:
    """A CLIP login of dave: ``told`` once the server answers it with a new prompt."""

    def __init__(self) -> None:
        self.data = b""
        self.told = False


def telnet_login(waits: Waits, port: int) -> _Login:
    from twisted.internet.protocol import ClientFactory, Protocol

    login = _Login()

    class Telnet(Protocol):
        def connectionMade(self) -> None:
            self.transport.write(b"login test 1008 dave secret\r\n")  # type: ignore[union-attr]

        def dataReceived(self, data: bytes) -> None:
            login.data += data
            login.told = b"login:" in login.data.split(b"\n")[-1] and login.data.count(
                b"login:") >= 2
            waits.poke()

    factory = ClientFactory()
    factory.protocol = Telnet
    reactor.connectTCP("127.0.0.1", port, factory)  # type: ignore[attr-defined]
    return login


def check_nothing_taken_back(database: str, c: dict[str, Recording], output: bytes) -> None:
    store = open_store(database)
    try:
        check_finished(store, [("alice", "bob", 1)])
        (finished,) = store.finished_matches("alice")
        stored = stored_rolls(finished.record)
    finally:
        store.close()
    names = ("bob", "alice")  # bob invited: player 0
    for name, client in c.items():
        assert rolls_seen(client, name, names) == stored, name  # each roll once, in order
        assert sum(bool(re.search(r"wins? the 3 point match", line))
                   for line in client.received) == 1
    log = output.decode(errors="replace")
    assert "Traceback" not in log
    assert log.count("database_down") <= 2 and log.count("The database is down") <= 2
    assert log.count("Store call") <= 4


@pytest_twisted.ensureDeferred
async def test_postgresql_stopped_mid_match(tmp_path: Path, own_postgres: PostgresServer,
                                            url: str) -> None:
    c, output = await play_through_outage(tmp_path, own_postgres, url, "halt")
    check_nothing_taken_back(url, c, output)


@pytest_twisted.ensureDeferred
async def test_postgresql_hung_mid_match(tmp_path: Path, own_postgres: PostgresServer,
                                         url: str) -> None:
    c, output = await play_through_outage(tmp_path, own_postgres, url, "freeze")
    check_nothing_taken_back(url, c, output)
