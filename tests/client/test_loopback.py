"""The client against a real fibsd on a loopback socket: register as a guest, log in over CLIP,
talk - and not one line the client could not classify."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults

from fibsd.app import FibsService
from fibsd.client import events as ev
from fibsd.client.protocol import ClipClientProtocol, Credentials, connect
from tests.helpers import make_settings

WAIT = 10.0  # seconds any step may take on a slow machine


async def start_server(tmp_path: Path) -> tuple[FibsService, int]:
    settings = make_settings(port=0, interface="127.0.0.1", database=str(tmp_path / "fibsd.sqlite"),
                             **{"passwords.memory_kib": 64, "passwords.time_cost": 1})
    service = FibsService(settings, reactor)
    service.startService()
    port = await service.listening
    return service, int(port.getHost().port)


async def log_in(port: int, credentials: Credentials, register: bool) -> ClipClientProtocol:
    events: list[ev.Event] = []
    factory, ready = connect(reactor, "127.0.0.1", port, credentials, events.append, register=register)
    ready.addTimeout(WAIT, reactor)
    protocol: ClipClientProtocol = await ready
    last_prompt = max(i for i, event in enumerate(events) if event == ev.Prompt("login: "))
    assert events[last_prompt + 1] == ev.Empty()  # the server ends the prompt line first
    assert events[last_prompt + 2] == ev.Welcome(credentials.name, events[last_prompt + 2].last_login,
                                                 events[last_prompt + 2].last_host)
    if register:
        assert ev.Registered() in events[:last_prompt]
    return protocol


async def close(protocol: ClipClientProtocol) -> None:
    closed = protocol.closed.wait()
    protocol.transport.loseConnection()
    await closed


@pytest_twisted.ensureDeferred
async def test_register_log_in_and_talk(tmp_path: Path) -> None:
    service, port = await start_server(tmp_path)
    try:
        alice = await log_in(port, Credentials("alice", "secret", "fibsd_test"), register=True)
        bob = await log_in(port, Credentials("bob", "hunter", "fibsd_test"), register=True)
        heard: Deferred[ev.Says] = alice.wait_for(ev.Says, timeout=None)
        echoed: Deferred[ev.YouSay] = bob.wait_for(ev.YouSay)
        bob.send("tell alice hello there")
        both = gatherResults([heard, echoed]).addTimeout(WAIT, reactor)
        assert await both == [ev.Says("bob", "hello there"), ev.YouSay("alice", "hello there")]
        who_end = bob.wait_for(ev.WhoEnd).addTimeout(WAIT, reactor)
        bob.send("rawwho alice")
        await who_end
        assert alice.unknown_lines == [] and bob.unknown_lines == []
        await close(alice)
        await close(bob)
    finally:
        await service.stopService()
