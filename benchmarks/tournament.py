"""A 256-player knockout of 1-point matches played by bots, against the same matches
played outside a tournament (issue 25).

One ``python -m fibsd`` process on a loopback port; the bots are ``TournamentBot``s in
this process (each on its own TCP connection, as ``fibsd-bot --tournament`` would be;
256 bot processes would not fit on two cores).  Two runs on fresh databases:

* **tournament**: 256 accounts enter one knockout (``--lengths 1``); the server pairs
  each round, sets up the invitations, and the bots join and play, round after round,
  until the champion;
* **plain**: the same 255 matches without a tournament, in the same shape: 128 pairs,
  then 64, ... then 1, each pair a ``Bot`` that invites (``--invite``, one match) and one
  that accepts; a round starts when the round before has ended.

For each: wall time from the first login to the last result, and the server's CPU time
(user + system from /proc) over the same span, per match.  Run from the repository root:

    .venv/bin/python benchmarks/tournament.py [--players 256]
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from twisted.internet import reactor  # noqa: E402
from twisted.internet.defer import Deferred  # noqa: E402

from fibsd.client.bot import Bot  # noqa: E402
from fibsd.client.protocol import Credentials, connect  # noqa: E402
from fibsd.store.sqlite import SQLiteStore  # noqa: E402
from tests.helpers import Waits  # noqa: E402
from tests.tournament import field  # noqa: E402

LIMIT = float(os.environ.get("BENCH_LIMIT", "3600"))


def cpu(server: Any) -> float:
    return float(server.usage()[1])


async def start(tmp: Path, names: list[str], with_tournament: bool) -> tuple[Any, int, Path]:
    database, config, _ = field.prepare(tmp, names, fmt="knockout", lengths=[1],
                                        start_timeout=600)
    if not with_tournament:  # the same accounts, no tournament
        store = SQLiteStore(database)
        store.finish_tournament(1, None, 0)
        store.close()
    port = field.free_port()
    server = field.start_server(Waits(LIMIT), config, port)
    await field.until(lambda: server.port is not None or server.ended, "the server", 120)
    return server, port, database


async def tournament_run(tmp: Path, names: list[str]) -> tuple[float, float, int]:
    server, port, database = await start(tmp, names, True)
    try:
        began, cpu0 = time.monotonic(), cpu(server)
        bots = [field.bot(name, 1, port) for name in names]
        await field.until(lambda: field.read(database, 1)[0].state == "finished",
                          "the champion", LIMIT)
        wall, used = time.monotonic() - began, cpu(server) - cpu0
        _, _, pairings = field.read(database, 1)
        matches = sum(p.match_id is not None for p in pairings)
        for player in bots:
            field.drop_out(player)
        return wall, used, matches
    finally:
        server.signal(signal.SIGTERM)
        await field.until(lambda: server.ended, "the server to stop", 120)


async def plain_run(tmp: Path, names: list[str]) -> tuple[float, float, int]:
    server, port, _ = await start(tmp, names, False)
    try:
        began, cpu0 = time.monotonic(), cpu(server)
        bots = {name: PlainBot(name, matches=0, clock=reactor) for name in names}
        for bot in bots.values():  # everyone logged in once, as in the tournament
            connect(reactor, "127.0.0.1", port, Credentials(bot.name, "secret", "fibsd-bot"),
                    bot, connected=bot.attach)
        await field.until(lambda: all(b.logged_in and b.ready and b.looked
                                      for b in bots.values()), "the logins", LIMIT)
        field_now, matches = list(names), 0
        while len(field_now) > 1:
            pairs = [(bots[a], bots[b]) for a, b in zip(field_now[::2], field_now[1::2])]
            for host, guest in pairs:
                for bot in (host, guest):
                    bot.won = False
                    bot.match_limit = bot.matches_played + 1
                host.invite_name, guest.invite_name = guest.name, host.name
                host._next()  # invites, as fibsd-bot --invite does once ready
            await field.until(lambda: all(b.matches_played == b.match_limit and not b.playing
                                          for pair in pairs for b in pair),
                              "a round: " + repr([(b.name, b.matches_played, b.match_limit,
                                                   b.playing) for p in pairs for b in p]),
                              LIMIT)
            field_now = [h.name if h.won else g.name for h, g in pairs]
            matches += len(pairs)
        wall, used = time.monotonic() - began, cpu(server) - cpu0
        for bot in bots.values():
            field.drop_out(bot)
        return wall, used, matches
    finally:
        server.signal(signal.SIGTERM)
        await field.until(lambda: server.ended, "the server to stop", 120)


class PlainBot(Bot):
    """A ``Bot`` that notes whether it won its match (``You win ...``)."""

    won = False
    logged_in = False

    def on_OwnInfo(self, event: Any) -> None:
        self.logged_in = True
        super().on_OwnInfo(event)

    def on_MatchWon(self, event: Any) -> None:
        if self.playing and event.player == "You":
            self.won = True
        super().on_MatchWon(event)

    def _finish(self) -> None:
        """A round's match is over: stay logged in for the next round."""


async def main(options: argparse.Namespace) -> None:
    names = field.bot_names(options.players)
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        t_wall, t_cpu, t_matches = await tournament_run(Path(first), names)
        p_wall, p_cpu, p_matches = await plain_run(Path(second), names)
    print(f"players {options.players}, cores {os.cpu_count()}")
    for label, wall, used, matches in (("tournament", t_wall, t_cpu, t_matches),
                                       ("plain", p_wall, p_cpu, p_matches)):
        print(f"{label:10} matches {matches:4}  wall {wall:7.1f} s  server CPU {used:7.1f} s"
              f"  per match: wall {1000 * wall / matches:7.1f} ms,"
              f" CPU {1000 * used / matches:6.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=256)
    options = parser.parse_args()
    outcome: dict[str, Any] = {}

    def done(result: Any) -> None:
        outcome["result"] = result
        reactor.stop()  # type: ignore[attr-defined]

    reactor.callWhenRunning(  # type: ignore[attr-defined]
        lambda: Deferred.fromCoroutine(main(options)).addBoth(done))
    reactor.run()  # type: ignore[attr-defined]
    failure = outcome.get("result")
    if failure is not None and hasattr(failure, "printTraceback"):
        print(failure.getTraceback(), file=sys.stderr)
        sys.exit(1)
