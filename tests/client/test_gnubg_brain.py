"""The gnubg brain against answers recorded from GNU Backgammon 1.07.001 (``external``).

Each board line below went to a real gnubg, and the answer next to it is what gnubg
wrote back, byte for byte; the tests need no gnubg.  gnubg names points from the
mover's side whatever the colour, with the bar as 25 and off as 0.
"""

from __future__ import annotations

import socket
import threading

import pytest

from fibsd.client import events as ev
from fibsd.client.bot import HeuristicBrain
from fibsd.client.gnubg_brain import GnubgBrain, board_line, cube_line, for_gnubg, parse_answer
from fibsd.client.parse import classify
from fibsd.client.strategy import CubeState
from fibsd.rules.movegen import legal_plays
from fibsd.rules.play import Move
from fibsd.rules.position import Position

# A board line read back field for field, and asked for a 5-3 play.
LINE = ("board:You:bob:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:5:3:0:0:1:1:1:"
        "0:1:-1:0:25:0:0:0:0:2:0:0:0")

# (board line sent, gnubg's answer, the move command the bot sends for it)
RECORDED_PLAYS = [
    # X (direction 1) on the bar with 2-2: doubles written out, the bar as 25
    ("board:You:heur:3:0:0:-1:1:0:0:0:0:4:0:3:1:0:0:-6:4:0:0:0:-3:0:-5:0:0:0:0:2:0:-1:2:2:0:0:"
     "1:1:1:0:-1:1:25:0:0:0:1:0:4:0:0:0", "25/23 13/11 6/4 6/4\n", "move bar-2 12-14 19-21 19-21"),
    ("board:You:bob:5:0:0:-1:-2:0:0:0:0:5:0:2:0:0:0:-4:5:0:0:0:-3:1:-5:1:0:0:0:1:0:-1:4:2:0:0:"
     "1:1:1:0:-1:1:25:0:0:0:1:0:0:0:0:0", "25/23 24/20 \n", "move bar-2 1-5"),
    # X hits: the star is on the path, not on the move
    ("board:You:bob:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:1:1:0:0:-1:6:4:0:0:"
     "1:1:1:0:-1:1:25:0:0:0:0:0:0:0:0:0", "8/2* 6/2 \n", "move 17-23 19-23"),
    # O (direction -1) bears off: off as 0
    ("board:You:bob:5:0:0:0:2:3:3:2:2:1:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:-5:-5:-5:0:1:6:3:0:0:"
     "1:1:1:0:1:-1:0:25:2:0:0:0:0:0:0:0", "6/0 3/0 \n", "move 6-off 3-off"),
]


class AnsweringBrain(GnubgBrain):
    def __init__(self, answer: str | None) -> None:
        super().__init__("localhost", 1, fallback=HeuristicBrain())
        self.answer = answer
        self.asked: list[str] = []

    def ask(self, line: str) -> str:
        self.asked.append(line)
        if self.answer is None:
            raise ConnectionRefusedError(line)
        return self.answer


def board(line: str) -> ev.Board:
    event = classify(line)
    assert isinstance(event, ev.Board)
    return event


@pytest.mark.parametrize(("line", "answer", "command"), RECORDED_PLAYS)
def test_recorded_plays_are_played(line: str, answer: str, command: str) -> None:
    event = board(line)
    position = event.position()
    dice = event.player_dice
    brain = AnsweringBrain(answer)
    play = brain.play(event, position, dice, legal_plays(position, dice))
    assert brain.asked == [line]
    assert play is not None and event.move_command(play.moves) == command


def test_recorded_answers_parse() -> None:
    assert parse_answer("5/1 5/1 4/0 4/0\n") == [(5, 1, 1), (5, 1, 1), (4, 0, 1), (4, 0, 1)]
    assert parse_answer("25/23 24/20 \n") == [(25, 23, 1), (24, 20, 1)]
    assert parse_answer("8/2* 6/2 \n") == [(8, 2, 1), (6, 2, 1)]


def test_an_answer_read_from_the_wrong_side_is_not_played() -> None:
    # "8/3 6/3" mirrored (17/22 19/22) is no play for O from the start
    event = board("board:You:bob:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:"
                  "1:5:3:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0")
    position = event.position()
    plays = legal_plays(position, (5, 3))
    expected = HeuristicBrain().play(event, position, (5, 3), plays)
    assert AnsweringBrain("17/22 19/22 \n").play(event, position, (5, 3), plays) == expected


def test_cube_line_for_a_centred_cube() -> None:
    assert cube_line(Position.initial(), CubeState(1, 7, 0, 0), doubled=False) == (
        "board:You:opponent:7:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:"
        "1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0")


def test_cube_line_gives_the_cube_to_the_doubler() -> None:
    # we redouble with our cube; we answer a redouble of the opponent's cube
    ours = cube_line(Position.initial(), CubeState(2, 7, 1, 0, True), doubled=False)
    theirs = cube_line(Position.initial(), CubeState(2, None, 0, 0, True), doubled=True)
    assert ours.split(":")[3:6] == ["7", "1", "0"]
    assert ours.split(":")[37:42] == ["2", "1", "0", "0", "1"]
    assert theirs.split(":")[3] == "9999"
    assert theirs.split(":")[32] == "-1"
    assert theirs.split(":")[37:42] == ["2", "0", "1", "1", "1"]


@pytest.mark.parametrize(("answer", "doubles"), [("double\n", True), ("roll\n", False)])
def test_recorded_double_answers(answer: str, doubles: bool) -> None:
    brain = AnsweringBrain(answer)
    state = CubeState(1, 3, 0, 0)
    assert brain.double(Position.initial(), state) is doubles
    assert brain.asked == [cube_line(Position.initial(), state, doubled=False)]


