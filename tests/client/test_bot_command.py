"""The ``fibsd-bot`` command as a process against a real fibsd on loopback: the password
from a file or the environment, ``--register`` without a failed login, a log that says
what the bot does, SIGTERM, and help text for every option."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from passlib.hash import argon2
from twisted.internet import reactor
from twisted.internet.protocol import ProcessProtocol
from twisted.logger import globalLogPublisher
from twisted.python.failure import Failure

from fibsd.app import FibsService
from fibsd.client.bot.command import PASSWORD_VARIABLE, build_parser, parse_args
from tests.client.test_loopback import start_server
from tests.helpers import Waits, make_settings

WAIT = 30.0
REPO = Path(__file__).resolve().parents[2]


class BotProcess(ProcessProtocol):
    """``python -m fibsd.client.bot`` with its output kept."""

    def __init__(self, waits: Waits) -> None:
        self.waits = waits
        self.out = self.err = ""
        self.exit_code: int | None = None
        self.ended = False

    def outReceived(self, data: bytes) -> None:
        self.out += data.decode()
        self.waits.poke()

    def errReceived(self, data: bytes) -> None:
        self.err += data.decode()
        self.waits.poke()

    def processEnded(self, reason: Failure) -> None:
        self.ended = True
        self.exit_code = getattr(reason.value, "exitCode", None)
        self.waits.poke()

    def stop(self) -> None:
        if not self.ended and self.transport is not None:
            self.transport.signalProcess("TERM")


def spawn(waits: Waits, port: int, *args: str, env: dict[str, str] | None = None) -> BotProcess:
    bot = BotProcess(waits)
    environ = {key: value for key, value in os.environ.items() if key != PASSWORD_VARIABLE}
    environ.update(env or {}, PYTHONUNBUFFERED="1")
    reactor.spawnProcess(bot, sys.executable,  # type: ignore[attr-defined]
                         [sys.executable, "-m", "fibsd.client.bot", "--server", "127.0.0.1",
                          "--port", str(port), *args], env=environ, path=str(REPO))
    return bot


class FailedLogins:
    """The server's ``login_failed`` log events while the test runs."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def __call__(self, event: dict[str, Any]) -> None:
        if event.get("event") == "login_failed":
            self.names.append(str(event.get("user")))


@pytest_twisted.ensureDeferred
async def test_register_from_a_password_file_logs_in_and_stops_on_sigterm(tmp_path: Path) -> None:
    service, port = await start_server(tmp_path)
    failed = FailedLogins()
    globalLogPublisher.addObserver(failed)
    waits = Waits(WAIT)
    secret = tmp_path / "password"
    secret.write_text("s3cret\n")
    bots: list[BotProcess] = []
    try:
        for _ in range(2):  # registers, then finds the name taken and logs in
            bot = spawn(waits, port, "--name", "robo", "--password-file", str(secret), "--register")
            bots.append(bot)
            await waits.until(lambda: "logged in as robo" in bot.err or bot.ended,
                              lambda: f"the login; stderr {bot.err!r}")
            bot.stop()
            await waits.until(lambda: bot.ended, lambda: "the bot to stop")
            assert bot.exit_code == 0, bot.err
            assert "fibsd-bot: stopped by SIGTERM after 0 matches, 0 games" in bot.err
            assert "None" not in bot.err and "Starting factory" not in bot.err
            assert "SIGTERM: logging out (a running match stays saved on the server)" in bot.err
        assert "the account robo exists already: logging in" in bots[1].err
        assert failed.names == []
        assert await service.db.get_user("robo") is not None

        bot = spawn(waits, port, "--name", "robo", env={PASSWORD_VARIABLE: "s3cret"})
        await waits.until(lambda: "logged in as robo" in bot.err or bot.ended,
                          lambda: f"the login from the environment; stderr {bot.err!r}")
        bot.stop()
        await waits.until(lambda: bot.ended, lambda: "the bot to stop")
        assert bot.exit_code == 0 and failed.names == []

        bot = spawn(waits, port, "--name", "robo", env={PASSWORD_VARIABLE: "wrong"})
        await waits.until(lambda: bot.ended, lambda: "the refused bot to end")
        assert bot.exit_code == 1
        assert bot.err.endswith("fibsd-bot: login refused for 'robo': wrong password, or no "
                                "such account (--register creates it)\n")
    finally:
        globalLogPublisher.removeObserver(failed)
        for bot in bots:
            bot.stop()
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_register_where_the_site_registers_no_one_logs_in(tmp_path: Path) -> None:
    settings = make_settings(port=0, interface="127.0.0.1", database=str(tmp_path / "f.sqlite"),
                             registration=False,
                             **{"passwords.memory_kib": 64, "passwords.time_cost": 1})
    service = FibsService(settings, reactor)
    service.startService()
    port = int((await service.listening).getHost().port)
    waits = Waits(WAIT)
    hashed = argon2.using(type="ID", memory_cost=64, time_cost=1).hash("s3cret")
    await service.db.create_user("robo", hashed, 1_700_000_000)
    bot = spawn(waits, port, "--name", "robo", "--register", env={PASSWORD_VARIABLE: "s3cret"})
    try:
        await waits.until(lambda: "logged in as robo" in bot.err or bot.ended,
                          lambda: f"the login; stderr {bot.err!r}")
        assert "the server does not register new accounts here (Your site is not allowed to " \
               "create new accounts.): logging in" in bot.err
        bot.stop()
        await waits.until(lambda: bot.ended, lambda: "the bot to stop")
        assert bot.exit_code == 0
    finally:
        bot.stop()
        await service.stopService()


def test_every_option_has_help_text() -> None:
    parser = build_parser()
    helpless = [action.option_strings for action in parser._actions if not action.help]
    assert helpless == []
    text = " ".join(parser.format_help().split())
    assert "visible to every user of the machine in ps" in text and PASSWORD_VARIABLE in text


def test_the_password_comes_from_the_file_the_option_or_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "password"
    secret.write_text("fromfile\nignored\n")
    monkeypatch.setenv(PASSWORD_VARIABLE, "fromenv")
    assert parse_args(["--name", "a", "--password-file", str(secret), "--password", "x"]).password \
        == "fromfile"
    assert parse_args(["--name", "a", "--password", "x"]).password == "x"
    assert parse_args(["--name", "a"]).password == "fromenv"
    monkeypatch.delenv(PASSWORD_VARIABLE)
    with pytest.raises(SystemExit):
        parse_args(["--name", "a"])
    assert f"give the password with --password-file, ${PASSWORD_VARIABLE} or --password" \
        in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--name", "a", "--password", "x", "--lengths", "7-1"])
    assert parse_args(["--name", "a", "--password", "x", "--lengths", "1-3,5,unlimited"]).lengths \
        == frozenset({0, 1, 2, 3, 5})

