"""Load benchmark: a fibsd server in its own process, bot pairs playing real matches at
full speed, idle CLIP connections, and a correctness check of the database at the end.

    .venv/bin/python benchmarks/load.py --matches 50 --idle 500 --duration 60 --logins 200

Phases (all on loopback, fresh database in a temporary directory):

1. Accounts are written straight into a new database (one argon2 hash at the
   configured cost, shared by all), then the server starts as a subprocess
   (``python -m fibsd`` with a generated config: no user limit in the way, no shout
   limit, no idle timeout), so its CPU and memory are its own.
2. Login burst: ``--logins`` accounts log in over CLIP at once; the time until the
   last ``1`` (welcome) line, with at most ``CONNECT_WINDOW`` connections waiting for
   the banner at any time (see there).  They stay on as idle users.
3. The rest of the ``--idle`` connections log in (200 at a time); the server's RSS
   before and after gives RSS per idle connection.
4. ``--matches`` pairs of ``fibsd.client.bot.Bot`` (the heuristic brain) play
   ``--length``-point matches back to back for ``--duration`` seconds; counted are
   game actions (own rolls, moves, doubles, takes, drops), matches finished, and the
   time from each command to the line that answers it.
5. The bots finish the match they are in (at most ``--drain`` seconds; what is left
   is saved when they disconnect), then a user shouts ``--shouts`` times: the time until
   every idle connection has the ``13`` line, and the server CPU it cost.
6. The server is stopped (SIGTERM: it says goodbye and saves running matches), and the
   database is checked: each finished match's record replays to its stored score and
   every roll of it reproduces from its revealed seed (fibsd-verify's derivation,
   protocol/fair-dice.md), each rating is 1500 plus the sum of its rating changes, and
   every match the bots began
   is finished or saved.  Any failure (or any error or unknown line seen by a bot)
   makes the exit status 1.

The clients run in this process on one reactor, unless ``--bot-processes N`` spreads
the bot pairs over N processes of their own (the idle connections and the shouter stay
here): the bots parse every board and choose every play, and on one reactor that work
is a queue of its own, which the latency figures would count.  Idle connections do not
parse what they receive; the bots parse every line with the client library except the
who-info and login/logout notices (CLIP 5-8), which they count and skip: those are
the bulk of the traffic at this size and a bot has no use for them.

``--cheap-bots`` has the bots play the first legal play instead of scoring every legal
play with the heuristic brain (its cube and resignation choices stay): the matches are
as legal and complete, and the end check the same, but the clients take less of the
machine's CPU, which the server shares when everything runs on one box.

``--think SECONDS`` makes every bot wait that long before each game command: full
speed (0, the default) measures throughput, a think time measures latency at a
given offered load.

``--viewers N`` opens N live-board streams of the web face (``/live/<player>/events``,
spread over the bot matches) before the play window, to measure what watching browsers
cost the game (benchmarks/web.py measures the pages).

``--websocket`` connects every client (idle users, bots, the shouter) to ``/ws`` on the
web port instead of the game port: the same CLIP lines, one per WebSocket text message
(protocol/websocket.md), through ``LineBridge``.

``--database postgres`` runs the server on a throwaway PostgreSQL server (started with
PostgreSQL's defaults, fsync on: tests/postgres_server.py), ``--database URL`` on an
existing, empty PostgreSQL database; the end check reads either.

``--async-commit`` has the throwaway PostgreSQL commit fibsd's writes without waiting
for the disk flush (``synchronous_commit=off`` on fibsd's connections, the setting
docs/deployment.md offers for SQLite's durability): the database's disk is then not what
limits the game actions/s.

``--nodes N`` (N >= 2; PostgreSQL, a throwaway one unless ``--database`` gives a URL)
runs a cluster: a private Redis broker (tests/redis_server.py) and N fibsd nodes on
the one database.  The idle users are spread over the nodes' ports, and each bot pair
is split across two nodes (``--cross`` sets the fraction of pairs split; the rest play
on one node), so that command-to-answer latency is reported for same-node and
cross-node pairs apart.  Server CPU and RSS are reported per node.  ``--compare`` runs
the same load on one node and then on ``--nodes`` nodes (both on PostgreSQL) and prints
the two side by side.

``--clock DELAY+RESERVE`` makes it the server's default clock (protocol/clock.md), so
every match the bots play is clocked (generous figures: at full speed nobody runs out);
``--clock-compare`` runs the same load without clocks and then with ``--clock`` (default
``12s+2m``) and prints the two side by side, server CPU per game action included.

``--ab REFS`` runs the same load against several commits in one run, interleaved:
``--ab 76cf582,main,.`` (``.`` is this checkout; any other ref is checked out in a
temporary git worktree, and its server and schema run from there) ``--rounds`` times
each, and prints per commit the min / median / max of the server's CPU per game action
(the server process's own CPU time from /proc over the window, divided by the actions),
of the command-to-answer p99 and of the actions/s, with the load average.

``--nodelay`` starts the server with TCP_NODELAY on its connections (a patch applied
in the server process only) to measure the fix proposed in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from twisted.internet import defer, task  # noqa: E402
from twisted.internet.error import ConnectionDone  # noqa: E402
from twisted.internet.protocol import ClientFactory, ProcessProtocol, Protocol  # noqa: E402
from twisted.protocols.basic import LineReceiver  # noqa: E402
from twisted.python.failure import Failure  # noqa: E402

from fibsd.client import events as ev  # noqa: E402
from fibsd.collector import ScheduledCollection  # noqa: E402
from fibsd.rules.play import Play  # noqa: E402
from fibsd.rules.position import Position  # noqa: E402
from fibsd.client.bot import Bot, HeuristicBrain, Stats  # noqa: E402
from fibsd.client.protocol import (  # noqa: E402
    ClipClientFactory, ClipClientProtocol, Credentials, Stage,
)

PASSWORD = "secret"
SKIPPED = (b"5 ", b"6", b"7 ", b"8 ")  # CLIP who-info, its end, login and logout notices
LOGIN_BATCH = 200
LOGIN_TIMEOUT = 120
# Connections in flight that have not yet seen the server's banner.  A connection beyond
# a full accept queue is dropped silently and its client waits forever; fibsd's backlog
# is 1024 now (Twisted's default of 50 when this was written), and the clients still
# never have more than this pending.
CONNECT_WINDOW = 40
SHOUTER = "shouter"
# Set by --websocket (in the bot workers too): clients connect to /ws on the web port.
OVER_WEBSOCKET = False
# Set by --cheap-bots (in the bot workers too): the bots play the first legal play.
CHEAP_BOTS = False
THOUGHT = frozenset({"roll", "move", "double", "accept", "reject"})
# ``--ab``: another commit's server and schema, run from its own checkout (argv: the
# checkout, then the config or the database file).
TREE_SERVE = """import os, signal, sys
sys.path.insert(0, sys.argv[1])
import fibsd  # the checkout's own package, before load.py puts this one's first
if os.environ.get("FIBSD_STALLS"):  # --stalls: load.py's handler, on that commit's server
    sys.path.insert(1, sys.argv[3])
    try:
        from load import watch_stalls
        watch_stalls(os.environ["FIBSD_STALLS"])
    except ImportError:  # a commit older than load.py's client: no figures, no signal death
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        signal.signal(signal.SIGUSR2, signal.SIG_IGN)
from fibsd.__main__ import main
sys.exit(main(["--config", sys.argv[2]]))
"""
TREE_SCHEMA = """import sys
sys.path.insert(0, sys.argv[1])
try:
    from fibsd.store.opening import open_store
except ImportError:  # before PostgreSQL
    from fibsd.store.sqlite import SQLiteStore as open_store
