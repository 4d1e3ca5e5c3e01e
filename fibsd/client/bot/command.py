"""``fibsd-bot``: the command that runs one ``fibsd.client.bot.Bot`` (or, with
``--tournament``, a ``fibsd.client.tournament_bot.TournamentBot``) until its limits are
reached or a signal ends it.  It stands apart from the bot, so that the bot's variants
can build on the bot without the command that chooses among them.

Usage (``python -m fibsd.client.bot`` works the same)::

    FIBSD_BOT_PASSWORD=secret fibsd-bot --name bob --register       # accept anyone
    fibsd-bot --name alice --password-file pw.txt --invite bob --length 5 --matches 3
    fibsd-bot --name gnu --password-file pw.txt --brain gnubg --gnubg-port 4322 --lengths 1-7
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from twisted.internet.defer import Deferred

from fibsd.client import events as ev
from fibsd.client import offers
from fibsd.client.bot import Bot, HeuristicBrain, log
from fibsd.client.brain import Brain
from fibsd.client.gnubg_brain import GnubgBrain
from fibsd.client.protocol import (
    ClipClientProtocol, Credentials, LoginFailed, RegistrationFailed, connect,
)
from fibsd.client.tournament_bot import TournamentBot

PASSWORD_VARIABLE = "FIBSD_BOT_PASSWORD"


def make_brain(name: str, options: argparse.Namespace) -> Brain:
    if name == "gnubg":
        return GnubgBrain(options.gnubg_host, options.gnubg_port, fallback=HeuristicBrain())
    return HeuristicBrain()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fibsd-bot",
        description="A FIBS bot: plays matches on a FIBS or fibsd server, resumes its saved "
                    "matches after every login, and answers every invitation (a join, or a "
                    "tell saying why not).",
        epilog=f"The password comes from --password-file, else --password, else the "
               f"environment variable {PASSWORD_VARIABLE}. SIGTERM or SIGINT logs out (a "
               f"running match stays saved on the server) and exits with status 0.")
    parser.add_argument("--server", default="localhost", help="the server's host (default: %(default)s)")
    parser.add_argument("--port", type=int, default=4321, help="the server's port (default: %(default)s)")
    parser.add_argument("--name", required=True, help="the bot's account name")
    parser.add_argument("--password-file", metavar="PATH", type=Path,
                        help="read the password from the first line of this file")
    parser.add_argument("--password",
                        help="the password on the command line (visible to every user of the "
                             f"machine in ps: prefer --password-file or ${PASSWORD_VARIABLE})")
    parser.add_argument("--register", action="store_true",
                        help="create the account through the guest dialogue first; when the "
                             "name is taken already, log in to it")
    parser.add_argument("--invite", metavar="NAME",
                        help="invite this player, and play only him (otherwise join anyone's "
                             "invitation)")
    parser.add_argument("--length", type=int, default=1,
                        help="the match length when inviting (default: %(default)s)")
    parser.add_argument("--lengths", default="any", metavar="LIST",
                        help="the match lengths it joins: 'any', or lengths, ranges and "
                             "'unlimited' with commas, e.g. 1-7,11,unlimited; others are "
                             "declined with a tell (default: %(default)s)")
    parser.add_argument("--matches", type=int, help="stop after this many matches")
    parser.add_argument("--games", type=int, help="stop after this many games (leaves the match)")
    parser.add_argument("--clock", metavar="DELAY+RESERVE",
                        help="'set clock' for the matches it invites to, like 12s+2m "
                             "(protocol/clock.md); on a clock warning it decides by the "
                             "quick heuristic")
    parser.add_argument("--tournament", type=int, metavar="ID",
                        help="join this tournament and play its matches until it ends")
    parser.add_argument("--brain", choices=("heuristic", "gnubg"), default="heuristic",
                        help="who decides: the built-in heuristic, or GNU Backgammon through "
                             "its 'external' socket, with the heuristic as fallback "
                             "(default: %(default)s)")
    parser.add_argument("--gnubg-host", default="localhost",
                        help="where gnubg's 'external' command listens (default: %(default)s)")
    parser.add_argument("--gnubg-port", type=int, default=4322,
                        help="the port of gnubg's 'external' command (default: %(default)s)")
    parser.add_argument("--verbose", action="store_true",
                        help="log Twisted's own messages too, not only the bot's")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    options = parser.parse_args(argv)
    try:
        options.password = read_password(options)
        options.lengths = offers.parse_lengths(options.lengths)
        Credentials(options.name, options.password, "fibsd-bot")
    except (OSError, ValueError) as error:
        parser.error(str(error))
    return options


def read_password(options: argparse.Namespace) -> str:
    """The password from the file, the option or the environment, in that order."""
    if options.password_file is not None:
        lines = options.password_file.read_text(encoding="utf-8").splitlines()
        if not lines or not lines[0]:
            raise ValueError(f"{options.password_file}: the first line holds no password")
        return str(lines[0])
    if options.password:
        return str(options.password)
    password = os.environ.get(PASSWORD_VARIABLE)
    if not password:
        raise ValueError(f"give the password with --password-file, ${PASSWORD_VARIABLE} "
                         "or --password")
    return password


def make_bot(reactor: Any, options: argparse.Namespace) -> Bot:
    kwargs = {"invite": options.invite, "length": options.length, "lengths": options.lengths,
              "matches": options.matches, "games": options.games, "clock": reactor,
              "match_clock": options.clock}
    brain = make_brain(options.brain, options)
    if getattr(options, "tournament", None) is not None:  # fibsd/client/tournament_bot.py
        return TournamentBot(options.name, options.tournament, brain, **kwargs)
    return Bot(options.name, brain, **kwargs)


async def run(reactor: Any, options: argparse.Namespace, bot: Bot | None = None) -> Bot:
    """Log in (registering first when asked) and play until the limits are reached."""
    bot = bot if bot is not None else make_bot(reactor, options)
    credentials = Credentials(options.name, options.password, "fibsd-bot")

    def online(register: bool) -> Deferred[ClipClientProtocol]:
        factory, ready = connect(reactor, options.server, options.port, credentials, bot,
                                 register=register, reconnect=True, connected=bot.attach)
        factory.noisy = False  # no "Starting factory" lines: the bot logs what it does
        return ready

    log.info("connecting to {server} port {port} as {name}", server=options.server,
             port=options.port, name=options.name)
    if options.register:
        try:
            await online(register=True)
            # A new account says it is a bot while it has played no match
            # (protocol/bots.md): whois, the web and tournaments tell it from people.
            bot.send("set bot yes")
        except RegistrationFailed as error:
            if isinstance(error.event, ev.NameTaken):
                log.info("the account {name} exists already: logging in", name=options.name)
            elif isinstance(error.event, ev.Information) and error.event.kind == "registration":
                log.info("the server does not register new accounts here ({text}): logging in",
                         text=error.event.text)
            else:
                raise
            await online(register=False)
    else:
        await online(register=False)
    await bot.finished.wait()
    await bot.quit()
    return bot


def main(argv: Sequence[str] | None = None) -> int:
    from twisted.internet import reactor
    from twisted.logger import (
        FilteringLogObserver, LogLevel, LogLevelFilterPredicate, globalLogBeginner,
        textFileLogObserver,
    )

    options = parse_args(argv)
    levels = LogLevelFilterPredicate(LogLevel.info if options.verbose else LogLevel.warn)
    levels.setLogLevelForNamespace("fibsd-bot", LogLevel.info)
    globalLogBeginner.beginLoggingTo(
        [FilteringLogObserver(textFileLogObserver(sys.stderr), [levels])], redirectStandardIO=False)
    bot = make_bot(reactor, options)
    outcome: dict[str, Any] = {}

    def done(result: Any) -> None:
        outcome.setdefault("result", result)
        if reactor.running:  # type: ignore[attr-defined]
            reactor.stop()  # type: ignore[attr-defined]

    def stop(name: str) -> None:
        if "result" in outcome:
            return
        outcome["result"] = name
        log.info("{signal}: logging out (a running match stays saved on the server)", signal=name)
        bot.quit().addTimeout(10, reactor).addBoth(done)

    def on_signal(number: int, frame: object) -> None:
        reactor.callFromThread(stop, signal.Signals(number).name)  # type: ignore[attr-defined]

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    reactor.callWhenRunning(  # type: ignore[attr-defined]
        lambda: Deferred.fromCoroutine(run(reactor, options, bot)).addBoth(done))
    reactor.run(installSignalHandlers=False)  # type: ignore[attr-defined]
    result = outcome.get("result")
    summary = f"{bot.matches_played} matches, {bot.games_played} games"
    if isinstance(result, Bot):
        print(f"{bot.name}: {summary}")
        return 0
    if isinstance(result, str):
        print(f"fibsd-bot: stopped by {result} after {summary}", file=sys.stderr)
        return 0
    error = getattr(result, "value", result)
    if isinstance(error, LoginFailed):
        message = (f"login refused for {error.name!r}: wrong password, or no such account "
                   "(--register creates it)")
    elif isinstance(error, RegistrationFailed):
        reason = getattr(error.event, "text", None) or type(error.event).__name__
        message = f"registration of {error.name!r} refused: {reason}"
    else:
        message = getattr(result, "getErrorMessage", lambda: str(error))()
    print(f"fibsd-bot: {message}", file=sys.stderr)
    return 1

