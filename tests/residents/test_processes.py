"""``fibsd`` and ``fibsd bots`` as processes (issue 24): the server's resident bots are
its children, stopped with it; ``fibsd bots`` runs the same bots without the server."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest_twisted
from twisted.internet.threads import deferToThread

from tests.residents.test_resident_bots import resident_server, until

TIMEOUT = 90.0

CONFIG = """interface = "127.0.0.1"
port = 0
web_port = 0
data_dir = "{directory}"
[passwords]
memory_kib = 64
time_cost = 1
[bots]
port = {port}
[[bots.resident]]
name = "HeuristicBot"
"""


def environment() -> dict[str, str]:
    """The tests' environment without FIBSD_BOTS=off (tests/conftest.py)."""
    return {key: value for key, value in os.environ.items() if key != "FIBSD_BOTS"}


def read_until(process: subprocess.Popen[str], pattern: str) -> list[str]:
    assert process.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + TIMEOUT
    for line in process.stdout:
        seen.append(line)
        if re.search(pattern, line):
            return seen
        assert time.monotonic() < deadline, "".join(seen)
    raise AssertionError("".join(seen))


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_server_stops_its_bots_when_it_stops(tmp_path: Path) -> None:
    (tmp_path / "fibsd.toml").write_text(CONFIG.format(directory=tmp_path, port=0))
    server = subprocess.Popen([sys.executable, "-m", "fibsd", "--config",
                               str(tmp_path / "fibsd.toml")], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=environment())
    try:
        started = "".join(read_until(server, r"HeuristicBot logs in from 127\.0\.0\.1"))
        pid = int(re.search(r"resident bot HeuristicBot running \(pid (\d+)\)", started)[1])
        assert alive(pid)
        server.send_signal(signal.SIGTERM)
        rest, _ = server.communicate(timeout=TIMEOUT)
    finally:
        server.kill()
    assert server.returncode == 0
    assert "resident bot HeuristicBot stopped" in rest
    assert not alive(pid)
    assert "Traceback" not in started + rest


def test_the_server_without_bots(tmp_path: Path) -> None:
    (tmp_path / "fibsd.toml").write_text(CONFIG.format(directory=tmp_path, port=0))
    server = subprocess.Popen([sys.executable, "-m", "fibsd", "--config",
                               str(tmp_path / "fibsd.toml")], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env={**environment(), "FIBSD_BOTS": "off"})
    try:
        read_until(server, r"fibsd listening on")
        server.send_signal(signal.SIGTERM)
        rest, _ = server.communicate(timeout=TIMEOUT)
    finally:
        server.kill()
    assert "resident bot" not in rest
    assert not (tmp_path / "bots").exists()


@pytest_twisted.ensureDeferred
async def test_fibsd_bots_runs_the_sites_bots_on_their_own(tmp_path: Path) -> None:
    service, port = await resident_server(tmp_path)  # a server without bots of its own
    (tmp_path / "fibsd.toml").write_text(CONFIG.format(directory=tmp_path, port=port))
    runner = subprocess.Popen(
        [sys.executable, "-m", "fibsd", "--config", str(tmp_path / "fibsd.toml"),
         "--database", str(tmp_path / "fibsd.sqlite"), "bots"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment())
    try:
        await until(lambda: service.shared.lobby.find("HeuristicBot") is not None,
                    "the bot of fibsd bots to log in")
        assert (await service.db.get_user("HeuristicBot")).bot
        runner.send_signal(signal.SIGTERM)
        rest, _ = await deferToThread(runner.communicate, timeout=TIMEOUT)
        await until(lambda: service.shared.lobby.find("HeuristicBot") is None,
                    "the bot to log out")
    finally:
        runner.kill()
        await service.stopService()
    assert "resident bot HeuristicBot stopped" in rest
    assert runner.returncode == 0