@pytest.mark.parametrize(("answer", "takes"),
                         [("take\n", True), ("beaver\n", True), ("drop\n", False)])
def test_recorded_take_answers(answer: str, takes: bool) -> None:
    brain = AnsweringBrain(answer)
    state = CubeState(1, 3, 0, 0)
    assert brain.take(Position.initial(), state) is takes
    assert brain.asked == [cube_line(Position.initial(), state, doubled=True)]


def test_cube_questions_fall_back_without_a_cube_word() -> None:
    opponent = [0] * 25
    opponent[5], opponent[7], opponent[12], opponent[17] = 5, 3, 5, 2
    strong = Position((3, 3, 3, 3, 3) + (0,) * 20, tuple(opponent))
    state = CubeState(1, None, 0, 0)
    heuristic = HeuristicBrain()
    for answer in (None, "Error: badly formed board\n", "8/3 6/3 \n"):
        assert AnsweringBrain(answer).double(strong, state) is heuristic.double(strong, state)
        assert AnsweringBrain(answer).take(strong.swap(), state) \
            is heuristic.take(strong.swap(), state)


class OneAtATime:
    """A loopback stand-in for gnubg's listener: one connection at a time, one answer per
    line; ``hang_up`` closes the held connection after the next answer."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self.hang_up = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            with conn, conn.makefile("rb") as lines:
                for _ in lines:
                    conn.sendall(b"roll\n")
                    if self.hang_up:
                        self.hang_up = False
                        break

    def close(self) -> None:
        self.listener.close()


def test_one_connection_serves_every_request_and_a_closed_one_is_replaced() -> None:
    server = OneAtATime()
    brain = GnubgBrain("127.0.0.1", server.port, fallback=HeuristicBrain(), timeout=5)
    try:
        assert [brain.ask("board:a"), brain.ask("board:b")] == ["roll\n", "roll\n"]
        assert server.accepted == 1
        server.hang_up = True
        assert brain.ask("board:c") == "roll\n"
        assert brain.ask("board:d") == "roll\n"
        assert server.accepted == 2
    finally:
        brain.close()
        server.close()


def test_nobody_listening_is_the_heuristic_s_decision() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    brain = GnubgBrain("127.0.0.1", port, fallback=HeuristicBrain(), timeout=5)
    state = CubeState(1, 3, 0, 0)
    assert brain.double(Position.initial(), state) is HeuristicBrain().double(
        Position.initial(), state)


# --- the board line read back, other notations, the fallback -----------------------


def test_the_board_line_is_rebuilt_field_for_field() -> None:
    assert board_line(board(LINE)) == LINE


def test_answers_in_both_notations() -> None:
    assert parse_answer("8/3 6/3\n") == [(8, 3, 1), (6, 3, 1)]
    assert parse_answer("13-7* bar/22(2) 6/off") == [(13, 7, 1), (25, 22, 2), (6, 0, 1)]
    # a path that hits on the way keeps its intermediate point: only the ends count
    assert parse_answer("6/2*/1 24/18/13(2)") == [(6, 1, 1), (24, 13, 2)]


def test_gnubg_s_play_is_played() -> None:
    brain = AnsweringBrain("13/10 13/8\n")
    position = board(LINE).position()
    play = brain.play(board(LINE), position, (5, 3), legal_plays(position, (5, 3)))
    assert brain.asked == [LINE]
    assert play is not None and sorted(play.moves) == [Move(13, 8), Move(13, 10)]


def test_no_gnubg_or_a_wrong_answer_falls_back_to_the_heuristic() -> None:
    position = board(LINE).position()
    plays = legal_plays(position, (5, 3))
    expected = HeuristicBrain().play(board(LINE), position, (5, 3), plays)
    assert AnsweringBrain(None).play(board(LINE), position, (5, 3), plays) == expected
    assert AnsweringBrain("24/1\n").play(board(LINE), position, (5, 3), plays) == expected


# -- what gnubg 1.07 reads differently from FIBS -------------------------------------------

def test_lines_for_gnubg_have_the_two_scores_swapped() -> None:
    line = board_line(board(LINE)).replace(":5:0:0:", ":5:1:4:", 1)
    assert line.split(":")[3:6] == ["5", "1", "4"]
    assert for_gnubg(line).split(":")[3:6] == ["5", "4", "1"]
    assert for_gnubg(for_gnubg(line)) == line


def test_cube_questions_carry_the_post_crawford_flag_and_swapped_scores() -> None:
    brain = AnsweringBrain("double\n")
    trailer = CubeState(1, 5, 0, 4, post_crawford=True)
    assert brain.double(Position.initial(), trailer) is True
    (asked,) = brain.asked
    assert asked == for_gnubg(cube_line(Position.initial(), trailer, doubled=False))
    fields = asked.split(":")
    assert fields[3:6] == ["5", "4", "0"]  # gnubg reads field 4 as its opponent's score
    assert fields[51] == "1"  # post-Crawford
    assert cube_line(Position.initial(), CubeState(1, 5, 0, 4), doubled=False).split(":")[51] == "0"


def test_plays_are_asked_with_the_scores_swapped() -> None:
    line = LINE.replace(":5:0:0:", ":5:3:1:", 1)
    event = board(line)
    brain = AnsweringBrain("8/3 6/3 \n")
    position = event.position()
    plays = legal_plays(position, (5, 3))
    brain.play(event, position, (5, 3), plays)
    assert brain.asked == [for_gnubg(line)]
    assert brain.asked[0].split(":")[3:6] == ["5", "1", "3"]
