"""Database outage drill (issue 19): PostgreSQL stopped and hung, again and again, under
bots playing matches on a real fibsd, and what the players saw checked against what is
stored.

    .venv/bin/python benchmarks/db_outage.py --pairs 6 --length 3 --stops 10 --hangs 3

A throwaway PostgreSQL server (PostgreSQL's defaults, fsync on: tests/postgres_server.py)
and ``python -m fibsd`` on it (``[db]`` keys at their defaults).  ``--pairs`` pairs of the
client library's bots play matches of ``--length`` points, back to back, over CLIP on
loopback, until the outages are over (then each pair finishes the match it is in; at
most ``--matches`` each).  Meanwhile the drill stops PostgreSQL (``pg_ctl stop -m
immediate``: a crash, for its clients) ``--stops`` times for 2.8 to 7.2 s and hangs it
(SIGSTOP of the postmaster and its backends) ``--hangs`` times for 16 to 19 s, with 3 to
6 s of service between outages, and then lets the bots finish.

Counted at the end, from every line each bot received and the database:

* results shown vs stored: the "wins the N point match" lines a pair's inviter saw, and
  the finished matches stored for the pair (each must be shown once and stored once);
* duplicate dice: every roll line a player saw, in order, against the rolls of the
  pair's stored matches, in order (a roll shown twice, or shown and not stored, is a
  difference);
* how long after each outage began both players of a match in play heard that it waits
  (the longest), the lines ``** The match waits ...`` and ``... goes on`` received;
* the server's log: its size, tracebacks, ``database_down``/``database_up`` and
  ``Store call ... failed`` lines.

Exit status 1 when a result or a roll differs, or a traceback was logged.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from twisted.internet import defer, task  # noqa: E402

from fibsd.client.bot import Stats  # noqa: E402
from fibsd.store.opening import open_store  # noqa: E402
from fibsd.wire import game_text as text  # noqa: E402
from tests.cluster_nodes import (  # noqa: E402
    HeldBot,
    Recording,
    create_accounts,
    listening,
    log_in,
    start_node,
)
from tests.helpers import REPO, Waits  # noqa: E402
from tests.postgres_server import PostgresServer  # noqa: E402

ROLL = re.compile(r"(You|\w+) rolls? (\d) and (\d)\.$")
WON = re.compile(r"(You|\w+) wins? the (\d+) point match")


async def sleep(reactor: Any, seconds: float) -> None:
    await task.deferLater(reactor, seconds, lambda: None)


def rolls_seen(client: Recording, me: str, names: tuple[str, str]) -> list[list[int]]:
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


async def run(reactor: Any, options: argparse.Namespace) -> int:
    rng = random.Random(options.seed)
    server = PostgresServer.start(durable=True)
    directory = server.directory
    try:
        database = server.new_database()
        letters = "abcdefghijklmnopqrstuvwxyz"
        pairs = [(f"host_{letters[n]}", f"guest_{letters[n]}") for n in range(options.pairs)]
        create_accounts(database, [name for pair in pairs for name in pair])
        config = directory / "fibsd.toml"
        config.write_text(
            f'database = "{database}"\nmotd = "{REPO / "config" / "motd.txt"}"\n'
            "web_port = 0\nidle_timeout = 0\n[passwords]\ntime_cost = 1\nmemory_kib = 64\n")
        waits = Waits(600.0)
        node = start_node(waits, config)
        port = await listening(waits, node)
        stats = Stats()
        bots: dict[str, HeldBot] = {}
        clients: dict[str, Recording] = {}
        for host, guest in pairs:
            bots[guest] = HeldBot(guest, matches=options.matches, clock=reactor, stats=stats)
            bots[host] = HeldBot(host, invite=guest, length=options.length,
                                 matches=options.matches, clock=reactor, stats=stats)
            clients[guest] = await log_in(waits, port, guest, bots[guest])
            clients[host] = await log_in(waits, port, host, bots[host])
        outages = ["stop"] * options.stops + ["hang"] * options.hangs
        rng.shuffle(outages)
        told_after: list[float] = []
        started = time.monotonic()
        for kind in outages:
            if all(bot.finished.done for bot in bots.values()):
                break
            await sleep(reactor, rng.uniform(3, 6))
            counts = {name: c.received.count(text.MATCH_WAITS) for name, c in clients.items()}
            playing = [name for name, bot in bots.items() if bot.playing]
            length = rng.uniform(2.8, 7.2) if kind == "stop" else rng.uniform(16, 19)
            began = time.monotonic()
            (server.halt if kind == "stop" else server.freeze)()
            told: dict[str, float] = {}
            while time.monotonic() - began < length:
                await sleep(reactor, 0.05)
                for name in playing:
                    if name not in told and clients[name].received.count(
                            text.MATCH_WAITS) > counts[name]:
                        told[name] = time.monotonic() - began
            (server.restart if kind == "stop" else server.thaw)()
            if told:
                told_after.append(max(told.values()))
            print(f"{kind} {length:.1f} s: {len(told)} of {len(playing)} playing told,"
                  f" latest after {max(told.values(), default=0):.2f} s", flush=True)
        for host, guest in pairs:  # the match in play is the last one of each pair
            last = max(bots[host].matches_played, bots[guest].matches_played) + 1
            bots[host].match_limit = bots[guest].match_limit = last
        waits.limit = options.finish_within
        try:
            await waits.until(lambda: all(bot.finished.done for bot in bots.values()),
                              lambda: "the bots to finish")
        except AssertionError:
            stuck = {name: clients[name].received[-6:] for name, bot in bots.items()
                     if not bot.finished.done}
            print(f"stuck: {json.dumps(stuck, indent=1)}", flush=True)
            node.signal(signal.SIGTERM)
            await waits.until(lambda: node.ended, lambda: "the server to stop")
            if options.keep_log:
                Path(options.keep_log).write_text(node.output.decode(errors="replace"))
            return 1
        played = time.monotonic() - started
        node.signal(signal.SIGTERM)
        await waits.until(lambda: node.ended, lambda: "the server to stop")
        store = open_store(database)
        shown = stored = 0
        dice_differences = 0
        rolls_checked = 0
        for host, guest in pairs:
            finished = [m for m in store.finished_matches(host) if guest in (m.winner, m.loser)]
            stored += len(finished)
            shown += sum(1 for line in clients[host].received if WON.match(line))
            expected = [roll for m in finished for roll in stored_rolls(m.record)]
            for name in (host, guest):
                seen = rolls_seen(clients[name], name, (host, guest))
                rolls_checked += len(seen)
                if seen != expected:
                    dice_differences += 1
                    print(f"{name}: {len(seen)} rolls seen, {len(expected)} stored",
                          flush=True)
        store.close()
        log = node.output.decode(errors="replace")
        figures = {
            "outages": {"stops": outages.count("stop"), "hangs": outages.count("hang")},
            "seconds played": round(played, 1),
            "matches shown": shown, "matches stored": stored,
            "players with dice differing from the store": dice_differences,
            "rolls checked": rolls_checked,
            "players told it waits, latest (s)": round(max(told_after, default=0), 2),
            "'waits' lines received": sum(c.received.count(text.MATCH_WAITS)
                                          for c in clients.values()),
            "'goes on' lines received": sum(c.received.count(text.MATCH_GOES_ON)
                                            for c in clients.values()),
            "log bytes": len(node.output), "tracebacks": log.count("Traceback"),
            "database_down": log.count("The database is down"),
            "database_up": log.count("The database is back"),
            "Store call failed lines": log.count("Store call "),
        }
        print(json.dumps(figures, indent=2), flush=True)
        if options.keep_log:
            Path(options.keep_log).write_text(log)
        good = shown == stored and dice_differences == 0 and figures["tracebacks"] == 0
        return 0 if good else 1
    finally:
        if (directory / "data" / "postmaster.pid").exists():
            server.thaw()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--length", type=int, default=3)
    parser.add_argument("--stops", type=int, default=10)
    parser.add_argument("--hangs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--keep-log", default="")
    parser.add_argument("--finish-within", type=float, default=300.0,
                        help="seconds the bots may take to finish after the last outage")
    options = parser.parse_args()

    async def react(reactor: Any) -> None:
        code = await run(reactor, options)
        os._exit(code)  # the bots' reconnecting factories would keep the reactor

    task.react(lambda reactor: defer.ensureDeferred(react(reactor)))


if __name__ == "__main__":
    main()
