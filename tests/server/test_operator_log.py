"""The operator's log: one event per registration, login, logout, match start, save,
resume and end, read back from both output formats (JSON lines parsed, text lines
matched); an error names its user and command; no password appears anywhere."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from twisted.logger import LogLevel, globalLogPublisher

from fibsd.operator_log import level_named, observer
from fibsd.rules.dice import ScriptedDice
from fibsd.server import commands
from tests.helpers import FakeClient, FakeServer

PASSWORD = "pw-carol-77"


def play_a_session(server: FakeServer) -> None:
    """carol registers and leaves; alice logs in with a wrong password then the right one;
    alice and carol start a 1-point match, alice leaves it (saved), they resume it, carol
    resigns and alice accepts (the end); everyone logs out."""
    server.lobby.dice = ScriptedDice([(3, 5)] * 20)
    server.lobby.coin = lambda: 0
    carol = server.connect("10.0.0.3")
    for line in ("guest", "name carol", PASSWORD, PASSWORD, "bye"):
        carol.send(line)
    alice = server.connect("10.0.0.1")
    alice.send("login test 1008 alice wrong")
    alice.send("login test 1008 alice secret")
    carol = server.connect("10.0.0.3")
    carol.send(f"login test 1008 carol {PASSWORD}")
    for client in (alice, carol):
        client.send("toggle ready")
    alice.send("invite carol 1")
    carol.send("join alice")
    alice.send("leave")
    carol.send("invite alice")
    alice.send("join carol")
    carol.send("resign n")
    alice.send("accept")
    for client in (alice, carol):
        client.send("bye")


@pytest.fixture
def events() -> Any:
    caught: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(caught.append)
    yield caught
    globalLogPublisher.removeObserver(caught.append)


def test_a_session_logs_one_event_each_in_json_lines_and_text(events: list[Any]) -> None:
    server = FakeServer()
    server.register("alice")
    play_a_session(server)
    json_out, text_out = io.StringIO(), io.StringIO()
    as_json = observer(json_out, "json", LogLevel.info)
    as_text = observer(text_out, "text", LogLevel.info)
    for event in events:
        as_json(event)
        as_text(event)
    records = [json.loads(line) for line in json_out.getvalue().splitlines()]
    mine = [(r["event"], r.get("user") or r.get("players") or r.get("winner"))
            for r in records if r.get("event") is not None]
    assert mine == [
        ("registration", "carol"),
        ("login", "carol"),
        ("logout", "carol"),
        ("login_failed", "alice"),
        ("login", "alice"),
        ("login", "carol"),
        ("match_start", ["alice", "carol"]),
        ("match_save", ["alice", "carol"]),
        ("match_resume", ["alice", "carol"]),
        ("match_end", "alice"),
        ("logout", "alice"),
        ("logout", "carol"),
    ]
    registration = next(r for r in records if r.get("event") == "registration")
    assert registration["address"] == "10.0.0.3"
    failed = next(r for r in records if r.get("event") == "login_failed")
    assert failed["address"] == "10.0.0.1"
    text = text_out.getvalue()
    for sentence in ("carol registers from 10.0.0.3", "alice logs in from 10.0.0.1",
                     "alice and carol start a 1-point match",
                     "match of alice and carol saved: alice left",
                     "alice and carol resume a 1-point match",
                     "alice wins a 1-point match against carol 1-0",
                     "carol logs out from 10.0.0.3"):
        assert sentence in text
    assert len(text.splitlines()) == len(records)
    assert PASSWORD not in json_out.getvalue() + text


def test_an_error_names_the_user_and_the_command(events: list[Any],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(session: Any, rest: str) -> None:
        raise RuntimeError("bug")

    monkeypatch.setitem(commands.COMMANDS, "wave",
                        commands.Command("wave", broken))
    server = FakeServer()
    server.register("alice")
    alice: FakeClient = server.connect()
    alice.send("login test 1008 alice secret")
    alice.send("wave")
    [error] = [e for e in events if e.get("event") == "error"]
    assert (error["user"], error["command"], error["log_level"]) == (
        "alice", "wave", LogLevel.critical)
    assert "** Sorry, the server could not complete that command." in alice.lines()


def test_levels_filter_and_bad_names_are_refused() -> None:
    out = io.StringIO()
    log = observer(out, "json", level_named("WARN"))
    for level in (LogLevel.info, LogLevel.warn):
        log({"log_level": level, "log_format": "x", "log_time": 0.0, "log_namespace": "t",
             "event": level.name})
    assert [json.loads(line)["event"] for line in out.getvalue().splitlines()] == ["warn"]
    with pytest.raises(ValueError, match="--log-level must be one of"):
        level_named("loud")
    with pytest.raises(ValueError, match="--log-format must be one of"):
        observer(out, "xml", LogLevel.info)


def test_the_server_writes_json_lines_to_its_log_file(tmp_path: Path) -> None:
    log_file = tmp_path / "logs" / "fibsd.jsonl"
    server = subprocess.Popen(
        [sys.executable, "-m", "fibsd", "--port", "0", "--web-port", "0",
         "--interface", "127.0.0.1", "--data-dir", str(tmp_path / "data"), "--log-file", str(log_file),
         "--log-format", "json", "--log-level", "info"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
    try:
        port = _wait_for_port(log_file)
        import socket

        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(b"guest\r\nname dora\r\n" + PASSWORD.encode() + b"\r\n"
                         + PASSWORD.encode() + b"\r\n")
            received = b""
            while b"You are registered." not in received:
                chunk = conn.recv(4096)
                assert chunk, received
                received += chunk
            conn.sendall(b"bye\r\n")
            while conn.recv(4096):
                pass
        server.terminate()
        assert server.wait(timeout=20) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [(r["event"], r["user"]) for r in records if "event" in r] == [
        ("registration", "dora"), ("login", "dora"), ("logout", "dora")]
    assert "fibsd stopped; database closed" in [r.get("log_format") for r in records]
    assert (tmp_path / "data" / "fibsd.sqlite").is_file()
    assert PASSWORD not in log_file.read_text()


def _wait_for_port(log_file: Path) -> int:
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if log_file.exists():
            found = re.search(r'"port": ([0-9]+)', log_file.read_text())
            if found and "listening" in log_file.read_text():
                return int(found.group(1))
        time.sleep(0.05)
    raise AssertionError(f"the server never logged its port: {log_file}")


def test_refusals_by_a_limit_name_the_config_key(events: list[Any]) -> None:
    from tests.helpers import make_settings

    server = FakeServer(settings=make_settings(**{"limits.max_users": 1,
                                                  "limits.login_attempts": 2}))
    for name in ("alice", "bob"):
        server.register(name)
    server.connect().send("login test 1008 alice secret")
    bob = server.connect("10.0.0.2")
    bob.send("login test 1008 bob secret")
    guesser = server.connect("10.0.0.9")
    for _ in range(2):
        guesser.send("login test 1008 bob wrong")
    assert [(e["limit"], e.get("user"), e["address"]) for e in events
            if e.get("event") == "limit"] == [
        ("limits.max_users", "bob", "10.0.0.2"), ("limits.login_attempts", None, "10.0.0.9")]
