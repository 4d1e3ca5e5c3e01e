"""Two real fibsd nodes as one server (issue 14's "Done when"), at process level: a
private Redis broker (``redis_url``), one PostgreSQL database (``postgres_url``) and two
``python -m fibsd --cluster`` processes, driven by CLIP connections of the client
library (``tests/cluster_nodes.py``).

* A match between users on different nodes, played to the end by the library's bots,
  while users on both nodes watch it, chat (say, kibitz, whisper, tell, shout reach
  exactly the right people, in order) and are told of logins and logouts (CLIP 7/8).
* One node is killed (SIGKILL) mid-match: its users show as gone on the other node
  within ``dead_after_ms`` (plus slack), the match is in the database, and the two
  players, both on the surviving node, resume it and finish it; the database adds up.

Every wait is for lines or processes, bounded by ``WAIT``.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import deferLater

from fibsd.client.bot import Stats
from fibsd.store.opening import open_store
from tests.cluster_nodes import (
    HeldBot,
    Recording,
    check_finished,
    create_accounts,
    listening,
    log_in,
    start_node,
    write_config,
)
from tests.helpers import Waits
from tests.server.test_kill_drill import Server

pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'fibsd[postgres]'")

WAIT = 30.0  # seconds any one wait may take
HEARTBEAT_MS, DEAD_AFTER_MS = 200, 1000
GONE_SLACK = 4.0  # seconds beyond dead_after_ms a dead node's users may take to be gone
NAMES = ("alice", "bob", "carol", "dave")
MATCH_END = re.compile(r"(You|\w+) wins? the (\d+) point match (\d+)-(\d+) \.")


async def two_nodes(waits: Waits, tmp_path: Path, database: str,
                    broker: str) -> tuple[list[Server], list[int]]:
    create_accounts(database, NAMES)
    nodes = [start_node(waits, write_config(tmp_path, name, database, broker,
                                            heartbeat_ms=HEARTBEAT_MS,
                                            dead_after_ms=DEAD_AFTER_MS))
             for name in ("north", "south")]
    return nodes, [await listening(waits, node) for node in nodes]


async def stop(waits: Waits, nodes: list[Server]) -> None:
    """SIGTERM every node still running; each must end with exit status 0."""
    running = [node for node in nodes if not node.ended]
    for node in running:
        node.signal(signal.SIGTERM)
    await waits.until(lambda: all(node.ended for node in nodes), lambda: "the nodes to stop")
    for node in running:
        assert node.exit_code == 0, node.output[-2000:]


def kill_all(nodes: list[Server]) -> None:
    for node in nodes:
        if not node.ended:
            node.signal(signal.SIGKILL)


async def lines(waits: Waits, expected: dict[str, list[str]],
                clients: dict[str, Recording]) -> None:
    """Wait until each named client has received each of its lines."""
    for name, wanted in expected.items():
        client = clients[name]
        await waits.until(lambda: all(client.saw(line) for line in wanted),
                          lambda: f"{name} to get {wanted}; got {client.received[-30:]}")


@pytest_twisted.ensureDeferred
async def test_a_match_across_nodes_is_watched_chatted_about_and_played_out(
        tmp_path: Path, postgres_url: str, redis_url: str) -> None:
    waits = Waits(WAIT)
    nodes, (north, south) = await two_nodes(waits, tmp_path, postgres_url, redis_url)
    try:
        stats = Stats()
        bots = {"alice": HeldBot("alice", matches=1, clock=reactor, stats=stats, held=True),
                "bob": HeldBot("bob", invite="alice", length=1, matches=1, clock=reactor,
                               stats=stats, held=True)}
        c: dict[str, Recording] = {}
        c["carol"] = await log_in(waits, north, "carol")
        c["dave"] = await log_in(waits, south, "dave")
        await lines(waits, {"carol": ["7 dave dave logs in."]}, c)
        c["alice"] = await log_in(waits, north, "alice", bots["alice"])
        await lines(waits, {"carol": ["7 alice alice logs in."],
                            "dave": ["7 alice alice logs in."]}, c)
        c["bob"] = await log_in(waits, south, "bob", bots["bob"])
        await lines(waits, {who: ["7 bob bob logs in."] for who in ("alice", "carol", "dave")},
                    c)
        # bob's login block (CLIP 5 lines before the 6) shows the users of both nodes
        block = c["bob"].received[:c["bob"].received.index("6")]
        assert sorted(line.split()[1] for line in block if line.startswith("5 ")) == \
            sorted(NAMES)

        # bob (south) invites alice (north); the bots hold their first game command
        await waits.until(lambda: bots["alice"].playing and bots["bob"].playing,
                          lambda: f"the match to start: alice {c['alice'].received[-10:]}, "
                                  f"bob {c['bob'].received[-10:]}")
        c["carol"].send("watch bob")
        c["dave"].send("watch alice")
        await lines(waits, {"carol": ["You're now watching bob."],
                            "dave": ["You're now watching alice."],
                            "bob": ["carol is watching you."],
                            "alice": ["dave is watching you."]}, c)

        c["alice"].send("say good luck")
        await lines(waits, {"bob": ["12 alice good luck"], "alice": ["16 bob good luck"]}, c)
        c["carol"].send("kibitz nice opening")
        await lines(waits, {"alice": ["15 carol nice opening"], "bob": ["15 carol nice opening"],
                            "dave": ["15 carol nice opening"],
                            "carol": ["19 nice opening", "** 3 users heard you."]}, c)
        c["dave"].send("whisper psst")
        await lines(waits, {"carol": ["14 dave psst"],
                            "dave": ["18 psst", "** 1 user heard you."]}, c)
        c["carol"].send("tell bob hi bob")
        await lines(waits, {"bob": ["12 carol hi bob"], "carol": ["16 bob hi bob"]}, c)
        c["dave"].send("shout hello all")
        await lines(waits, {**{who: ["13 dave hello all"] for who in ("alice", "bob", "carol")},
                            "dave": ["17 hello all"]}, c)

        for bot in bots.values():
            bot.release()
        await waits.until(lambda: bots["alice"].finished.done and bots["bob"].finished.done,
                          lambda: f"the match to end: alice {c['alice'].received[-10:]}, "
                                  f"bob {c['bob'].received[-10:]}")
        ends = {who: [line for line in c[who].received if MATCH_END.fullmatch(line)]
                for who in ("alice", "bob")}
        assert sorted(line.startswith("You win ") for line in ends["alice"] + ends["bob"]) \
            == [False, True], ends
        # the watchers, one on each node, see the end as the loser does: the winner named
        [named] = [line for line in ends["alice"] + ends["bob"] if not line.startswith("You")]
        await lines(waits, {who: [named] for who in ("carol", "dave")}, c)
        assert stats.errors == [], stats.errors

        c["alice"].send("bye")
        await lines(waits, {who: ["8 alice alice logs out."] for who in ("bob", "carol", "dave")},
                    c)
        c["bob"].send("bye")
        await lines(waits, {who: ["8 bob bob logs out."] for who in ("carol", "dave")}, c)

        # per recipient: exactly these chat and presence lines, in this order
        assert c["carol"].social() == [
            "7 dave dave logs in.", "7 alice alice logs in.", "7 bob bob logs in.",
            "19 nice opening", "** 3 users heard you.", "14 dave psst", "16 bob hi bob",
            "13 dave hello all", "8 alice alice logs out.", "8 bob bob logs out."]
        assert c["dave"].social() == [
            "7 alice alice logs in.", "7 bob bob logs in.", "15 carol nice opening",
            "18 psst", "** 1 user heard you.", "17 hello all", "8 alice alice logs out.",
            "8 bob bob logs out."]
        assert c["alice"].social() == [
            "7 bob bob logs in.", "16 bob good luck", "15 carol nice opening",
            "13 dave hello all"]
        assert c["bob"].social() == [
            "12 alice good luck", "15 carol nice opening", "12 carol hi bob",
            "13 dave hello all", "8 alice alice logs out."]
        await stop(waits, nodes)
    finally:
        kill_all(nodes)
    store = open_store(postgres_url)
    try:
        check_finished(store, [("alice", "bob", 1)])
    finally:
        store.close()


@pytest.mark.parametrize("killed", ["inviter's", "invitee's"])
@pytest_twisted.ensureDeferred
async def test_a_killed_node_s_users_are_gone_and_its_match_resumes_on_the_other(
        tmp_path: Path, postgres_url: str, redis_url: str, killed: str) -> None:
    """bob (south) invites alice (north) to 3 points, so the match lives on south (where
    ``join`` runs: the inviter's node).  Killing the inviter's node loses the match's
    node (alice is told, the match resumes from the database); killing the invitee's
    loses a player of a match that lives on (south saves it as on a dropped
    connection)."""
    waits = Waits(WAIT)
    nodes, ports = await two_nodes(waits, tmp_path, postgres_url, redis_url)
    home = {"alice": 0, "carol": 0, "bob": 1, "dave": 1}  # north: 0, south: 1
    dead = 1 if killed == "inviter's" else 0
    alive = 1 - dead
    gone = [name for name, node in home.items() if node == dead]
    stays = [name for name, node in home.items() if node == alive]
    victim = "bob" if dead == 1 else "alice"  # the player whose node dies
    survivor = "alice" if victim == "bob" else "bob"
    observer = "carol" if alive == 0 else "dave"
    try:
        stats = Stats()
        bots = {"alice": HeldBot("alice", matches=1, clock=reactor, stats=stats),
                "bob": HeldBot("bob", invite="alice", length=3, matches=1, clock=reactor,
                               stats=stats)}
        c: dict[str, Recording] = {}
        for name in ("carol", "dave", "alice", "bob"):
            c[name] = await log_in(waits, ports[home[name]], name, bots.get(name))
        # mid-match: after some boards, the bots stop and the node is killed
        await waits.until(lambda: c["alice"].boards() + c["bob"].boards() >= 12,
                          lambda: f"12 boards: alice {c['alice'].received[-10:]}")
        assert not bots["alice"].finished.done, "the match ended before the kill"
        for bot in bots.values():
            bot.held = True
        killed_at = time.monotonic()
        nodes[dead].signal(signal.SIGKILL)
        await waits.until(lambda: nodes[dead].ended and all(c[n].lost for n in gone),
                          lambda: "the killed node to end and its users to be cut off")
        # the dead node's users show as gone on the surviving node, in a few seconds
        await lines(waits, {who: [f"8 {name} {name} drops connection." for name in gone]
                            for who in stays}, c)
        took = time.monotonic() - killed_at
        print(f"the {killed} node's users were gone on the other node {took:.2f} s after "
              f"the SIGKILL (dead_after_ms = {DEAD_AFTER_MS})")
        assert took < DEAD_AFTER_MS / 1000 + GONE_SLACK, took
        await lines(waits, {survivor: [f"{victim} drops connection. The game was saved."]}, c)
        assert not any(c[observer].saw(f"8 {name} {name} logs out.") for name in gone)
        store = open_store(postgres_url)
        try:
            saved = store.load_match("alice", "bob")
            assert saved is not None and saved.record, "the match was not saved"
        finally:
            store.close()

        # the victim logs in to the surviving node and resumes the match there
        # (it finds the match in show saved and invites; the survivor invites at its
        # login too: whichever join comes first resumes it)
        comeback = HeldBot(victim, matches=1, clock=reactor, stats=stats)
        bots[survivor].queue.clear()
        bots[survivor].release()
        c[victim] = await log_in(waits, ports[alive], victim, comeback)
        resumed = (f"{survivor} has joined you. Your running match was loaded.",
                   f"You are now playing with {survivor}. Your running match was loaded.")
        await waits.until(lambda: any(c[victim].saw(line) for line in resumed),
                          lambda: f"the resume: {victim} {c[victim].received[-10:]}")
        await waits.until(lambda: comeback.finished.done and bots[survivor].finished.done,
                          lambda: f"the resumed match to end: {victim} "
                                  f"{c[victim].received[-10:]}, {survivor} "
                                  f"{c[survivor].received[-10:]}")
        assert stats.errors == [], stats.errors
        await stop(waits, nodes)
    finally:
        kill_all(nodes)
    store = open_store(postgres_url)
    try:
        check_finished(store, [("alice", "bob", 1)])
        [finished] = store.finished_matches("alice")
        assert finished.length == 3 and finished.winner_points >= 3
    finally:
        store.close()




@pytest_twisted.ensureDeferred
async def test_a_node_that_stood_still_hears_the_others_before_judging_them(
        tmp_path: Path, postgres_url: str, redis_url: str) -> None:
    """north is stopped (SIGSTOP) for three times its ``dead_after_ms``, then goes on.
    Its heartbeat timer is overdue and runs before its sockets are read, where south's
    heartbeats of that time wait: they count before north judges, so bob (south) stays
    online for alice (north).  (south's own ``dead_after_ms`` is long: it keeps north.)"""
    waits = Waits(WAIT)
    create_accounts(postgres_url, ("alice", "bob"))
    north = start_node(waits, write_config(tmp_path, "north", postgres_url, redis_url,
                                           heartbeat_ms=HEARTBEAT_MS,
                                           dead_after_ms=DEAD_AFTER_MS))
    south = start_node(waits, write_config(tmp_path, "south", postgres_url, redis_url,
                                           heartbeat_ms=HEARTBEAT_MS, dead_after_ms=60_000))
    try:
        ports = [await listening(waits, node) for node in (north, south)]
        alice = await log_in(waits, ports[0], "alice")
        await log_in(waits, ports[1], "bob")
        await waits.until(lambda: any(line.startswith("5 bob ") for line in alice.received),
                          lambda: f"alice to see bob: {alice.received[-5:]}")
        assert north.transport is not None
        os.kill(north.transport.pid, signal.SIGSTOP)
        # The stop's length is the scenario (three deaths long), not a wait for anything.
        await deferLater(reactor, 3 * DEAD_AFTER_MS / 1000, lambda: None)
        os.kill(north.transport.pid, signal.SIGCONT)
        seen = len(alice.received)
        alice.sendLine(b"rawwho")  # read by north after its overdue timers ran
        await waits.until(lambda: "6" in alice.received[seen:],
                          lambda: f"alice's rawwho: {alice.received[seen:]}")
        after = alice.received[seen:]
        assert "8 bob bob drops connection." not in after, after
        assert any(line.startswith("5 bob ") for line in after), after
    finally:
        kill_all([north, south])
