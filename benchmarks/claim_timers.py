"""The claim timers' work per game action with ``[fair] claim_after = 300`` (issue 26).

    .venv/bin/python benchmarks/claim_timers.py [actions] [seconds between actions]

An in-memory server on a fake clock (tests/helpers.py) plays fair-dice matches: the timer
calls scheduled and cancelled are counted over every action (the matches' own timers:
nothing else schedules any here), then ``LiveMatch._arm_claim``, what each action runs
for the claims, is timed alone (process CPU, best of five).  ``load.py`` cannot set
``claim_after``, hence this figure."""

from __future__ import annotations

import sys
import time
from typing import Any

from twisted.internet.base import DelayedCall

from fibsd.rules.game import Phase
from tests.helpers import FakeServer, make_settings
from tests.server.test_fair import fair_table


def counting(clock: Any, counts: dict[str, int]) -> None:
    """Count ``clock``'s ``callLater``s and the cancels of what they scheduled."""
    schedule = clock.callLater

    def call_later(*args: Any, **kwargs: Any) -> DelayedCall:
        counts["callLater"] += 1
        call = schedule(*args, **kwargs)
        canceller = call.canceller

        def cancel(c: DelayedCall) -> None:
            counts["cancel"] += 1
            canceller(c)

        call.canceller = cancel
        return call

    clock.callLater = call_later


def main(actions: int = 1000, apart: float = 7.0) -> None:
    server = FakeServer(settings=make_settings(idle_timeout=0, **{"fair.claim_after": 300}))
    for name in ("alice", "bob", "carol"):
        server.register(name)
    table = fair_table(server, seeds=[bytes([n % 256]) * 32 for n in range(1000)])
    counts = {"callLater": 0, "cancel": 0}
    counting(server.clock, counts)
    done = 0
    while done < actions:
        match = server.lobby.matches.get("alice")
        if match is None:  # (a new match: no action)
            if done == 0:
                table.start("5")
            else:
                table.send("alice", "invite bob 5")
                table.send("bob", "join alice")
            table.lines()
            assert "alice" in server.lobby.matches
            continue
        elif match.rules.waiting_for_new_game:
            table.send("alice", "join")
            table.send("bob", "join")
        elif match.rules.phase is Phase.ROLL:
            table.send(match.names[match.rules.turn], "roll")
        else:
            table.play_move()
        table.lines()
        done += 1
        server.advance(apart)
    print(f"{actions} actions {apart:g} s apart: {counts['callLater']} callLater, "
          f"{counts['cancel']} cancels")
    match = table.match
    clock = server.clock
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(100_000):
            clock.rightNow += 0.5
            match._arm_claim()  # noqa: SLF001
        best = min(best, (time.process_time() - start) / 100_000)
    print(f"_arm_claim, 0.5 s apart: {best * 1e6:.2f} us per action (best of 5 x 100,000)")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 1000, float(args[1]) if len(args) > 1 else 7.0)
