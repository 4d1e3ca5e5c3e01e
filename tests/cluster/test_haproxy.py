"""The load balancer docs/cluster.md recommends, for real: Debian's HAProxy with the
configuration read out of docs/cluster.md itself (so the docs cannot drift from what
is tested; only its ports are filled in), in front of two in-process nodes of one
cluster (a real Redis) that read the PROXY protocol header the balancer sends.

Clients connect through the balancer from other loopback addresses (Linux routes all
of 127/8 to ``lo``): the nodes must see those, not the balancer's 127.0.0.1.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.threads import deferToThread
from twisted.logger import globalLogPublisher

from fibsd.wire import clip
from tests.cluster.site import Client, Site
from tests.haproxy_server import HAProxyServer, NoHAProxy

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cluster.md"


def _blocks() -> list[str]:
    """docs/cluster.md's indented (code) blocks, unindented."""
    blocks: list[list[str]] = [[]]
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if line.startswith("    "):
            blocks[-1].append(line[4:])
        elif line.strip():  # prose ends a block
            blocks.append([])
        elif blocks[-1]:
            blocks[-1].append("")
    return ["\n".join(block).strip() + "\n" for block in blocks if block]


def documented_config(port: int, nodes: list[int]) -> str:
    """The docs' HAProxy configuration with the PROXY protocol: the first example's
    ``defaults`` and ``frontend``, then the backend "The backend above becomes", on
    ``port`` and the nodes' real ports."""
    blocks = _blocks()
    first = next(b for b in blocks if b.startswith("defaults\n"))
    backend = next(b for b in blocks if b.startswith("backend fibsd\n") and "send-proxy" in b)
    config = first[:first.index("\nbackend fibsd\n") + 1] + backend
    for documented, real in (("bind :4321", f"bind 127.0.0.1:{port}"),
                             ("127.0.0.1:4401", f"127.0.0.1:{nodes[0]}"),
                             ("127.0.0.1:4402", f"127.0.0.1:{nodes[1]}")):
        assert config.count(documented) == 1, f"docs/cluster.md: {documented!r} not once"
        config = config.replace(documented, real)
    return config


def documented_node_settings() -> dict[str, Any]:
    """The ``[access]`` block docs/cluster.md tells every node to have, as overrides."""
    block = next(b for b in _blocks() if b.startswith("[access]\n"))
    return {f"access.{key}": value for key, value in tomllib.loads(block)["access"].items()}


@pytest.fixture
def refusals() -> Iterator[list[dict[str, Any]]]:
    """Every ``connection_refused`` event the nodes log."""
    seen: list[dict[str, Any]] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("event") == "connection_refused":
            seen.append({key: event.get(key) for key in ("address", "limit", "reason")})

    globalLogPublisher.addObserver(observe)
    yield seen
    globalLogPublisher.removeObserver(observe)


def test_the_documented_configuration_is_found() -> None:
    config = documented_config(4321, [4401, 4402])
    assert "balance leastconn" in config and "timeout client 2h" in config
    assert "send-proxy-v2" in config
    assert documented_node_settings() == {"access.proxy_protocol": True}


async def _through(site: Site, balancer: HAProxyServer, name: str, source: str) -> Client:
    """A CLIP login through the balancer from the loopback address ``source``."""
    site.create_account(name)
    client = Client(site, name, node=-1)
    site.clients.append(client)
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", balancer.port, bindAddress=(source, 0))
    await connectProtocol(endpoint, client)
    client.send(f"login test 1008 {name} secret")
    await client.expect("6")
    await site.waits.until(lambda: site.everywhere(name), lambda: f"{name} on every node")
    client.node = next(index for index in range(site.count)
                       if site.lobby(index).find(name) in site.lobby(index).local_users())
    return client


