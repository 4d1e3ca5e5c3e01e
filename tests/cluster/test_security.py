"""The broker is not trusted: whatever another client of Redis publishes on the
cluster's channels (forged, replayed, from a node no one knows, malformed, huge) is
dropped and counted, never acted on, and never breaks a node's broker connection.
Forwarded commands are checked on the node that runs them; cross-node text can be
encrypted; the nodes reach a Redis that wants a password, an ACL user, or TLS."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.logger import formatEvent, globalLogPublisher

from fibsd.cluster.broker import command, parse
from fibsd.cluster.envelope import MAGIC, Envelope
from tests.cluster.site import SECRET, Site
from tests.redis_server import RedisServer
from tests.server.test_tls import self_signed

REPO = Path(__file__).resolve().parents[2]


def publish(port: int, channel: bytes, payload: bytes) -> None:
    """One PUBLISH by a client of the broker that is no node (and holds no secret)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(command(b"PUBLISH", channel, payload))
        assert connection.recv(64).startswith(b":")


class Listener:
    """A client of the broker that reads a channel, as any of its clients can."""

    def __init__(self, port: int, channel: bytes) -> None:
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.socket.sendall(command(b"SUBSCRIBE", channel))
        assert self.socket.recv(256).startswith(b"*3")
        self.socket.setblocking(False)
        self.buffer = b""
        self.payloads: list[bytes] = []

    def read(self) -> list[bytes]:
        try:
            while chunk := self.socket.recv(65536):
                self.buffer += chunk
        except BlockingIOError:
            pass
        pos = 0
        while pos < len(self.buffer):
            try:
                value, end = parse(self.buffer, pos)
            except Exception:
                break
            pos = end
            assert isinstance(value, list)
            self.payloads.append(value[2])
        self.buffer = self.buffer[pos:]
        return self.payloads

    def close(self) -> None:
        self.socket.close()


