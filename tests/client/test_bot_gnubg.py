"""The gnubg brain without gnubg: the board line it sends, how it reads answers, its fallback."""

from __future__ import annotations

from fibsd.client import events as ev
from fibsd.client.bot import HeuristicBrain
from fibsd.client.gnubg_brain import GnubgBrain, board_line, parse_answer
from fibsd.client.parse import classify
from fibsd.rules.movegen import legal_plays
from fibsd.rules.play import Move

LINE = ("board:You:bob:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:5:3:0:0:1:1:1:"
        "0:1:-1:0:25:0:0:0:0:2:0:0:0")


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


def board() -> ev.Board:
    event = classify(LINE)
    assert isinstance(event, ev.Board)
    return event


def test_the_board_line_is_rebuilt_field_for_field() -> None:
    assert board_line(board()) == LINE


def test_answers_in_both_notations() -> None:
    assert parse_answer("8/3 6/3\n") == [(8, 3, 1), (6, 3, 1)]
    assert parse_answer("13-7* bar/22(2) 6/off") == [(13, 7, 1), (25, 22, 2), (6, 0, 1)]
    # a path that hits on the way keeps its intermediate point: only the ends count
    assert parse_answer("6/2*/1 24/18/13(2)") == [(6, 1, 1), (24, 13, 2)]


def test_gnubg_s_play_is_played() -> None:
    brain = AnsweringBrain("13/10 13/8\n")
    position = board().position()
    play = brain.play(board(), position, (5, 3), legal_plays(position, (5, 3)))
    assert brain.asked == [LINE]
    assert play is not None and sorted(play.moves) == [Move(13, 8), Move(13, 10)]


def test_no_gnubg_or_a_wrong_answer_falls_back_to_the_heuristic() -> None:
    position = board().position()
    plays = legal_plays(position, (5, 3))
    expected = HeuristicBrain().play(board(), position, (5, 3), plays)
    assert AnsweringBrain(None).play(board(), position, (5, 3), plays) == expected
    assert AnsweringBrain("24/1\n").play(board(), position, (5, 3), plays) == expected
