"""Real fibsd nodes for the process-level cluster tests: ``python -m fibsd --cluster``
processes on one PostgreSQL database and one Redis broker, and CLIP connections to
them through the client library (``fibsd.client``) that keep every line they receive.

A node is the kill drill's ``Server`` (a process protocol that learns the port the
node listens on); a connection is the library's ``ClipClientProtocol`` that also
records its lines, so a test can assert exact lines per recipient, and pokes the
test's ``Waits`` whenever something arrives.  ``HeldBot`` is the library's ``Bot``
with a hand on the brake: while held it keeps its game commands back, so a test can
stop a match at a known point (to watch, chat or kill a node) and let it go again.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.protocol import connectionDone
from twisted.python.failure import Failure

from fibsd.client.bot import Bot
from fibsd.client.protocol import ClipClientFactory, ClipClientProtocol, Credentials
from fibsd.store import Store
from fibsd.store.opening import open_store
from tests.helpers import Waits, strip_echo
from tests.server.test_kill_drill import Server

REPO = Path(__file__).resolve().parent.parent
PASSWORD = "secret"
SECRET = "tests-cluster-secret-0123456789"  # the nodes' shared [cluster] secret
GAME_COMMANDS = frozenset({"roll", "move", "double", "accept", "reject"})
# The lines the chat and presence assertions look at: CLIP 7/8 (logins, logouts), 12-19
# (tell, say, shout, whisper, kibitz and their echoes) and the kibitz/whisper count.
SOCIAL = re.compile(r"(?:[78]|1[2-9]) |\*\* \d+ users? heard you\.$")


def create_accounts(database: str, names: Iterable[str]) -> None:
    """Accounts with the password ``secret``, hashed at a cheap argon2 cost."""
    hashed = argon2.using(type="ID", memory_cost=64, time_cost=1).hash(PASSWORD)
    store = open_store(database)
    try:
        for name in names:
            store.create_user(name, hashed, 1_700_000_000)
    finally:
        store.close()


def write_config(directory: Path, name: str, database: str, broker: str, *,
                 heartbeat_ms: int = 200, dead_after_ms: int = 1000) -> Path:
    """A node's config: the shared database and broker, a short heartbeat, no web face,
    no drop grace (a cluster has none: the single node compared with it must not
    either, protocol/play.md 6)."""
    config = directory / f"{name}.toml"
    config.write_text(
        f'database = "{database}"\nmotd = "{REPO / "config" / "motd.txt"}"\n'
        "web_port = 0\nidle_timeout = 0\n"
        "[passwords]\ntime_cost = 1\nmemory_kib = 64\n[pace]\ndrop_grace = 0\n"
        f'[cluster]\nurl = "{broker}"\nnode = "{name}"\nsecret = "{SECRET}"\n'
        f"heartbeat_ms = {heartbeat_ms}\ndead_after_ms = {dead_after_ms}\n")
    return config


def start_node(waits: Waits, config: Path) -> Server:
    """``python -m fibsd --config CONFIG`` on a loopback port of its own choosing."""
    node = Server(waits)
    environ = {**os.environ, "PYTHONUNBUFFERED": "1"}
    reactor.spawnProcess(node, sys.executable,  # type: ignore[attr-defined]
                         [sys.executable, "-m", "fibsd", "--config", str(config),
                          "--port", "0", "--interface", "127.0.0.1"],
                         env=environ, path=str(REPO))
    return node


async def listening(waits: Waits, node: Server) -> int:
    await waits.until(lambda: node.port is not None or node.ended,
                      lambda: f"a node to listen; it said {node.output[-800:]!r}")
    assert node.port is not None, node.output.decode(errors="replace")
    return node.port


class Recording(ClipClientProtocol):
    """A CLIP connection that keeps every line it receives, telnet bytes removed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.received: list[str] = []
        self.lost = False

    def lineReceived(self, line: bytes) -> None:
        self.received.append(strip_echo(line).decode("latin-1"))
        super().lineReceived(line)
        self.factory.waits.poke()

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.lost = True
        super().connectionLost(reason)
        self.factory.waits.poke()

    def social(self) -> list[str]:
        """The chat and presence lines received so far, in order."""
        return [line for line in self.received if SOCIAL.match(line)]

    def saw(self, line: str) -> bool:
        return line in self.received

    def boards(self) -> int:
        return sum(line.startswith("board:") for line in self.received)


class RecordingFactory(ClipClientFactory):
    protocol = Recording

    def __init__(self, waits: Waits, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waits = waits


async def log_in(waits: Waits, port: int, name: str, bot: Bot | None = None) -> Recording:
    """A CLIP login of ``name`` on the node at ``port``; ``bot`` plays on it."""
    factory = RecordingFactory(waits, Credentials(name, PASSWORD, "nodes"), bot,
                               clock=reactor, connected=bot.attach if bot else None)
    reactor.connectTCP("127.0.0.1", port, factory)  # type: ignore[attr-defined]
    await waits.until(lambda: factory.first_login.done, lambda: f"{name} to log in")
    protocol = await factory.first_login.wait()
    assert isinstance(protocol, Recording)
    return protocol


class HeldBot(Bot):
    """The library's bot; while ``held`` its game commands wait in ``queue``."""

    def __init__(self, *args: Any, held: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.held = held
        self.queue: list[str] = []

    def send(self, command: str) -> None:
        if self.held and command.split(" ", 1)[0] in GAME_COMMANDS:
            self.queue.append(command)
        else:
            super().send(command)

    def release(self) -> None:
        """Let go, sending what was kept back."""
        self.held = False
        queued, self.queue = self.queue, []
        for command in queued:
            super().send(command)


def check_finished(store: Store, pairs: Iterable[tuple[str, str, int]]) -> None:
    """The end check (as the kill drill's): for each (player, player, matches started),
    exactly that many finished and none saved; every rating is 1500 plus its recorded
    changes, every experience the sum of the lengths played."""
    finished = []
    names = set()
    for first, second, started in pairs:
        assert store.load_match(first, second) is None, (first, second)
        own = [m for m in store.finished_matches(first) if second in (m.winner, m.loser)]
        assert len(own) == started, (first, second, own)
        finished += own
        names |= {first, second}
    for name in sorted(names):
        user = store.get_user(name)
        assert user is not None
        mine = [m for m in finished if name in (m.winner, m.loser)]
        changes = [m.winner_rating_change if m.winner == name else m.loser_rating_change
                   for m in mine]
        assert abs(user.rating - (1500 + sum(changes))) < 1e-6, (name, user.rating, changes)
        assert user.experience == sum(m.length for m in mine), name
