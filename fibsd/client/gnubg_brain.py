"""GNU Backgammon as the bot's brain, through gnubg's ``external`` socket interface.

Start gnubg with ``external localhost:4322`` (in gnubg's command line, ``gnubg -t``);
it then reads a FIBS ``board:`` line per request and answers with its choice for
that board.  This brain rebuilds the board line from the parsed ``Board`` (all 53
fields), asks, and reads the answer's checker paths in either notation gnubg may
use (``13/7 8/7``, ``bar/22*``, ``8/5(2)``, or FIBS's ``13-7 8-7``).  The legal play
whose resulting side equals what the paths lead to is played (where two plays differ
only in a hit made on the way, the first in the rules engine's order); an answer that
leads to no legal result is ignored.

Anything that goes wrong (gnubg not running, a timeout, an answer that is no legal
play) falls back to the heuristic, so a bot never stalls for want of gnubg.  The cube
and resignation decisions stay with the heuristic.  Not covered by the test suite:
the tests must not depend on gnubg being installed.  The socket call blocks the
reactor for at most ``timeout`` seconds, which is fine for one bot per process.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Sequence

from fibsd.client import events as ev
from fibsd.client import strategy
from fibsd.client.bot import Brain
from fibsd.rules.play import BAR_POINT, OFF_POINT, Play
from fibsd.rules.position import BAR, Position

# One checker's path as gnubg writes it: a chain keeps the points where it hit
# (``6/2*/1``), so only its two ends matter.
_PATH = re.compile(r"(bar|\d+)((?:\*?[/-](?:off|\d+))+)\*?(?:\((\d+)\))?", re.IGNORECASE)


def board_line(board: ev.Board) -> str:
    """The ``board:`` line a Board event was parsed from."""
    fields: list[object] = [
        board.player, board.opponent, board.match_length, board.player_score,
        board.opponent_score, *board.points, board.turn, *board.player_dice,
        *board.opponent_dice, board.cube, int(board.player_may_double),
        int(board.opponent_may_double), int(board.was_doubled), board.colour, board.direction,
        board.home, board.bar, board.player_home, board.opponent_home, board.player_bar,
        board.opponent_bar, board.can_move, board.forced_move, int(board.did_crawford),
        board.redoubles,
    ]
    return "board:" + ":".join(str(field) for field in fields)


def parse_answer(text: str) -> list[tuple[int, int, int]]:
    """gnubg's move as (from, to, times) checker paths as written (25 bar, 0 off)."""
    paths = []
    for src, chain, times in _PATH.findall(text):
        dst = re.split(r"[/-]", chain)[-1]
        paths.append((BAR_POINT if src.lower() == "bar" else int(src),
                      OFF_POINT if dst.lower() == "off" else int(dst), int(times or 1)))
    return paths


def _after(side: tuple[int, ...], paths: list[tuple[int, int, int]],
           mirror: bool) -> tuple[int, ...] | None:
    """The mover's side after ``paths`` (points mirrored for FIBS's absolute numbering of
    the side that moves 1 -> 24); None when the paths do not fit the side."""
    counts = list(side)
    for src, dst, times in paths:
        if mirror:
            src, dst = _flip(src), _flip(dst)
        counts[BAR if src == BAR_POINT else src - 1] -= times
        if dst != OFF_POINT:
            counts[dst - 1] += times
    return tuple(counts) if min(counts) >= 0 else None


class GnubgBrain:
    """Asks gnubg for plays; the heuristic for everything else and as the fallback."""

    def __init__(self, host: str, port: int, *, fallback: Brain, timeout: float = 10.0) -> None:
        self.address = (host, port)
        self.fallback = fallback
        self.timeout = timeout

    def ask(self, line: str) -> str:
        with socket.create_connection(self.address, timeout=self.timeout) as sock:
            sock.sendall(line.encode("ascii") + b"\n")
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                answer += chunk
        return answer.decode("ascii", "replace")

    def play(self, board: ev.Board, position: Position, dice: tuple[int, int],
             plays: Sequence[Play]) -> Play | None:
        if len(plays) > 1:
            try:
                answer = self.ask(board_line(board))
            except OSError:
                answer = ""
            paths = parse_answer(answer)
            if paths:
                # gnubg names points from the mover's side; FIBS moves are absolute
                for mirror in (False, board.direction == 1):
                    wanted = _after(position.player, paths, mirror)
                    for play in plays:
                        if play.result.player == wanted:
                            return play
        return self.fallback.play(board, position, dice, plays)

    def double(self, position: Position, state: strategy.CubeState) -> bool:
        return self.fallback.double(position, state)

    def take(self, position: Position, state: strategy.CubeState) -> bool:
        return self.fallback.take(position, state)

    def accept_resignation(self, position: Position, points: int,
                           state: strategy.CubeState) -> bool:
        return self.fallback.accept_resignation(position, points, state)


def _flip(point: int) -> int:
    return point if point in (BAR_POINT, OFF_POINT) else 25 - point