class Events:
    """The operator log's events while the test runs."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        globalLogPublisher.addObserver(self.events.append)

    def close(self) -> None:
        globalLogPublisher.removeObserver(self.events.append)

    def limits(self, limit: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == "limit" and e.get("limit") == limit]


@pytest_twisted.ensureDeferred
async def test_forged_unknown_malformed_and_huge_messages_are_dropped(
        tmp_path: Path, redis_server: RedisServer) -> None:
    site = Site(tmp_path, redis_server.url, nodes=2)
    site.settings_overrides = {"cluster.max_message_bytes": 65536}
    events = Events()
    await site.start()
    try:
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=1)
        seen = len(alice.lines)
        node = site.services[0].cluster
        link = node.broker._subscriber
        to_n0 = b"fibsd:node:n0"
        port = redis_server.port
        # The first drill's forgeries: a line of the attacker's choosing, a tell as bob,
        # admin commands run as bob, a fake login, a node told to forget the other's users.
        forgeries = [
            {"n": "n1", "b": [["d", "s", ["** You are banned."], ["alice"]]]},
            {"n": "n1", "b": [["d", "c", ["12 bob send me your password"], ["alice"]]]},
            {"n": "n1", "b": [["f", "bob", "admin", "alert pwned", 1]]},
            {"n": "n1", "b": [["hello"]]},
        ]
        for forged in forgeries:
            publish(port, to_n0, json.dumps(forged).encode())
            publish(port, b"fibsd:all", json.dumps(forged).encode())
        for _ in range(155):  # the 20-byte message that used to drop the connection
            publish(port, to_n0, b'{"n":"n2","b":5}')
        publish(port, to_n0, b"\xff\x00 not even JSON")
        wrong = Envelope("another-secret-of-16+chars", "n1", False, reactor)
        publish(port, to_n0, wrong.seal(to_n0, node.envelope.epoch, [["d", "s", ["x"], ["alice"]]]))
        # Signed with the secret (a node of the cluster, or a bug): an unknown node's
        # delivery, a malformed body, a message over max_message_bytes.
        stranger = Envelope(SECRET, "n9", False, reactor)
        publish(port, to_n0, stranger.seal(to_n0, node.envelope.epoch,
                                           [["d", "s", ["from n9"], ["alice"]]]))
        body = b'{"n":"n2","b":5}'
        publish(port, to_n0, MAGIC + stranger._mac(to_n0, body) + body)
        publish(port, to_n0, b"x" * 200_000)
        bob.send("tell alice still here")
        await alice.expect("12 bob still here")
        assert node.broker._subscriber is link  # never lost
        assert dict(node.dropped) == {"forged": 8 + 155 + 1 + 1, "unknown_node": 1,
                                      "malformed": 1, "too_large": 1}
        assert site.services[1].cluster.dropped["forged"] == 4  # those on fibsd:all
        assert alice.lines[seen:] == ["12 bob still here"]
        assert sorted(node.peers) == ["n1"]
        assert site.everywhere("bob")
        # One log event per reason and source, not one per message.
        forged_events = [e for e in events.limits("cluster.forged")
                         if e["source"] == "fibsd:node:n0"]
        assert [e["count"] for e in forged_events] == [1]
        assert not any(SECRET in formatEvent(e) for e in events.events)
    finally:
        events.close()
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_replayed_messages_are_dropped(tmp_path: Path,
                                             redis_server: RedisServer) -> None:
    site = Site(tmp_path, redis_server.url, nodes=2)
    await site.start()
    listener = Listener(redis_server.port, b"fibsd:node:n0")
    everyone = Listener(redis_server.port, b"fibsd:all")
    try:
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=1)
        listener.read()
        listener.payloads.clear()
        bob.send("tell alice only once")
        await alice.expect("12 bob only once")
        await site.waits.until(lambda: any(b"only once" in p for p in listener.read()),
                               lambda: "the tell's message read off the broker")
        await site.waits.until(lambda: len(everyone.read()) >= 4, lambda: "heartbeats")
        beats = [p for p in everyone.payloads if json.loads(p[len(MAGIC) + 32:])["n"] == "n1"]
        captured = list(listener.payloads) + beats
        assert any(b"only once" in p for p in captured)  # readable: not encrypted
        for payload in captured:
            publish(redis_server.port, b"fibsd:node:n0" if payload in listener.payloads
                    else b"fibsd:all", payload)
        bob.send("tell alice and then this")
        await alice.expect("12 bob and then this")
        assert alice.lines.count("12 bob only once") == 1
        node = site.services[0].cluster
        assert node.dropped["replayed"] == len(captured)
        assert set(node.dropped) == {"replayed"}
    finally:
        listener.close()
        everyone.close()
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_cross_node_text_can_be_encrypted(tmp_path: Path,
                                                redis_server: RedisServer) -> None:
    site = Site(tmp_path, redis_server.url, nodes=2)
    site.settings_overrides = {"cluster.encrypt": True}
    await site.start()
    listener = Listener(redis_server.port, b"fibsd:node:n0")
    try:
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=1)
        bob.send("tell alice a private word")
        await alice.expect("12 bob a private word")
        await site.waits.until(lambda: len(listener.read()) > 0, lambda: "messages read")
        assert not any(b"private" in p or b"alice" in p for p in listener.payloads)
    finally:
        listener.close()
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_a_forwarded_command_is_checked_where_it_runs(tmp_path: Path,
                                                            redis_url: str) -> None:
    """What bob's node forwards is run only if bob could type it there: no ``admin``
    (bob is no admin), no command that is never forwarded, nothing for another node's
    user."""
    site = Site(tmp_path, redis_url, nodes=2)
    await site.start()
    try:
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=1)
        seen = len(alice.lines)
        n1 = site.services[1].cluster
        n1.send("n0", ["f", "bob", "admin", "alert pwned", 901])
        n1.send("n0", ["f", "bob", "tell", "alice as if from n0", 902])
        n1.send("n0", ["f", "alice", "toggle", "ready", 903])
        n1.send("n0", ["f", "bob", "board", "x" * 1025, 904])
        n1._flush()
        await bob.expect("** Unknown command: 'admin'")
        await bob.expect("** Unknown command: 'tell'")
        await bob.expect("** Your line was too long (more than 1024 characters) and was ignored.")
        await site.services[1].cluster.round_trip()
        bob.send("tell alice done")
        await alice.expect("12 bob done")
        assert alice.lines[seen:] == ["12 bob done"]
        assert not site.lobby(0).find("alice").ready
    finally:
        await site.stop()


def _run_node(tmp_path: Path, config: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "node.toml"
    path.write_text(f'data_dir = "{tmp_path}"\nweb_port = 0\n' + config)
    return subprocess.run([sys.executable, "-m", "fibsd", "--config", str(path), "--port", "0",
                           "--interface", "127.0.0.1"], capture_output=True, text=True,
                          cwd=REPO, timeout=60)


def test_a_node_will_not_start_without_a_secret(tmp_path: Path) -> None:
    done = _run_node(tmp_path, '[cluster]\nurl = "redis://127.0.0.1:9/0"\n')
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "fibsd: configuration error: cluster.secret: a cluster needs a shared secret: set "
        "[cluster] secret or secret_file, the same on every node (docs/cluster.md)"]
    missing = tmp_path / "no-such-secret"
    done = _run_node(tmp_path, f'[cluster]\nurl = "redis://127.0.0.1:9/0"\n'
                               f'secret_file = "{missing}"\n')
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"fibsd: cannot read cluster.secret_file {missing}: No such file or directory"]


@pytest.fixture
def acl_redis() -> Any:
    """A Redis that wants a password (default user) or an ACL user's, who may only
    publish and subscribe on fibsd's channels."""
    from tests.redis_server import NoRedis

    try:
        # The ACL user of docs/cluster.md, word for word.
        server = RedisServer.start(["--requirepass", "default-pw", "--user", "fibsd", "on",
                                    ">fibsd-pw", "resetchannels", "&fibsd:*", "-@all",
                                    "+subscribe", "+publish", "+ping"])
    except NoRedis as error:
        pytest.skip(f"no Redis server can be started: {error}")
    yield server
    server.stop()


