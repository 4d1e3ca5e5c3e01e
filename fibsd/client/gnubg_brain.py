"""GNU Backgammon as the bot's brain, through gnubg's ``external`` socket interface.

Start gnubg with ``external localhost:4322`` on its command line (``gnubg -t``); it
then answers one line per FIBS ``board:`` line it reads.  Checked against gnubg
1.07.001: the answer depends only on the board line --

- dice on the board: the play, in the mover's own numbering whatever the colour or
  direction, bar 25 and off 0, doubles written out, a trailing space
  (``8/3 6/3 ``, ``25/23 24/20 ``, ``8/2* 6/2 ``, ``5/1 5/1 4/0 4/0``);
- no dice: ``double`` or ``roll`` (too good to double is ``roll``);
- the was-doubled flag set: ``take``, ``drop`` or ``beaver``;
- a line it cannot read: ``Error: ...``.

gnubg 1.07 reads the two score fields of a board line the other way round from FIBS
(field 4 as the opponent's score, field 5 as its own): with the trailer 0-4 in a
5-point match after the Crawford game it answers ``roll`` to the line FIBS would
send and ``double`` to the swapped one.  So every line sent to gnubg has the two
scores swapped, and cube questions carry the post-Crawford flag (field 51), without
which gnubg takes a post-Crawford game for a Crawford-free one and never doubles.

gnubg serves one connection at a time and listens again only after that one closes,
so a fresh connection per request may be refused; the brain keeps one connection
open and opens a new one only when the held one has gone.  Plays come from the
server's board line; cube questions from a board line built here from the position
and cube state (the bot asks them without dice on the board).  The legal play whose
resulting side equals what gnubg's paths lead to is played (where two plays differ
only in a hit made on the way, the first in the rules engine's order).

Anything that goes wrong (gnubg not running, a timeout, an answer that is no legal
play or no cube word) falls back to the heuristic, so a bot never stalls for want of
gnubg.  Resignations stay with the heuristic.  The socket call blocks the reactor
for at most ``timeout`` seconds, which is fine for one bot per process; one gnubg
serves one bot.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Sequence

from fibsd.client import events as ev
from fibsd.client import strategy
from fibsd.client.brain import Brain
from fibsd.rules.play import BAR_POINT, OFF_POINT, Play
from fibsd.rules.position import BAR, Position
from fibsd.wire.board import UNLIMITED, Colour, Seat, Table, board_view, format_board

# One checker's path as gnubg writes it: a chain keeps the points where it hit
# (``6/2*/1``), so only its two ends matter.
_PATH = re.compile(r"(bar|\d+)((?:\*?[/-](?:off|\d+))+)\*?(?:\((\d+)\))?", re.IGNORECASE)

# gnubg's cube words and what they mean for the bot (beavers are not played: a take).
_DOUBLE_ANSWERS = {"double": True, "roll": False}
_TAKE_ANSWERS = {"take": True, "beaver": True, "drop": False}


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


def for_gnubg(line: str) -> str:
    """``line`` with its two score fields swapped, the way gnubg 1.07 reads them."""
    fields = line.split(":")
    fields[4], fields[5] = fields[5], fields[4]
    return ":".join(fields)


def cube_line(position: Position, state: strategy.CubeState, *, doubled: bool) -> str:
    """A board line that asks gnubg whether to double (or, ``doubled``, whether to take).

    gnubg reads cube ownership from the two may-double flags: a cube above 1 (or a
    redouble) is ours when we decide to double and the opponent's when we answer.
    """
    centred = not state.redouble and state.cube == 1
    me = Seat("You", Colour.O, state.my_score, may_double=centred or not doubled)
    them = Seat("opponent", Colour.X, state.opponent_score, may_double=centred or doubled)
    table = Table(UNLIMITED if state.length is None else state.length, cube=state.cube,
                  turn=Colour.X if doubled else Colour.O,
                  doubled=Colour.O if doubled else None, post_crawford=state.post_crawford)
    return format_board(board_view(position, me, them, table))


def parse_answer(text: str) -> list[tuple[int, int, int]]:
    """gnubg's move as (from, to, times) checker paths as written (25 bar, 0 off)."""
    paths = []
    for src, chain, times in _PATH.findall(text):
        dst = re.split(r"[/-]", chain)[-1]
        paths.append((BAR_POINT if src.lower() == "bar" else int(src),
                      OFF_POINT if dst.lower() == "off" else int(dst), int(times or 1)))
    return paths


def _after(side: tuple[int, ...], paths: list[tuple[int, int, int]]) -> tuple[int, ...] | None:
    """The mover's side after ``paths``; None when the paths do not fit the side."""
    counts = list(side)
    for src, dst, times in paths:
        counts[BAR if src == BAR_POINT else src - 1] -= times
        if dst != OFF_POINT:
            counts[dst - 1] += times
    return tuple(counts) if min(counts) >= 0 else None


class GnubgBrain:
    """Asks gnubg for plays and cube decisions; the heuristic for resignations and as
    the fallback."""

    def __init__(self, host: str, port: int, *, fallback: Brain, timeout: float = 10.0) -> None:
        self.address = (host, port)
        self.fallback = fallback
        self.timeout = timeout
        self._sock: socket.socket | None = None

    def ask(self, line: str) -> str:
        """gnubg's one-line answer; a held connection that gnubg closed is replaced once
        (a timeout is not retried: gnubg would still be busy with the first request)."""
        if self._sock is not None:
            try:
                return self._exchange(self._sock, line)
            except ConnectionError:
                self.close()
            except OSError:
                self.close()
                raise
        self._sock = socket.create_connection(self.address, timeout=self.timeout)
        try:
            return self._exchange(self._sock, line)
        except OSError:
            self.close()
            raise

    @staticmethod
    def _exchange(sock: socket.socket, line: str) -> str:
        sock.sendall(line.encode("ascii") + b"\n")
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = sock.recv(4096)
            if not chunk:
                raise ConnectionResetError("gnubg closed the connection")
            answer += chunk
        return answer.decode("ascii", "replace")

    def close(self) -> None:
        """Drop the connection (a late answer must not be read as the next one's)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _answer(self, line: str) -> str:
        try:
            return self.ask(line)
        except OSError:
            return ""

    def play(self, board: ev.Board, position: Position, dice: tuple[int, int],
             plays: Sequence[Play]) -> Play | None:
        if len(plays) > 1:
            paths = parse_answer(self._answer(for_gnubg(board_line(board))))
            wanted = _after(position.player, paths) if paths else None
            for play in plays:
                if play.result.player == wanted:
                    return play
        return self.fallback.play(board, position, dice, plays)

    def double(self, position: Position, state: strategy.CubeState) -> bool:
        word = self._answer(for_gnubg(cube_line(position, state, doubled=False))).strip()
        if word in _DOUBLE_ANSWERS:
            return _DOUBLE_ANSWERS[word]
        return self.fallback.double(position, state)

    def take(self, position: Position, state: strategy.CubeState) -> bool:
        word = self._answer(for_gnubg(cube_line(position, state, doubled=True))).strip()
        if word in _TAKE_ANSWERS:
            return _TAKE_ANSWERS[word]
        return self.fallback.take(position, state)

    def accept_resignation(self, position: Position, points: int,
                           state: strategy.CubeState) -> bool:
        return self.fallback.accept_resignation(position, points, state)
