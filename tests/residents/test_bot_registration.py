"""``fibsd-bot --register`` marks the new account as a bot (``set bot yes`` right after
its first login, protocol/bots.md); an account that exists already is left as it is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest_twisted
from twisted.internet.threads import deferToThread

from tests.residents.test_resident_bots import resident_server, until


def start_bot(port: int, name: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "FIBSD_BOT_PASSWORD": "botsecret"}
    return subprocess.Popen([sys.executable, "-m", "fibsd.client.bot", "--port", str(port),
                             "--server", "127.0.0.1", "--name", name, "--register"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


@pytest_twisted.ensureDeferred
async def test_a_bot_that_registers_is_marked(tmp_path: Path) -> None:
    service, port = await resident_server(tmp_path)
    await service.db.create_user("oldbot", "x", 1)  # exists: --register logs in (or not)
    bots = [start_bot(port, "newbot"), start_bot(port, "oldbot")]
    try:
        found: list[bool] = []

        def check() -> bool:
            service.db.get_user("newbot").addCallback(
                lambda record: found.append(record is not None and record.bot))
            return bool(found and found[-1])

        await until(check, "newbot marked as a bot")
        assert not (await service.db.get_user("oldbot")).bot
    finally:
        for bot in bots:
            bot.send_signal(signal.SIGTERM)
            await deferToThread(bot.wait, 60)
        await service.stopService()