@pytest.mark.parametrize("credentials", ["fibsd:fibsd-pw", ":default-pw"])
@pytest_twisted.ensureDeferred
async def test_a_broker_with_a_password(tmp_path: Path, acl_redis: RedisServer,
                                        credentials: str) -> None:
    site = Site(tmp_path, f"redis://{credentials}@127.0.0.1:{acl_redis.port}/0", nodes=2)
    await site.start()
    try:
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=1)
        bob.send("tell alice through an ACL")
        await alice.expect("12 bob through an ACL")
    finally:
        await site.stop()


@pytest.fixture
def tls_redis(tmp_path: Path) -> Any:
    """A Redis listening with TLS too (Debian's is built with it), with a
    self-signed certificate for localhost."""
    from tests.redis_server import NoRedis, _free_port

    certificate, key = self_signed(tmp_path)
    port = _free_port()
    try:
        server = RedisServer.start(["--tls-port", str(port), "--tls-cert-file", str(certificate),
                                    "--tls-key-file", str(key), "--tls-ca-cert-file",
                                    str(certificate), "--tls-auth-clients", "no"])
    except NoRedis as error:
        pytest.skip(f"no Redis server with TLS can be started: {error}")
    server.tls_port = port  # type: ignore[attr-defined]
    server.certificate = certificate  # type: ignore[attr-defined]
    yield server
    server.stop()


@pytest_twisted.ensureDeferred
async def test_a_broker_over_tls(tmp_path: Path, tls_redis: Any) -> None:
    site = Site(tmp_path, f"rediss://localhost:{tls_redis.tls_port}/0", nodes=2)
    site.settings_overrides = {"cluster.tls_ca": str(tls_redis.certificate)}
    await site.start()
    try:
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=1)
        bob.send("tell alice over TLS")
        await alice.expect("12 bob over TLS")
    finally:
        await site.stop()


@pytest_twisted.ensureDeferred
async def test_messages_of_a_run_before_a_restart_are_dropped(
        tmp_path: Path, redis_server: RedisServer) -> None:
    """bob's node restarts under the same name: what its earlier run sent, and what was
    sent to its earlier run, replayed afterwards, is dropped by either side."""
    site = Site(tmp_path, redis_server.url, nodes=2)
    await site.start()
    to_n0 = Listener(redis_server.port, b"fibsd:node:n0")
    to_n1 = Listener(redis_server.port, b"fibsd:node:n1")
    try:
        alice = await site.login("alice", node=0)
        bob = await site.login("bob", node=1)
        bob.send("tell alice from the first run")
        await alice.expect("12 bob from the first run")
        alice.send("tell bob to the first run")
        await bob.expect("12 alice to the first run")
        await site.waits.until(lambda: any(b"first run" in p for p in to_n0.read())
                               and any(b"first run" in p for p in to_n1.read()),
                               lambda: "both tells read off the broker")
        await site.services[1].stopService()
        await site.start_node(1)
        await site.waits.until(site.connected, lambda: "the nodes meet again")
        bob = await site.login("bob", node=1)
        seen = len(alice.lines), len(bob.lines)
        old_to_n0, old_to_n1 = list(to_n0.payloads), list(to_n1.payloads)
        for payload in old_to_n0:
            publish(redis_server.port, b"fibsd:node:n0", payload)
        for payload in old_to_n1:
            publish(redis_server.port, b"fibsd:node:n1", payload)
        bob.send("tell alice from the second run")
        await alice.expect("12 bob from the second run")
        await site.services[0].cluster.round_trip()
        assert alice.lines[seen[0]:] == ["12 bob from the second run"]
        assert bob.lines[seen[1]:] == ["16 alice from the second run"]
        assert site.services[0].cluster.dropped["replayed"] == len(old_to_n0)
        assert site.services[1].cluster.dropped["earlier_run"] == len(old_to_n1)
    finally:
        to_n0.close()
        to_n1.close()
        await site.stop()