open_store(sys.argv[2]).close()
"""


def account(prefix: str, number: int) -> str:
    """A FIBS name (letters only) for account ``number`` of a group."""
    letters = ""
    while True:
        number, digit = divmod(number, 26)
        letters = chr(ord("a") + digit) + letters
        if number == 0:
            return prefix + letters


# -- the server process ----------------------------------------------------------


def serve(config: str, nodelay: bool) -> None:
    """The server subprocess: ``fibsd --config`` (optionally with TCP_NODELAY)."""
    if nodelay:
        from fibsd.server.protocol import FibsProtocol

        made = FibsProtocol.connectionMade

        def connection_made(self: Any) -> None:
            made(self)
            self.transport.setTcpNoDelay(True)

        FibsProtocol.connectionMade = connection_made  # type: ignore[method-assign]
    from fibsd.__main__ import main

    if os.environ.get("FIBSD_SWITCH"):  # EXPERIMENT
        sys.setswitchinterval(float(os.environ["FIBSD_SWITCH"]))
    if os.environ.get("FIBSD_STALLS"):
        watch_stalls(os.environ["FIBSD_STALLS"])
    profile = os.environ.get("FIBSD_PROFILE")
    if profile:  # --profile: the reactor thread under cProfile, written at exit
        import cProfile

        profiler = cProfile.Profile()
        try:
            code = profiler.runcall(main, ["--config", config])
        finally:
            profiler.dump_stats(profile)
        sys.exit(code)
    sys.exit(main(["--config", config]))


def watch_stalls(path: str) -> None:
    """``--stalls FILE``, in the server: what could hold a command's answer, measured
    from inside over the play window (load.py signals its start and end): the reactor's
    lateness (a call due every 5 ms, how late it ran: the reactor was busy or starved of
    CPU), each garbage collection's pause by generation, and each batch of saves on the
    database thread (how long it waited to be written and how long it took)."""
    import atexit
    import gc

    from twisted.internet import reactor

    from fibsd.server import dbthread

    lateness: list[float] = []
    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    batches: list[tuple[float, float, int]] = []
    state = {"due": 0.0, "gc": 0.0}

    def tick() -> None:
        now = time.perf_counter()
        if state["due"]:
            lateness.append(now - state["due"])
        state["due"] = now + 0.005
        reactor.callLater(0.005, tick)

    def collected(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            state["gc"] = time.perf_counter()
        else:
            pauses[info["generation"]].append(time.perf_counter() - state["gc"])

    def timed_write(self: Any, batch: Any) -> Any:
        started = time.perf_counter()
        try:
            return write(self, batch)
        finally:
            batches.append((started - getattr(batch, "made", started),
                            time.perf_counter() - started, len(batch.saves)))

    def stamped(self: Any) -> None:
        made(self)
        self.made = time.perf_counter()

    if hasattr(dbthread, "_SaveBatch"):  # a commit before group commit has no batches
        write = dbthread.DatabaseThread._write_batch
        made = dbthread._SaveBatch.__init__
        dbthread._SaveBatch.__init__ = stamped  # type: ignore[method-assign]
        dbthread.DatabaseThread._write_batch = timed_write  # type: ignore[method-assign]

    def report() -> None:
        def spread(values: list[float]) -> str:
            if not values:
                return "none"
            return (f"{len(values)}: p50 {percentile(values, .5) * 1000:.1f} ms, p99 "
                    f"{percentile(values, .99) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms, "
                    f"over 50 ms {sum(v > .05 for v in values)}")
        with open(path, "w") as out:
            print(f"reactor lateness: {spread(lateness)}", file=out)
            for generation, values in pauses.items():
                print(f"gc generation {generation}: {spread(values)}", file=out)
            print(f"save batches, queued: {spread([b[0] for b in batches])}", file=out)
            print(f"save batches, written: {spread([b[1] for b in batches])}; saves per "
                  f"batch {sum(b[2] for b in batches) / max(len(batches), 1):.1f}", file=out)

    def window(signum: int, frame: Any) -> None:
        """SIGUSR1 (the window begins): forget what came before; SIGUSR2 (it ends):
        write the report now, of the window alone."""
        if signum == signal.SIGUSR1:
            lateness.clear()
            batches.clear()
            for values in pauses.values():
                values.clear()
        else:
            report()

    gc.callbacks.append(collected)
    reactor.callWhenRunning(tick)
    signal.signal(signal.SIGUSR1, window)
    signal.signal(signal.SIGUSR2, window)
    atexit.register(lambda: None if Path(path).exists() else report())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def open_sql(database: Path | str) -> Any:
    """A DB-API connection to the run's database: a SQLite file, or a PostgreSQL URL."""
    if isinstance(database, str):
        import psycopg

        return psycopg.connect(database)
    return sqlite3.connect(database)


def create_database(database: Path | str, names: Sequence[str], tree: Path | None = None) -> None:
    """A migrated database holding ``names``, all with the password ``secret``; with
    ``tree`` (another commit's checkout, ``--ab``), the schema is that commit's own."""
    from fibsd.config import load_settings
    from fibsd.server.passwords import _hasher
    from fibsd.store.opening import open_store

    cost = load_settings(REPO / "config" / "fibsd.toml", {}).passwords
    if os.environ.get(CHEAP_PASSWORDS_ENV):  # --cheap-passwords
        cost = type(cost)(time_cost=1, memory_kib=8, parallelism=1)
    hashed = _hasher(cost).hash(PASSWORD)
    if tree is None:
        open_store(database).close()  # creates the schema
    else:
        subprocess.run([sys.executable, "-c", TREE_SCHEMA, str(tree), str(database)],
                       check=True, cwd=tree)
    now = int(time.time())
    mark = "%s" if isinstance(database, str) else "?"
    conn = open_sql(database)
    try:
        conn.cursor().executemany(
            f"INSERT INTO users (name, password_hash, created) VALUES ({mark}, {mark}, {mark})",
            [(name, hashed, now) for name in names])
        conn.commit()
    finally:
        conn.close()


# Every client here connects from 127.0.0.1: lift the cap on connections one address
# may have waiting for the login prompt (the burst keeps up to CONNECT_WINDOW waiting).
LOAD_ACCESS = """
[access]
unauthenticated_per_address = 100000
"""


def cluster_section(broker: str, node: str) -> str:
    """The ``[cluster]`` table of one node's config."""
    # A throwaway secret: the benchmark's broker is its own, on loopback.
    return f'\n[cluster]\nurl = "{broker}"\nnode = "{node}"\nsecret = "benchmark-cluster-secret"\n'


NO_BOTS = "[bots]\nenabled = false\n"  # an older commit (--ab) has no [bots] and refuses it
# No gnubg analysing the finished matches meanwhile (benchmarks/analysis.py measures it):
# on 2 cores its workers would take the CPU the bots and the server share.  The job is
# still queued in the transaction storing each result, as on a real site.
NO_ANALYSIS = "[analysis]\nworkers = 0\n"
# --cheap-passwords: every account's hash and the server's cost argon2's cheapest, so
# that 10,000 logins take seconds, not minutes of hashing (memory per idle user at
# 10,000 users; the login figures are then not a real site's).
CHEAP_PASSWORDS_ENV = "FIBSD_LOAD_CHEAP_PASSWORDS"
CHEAP_PASSWORDS = "[passwords]\ntime_cost = 1\nmemory_kib = 8\n"


def write_config(directory: Path, port: int, users: int, web_port: int = 0,
                 viewers: int = 0, extra: str = LOAD_ACCESS, database: Path | str = "",
                 name: str = "fibsd", tree: Path | None = None) -> Path:
    """The server's config; ``extra`` is appended (TOML tables of other sections).  No
    resident bots and no analysis workers: the figures are the load's alone
    (benchmarks/bots.py and analysis.py have theirs)."""
    config = directory / f"{name}.toml"
    known = (tree or REPO).joinpath("fibsd", "config.py").read_text()
    web = f"web_port = {web_port}\nweb_live_viewers = {max(viewers, 1)}\n"
    if "unauthenticated_per_address" not in known:  # an older commit (--ab) without it
        extra = extra.replace(LOAD_ACCESS, "")
    config.write_text(f"""
interface = "127.0.0.1"
port = {port}
database = "{database or directory / 'fibsd.sqlite'}"
idle_timeout = 0
motd = "{(tree or REPO) / 'config' / 'motd.txt'}"
help_dir = "{(tree or REPO) / 'config' / 'help'}"
{web if "web_live_viewers" in known else ""}[limits]
max_users = {users}
shouts_per_minute = 100000
""" + (NO_BOTS if "class Bots" in known else "")
        + (NO_ANALYSIS if "class Analysis" in known else "")
        + (CHEAP_PASSWORDS if os.environ.get(CHEAP_PASSWORDS_ENV) else "") + extra)
    return config


