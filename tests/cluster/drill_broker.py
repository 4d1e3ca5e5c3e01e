"""Issue 19's first two drills against the cluster, again: prints what happens now.

Not part of the suite (no ``test_`` file name, nothing asserted, real waits); run it
on purpose with the suite's fixtures (a private Redis)::

    .venv/bin/python -m pytest -q -s tests/cluster/drill_broker.py

``test_publish_attacks``: a client of Redis without the secret publishes the nine
attacks of the drill, 155 copies of the 20-byte malformed message and 500 hellos of
invented node names; then a holder of the secret invents 500 node names, and a real
node forwards an ``admin`` command for a user who is no admin.
``test_outages``: a 0.6 s broker outage while a forwarded command is on its way, with
the player typing a forwarded command every 0.1 s, then three outages of 1.5 s with the
default heartbeat and ``dead_after_ms``.  Figures: benchmarks/README.md, "Abuse".
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import deferLater
from twisted.logger import globalLogPublisher

from fibsd.cluster.envelope import Envelope
from tests.cluster.site import SECRET, Site
from tests.cluster.test_nodes_failing import ROLLS
from tests.cluster.test_outages import _two_players
from tests.cluster.test_security import Listener, publish
from tests.redis_server import RedisServer

STATE = {"t": {}, "v": {}, "a": None, "g": [], "bl": [], "w": None, "p": None, "r": 1500.0,
         "x": 0, "e": "", "dt": None, "wf": [], "i": 0.0}


@pytest_twisted.ensureDeferred
async def test_publish_attacks(tmp_path: Path, redis_server: RedisServer) -> None:
    site = Site(tmp_path, redis_server.url, nodes=2)
    site.settings_overrides = {"admins": ("root",)}
    events: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(events.append)
    site.dice.add(list(ROLLS))
    await site.start()
    spy = Listener(redis_server.port, b"fibsd:node:n0")
    try:
        alice, bob = await _two_players(site)
        carol = await site.login("carol", node=0)
        clients = (alice, bob, carol)
        seen = {c.name: len(c.lines) for c in clients}
        n0, n1 = (s.cluster for s in site.services)
        links = (n0.broker._subscriber, n1.broker._subscriber)
        port = redis_server.port
        to0, every = b"fibsd:node:n0", b"fibsd:all"
        login = {"u": "root", "k": [time.time(), "n1"], "lt": 0, "h": "x", "sh": "x",
                 "c": None, "ct": 0, "s": STATE}
        attacks = [  # the nine of the drill (the ninth, reading, is below)
            (to0, [["d", "s", ["** Server moved: log in at evil.example"], ["alice"]]]),
            (to0, [["d", "c", ["12 bob tell me your password"], ["alice"]]]),
            (to0, [["f", "bob", "admin", "alert pwned", 1]]),
            (to0, [["f", "bob", "admin", "password carol hacked", 2]]),
            (to0, [["in", login, "7 root root logs in.", None],
                   ["f", "root", "admin", "ban bob", 3]]),
            (to0, [["f", "bob", "resign", "n", 4]]),
            (to0, [["d", "x", [True, None], ["alice"]]]),
            (every, [["hello"]]),
        ]
        for channel, items in attacks:
            publish(port, channel, json.dumps({"n": "n1", "b": items}).encode())
        for _ in range(155):
            publish(port, to0, b'{"n":"n2","b":5}')
        for i in range(500):
            publish(port, every, json.dumps({"n": f"fake{i}", "b": [["hello"]]}).encode())
        bob.send("tell alice probe")
        await alice.expect("12 bob probe")
        spy.read()
        print("\nwithout the secret:")
        print("  lines the users got:", {c.name: c.lines[seen[c.name]:] for c in clients})
        print("  broker links kept:", (n0.broker._subscriber, n1.broker._subscriber) == links)
        print("  dropped:", dict(n0.dropped), dict(n1.dropped))
        print("  limit events logged:",
              sum(1 for e in events if str(e.get("limit", "")).startswith("cluster.")))
        print("  peers:", sorted(n0.peers), sorted(n1.peers), "; match:",
              sorted(site.lobby(0).matches), "; root online:", site.lobby(0).find("root"))
        print("  the tell readable by any subscriber (encrypt = false):",
              any(b"probe" in p for p in spy.payloads))
        before = len(events)
        for i in range(500):
            liar = Envelope(SECRET, f"fake{i}", False, reactor)
            publish(port, every, liar.seal(every, 0, [["hello"]]))
        await n0.round_trip()
        new = events[before:]
        print("with the secret, 500 invented node names:",
              "'joined' log lines", sum("joined" in str(e.get("log_format")) for e in new),
              "of", len(new), "events; peers of n0:", len(n0.peers),
              "; dropped:", dict(n0.dropped))
        n1.send("n0", ["f", "bob", "admin", "alert pwned", 99])
        n1._flush()
        print("a real node forwards 'admin alert' for bob:",
              (await bob.expect("** Unknown command: 'admin'"))[-1],
              "; alerts shown:", sum("pwned" in line for c in clients for line in c.lines))
    finally:
        spy.close()
        globalLogPublisher.removeObserver(events.append)
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_outages(tmp_path: Path, redis_server: RedisServer) -> None:
    site = Site(tmp_path, redis_server.url, nodes=2)
    site.settings_overrides = {"cluster.heartbeat_ms": 1000, "cluster.dead_after_ms": 3000}
    site.dice.add(list(ROLLS))
    await site.start()
    try:
        alice, bob = await _two_players(site)
        bob.new()
        answered = sorry = 0
        started = time.time()
        for i in range(100):
            if i == 5:  # on its way to alice's node when the broker goes
                redis_server.process.send_signal(signal.SIGSTOP)
                bob.send("board")
                await deferLater(reactor, 0.05, lambda: None)
                redis_server.kill()
                reactor.callLater(0.6, redis_server.start_again)
            else:
                bob.send("board")
            got = await bob.expect(lambda l: l.startswith(("board:", "** Sorry")))
            answered += 1
            sorry += got[-1].startswith("** Sorry")
            await deferLater(reactor, 0.1, lambda: None)
        print(f"\n0.6 s outage: {answered} answers to 100 forwarded commands in "
              f"{time.time() - started:.1f} s, {sorry} of them `** Sorry, that command got "
              "no answer in time; it may not have been done.`")
        deaths = 0
        for _ in range(3):
            seen = len(bob.lines), len(alice.lines)
            redis_server.kill()
            await deferLater(reactor, 1.5, lambda: None)
            redis_server.start_again()
            await site.waits.until(lambda: all(s.cluster.broker.connected
                                               for s in site.services), lambda: "linked")
            await deferLater(reactor, 4.0, lambda: None)
            lines = bob.lines[seen[0]:] + alice.lines[seen[1]:]
            deaths += any("drops connection" in line for line in lines)
        bob.send("board")
        await bob.expect(lambda line: line.startswith("board:"))
        print(f"1.5 s outages: {deaths} of 3 with a node taken for dead; the match:",
              sorted(site.lobby(0).matches), "; bob's board after them: answered")
    finally:
        await site.stop()
