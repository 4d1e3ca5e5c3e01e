"""Every line about tournaments (protocol/tournaments.md, catalogue/tournament.toml).

FIBS never ran tournaments, so every line here is new; each begins ``tournament: `` (a
prefix no stock client's pattern matches, as ``fairdice: `` before it) or is a ``** ``
error line, and none holds a phrase a client looks for anywhere in a line (``is playing
with``, ``wants to play``, ``has left the game`` ...).  The players of a new match are
sent FIBS's own invitation lines besides, so stock clients and bots start it as any
match.
"""

from __future__ import annotations

from collections.abc import Sequence

PREFIX = "tournament: "


def _t(text: str) -> str:
    return PREFIX + text


def created(number: int, name: str) -> str:
    return _t(f"{number} created: {name}")


def describe(number: int, name: str, fmt: str, state: str, players: int, max_players: int,
             lengths: Sequence[int], bots: bool, start: str, clock: str) -> str:
    """One row of ``tournaments`` and the head of ``tournament <id>``."""
    extra = f", clock {clock}" if clock else ""
    return _t(f"{number} {state} {fmt} {players}/{max_players} players, lengths "
              f"{','.join(str(n) for n in lengths)}, bots {'yes' if bots else 'no'}, "
              f"start {start}{extra}: {name}")


NONE = _t("none")
NOTIFY_ON = _t("you will hear who wins every tournament.")
NOTIFY_OFF = _t("you will hear only who wins your own tournaments.")


def joined(number: int, players: int, max_players: int) -> str:
    return _t(f"you joined {number}, {players}/{max_players} players.")


def left(number: int) -> str:
    return _t(f"you left {number}.")


def starts(number: int, name: str, players: int, rounds: int) -> str:
    return _t(f"{number} starts: {players} players, {rounds} rounds: {name}")


def cancelled(number: int, name: str) -> str:
    return _t(f"{number} is cancelled, too few players: {name}")


def paired(number: int, round_number: int, opponent: str, length: int, until: str) -> str:
    return _t(f"{number} round {round_number}: you meet {opponent} in a {length} point match;"
              f" start it by {until} or lose by forfeit.")


def bye(number: int, round_number: int) -> str:
    return _t(f"{number} round {round_number}: you have a bye.")


def forfeit_won(number: int, round_number: int, opponent: str) -> str:
    return _t(f"{number} round {round_number}: you win against {opponent} by forfeit.")


def forfeit_lost(number: int, round_number: int, opponent: str) -> str:
    return _t(f"{number} round {round_number}: you lose to {opponent} by forfeit.")


def eliminated(number: int) -> str:
    return _t(f"{number}: you are out; thank you for playing.")


def won_by(number: int, name: str, winner: str) -> str:
    return _t(f"{number} is won by {winner}: {name}")


def round_line(round_number: int, first: str, second: str | None, winner: str | None,
               forfeit: bool, match_id: int | None, live: bool) -> str:
    """A pairing in ``tournament <id>``."""
    head = f"round {round_number}: "
    if second is None:
        return _t(f"{head}{first} has a bye")
    if winner is None:
        state = "now" if live else "not started"
        return _t(f"{head}{first} v {second} ({state})")
    loser = second if winner == first else first
    how = " by forfeit" if forfeit else f" (match {match_id})" if match_id else ""
    return _t(f"{head}{winner} beats {loser}{how}")


def standing(place: int, name: str, points: float, tie_break: float) -> str:
    return _t(f"standing {place}: {name} {points:g} points, Buchholz {tie_break:g}")


def winner_line(name: str) -> str:
    return _t(f"winner: {name}")


# errors
def no_tournament(word: str) -> str:
    return f"** There is no tournament {word}."


TOURNAMENT_USAGE = ("** Usage: tournaments, tournament <id>, tournament join <id>,"
                    " tournament leave <id>, tournament notify on|off.")


def already(number: int) -> str:
    return f"** You are in tournament {number} already."


def elsewhere(number: int) -> str:
    return f"** You are in tournament {number}; one tournament at a time."


def full(number: int) -> str:
    return f"** Tournament {number} is full."


def started(number: int) -> str:
    return f"** Tournament {number} has started; entries and withdrawals are closed."


def not_entered(number: int) -> str:
    return f"** You are not in tournament {number}."


def no_bots(number: int) -> str:
    return f"** Tournament {number} is for humans only."


CREATE_USAGE = ("** Usage: admin tournament create --name NAME --format"
                " knockout|swiss|roundrobin --lengths 5,5,7 [--rounds N] [--max-players N]"
                " [--start when-full|TIME] [--bots] [--clock 12s+2m]")


def create_refused(reason: str) -> str:
    return f"** Tournament not created: {reason}."
