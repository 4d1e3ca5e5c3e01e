"""Memory an idle CLIP user holds in the server, by tracemalloc, in one process.

    .venv/bin/python benchmarks/idle_memory.py --users 10000

An in-memory server (tests/helpers.py's ``FakeServer``: the real lobby, sessions and
commands, SQLite in memory, cheap password hashes) gets ``--users`` CLIP logins
(``login idle 1008 <name> secret``) on transports that drop what is written to them, as
a client that reads everything would leave nothing queued.  After the first
``--warm`` logins (lobby tables grown, caches filled) a tracemalloc snapshot is taken,
then again after the rest; the difference divided by the users logged in between is
what one more idle user holds, and the largest lines of it say where it goes.

The login fan-out to the other users (their CLIP 7 and 5 lines) is written as usual
but costs O(users) each; ``--quiet-logins`` replaces it with nothing for the warm-up
logins (it leaves nothing behind per user once written), so 10,000 users take
seconds.  Not counted: the socket transport itself (Twisted's ``tcp.Server``, about
1 KB; a bare LineReceiver measured by RSS is 1.2 KB all told) and the kernel's buffers.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# ``--tree DIR``: another commit's checkout (a ``git worktree``), its server and its
# test helpers measured instead of this one's; read before anything is imported.
TREE = (Path(sys.argv[sys.argv.index("--tree") + 1]).resolve() if "--tree" in sys.argv
        else REPO)
sys.path.insert(0, str(TREE))

from twisted.internet.address import IPv4Address  # noqa: E402
from twisted.internet.testing import StringTransport  # noqa: E402

from tests.helpers import FakeServer, make_settings  # noqa: E402


class DroppingTransport(StringTransport):
    """A connected client that has read everything: nothing stays buffered."""

    def write(self, data: bytes) -> None:
        pass

    def writeSequence(self, data: Any) -> None:
        pass


def account_names(count: int) -> list[str]:
    """``count`` FIBS names (letters only): ia, ib, ..., iba, ..."""
    names = []
    for number in range(count):
        letters = ""
        while True:
            number, digit = divmod(number, 26)
            letters = chr(ord("a") + digit) + letters
            if number == 0:
                break
        names.append("i" + letters)
    return names


def log_in(server: FakeServer, names: list[str], protocols: list[Any]) -> None:
    for number, name in enumerate(names):
        peer = IPv4Address("TCP", f"10.{number // 65536 % 256}.{number // 256 % 256}."
                                  f"{number % 256}", 40000)
        protocol = server.factory.buildProtocol(peer)
        protocol.makeConnection(DroppingTransport(peerAddress=peer))
        protocol.dataReceived(f"login idle 1008 {name} secret\r\n".encode())
        protocols.append(protocol)
    server.services.lobby.feed.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=10000)
    parser.add_argument("--warm", type=int, default=0,
                        help="logins before the first snapshot (default: 90%% of --users)")
    parser.add_argument("--quiet-logins", action="store_true",
                        help="no fan-out to the others for the warm-up logins")
    parser.add_argument("--top", type=int, default=12, help="largest lines shown")
    parser.add_argument("--tree", help="another commit's checkout to measure")
    options = parser.parse_args()
    warm = options.warm or options.users * 9 // 10
    server = FakeServer(settings=make_settings(**{"limits.max_users": options.users + 10}))
    names = account_names(options.users)
    started = time.perf_counter()
    for name in names:
        server.register(name)
    lobby = server.services.lobby
    protocols: list[Any] = []
    if options.quiet_logins:
        # What a login's fan-out walks: ``local_users`` (``users`` in older commits).
        walk = "local_users" if hasattr(lobby, "local_users") else "users"
        setattr(lobby, walk, lambda: ())
        log_in(server, names[:warm], protocols)
        delattr(lobby, walk)  # the class's method again
    else:
        log_in(server, names[:warm], protocols)
    tracemalloc.start(4)
    gc.collect()
    before = tracemalloc.take_snapshot()
    log_in(server, names[warm:], protocols)
    gc.collect()
    after = tracemalloc.take_snapshot()
    online = len(lobby.online)
    measured = options.users - warm
    if online != options.users:
        raise SystemExit(f"{online} users online, not {options.users}")
    stats = after.compare_to(before, "lineno")
    total = sum(stat.size_diff for stat in stats)
    print(f"{TREE}: {online} idle CLIP users online ({time.perf_counter() - started:.0f} s); "
          f"the last {measured} hold {total / measured:,.0f} bytes each "
          f"({total / measured / 1024:.2f} KB)")
    for stat in sorted(stats, key=lambda s: -s.size_diff)[:options.top]:
        frame = stat.traceback[0]
        print(f"  {stat.size_diff / measured:8,.0f} B  {stat.count_diff / measured:5.1f} "
              f"blocks  {Path(frame.filename).name}:{frame.lineno}")


if __name__ == "__main__":
    main()