# The docs' ``send-proxy-v2``, and ``send-proxy`` (version 1), which they offer too: the
# checks then send ``PROXY UNKNOWN`` instead of a LOCAL header.
@pytest.mark.parametrize("header", ["send-proxy-v2", "send-proxy"])
@pytest_twisted.ensureDeferred
async def test_haproxy_in_front_of_two_nodes(tmp_path: Path, redis_url: str, header: str,
                                             refusals: list[dict[str, Any]]) -> None:
    site = Site(tmp_path, redis_url, nodes=2)
    site.settings_overrides = documented_node_settings()
    await site.start()
    try:
        balancer = await deferToThread(
            HAProxyServer.start, lambda port: documented_config(port, site.ports).replace(
                " send-proxy-v2", f" {header}"))
    except NoHAProxy as error:
        await site.stop()
        pytest.skip(f"no HAProxy can be started: {error}")
    try:
        await _run(site, balancer, refusals)
    finally:
        output = balancer.output()
        balancer.stop()
        await site.stop()
    assert "ALERT" not in output and "WARNING" not in output, output


async def _run(site: Site, balancer: HAProxyServer, refusals: list[dict[str, Any]]) -> None:
    # (1) The health checks, with their header (LOCAL or UNKNOWN), find both nodes up.
    def checked() -> dict[str, tuple[str, str, str]]:
        return {name: (row["status"], row["check_status"], row["chkfail"])
                for name, row in balancer.servers("fibsd").items()}

    passed = {"node1": ("UP", "L7OK", "0"), "node2": ("UP", "L7OK", "0")}
    await site.waits.until(lambda: checked() == passed,
                           lambda: f"checks passed: {checked()}\n{balancer.output()}")
    assert refusals == []

    # (2) Clients from 127.0.0.2 and 127.3.0.3 (masked: 127.3.x.x, which the balancer's
    # own 127.0.0.1 could not give), spread over both nodes by leastconn.
    alice = await _through(site, balancer, "alice", "127.0.0.2")
    alice_lines = alice.lines[:]
    alice.new()
    bob = await _through(site, balancer, "bob", "127.3.0.3")
    assert {alice.node, bob.node} == {0, 1}

    def who(name: str, host: str) -> str:
        login = int(site.lobby(0).find(name).login_time)
        return f"5 {name} - - 0 0 1500.00 0 0 {login} {host} test -"

    def after_prompt(lines: list[str]) -> list[str]:
        return [line for line in lines[lines.index("login: ") + 1:] if line.startswith(
            ("1 ", "5 ", "6"))]

    assert after_prompt(alice_lines) == ["1 alice 1700000000 127.0.0.2",
                                         who("alice", "127.0.0.2"), "6"]
    assert after_prompt(bob.lines) == ["1 bob 1700000000 127.3.0.3", who("alice", "127.0.x.x"),
                                       who("bob", "127.3.0.3"), "6"]
    # Alice, on the other node, sees bob log in, with his address masked.
    assert await alice.expect("6") == ["7 bob bob logs in.", who("bob", "127.3.x.x"), "6"]

    alice.send("tell bob hello from the other node")
    await bob.expect("12 alice hello from the other node")
    await alice.expect("16 bob hello from the other node")
    bob.send("tell alice hi")
    await alice.expect("12 bob hi")
    await bob.expect("16 alice hi")

    for asker, about, shown in ((alice, "alice", "127.0.0.2"), (alice, "bob", "127.3.x.x"),
                                (bob, "bob", "127.3.0.3"), (bob, "alice", "127.0.x.x")):
        login = site.lobby(asker.node).find(about).login_time
        asker.send(f"whois {about}")
        await asker.expect(f"  Last login:  {clip.format_date(login, 'UTC')} from {shown}")

    rows = balancer.servers("fibsd")
    assert (rows["node1"]["scur"], rows["node2"]["scur"]) == ("1", "1")

    # (3) Around the balancer, without a header: not a byte, closed, logged.
    direct = Client(site, "direct", node=0)
    site.clients.append(direct)
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", site.ports[0],
                                  bindAddress=("127.0.0.4", 0))
    await connectProtocol(endpoint, direct)
    direct.send("login test 1008 alice secret")
    await direct.gone()
    assert direct.lines == [] and direct._rest == b""
    assert refusals == [{"address": "127.0.0.4", "limit": "access.proxy_protocol",
                         "reason": "no PROXY protocol header"}]
    # No check failed all the while (and no server went down: no WARNING, see above).
    assert checked() == passed