class ServerProcess:
    """The server subprocess and its CPU time and memory from /proc."""

    def __init__(self, directory: Path, port: int, users: int, nodelay: bool,
                 web_port: int = 0, viewers: int = 0, extra: str = LOAD_ACCESS,
                 database: Path | str = "", name: str = "server", tree: Path | None = None) -> None:
        config = write_config(directory, port, users, web_port, viewers, extra, database, name,
                              tree)
        self.web_port = web_port
        self.name = name
        self.log = open(directory / f"{name}.log", "w")  # noqa: SIM115
        if tree is None:
            command = [sys.executable, __file__, "--serve", str(config)]
            command += ["--nodelay"] if nodelay else []
        else:  # another commit's server, from its own checkout (--ab)
            command = [sys.executable, "-c", TREE_SERVE, str(tree), str(config),
                       str(REPO / "benchmarks")]
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT,
                                        cwd=tree or REPO)
        self.port = port

    def wait_listening(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"the server exited with {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.web_port or self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("the server did not start listening")

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def reactor_cpu(self) -> float:
        """CPU seconds of the main (reactor) thread alone: the rest of ``cpu`` is the
        database thread, the checkpoint thread and the password hashers."""
        stat = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/stat").read_text()
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory(self) -> tuple[int, int]:
        """(RSS, peak RSS) in bytes."""
        values = {}
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) * 1024
        return values["VmRSS"], values["VmHWM"]

    def stop(self, timeout: float = 120) -> int:
        """SIGTERM, then SIGKILL after ``timeout`` seconds (an older commit logging out
        10,000 users one by one can take longer): the run's figures are kept and the
        kill is one of its problems (a negative exit status)."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            print(f"{self.name}: not stopped {timeout:.0f} s after SIGTERM: killed")
            self.process.kill()
            return self.process.wait()
        finally:
            self.log.close()


class Nodes:
    """The server side of a run: one fibsd process, or (``--nodes`` N >= 2) N of them on
    one database and a private Redis broker (tests/redis_server.py).  CPU and memory
    are summed over the nodes; ``cpus`` gives them per node."""

    def __init__(self, directory: Path, count: int, users: int, options: argparse.Namespace,
                 database: Path | str) -> None:
        self.broker: Any = None
        self.nodes: list[ServerProcess] = []
        if count > 1:
            from tests.redis_server import RedisServer

            self.broker = RedisServer.start()
        web = options.viewers or options.websocket
        for number in range(count):
            name = f"node{number + 1}" if count > 1 else "server"
            extra = LOAD_ACCESS + (cluster_section(self.broker.url, name) if self.broker else "")
            if options.clock:  # every match the bots play runs on this clock
                extra += f'[clock]\ndefault = "{options.clock}"\n'
            self.nodes.append(ServerProcess(directory, free_port(), users, options.nodelay,
                                            free_port() if web else 0, options.viewers, extra,
                                            database, name, options.tree))

    @property
    def ports(self) -> list[int]:
        return [node.port for node in self.nodes]

    @property
    def web_ports(self) -> list[int]:
        return [node.web_port for node in self.nodes]

    @property
    def broker_url(self) -> str:
        return str(self.broker.url) if self.broker else ""

    def wait_listening(self) -> None:
        for node in self.nodes:
            node.wait_listening()

    def cpus(self) -> list[float]:
        return [node.cpu() for node in self.nodes]

    def cpu(self) -> float:
        return sum(self.cpus())

    def memory(self) -> tuple[int, int]:
        """(RSS, peak RSS) in bytes, summed over the nodes."""
        values = [node.memory() for node in self.nodes]
        return sum(v[0] for v in values), sum(v[1] for v in values)

    def stop(self) -> list[int]:
        """Stop every node (SIGTERM: running matches are saved); their exit statuses."""
        codes = [node.stop() for node in self.nodes]
        if self.broker is not None:
            self.broker.stop()
        return codes


# -- connecting: TCP, or WebSocket -------------------------------------------------


class MessageLines:
    """The transport a line protocol sees inside ``LineBridge``: each CR LF line it
    writes goes out as one text message."""

    def __init__(self, bridge: Any) -> None:
        self.bridge = bridge
        self.buffer = b""

    @property
    def connected(self) -> bool:
        return bool(self.bridge.transport is not None and self.bridge.transport.connected)

    def write(self, data: bytes) -> None:
        *lines, self.buffer = (self.buffer + data).split(b"\r\n")
        if self.bridge.state != self.bridge.STATE_OPEN:
            return  # as a closed TCP transport drops what is written to it
        for line in lines:
            self.bridge.sendMessage(line, isBinary=False)

    def writeSequence(self, data: Sequence[bytes]) -> None:
        self.write(b"".join(data))

    def loseConnection(self) -> None:
        self.bridge.sendClose(1000)

    def setTcpNoDelay(self, enabled: bool) -> None:
        self.bridge.transport.setTcpNoDelay(enabled)

    def getPeer(self) -> Any:
        return self.bridge.transport.getPeer()

    def getHost(self) -> Any:
        return self.bridge.transport.getHost()


def line_bridge(inner: Protocol) -> Any:
    """A WebSocket client protocol carrying ``inner``, a line protocol written for TCP:
    each message arrives at ``inner`` as one CR LF ended line (a prompt too)."""
    from autobahn.twisted.websocket import WebSocketClientProtocol

    class LineBridge(WebSocketClientProtocol):  # type: ignore[misc]
        def onOpen(self) -> None:
            inner.makeConnection(MessageLines(self))

        def onMessage(self, payload: bytes, isBinary: bool) -> None:
            inner.dataReceived(payload + b"\r\n")

        def onClose(self, wasClean: bool, code: Any, reason: Any) -> None:
            if inner.transport is not None:
                inner.connectionLost(Failure(ConnectionDone(str(reason))))
            else:
                print(f"a WebSocket failed before it opened: {code} {reason}", file=sys.stderr)

    return LineBridge()


def connect_lines(reactor: Any, port: int, factory: ClientFactory) -> None:
    """``factory``'s protocol on the game: TCP to ``port``, or with ``OVER_WEBSOCKET``
    a WebSocket to ``/ws`` on ``port``, the web port."""
    if not OVER_WEBSOCKET:
        reactor.connectTCP("127.0.0.1", port, factory)
        return
    from autobahn.twisted.websocket import WebSocketClientFactory

    bridges = WebSocketClientFactory(f"ws://127.0.0.1:{port}/ws")
    # This process parses every frame of every idle connection (autobahn, in Python):
    # while broadcasts flow it can take longer than autobahn's 5 s to read an answer.
    bridges.setProtocolOptions(openHandshakeTimeout=LOGIN_TIMEOUT)
    bridges.protocol = lambda: line_bridge(factory.buildProtocol(None))
    reactor.connectTCP("127.0.0.1", port, bridges)


# -- idle connections ------------------------------------------------------------


class IdleClient(Protocol):
    """Logs in over CLIP and then only counts what arrives (and spots a shout)."""

    def __init__(self, name: str, monitor: IdleMonitor) -> None:
        self.name = name
        self.monitor = monitor
        self.head = b""
        self.tail = b""
        self.logged_in = False
        self.received = 0
        self.shouts = 0
        self.welcome = b"\n1 " + name.encode() + b" "

    def connectionMade(self) -> None:
        self.transport.setTcpNoDelay(True)

    def dataReceived(self, data: bytes) -> None:
        if not self.received:
            self.monitor.greeted()
        self.received += len(data)
        if not self.logged_in:
            self.head += data
            if self.head.endswith((b"login: ", b"login: \r\n")):  # TCP, WebSocket
                self.head = b""
                self.transport.write(f"login idle 1008 {self.name} {PASSWORD}\r\n".encode())
            elif self.welcome in self.head:
                self.logged_in, self.head = True, b""
                self.monitor.logged_in(self)
            return
        chunk = self.tail + data
        found = chunk.count(self.monitor.marker) if self.monitor.marker else 0
        if found:
            self.shouts += found
            self.monitor.heard(self, found)
        self.tail = data[-40:]

    def connectionLost(self, reason: Any = None) -> None:
        self.monitor.lost(self)


class IdleMonitor:
    """Counts logins and shouts heard over all idle connections."""

    def __init__(self) -> None:
        self.clients: list[IdleClient] = []
        self.waiting_login: defer.Deferred[None] | None = None
        self.expected_logins = 0
        self.logins = 0
        self.marker = b""
        self.heard_count = 0
        self.waiting_heard: defer.Deferred[float] | None = None
        self.expected_heard = 0
        self.lost_count = 0
        self.ungreeted = 0
        self.queue: list[str] = []
        self.connect: Any = None

    def launch(self) -> None:
        """Connect queued names while fewer than ``CONNECT_WINDOW`` wait for the banner."""
        while self.queue and self.ungreeted < CONNECT_WINDOW:
            self.ungreeted += 1
            self.connect(self.queue.pop())

    def greeted(self) -> None:
        self.ungreeted -= 1
        self.launch()

    def logged_in(self, client: IdleClient) -> None:
        self.logins += 1
        if self.waiting_login is not None and self.logins >= self.expected_logins:
            waiting, self.waiting_login = self.waiting_login, None
            waiting.callback(None)

    def heard(self, client: IdleClient, count: int) -> None:
        self.heard_count += count
        if self.waiting_heard is not None and self.heard_count >= self.expected_heard:
            waiting, self.waiting_heard = self.waiting_heard, None
            waiting.callback(time.perf_counter())

    def lost(self, client: IdleClient) -> None:
        self.lost_count += 1


class IdleFactory(ClientFactory):
    def __init__(self, name: str, monitor: IdleMonitor) -> None:
        self.name = name
        self.monitor = monitor

    def buildProtocol(self, addr: Any) -> IdleClient:
        client = IdleClient(self.name, self.monitor)
        self.monitor.clients.append(client)
        return client


async def log_in_idle(reactor: Any, ports: Sequence[int], names: Sequence[str],
                      monitor: IdleMonitor) -> float:
    """Connect ``names`` at once, spread over the nodes' ``ports`` in turn; seconds until
    every one has its welcome line."""
    started = time.perf_counter()
    done: defer.Deferred[None] = defer.Deferred()
    monitor.expected_logins = monitor.logins + len(names)
    monitor.waiting_login = done
    spread = itertools.cycle(ports)
    monitor.connect = lambda name: connect_lines(reactor, next(spread), IdleFactory(name, monitor))
    monitor.queue = list(reversed(names))
    monitor.launch()
    try:
        await done.addTimeout(LOGIN_TIMEOUT, reactor)
    except defer.TimeoutError:
        stuck = [c for c in monitor.clients if not c.logged_in]
        raise SystemExit(f"{len(stuck)} idle logins unfinished after {LOGIN_TIMEOUT} s, e.g. "
                         f"{[(c.name, c.received, c.head[-80:]) for c in stuck[:3]]}") from None
    return time.perf_counter() - started


# -- bots ------------------------------------------------------------------------


class LeanProtocol(ClipClientProtocol):
    """The library's protocol, minus parsing the CLIP 5-8 broadcasts once logged in."""

    skipped = 0

    def connectionMade(self) -> None:
        super().connectionMade()
        self.transport.setTcpNoDelay(True)

    def lineReceived(self, line: bytes) -> None:
        if self.stage is Stage.READY and line.startswith(SKIPPED):
            LeanProtocol.skipped += 1
            return
        super().lineReceived(line)


