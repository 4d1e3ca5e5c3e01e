"""``fibsd tournament create --name NAME --format ... --lengths 5,5,7 ...`` from the shell.

Writes the new tournament straight into the database (the server may be running: its
director finds it at its next look) and prints its number.  The options are those of
``admin tournament create`` in the game, checked by the same ``parse_create``.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from twisted.python import usage

from fibsd.config import Settings
from fibsd.store.opening import DatabaseUnavailable, masked, open_store
from fibsd.tournament.spec import SpecError, parse_create

_VALUED = ("name", "format", "lengths", "rounds", "max-players", "start", "clock")


class CreateOptions(usage.Options):
    synopsis = ("--name NAME --format knockout|swiss|roundrobin --lengths 5,5,7 "
                "[--rounds N] [--max-players N] [--start when-full|TIME] [--bots] "
                "[--clock 12s+2m]")
    longdesc = "Create a tournament in the database and print its number."
    optParameters = [[key, None, None, key] for key in _VALUED]
    optFlags = [["bots", None, "bot accounts may enter"]]


class TournamentOptions(usage.Options):
    synopsis = "create --name NAME --format ... --lengths ..."
    subCommands = [["create", None, CreateOptions, "create a tournament, print its number"]]

    def postOptions(self) -> None:
        if self.subCommand != "create":
            raise usage.UsageError("which tournament action? (create)")


def run_tournament(settings: Settings, tournament_options: TournamentOptions,
                   out: TextIO | None = None) -> int:
    """0 with the new number printed; 1 with the reason on standard error."""
    out = out or sys.stdout
    options = tournament_options.subOptions
    words: list[str] = []
    for key in _VALUED:
        if options[key] is not None:
            words += [f"--{key}", options[key]]
    if options["bots"]:
        words.append("--bots")
    limits = settings.tournaments
    try:
        spec = parse_create(words, limits.max_players)
    except SpecError as problem:
        print(f"fibsd tournament: {problem}", file=sys.stderr)
        return 1
    try:
        store = open_store(settings.database)
    except DatabaseUnavailable as error:
        print(f"fibsd tournament: cannot open the database: "
              f"{masked(str(error), settings.database)}", file=sys.stderr)
        return 1
    try:
        number = store.create_tournament(
            name=spec.name, fmt=spec.fmt, lengths=spec.lengths, rounds=spec.rounds,
            max_players=spec.max_players, start_at=spec.start_at, bots=spec.bots,
            clock=spec.clock, created=int(time.time()), limit=limits.max_open)
    finally:
        store.close()
    if number is None:
        print(f"fibsd tournament: {limits.max_open} tournaments are open or running",
              file=sys.stderr)
        return 1
    print(number, file=out)
    return 0
