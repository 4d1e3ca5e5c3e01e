"""Users on two nodes see each other as on one server: logins, logouts, who, chat.

Each script runs twice, on one node and on two (users split between them); every
client must receive the same lines in the same order both times."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted

from tests.cluster.site import Site, play

CHAT = [
    ("login", "alice", True),
    ("login", "carol", False),
    ("login", "bob", True),
    ("send", "bob", "rawwho", ("bob", "6")),
    ("send", "bob", "tell alice hello there", ("alice", "12 bob hello there"),
     ("bob", "16 alice hello there")),
    ("send", "alice", "tell carol hi carol", ("carol", "alice tells: hi carol")),
    ("send", "carol", "shout anyone here?", ("alice", "13 carol anyone here?"),
     ("bob", "13 carol anyone here?")),
    ("send", "alice", "away having tea", ("alice", "6"), ("bob", "6")),
    ("send", "carol", "tell alice are you there?",
     ("carol", "alice is away: having tea")),
    ("send", "bob", "who", ("bob", "6")),
    ("send", "carol", "waitfor dave", ("carol", "** Waiting for dave to log in.")),
    ("login", "dave", True),
    # What his login causes on carol's node reaches him a broker trip after his login
    # block: the script waits for it, as a person would not type quicker.
    ("came", "", ("dave", "carol is waiting for you to log in."),
     ("carol", "** FINALLY!!! dave logs in")),
    ("send", "dave", "tell carol here I am", ("carol", "dave tells: here I am")),
    ("send", "dave", "message alice see you", ("dave", "10 alice")),
    ("bye", "bob"),
    ("send", "carol", "kibitz hello", ("carol", "** You're not watching or playing.")),
]
PLACES = {"alice": 0, "bob": 1, "carol": 1, "dave": 0}


@pytest_twisted.ensureDeferred
async def test_chat_and_presence_as_on_one_node(tmp_path: Path, redis_url: str) -> None:
    one = Site(tmp_path / "one", None, nodes=1)
    (tmp_path / "one").mkdir()
    await one.start()
    try:
        alone = await play(one, PLACES, CHAT)
    finally:
        await one.stop()
    two = Site(tmp_path, redis_url, nodes=2)
    await two.start()
    try:
        cluster = await play(two, PLACES, CHAT)
    finally:
        await two.stop()
    for name in alone:
        assert cluster[name] == alone[name], name
    assert "7 bob bob logs in." in cluster["alice"]
    assert "8 bob bob logs out." in cluster["alice"]
    assert "bob logs out." in cluster["carol"]
    assert "12 bob hello there" in cluster["alice"]


@pytest_twisted.ensureDeferred
async def test_whois_and_kick_across_nodes(tmp_path: Path, redis_url: str) -> None:
    site = Site(tmp_path, redis_url, nodes=2)
    site.settings_overrides = {"admins": ["root"]}
    await site.start()
    try:
        root = await site.login("root", node=0, clip=False)
        bob = await site.login("bob", node=1)
        root.send("whois bob")
        lines = await root.expect(lambda line: "Still logged in." in line)
        assert any(line.endswith("Information about bob:") for line in lines)
        root.send("admin kick bob")
        assert (await root.expect(lambda line: "kicked" in line))[-1].endswith(
            "** bob was kicked off the server.")
        await bob.gone()
        await site.waits.until(lambda: site.nowhere("bob"), lambda: "bob gone")
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_a_shutdown_countdown_reaches_only_the_users_of_its_node(
        tmp_path: Path, redis_url: str) -> None:
    """``admin shutdown`` stops the node it is typed on: only its users are warned."""
    site = Site(tmp_path, redis_url, nodes=2)
    site.settings_overrides = {"admins": ["root"]}
    await site.start()
    try:
        root = await site.login("root", node=0, clip=False)
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=1)
        warning = "** The server will shut down in 600 seconds (upgrade)."
        root.send("admin shutdown 600 upgrade")
        await alice.expect(warning)
        root.send("admin shutdown cancel")
        await alice.expect("** The shutdown was cancelled.")
        # Node 0's lines reach node 1 in the order they were made: the tell comes last.
        root.send("tell bob still here")
        lines = await bob.expect("12 root still here")
        assert not [line for line in lines if "shut" in line]
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_max_users_counts_the_users_of_every_node(tmp_path: Path, redis_url: str) -> None:
    """Every node keeps every user of the cluster (proxies for the others'), so the
    cap on users is the cluster's, and it bounds each node's memory."""
    site = Site(tmp_path, redis_url, nodes=2)
    site.settings_overrides = {"limits.max_users": 2}
    await site.start()
    try:
        await site.login("alice", node=0)
        await site.login("bob", node=1)
        site.create_account("carol")
        carol = await site.connect("carol", node=0)
        carol.send("login test 1008 carol secret")
        await carol.expect("** Sorry, the server is full. Please try again later.")
        await carol.gone()
        assert site.nowhere("carol")
    finally:
        await site.stop()