class LeanFactory(ClipClientFactory):
    """The library's factory, building ``LeanProtocol`` connections."""

    protocol = LeanProtocol


class FirstPlayBrain(HeuristicBrain):
    """``--cheap-bots``: the heuristic brain's cube and resignation choices, but the first
    legal play instead of scoring every one (the bots' largest cost per action after
    parsing), so that the clients take less of the machine the server runs on."""

    def play(self, board: ev.Board, position: Position, dice: tuple[int, int],
             plays: Sequence[Play]) -> Play | None:
        return plays[0] if plays else None


class BeginCounter(Bot):
    """A bot that counts the matches it begins (for the final check) and that may think
    ``think`` seconds before each game command (latency is measured from the send)."""

    def __init__(self, *args: Any, think: float = 0.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.begun = 0
        self.think = think
        self.protocols: list[ClipClientProtocol] = []

    def send(self, command: str) -> None:
        if self.think and self.clock is not None and command.split(" ", 1)[0] in THOUGHT:
            self.clock.callLater(self.think, super().send, command)
        else:
            super().send(command)

    def attach(self, protocol: ClipClientProtocol) -> None:
        super().attach(protocol)
        self.protocols.append(protocol)

    def on_NewMatch(self, event: ev.NewMatch) -> None:
        super().on_NewMatch(event)
        self.begun += 1


def split_pair(number: int, cross: float) -> bool:
    """Whether pair ``number`` plays across two nodes: a ``cross`` fraction of the pairs,
    spread evenly over the numbers."""
    return int((number + 1) * cross) > int(number * cross)


async def start_bots(reactor: Any, ports: Sequence[int], pairs: range, length: int,
                     stats: dict[bool, Stats], think: float,
                     cross: float) -> list[tuple[BeginCounter, BeginCounter]]:
    """Each kind of pair (split across two nodes, or on one) goes round the nodes on its
    own: the k-th pair of a kind has its host on node k (modulo the nodes) and its guest
    there too, or on the next node when split, so that the matches (which live on the
    inviting guest's node) and the users are spread evenly.  ``stats[split]`` gets the
    pair's figures."""
    bots, homes, turns = [], {}, {False: 0, True: 0}
    brain = FirstPlayBrain if CHEAP_BOTS else HeuristicBrain
    for number in pairs:
        split = len(ports) > 1 and split_pair(number, cross)
        host = BeginCounter(account("ba", number), brain(), clock=reactor, stats=stats[split],
                            think=think)
        guest = BeginCounter(account("bb", number), brain(), invite=host.name, length=length,
                             clock=reactor, stats=stats[split], think=think)
        turn, turns[split] = turns[split], turns[split] + 1
        homes[host.name] = ports[turn % len(ports)]
        homes[guest.name] = ports[(turn + split) % len(ports)]
        bots.append((host, guest))
    for start in range(0, len(bots), CONNECT_WINDOW // 2):
        logins = []
        for host, guest in bots[start:start + CONNECT_WINDOW // 2]:
            for bot in (host, guest):
                factory = LeanFactory(Credentials(bot.name, PASSWORD, "loadbot"), bot,
                                      clock=reactor, connected=bot.attach)
                connect_lines(reactor, homes[bot.name], factory)
                logins.append(factory.first_login.wait())
        await defer.gatherResults(logins)
    return bots


class LocalBots:
    """Bot pairs on this process's reactor; ``WorkerBots`` asks the same of another."""

    def __init__(self, reactor: Any, ports: Sequence[int], pairs: range, length: int,
                 think: float, cross: float) -> None:
        self.reactor, self.ports, self.pairs = reactor, ports, pairs
        self.length, self.think, self.cross = length, think, cross
        self.kinds = {False: Stats(), True: Stats()}  # same-node pairs, cross-node pairs
        self.bots: list[tuple[BeginCounter, BeginCounter]] = []
        # The clients' own full collections would count as server latency: they run on
        # the server's schedule (fibsd.collector) while latency is measured.
        self.collector = ScheduledCollection(reactor, 300)
        self._counts = (0, 0)

    async def start(self) -> None:
        self.bots = await start_bots(self.reactor, self.ports, self.pairs, self.length,
                                     self.kinds, self.think, self.cross)

    def _totals(self) -> tuple[int, int]:
        return (sum(s.actions for s in self.kinds.values()),
                sum(s.matches for s in self.kinds.values()))

    async def begin_window(self) -> None:
        self.collector.start()
        for stats in self.kinds.values():
            stats.latencies.clear()
        self._counts = self._totals()

    async def end_window(self) -> dict[str, Any]:
        self.collector.stop()
        actions, matches = self._totals()
        return {"latencies": self.kinds[False].latencies + self.kinds[True].latencies,
                "same": list(self.kinds[False].latencies),
                "cross": list(self.kinds[True].latencies),
                "actions": actions - self._counts[0],
                "matches": (matches - self._counts[1]) / 2,
                "skipped": LeanProtocol.skipped,
                "cpu": resource.getrusage(resource.RUSAGE_SELF).ru_utime}

    async def drain(self, seconds: float) -> int:
        """Let each bot finish the match it is in; the number of matches left."""
        for host, guest in self.bots:
            for bot in (host, guest):
                bot.match_limit = bot.matches_played + (1 if bot.playing else 0)
                bot.invite_name = None if not bot.playing else bot.invite_name
        deadline = time.monotonic() + seconds
        busy = [bot for pair in self.bots for bot in pair if not bot.finished.done and bot.playing]
        while any(not bot.finished.done for bot in busy) and time.monotonic() < deadline:
            await sleep(self.reactor, 0.5)
        return sum(1 for bot in busy if not bot.finished.done) // 2

    async def report(self) -> dict[str, Any]:
        """Problems the bots saw, and each pair's matches begun (for the final check)."""
        failures = [f"{bot.name}: unknown line {line!r}"
                    for pair in self.bots for bot in pair
                    for protocol in bot.protocols for line in protocol.unknown_lines]
        failures += [f"error line during play: {text}"
                     for stats in self.kinds.values() for text in stats.errors[:20]]
        return {"failures": failures,
                "pairs": [(host.name, guest.name, guest.begun) for host, guest in self.bots]}

    def close(self) -> None:
        pass


class WorkerBots(ProcessProtocol):
    """Bot pairs in a process of their own (``--bot-processes``): the bots' parsing and
    play choosing is spread over more than one reactor, so that one client's queue does
    not stand in for the server's latency.  Requests and answers are JSON lines."""

    def __init__(self, reactor: Any, ports: Sequence[int], pairs: range, length: int,
                 think: float, cross: float) -> None:
        self._buffer = b""
        self._answers: list[defer.Deferred[Any]] = []
        self._ended = ""
        command = [sys.executable, __file__, "--bot-worker", ",".join(map(str, ports)),
                   "--pairs", f"{pairs.start}:{pairs.stop}", "--length", str(length),
                   "--think", str(think), "--cross", str(cross)
                   ] + (["--websocket"] if OVER_WEBSOCKET else []) \
            + (["--cheap-bots"] if CHEAP_BOTS else [])
        reactor.spawnProcess(self, sys.executable, command, env=os.environ, path=str(REPO),
                             childFDs={0: "w", 1: "r", 2: 2})

    def outReceived(self, data: bytes) -> None:
        *lines, self._buffer = (self._buffer + data).split(b"\n")
        for line in lines:
            self._answers.pop(0).callback(json.loads(line))

    def processEnded(self, reason: Any) -> None:
        """A worker that dies (its traceback is on stderr) fails what waits for it and
        every later request, instead of leaving the run waiting for ever."""
        self._ended = f"a bot worker ended: {reason.getErrorMessage()}"
        waiting, self._answers = self._answers, []
        for answer in waiting:
            answer.errback(SystemExit(self._ended))

    async def _ask(self, op: str, **arguments: Any) -> Any:
        if self._ended:
            raise SystemExit(self._ended)
        answer: defer.Deferred[Any] = defer.Deferred()
        self._answers.append(answer)
        self.transport.write(json.dumps({"op": op, **arguments}).encode() + b"\n")
        return await answer

    async def start(self) -> None:
        await self._ask("start")

    async def begin_window(self) -> None:
        await self._ask("begin_window")

    async def end_window(self) -> dict[str, Any]:
        return await self._ask("end_window")  # type: ignore[no-any-return]

    async def drain(self, seconds: float) -> int:
        return await self._ask("drain", seconds=seconds)  # type: ignore[no-any-return]

    async def report(self) -> dict[str, Any]:
        return await self._ask("report")  # type: ignore[no-any-return]

    def close(self) -> None:
        self.transport.closeStdin()


class WorkerCommands(LineReceiver):
    """A bot worker's side of ``WorkerBots``: requests on stdin, answers on stdout."""

    delimiter = b"\n"

    def __init__(self, bots: LocalBots) -> None:
        self.bots = bots

    def lineReceived(self, line: bytes) -> None:
        request = json.loads(line)
        op = request.pop("op")
        defer.Deferred.fromCoroutine(getattr(self.bots, op)(**request)).addCallbacks(
            self._send, self._failed)

    def _send(self, answer: Any) -> None:
        self.transport.write(json.dumps(answer).encode() + b"\n")

    def _failed(self, failure: Any) -> None:
        sys.stderr.write(failure.getTraceback())
        os._exit(1)

    def connectionLost(self, reason: Any = None) -> None:
        if self.bots.reactor.running:  # the parent closed stdin: done
            self.bots.reactor.stop()


def bot_worker(ports: str, pairs: str, length: int, think: float, cross: float) -> None:
    from twisted.internet import reactor
    from twisted.internet.stdio import StandardIO

    start, stop = (int(n) for n in pairs.split(":"))
    StandardIO(WorkerCommands(LocalBots(reactor, [int(p) for p in ports.split(",")],
                                        range(start, stop), length, think, cross)))
    reactor.run()


# -- measuring -------------------------------------------------------------------


class LiveViewer(Protocol):
    """One open ``/live/<player>/events`` stream (fibsd's web face); counts its events."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.events = 0
        self.refused = False

    def connectionMade(self) -> None:
        self.transport.write(f"GET {self.path} HTTP/1.1\r\nHost: load\r\n\r\n".encode())

    def dataReceived(self, data: bytes) -> None:
        if data.startswith(b"HTTP/1.1 503"):
            self.refused = True
        # Each event is one board figure (or the not-playing note), in a chunk of its own.
        self.events += data.count(b'class="board-box"') + data.count(b"is not playing now.")


async def open_viewers(reactor: Any, web_port: int, players: Sequence[str],
                       count: int) -> list[LiveViewer]:
    """``count`` live-board streams, spread round-robin over ``players``."""
    from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol

    viewers = [LiveViewer(f"/live/{players[n % len(players)]}/events") for n in range(count)]
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", web_port)
    await defer.gatherResults([connectProtocol(endpoint, viewer) for viewer in viewers])
    return viewers


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of every core of the machine so far, from /proc/stat."""
    fields = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


def percentile(values: Sequence[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def sleep(reactor: Any, seconds: float) -> None:
    await task.deferLater(reactor, seconds, lambda: None)


async def shout_cost(reactor: Any, shouter: ClipClientProtocol, monitor: IdleMonitor,
                     server: Nodes, shouts: int) -> tuple[float, float, float]:
    """Median (echo seconds, last recipient seconds), and server CPU seconds per shout."""
    echoes, lasts, cpus = [], [], []
    for number in range(shouts):
        text = f"load test shout {number}"
        monitor.marker = f"13 {SHOUTER} {text}\r\n".encode()
        monitor.heard_count = 0
        monitor.expected_heard = sum(1 for c in monitor.clients if c.logged_in and c.transport.connected)
        heard: defer.Deferred[float] = defer.Deferred()
        monitor.waiting_heard = heard
        echo = shouter.wait_for(ev.YouShout)
        cpu = server.cpu()
        started = time.perf_counter()
        shouter.send(f"shout {text}")
        await echo
        echoes.append(time.perf_counter() - started)
        try:
            lasts.append(await heard.addTimeout(120, reactor) - started)
        except defer.TimeoutError:
            raise SystemExit(f"shout: {monitor.heard_count} of {monitor.expected_heard} idle "
                             "users heard it in 120 s") from None
        await sleep(reactor, 0.5)  # let the CPU counter catch up with the writes
        cpus.append(server.cpu() - cpu)
    monitor.marker = b""
    return statistics.median(echoes), statistics.median(lasts), statistics.median(cpus)


# -- the correctness check -------------------------------------------------------


def check_database(path: Path | str, bots: Sequence[tuple[str, str, int]]) -> list[str]:
    """``bots``: (host, guest, matches the guest began) for each pair.  Every finished
    match's dice must also reproduce from its revealed seed (protocol/fair-dice.md),
    checked by fibsd-verify's own derivation."""
    from io import StringIO

    from fibsd.fair.verify import fair_document, verify
    from fibsd.rules.match import Match

    problems = []
    conn = open_sql(path)
    finished = conn.execute(
        "SELECT winner, loser, length, winner_points, loser_points, record, "
        "winner_rating_change, loser_rating_change FROM finished_matches").fetchall()
    changes: dict[str, float] = {}
    per_pair: dict[frozenset[str], int] = {}
    for winner, loser, length, w_points, l_points, record, w_change, l_change in finished:
        changes[winner] = changes.get(winner, 0.0) + w_change
        changes[loser] = changes.get(loser, 0.0) + l_change
        pair = frozenset((winner, loser))
        per_pair[pair] = per_pair.get(pair, 0) + 1
        try:
            data = json.loads(record)
            names = data["players"]
            replayed = Match.from_record(data["match"])
            score = dict(zip(names, replayed.score))
            if not replayed.over or (score[winner], score[loser]) != (w_points, l_points) \
                    or w_points < length:
                problems.append(f"{winner}-{loser}: record replays to {score}, stored "
                                f"{w_points}-{l_points} of {length}")
            report = StringIO()
            if not verify(fair_document(data), report):
                problems.append(f"{winner}-{loser}: dice: {report.getvalue().splitlines()[-1]}")
        except Exception as error:  # any way a record can be broken is a finding
            problems.append(f"{winner}-{loser}: record does not replay: {error!r}")
    for name, rating in conn.execute("SELECT name, rating FROM users"):
        expected = 1500.0 + changes.get(name, 0.0)
        if abs(rating - expected) > 1e-6:
            problems.append(f"{name}: rating {rating} but 1500 + changes = {expected}")
    saved = {frozenset(row) for row in conn.execute("SELECT player_a, player_b FROM saved_matches")}
    for host, guest, begun in bots:
        pair = frozenset((host, guest))
        done = per_pair.get(pair, 0) + (1 if pair in saved else 0)
        if done != begun:
            problems.append(f"{guest}-{host}: {begun} matches begun, "
                            f"{per_pair.get(pair, 0)} finished, saved: {pair in saved}")
    conn.close()
    return problems


def bot_groups(reactor: Any, ports: Sequence[int], options: argparse.Namespace) -> list[Any]:
    """The bot pairs, split evenly over ``--bot-processes`` (1: this process)."""
    count = max(1, min(options.bot_processes, options.matches))
    if count == 1:
        return [LocalBots(reactor, ports, range(options.matches), options.length, options.think,
                          options.cross)]
    bounds = [options.matches * n // count for n in range(count + 1)]
    return [WorkerBots(reactor, ports, range(bounds[n], bounds[n + 1]), options.length,
                       options.think, options.cross) for n in range(count)]


async def each(groups: Sequence[Any], method: str, *args: Any) -> list[Any]:
    """``method(*args)`` of every bot group at once; their answers in order."""
    return list(await defer.gatherResults(
        [defer.Deferred.fromCoroutine(getattr(g, method)(*args)) for g in groups]))


# -- the run ---------------------------------------------------------------------


async def run(reactor: Any, options: argparse.Namespace) -> dict[str, Any]:
    """One run; its figures (for ``--compare``) and ``problems``, the end check's count."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * (options.idle + 2 * options.matches) + 200  # both ends live on this machine
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, needed)), hard))
    # The previous run's database pages written out first: a run must not pay for
    # another's dirty pages (the kernel throttles a writer while they are flushed).
    os.sync()
    directory = Path(tempfile.mkdtemp(prefix="fibsd-load-"))
    idle_names = [account("ia", n) for n in range(max(options.idle, options.logins))]
    bot_names = [account(p, n) for n in range(options.matches) for p in ("ba", "bb")]
    postgres, database = start_database(directory, options)
    started = time.perf_counter()
    create_database(database, [*idle_names, *bot_names, SHOUTER], options.tree)
    print(f"database: {len(idle_names) + len(bot_names) + 1} accounts in "
          f"{time.perf_counter() - started:.1f} s ({directory}"
          + (", PostgreSQL" if postgres is not None or isinstance(database, str) else "") + ")")
    users = len(idle_names) + len(bot_names) + 10
    server = Nodes(directory, options.nodes, users, options, database)
    figures: dict[str, Any] = {"nodes": options.nodes}
    failures: list[str] = []
    pairs: list[tuple[str, str, int]] = []
    groups: list[Any] = []
    try:
        server.wait_listening()
        ports = server.web_ports if options.websocket else server.ports
        if options.nodes > 1:
            print(f"cluster: {options.nodes} nodes on ports {', '.join(map(str, server.ports))}, "
                  f"Redis broker {server.broker_url}; "
                  f"{sum(split_pair(n, options.cross) for n in range(options.matches))} of "
                  f"{options.matches} pairs split across two nodes")
        rss0, _ = server.memory()
        monitor = IdleMonitor()
        burst = await log_in_idle(reactor, ports, idle_names[:options.logins], monitor)
        print(f"login burst: {options.logins} logins in {burst:.2f} s")
        await sleep(reactor, 2)
        rss1, _ = server.memory()
        rest = idle_names[options.logins:options.idle]
        started = time.perf_counter()
        for start in range(0, len(rest), LOGIN_BATCH):
            await log_in_idle(reactor, ports, rest[start:start + LOGIN_BATCH], monitor)
        if rest:
            print(f"idle logins: {len(rest)} more in {time.perf_counter() - started:.1f} s")
        await sleep(reactor, 2)
        rss2, _ = server.memory()
        print(f"server RSS: {rss0 / 2**20:.1f} MB empty, {rss1 / 2**20:.1f} MB after the burst, "
              f"{rss2 / 2**20:.1f} MB with {monitor.logins} idle CLIP users"
              + (f" (all {options.nodes} nodes)" if options.nodes > 1 else ""))
        if rest:
            print(f"RSS per idle connection (the {len(rest)} after the burst): "
                  f"{(rss2 - rss1) / len(rest) / 1024:.1f} KB")
        shouter_factory = LeanFactory(Credentials(SHOUTER, PASSWORD, "loadbot"), None, clock=reactor)
        connect_lines(reactor, ports[0], shouter_factory)
        shouter = await shouter_factory.first_login.wait()

        started = time.perf_counter()
        groups = bot_groups(reactor, ports, options)
        await defer.gatherResults([defer.Deferred.fromCoroutine(g.start()) for g in groups])
        print(f"bots: {2 * options.matches} logged in in {time.perf_counter() - started:.1f} s"
              + (f" ({len(groups)} client processes)" if len(groups) > 1 else ""))
        await sleep(reactor, min(5.0, options.duration / 4))  # let the matches start
        viewers: list[LiveViewer] = []
        if options.viewers:
            viewers = await open_viewers(reactor, server.web_ports[0],
                                         [account("ba", n) for n in range(options.matches)],
                                         options.viewers)
            await sleep(reactor, 1)
            print(f"live viewers: {len(viewers)} streams open on "
                  f"{min(options.viewers, options.matches)} matches, "
                  f"{sum(v.refused for v in viewers)} refused")
        events0 = sum(v.events for v in viewers)
        await each(groups, "begin_window")
        if options.stalls:
            for node in server.nodes:
                node.process.send_signal(signal.SIGUSR1)
        cpus0 = server.cpus()
        reactor0 = sum(node.reactor_cpu() for node in server.nodes)
        busy0 = machine_busy()
        window = time.perf_counter()
        await sleep(reactor, options.duration)
        elapsed = time.perf_counter() - window
        measured = await each(groups, "end_window")
        cpus = [after - before for before, after in zip(cpus0, server.cpus())]
        reactor_cpu = sum(node.reactor_cpu() for node in server.nodes) - reactor0
        if options.stalls:
            for node in server.nodes:
                node.process.send_signal(signal.SIGUSR2)
        busy = [after - before for before, after in zip(busy0, machine_busy())]
        cpu = sum(cpus)
        latencies = [value for part in measured for value in part["latencies"]]
        actions = sum(part["actions"] for part in measured)
        matches = sum(part["matches"] for part in measured)
        rss3, _ = server.memory()
        pace = f", {options.think} s think time" if options.think else " at full speed"
        pace += ", cheap bots (first legal play)" if options.cheap_bots else ""
        print(f"play: {options.matches} concurrent {options.length}-point matches{pace} for "
              f"{elapsed:.0f} s: "
              f"{actions / elapsed:.0f} game actions/s, {matches / elapsed * 60:.0f} matches "
              f"finished/min, server CPU {cpu:.1f} s ({cpu / elapsed:.0%} of a core), RSS "
              f"{rss3 / 2**20:.1f} MB")
        print(f"machine: {busy[0] / max(busy[1], 1):.0%} of its {os.cpu_count()} cores busy "
              "in the window (everything: nodes, clients, databases, other users)")
        figures["machine"] = busy[0] / max(busy[1], 1)
        if options.nodes > 1:
            print("per node: " + ", ".join(
                f"{node.name} CPU {used:.1f} s ({used / elapsed:.0%} of a core)"
                for node, used in zip(server.nodes, cpus)))
        print(f"latency (command -> answering line, {len(latencies)} commands): "
              f"p50 {percentile(latencies, .5) * 1000:.1f} ms, p95 {percentile(latencies, .95) * 1000:.1f} ms, "
              f"p99 {percentile(latencies, .99) * 1000:.1f} ms, max {max(latencies, default=0) * 1000:.1f} ms")
        figures.update(actions=actions / elapsed, cpus=[used / elapsed for used in cpus],
                       p50=percentile(latencies, .5), p99=percentile(latencies, .99),
                       load=os.getloadavg()[0])
        print(f"server CPU per game action: {cpu / max(actions, 1) * 1000:.3f} ms, of which "
              f"the reactor thread {reactor_cpu / max(actions, 1) * 1000:.3f} ms "
              f"(load average {figures['load']:.2f})")
        if options.nodes > 1:
            for kind in ("same", "cross"):
                values = [value for part in measured for value in part[kind]]
                figures[kind] = (percentile(values, .5), percentile(values, .99), len(values))
                if values:
                    print(f"  {kind}-node pairs ({len(values)} commands): "
                          f"p50 {percentile(values, .5) * 1000:.1f} ms, "
                          f"p99 {percentile(values, .99) * 1000:.1f} ms")
        if viewers:
            print(f"live boards: {sum(v.events for v in viewers) - events0} board events "
                  f"received by {len(viewers)} viewers in the window")
            for viewer in viewers:
                viewer.transport.loseConnection()
        print(f"bot side: {sum(part['skipped'] for part in measured)} CLIP 5-8 lines skipped "
              "unparsed; client process CPU "
              + ", ".join(f"{part['cpu']:.1f} s" for part in measured) + " user so far")

        unfinished = sum(await each(groups, "drain", options.drain))
        if unfinished:
            print(f"drain: {unfinished} matches unfinished after {options.drain:.0f} s; "
                  "the server saves them when the bots leave")
        if options.shouts:
            echo, last, shout_cpu = await shout_cost(reactor, shouter, monitor, server,
                                                     options.shouts)
            print(f"shout to {monitor.expected_heard} idle users (+{2 * options.matches} bots): "
                  f"echo {echo * 1000:.1f} ms, last recipient {last * 1000:.0f} ms, server CPU "
                  f"{shout_cpu * 1000:.0f} ms")

        total_cpu = server.cpu()
        _, peak = server.memory()
        print(f"server total: CPU {total_cpu:.1f} s, peak RSS {peak / 2**20:.1f} MB")
        for part in await each(groups, "report"):
            failures += part["failures"]
            pairs += part["pairs"]
    finally:
        codes = server.stop()
        for group in groups:
            group.close()
        failures += [f"{node.name} exit status {code}"
                     for node, code in zip(server.nodes, codes) if code != 0]
    try:
        if options.tree is None:  # another commit's records may predate what it checks
            failures += check_database(database, pairs)
        conn = open_sql(database)
        finished = conn.execute("SELECT count(*) FROM finished_matches").fetchone()[0]
        conn.close()
    finally:
        if postgres is not None:
            postgres.stop()
    checked = "records and dice" if options.tree is None else "not checked: another commit"
    print(f"check: {finished} finished matches ({checked}), {len(failures)} problems")
    for failure in failures[:30]:
        print("  " + failure)
    stalls = Path(os.environ.get("FIBSD_STALLS", "-"))
    if options.stalls and stalls.exists():
        print(f"stalls ({stalls.name}):\n  " + stalls.read_text().strip().replace("\n", "\n  "))
    figures.update(finished=finished, problems=len(failures))
    return figures


def start_database(directory: Path, options: argparse.Namespace) -> tuple[Any, Path | str]:
    """The run's database: a SQLite file in ``directory``, a new database on a throwaway
    PostgreSQL server (returned, to be stopped), or the ``--database`` URL."""
    if options.database == "sqlite":
        return None, directory / "fibsd.sqlite"
    if options.database != "postgres":
        return None, options.database
    from tests.postgres_server import PostgresServer

    postgres = PostgresServer.start(durable=True)
    url = postgres.new_database()
    if options.async_commit:  # fibsd's connections only; docs/deployment.md, "PostgreSQL"
        url += "&options=-csynchronous_commit%3Doff"
    return postgres, url


async def compare(reactor: Any, options: argparse.Namespace) -> int:
    """The same load on one node and then on ``--nodes``, printed side by side."""
    runs = []
    for count in (1, options.nodes):
        print(f"== {count} node{'s' if count > 1 else ''} ==")
        runs.append(await run(reactor, argparse.Namespace(**{**vars(options), "nodes": count})))
    print("== side by side ==")
    print(f"{'':28}" + "".join(f"{str(r['nodes']) + ' node(s)':>22}" for r in runs))
    rows = [("game actions/s", lambda r: f"{r['actions']:.0f}"),
            ("server CPU per node", lambda r: " + ".join(f"{c:.0%}" for c in r["cpus"])),
            ("server CPU per action ms", lambda r: f"{sum(r['cpus']) / r['actions'] * 1000:.2f}"),
            ("machine busy", lambda r: f"{r['machine']:.0%}"),
            ("p50 / p99 ms", lambda r: f"{r['p50'] * 1000:.1f} / {r['p99'] * 1000:.1f}"),
            ("same-node p50 / p99 ms", lambda r: _kind(r, "same", r["nodes"] == 1)),
            ("cross-node p50 / p99 ms", lambda r: _kind(r, "cross", False)),
            ("finished matches", lambda r: str(r["finished"])),
            ("end check problems", lambda r: str(r["problems"]))]
    for label, show in rows:
        print(f"{label:28}" + "".join(f"{show(r):>22}" for r in runs))
    print(f"{options.nodes} nodes / 1 node, game actions/s: "
          f"{runs[1]['actions'] / runs[0]['actions']:.2f}x")
    return 1 if any(r["problems"] for r in runs) else 0


async def clock_compare(reactor: Any, options: argparse.Namespace) -> int:
    """The same load without clocks and with ``--clock``, printed side by side."""
    runs = []
    for clock in ("", options.clock or "12s+2m"):
        print(f"== clock {clock or 'off'} ==")
        runs.append(await run(reactor, argparse.Namespace(**{**vars(options), "clock": clock})))
    print("== side by side ==")
    print(f"{'':28}" + "".join(f"{name:>22}" for name in ("clocks off", "clocks on")))
    rows = [("game actions/s", lambda r: f"{r['actions']:.0f}"),
            ("server CPU", lambda r: f"{sum(r['cpus']):.0%} of a core"),
            ("server CPU per action ms", lambda r: f"{sum(r['cpus']) / r['actions'] * 1000:.3f}"),
            ("p50 / p99 ms", lambda r: f"{r['p50'] * 1000:.1f} / {r['p99'] * 1000:.1f}"),
            ("finished matches", lambda r: str(r["finished"])),
            ("end check problems", lambda r: str(r["problems"]))]
    for label, show in rows:
        print(f"{label:28}" + "".join(f"{show(r):>22}" for r in runs))
    return 1 if any(r["problems"] for r in runs) else 0


async def side_by_side(reactor: Any, options: argparse.Namespace) -> int:
    """``--ab``: the same load against each commit named, in turn, ``--rounds`` times
    (the order reversed every other round, so no side always runs first on a machine
    whose other load drifts).  ``.`` is this checkout; any other ref is checked out
    (detached) in a temporary git worktree and its server and schema run from there,
    the clients staying this checkout's.  CPU per action is the server process's own
    (``/proc``), which a noisy machine disturbs far less than throughput."""
    scratch = Path(tempfile.mkdtemp(prefix="fibsd-ab-"))
    sides: list[tuple[str, Path | None]] = []
    try:
        for ref in options.ab.split(","):
            if ref == ".":
                sides.append((ref, None))
                continue
            tree = scratch / ref.replace("/", "_")
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet",
                            str(tree), ref], check=True)
            commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                                    check=True, capture_output=True, text=True).stdout.strip()
            sides.append((f"{ref} ({commit})" if commit != ref else ref, tree))
        results: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in sides}
        problems = 0
        for number in range(options.rounds):
            for label, tree in (sides if number % 2 == 0 else sides[::-1]):
                print(f"== round {number + 1}: {label} ==", flush=True)
                if options.stalls:  # one file per run: FILE.<ref>.<round>
                    os.environ["FIBSD_STALLS"] = str(Path(
                        f"{options.stalls}.{label.split()[0].replace('/', '_')}.{number + 1}"
                    ).resolve())
                figures = await run(reactor, argparse.Namespace(**{**vars(options),
                                                                   "tree": tree}))
                problems += figures["problems"]
                results[label].append(figures)
        print(f"== side by side: {options.matches} matches"
              + (f", {options.think} s think" if options.think else " at full speed")
              + f", {options.idle} idle users, {options.rounds} rounds of "
              f"{options.duration:.0f} s; min / median / max ==")
        for label, runs in results.items():
            per_action = [sum(r["cpus"]) / r["actions"] * 1000 for r in runs if r["actions"]]
            p99 = [r["p99"] * 1000 for r in runs]
            rate = [r["actions"] for r in runs]
            load = [r["load"] for r in runs]
            print(f"{label}: server CPU per action {_spread(per_action, '.3f')} ms; p99 "
                  f"{_spread(p99, '.0f')} ms; actions/s {_spread(rate, '.0f')}; load average "
                  f"{min(load):.1f}-{max(load):.1f}")
        return 1 if problems else 0
    finally:
        for _, tree in sides:
            if tree is not None:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force",
                                str(tree)], check=False)


def _spread(values: Sequence[float], form: str) -> str:
    if not values:
        return "-"
    return " / ".join(format(v, form) for v in (min(values), statistics.median(values),
                                                max(values)))


def _kind(figures: dict[str, Any], kind: str, all_of_them: bool) -> str:
    if all_of_them:
        return f"{figures['p50'] * 1000:.1f} / {figures['p99'] * 1000:.1f}"
    p50, p99, count = figures.get(kind, (0, 0, 0))
    return f"{p50 * 1000:.1f} / {p99 * 1000:.1f}" if count else "-"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=50, help="concurrent bot pairs")
    parser.add_argument("--idle", type=int, default=500, help="idle CLIP connections")
    parser.add_argument("--duration", type=float, default=60, help="seconds of measured play")
    parser.add_argument("--logins", type=int, default=200, help="size of the login burst")
    parser.add_argument("--length", type=int, default=3, help="match length the bots play")
    parser.add_argument("--think", type=float, default=0.0,
                        help="seconds a bot waits before each game command (0: full speed)")
    parser.add_argument("--shouts", type=int, default=3)
    parser.add_argument("--drain", type=float, default=60,
                        help="seconds the bots get to finish their matches")
    parser.add_argument("--nodelay", action="store_true", help="server sockets with TCP_NODELAY")
    parser.add_argument("--viewers", type=int, default=0,
                        help="live-board streams (web face) open during play")
    parser.add_argument("--bot-processes", type=int, default=1,
                        help="client processes the bot pairs are spread over")
    parser.add_argument("--websocket", action="store_true",
                        help="clients connect over WebSocket (/ws on the web port)")
    parser.add_argument("--cheap-bots", action="store_true",
                        help="bots play the first legal play instead of the best-scoring one")
    parser.add_argument("--cheap-passwords", action="store_true",
                        help="argon2's cheapest cost for every account and the server (fast "
                             "logins: memory at 10,000 idle users)")
    parser.add_argument("--database", default="sqlite",
                        help="sqlite (a new file), postgres (a throwaway PostgreSQL server, "
                             "durable) or the URL of an empty PostgreSQL database")
    parser.add_argument("--async-commit", action="store_true",
                        help="with --database postgres: fibsd's connections commit without "
                             "waiting for the disk (synchronous_commit=off)")
    parser.add_argument("--nodes", type=int, default=1,
                        help="fibsd nodes sharing the database and a Redis broker (>= 2: a "
                             "cluster, on PostgreSQL)")
    parser.add_argument("--cross", type=float, default=1.0,
                        help="with --nodes: the fraction of bot pairs split across two nodes")
    parser.add_argument("--compare", action="store_true",
                        help="run on one node, then on --nodes nodes, and print both")
    parser.add_argument("--clock", default="", metavar="DELAY+RESERVE",
                        help="the server's default match clock (every bot match is clocked)")
    parser.add_argument("--clock-compare", action="store_true",
                        help="run without clocks, then with --clock (12s+2m), side by side")
    parser.add_argument("--profile", metavar="FILE",
                        help="run the server's reactor thread under cProfile, stats to FILE")
    parser.add_argument("--stalls", metavar="FILE",
                        help="the server writes its reactor lateness, garbage collection "
                             "pauses and save batches' waits to FILE at exit")
    parser.add_argument("--ab", metavar="REFS",
                        help="comma-separated git refs (. is this checkout) to run the same "
                             "load against, interleaved, each from a temporary worktree")
    parser.add_argument("--rounds", type=int, default=3, help="with --ab: runs per ref")
    parser.add_argument("--serve", metavar="CONFIG", help=argparse.SUPPRESS)
    parser.add_argument("--bot-worker", metavar="PORTS", help=argparse.SUPPRESS)
    parser.add_argument("--pairs", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    options.tree = None  # the checkout whose server runs (--ab sets another one's)
    if options.cheap_passwords:  # read by write_config and create_database
        os.environ[CHEAP_PASSWORDS_ENV] = "1"
    if options.stalls:  # read by the server subprocess (serve)
        os.environ["FIBSD_STALLS"] = str(Path(options.stalls).resolve())
    if options.profile:  # read by the server subprocess (serve)
        os.environ["FIBSD_PROFILE"] = str(Path(options.profile).resolve())
    if options.ab and (options.nodes > 1 or options.compare):
        parser.error("--ab compares commits on one node: leave out --nodes and --compare")
    if options.nodes > 1 or options.compare:
        if options.database == "sqlite":
            options.database = "postgres"  # a cluster's nodes share a PostgreSQL database
        if options.viewers:
            parser.error("--viewers measures one node: leave out --nodes and --compare")
        if options.compare and options.database != "postgres":
            parser.error("--compare needs two empty databases: use --database postgres")
        if options.compare and options.nodes < 2:
            options.nodes = 2
    if not 0 <= options.cross <= 1:
        parser.error("--cross is a fraction between 0 and 1")
    global OVER_WEBSOCKET, CHEAP_BOTS
    OVER_WEBSOCKET = options.websocket
    CHEAP_BOTS = options.cheap_bots
    if options.serve:
        serve(options.serve, options.nodelay)
        return
    if options.bot_worker:
        bot_worker(options.bot_worker, options.pairs, options.length, options.think,
                   options.cross)
        return
    task.react(lambda reactor: defer.Deferred.fromCoroutine(_exit_with(reactor, options)))


async def _exit_with(reactor: Any, options: argparse.Namespace) -> None:
    if options.ab:
        code = await side_by_side(reactor, options)
    elif options.compare:
        code = await compare(reactor, options)
    elif options.clock_compare:
        code = await clock_compare(reactor, options)
    else:
        code = 1 if (await run(reactor, options))["problems"] else 0
    if code:
        raise SystemExit(code)


if __name__ == "__main__":
    main()
