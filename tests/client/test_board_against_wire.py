"""The client's board parser and the server's (fibsd.wire.board) agree on the same real lines.

The two are written independently on purpose - a client library must not lean on
server internals - so reading every live board line the same way is evidence for both.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fibsd.client import events as ev
from fibsd.client.parse import classify
from fibsd.wire.board import Colour, format_board, parse_board, view_position
from tests.client.test_board import A_ALICE, A_BOB, A_WATCHER, B_ALICE, B_BOB, C_ALICE, C_BOB, LIVE, SPEC

SESSION = Path(__file__).resolve().parent.parent / "data" / "fibs-session-2020.txt"  # copied from shared/fibs-captures


def board_lines() -> list[str]:
    lines = [A_BOB, A_ALICE, A_WATCHER, B_ALICE, B_BOB, C_BOB, C_ALICE, LIVE, SPEC]
    lines += [line for line in SESSION.read_text().splitlines() if line.startswith("board:")]
    return lines


LINES = board_lines()


@pytest.mark.parametrize("line", LINES, ids=range(len(LINES)))
def test_both_parsers_read_every_field_alike(line: str) -> None:
    client = classify(line)
    assert isinstance(client, ev.Board)
    server = dataclasses.asdict(parse_board(line))
    server["points"] = server.pop("board")
    assert dataclasses.asdict(client) == server
    assert client.position() == view_position(parse_board(line), Colour(client.colour))
    assert format_board(parse_board(line)) == line


def test_the_session_boards_are_all_there() -> None:
    assert len(LINES) == 9 + 275
