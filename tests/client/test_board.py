"""The ``board:`` line, field by field, against board-state.md's worked examples and live captures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fibsd.client import events as ev
from fibsd.client.parse import classify
from fibsd.rules.play import BAR_POINT, OFF_POINT, Move
from fibsd.rules.position import Position

A_BOB = "board:You:alice:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:5:3:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0"
A_ALICE = "board:You:bob:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:0:0:5:3:1:1:1:0:-1:1:25:0:0:0:0:0:0:0:0:0"
A_WATCHER = "board:bob:alice:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:5:3:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0"
B_ALICE = "board:You:bob:7:2:3:-1:-1:0:0:1:2:4:0:3:0:0:0:-4:4:0:0:0:-3:0:-3:-2:0:-1:0:1:0:-1:4:2:0:0:2:1:0:0:-1:1:25:0:0:0:1:0:2:0:0:0"
B_BOB = "board:You:alice:7:3:2:-1:-1:0:0:1:2:4:0:3:0:0:0:-4:4:0:0:0:-3:0:-3:-2:0:-1:0:1:0:-1:0:0:4:2:2:0:1:0:1:-1:0:25:0:0:0:1:2:0:0:0"
C_BOB = "board:You:alice:5:1:1:0:1:1:2:2:3:3:0:0:2:0:1:0:0:0:0:0:-1:0:-3:-3:-3:-2:-2:-1:0:1:0:0:0:0:1:0:0:1:1:-1:0:25:0:0:0:0:2:0:0:0"
C_ALICE = "board:You:bob:5:1:1:0:1:1:2:2:3:3:0:0:2:0:1:0:0:0:0:0:-1:0:-3:-3:-3:-2:-2:-1:0:1:0:0:0:0:1:0:0:0:-1:1:25:0:0:0:0:0:2:0:0:0"
LIVE = "board:GammonBot_VII:pipcat:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:0:0:5:1:1:1:1:0:-1:1:25:0:0:0:0:0:2:1:0:0"
SPEC = "board:You:someplayer:3:0:1:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0"

START_POINTS = (0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0)


def board(line: str) -> ev.Board:
    event = classify(line)
    assert isinstance(event, ev.Board)
    return event


def test_example_a_bob_every_field() -> None:
    assert board(A_BOB) == ev.Board(
        player="You", opponent="alice", match_length=5, player_score=0, opponent_score=0,
        points=START_POINTS, turn=1, player_dice=(5, 3), opponent_dice=(0, 0), cube=1,
        player_may_double=True, opponent_may_double=True, was_doubled=False, colour=1, direction=-1,
        home=0, bar=25, player_home=0, opponent_home=0, player_bar=0, opponent_bar=0, can_move=2,
        forced_move=0, did_crawford=False, redoubles=0,
    )


def test_example_a_alice_and_watcher() -> None:
    alice = board(A_ALICE)
    assert (alice.player, alice.opponent, alice.points, alice.turn) == ("You", "bob", START_POINTS, 1)
    assert (alice.player_dice, alice.opponent_dice) == ((0, 0), (5, 3))
    assert (alice.colour, alice.direction, alice.home, alice.bar, alice.can_move) == (-1, 1, 25, 0, 0)
    assert not alice.is_players_turn and not alice.is_watching
    watcher = board(A_WATCHER)
    assert watcher == ev.Board(**{**board(A_BOB).__dict__, "player": "bob"})
    assert watcher.is_watching and watcher.is_players_turn


def test_example_b_alice_every_field() -> None:
    assert board(B_ALICE) == ev.Board(
        player="You", opponent="bob", match_length=7, player_score=2, opponent_score=3,
        points=(-1, -1, 0, 0, 1, 2, 4, 0, 3, 0, 0, 0, -4, 4, 0, 0, 0, -3, 0, -3, -2, 0, -1, 0, 1, 0),
        turn=-1, player_dice=(4, 2), opponent_dice=(0, 0), cube=2, player_may_double=True,
        opponent_may_double=False, was_doubled=False, colour=-1, direction=1, home=25, bar=0,
        player_home=0, opponent_home=0, player_bar=1, opponent_bar=0, can_move=2, forced_move=0,
        did_crawford=False, redoubles=0,
    )


def test_example_b_bob_sees_the_mirror_fields() -> None:
    bob = board(B_BOB)
    assert (bob.player_score, bob.opponent_score) == (3, 2)
    assert (bob.player_dice, bob.opponent_dice) == ((0, 0), (4, 2))
    assert (bob.player_may_double, bob.opponent_may_double) == (False, True)
    assert (bob.colour, bob.direction, bob.home, bob.bar) == (1, -1, 0, 25)
    assert (bob.player_bar, bob.opponent_bar, bob.can_move) == (0, 1, 2)


def test_example_c_pending_double() -> None:
    bob, alice = board(C_BOB), board(C_ALICE)
    assert (bob.turn, bob.cube, bob.player_may_double, bob.opponent_may_double, bob.was_doubled) == (
        1, 1, False, False, True)
    assert bob.is_players_turn and bob.can_move == 2
    assert (alice.turn, alice.was_doubled, alice.colour, alice.can_move) == (1, False, -1, 2)
    assert not alice.is_players_turn


def test_live_and_spec_lines() -> None:
    live = board(LIVE)
    assert (live.player, live.opponent, live.opponent_dice, live.forced_move, live.can_move) == (
        "GammonBot_VII", "pipcat", (5, 1), 1, 2)
    assert live.player_home == 0 and live.did_crawford is False
    spec = board(SPEC)
    assert (spec.match_length, spec.player_score, spec.opponent_score, spec.player_dice) == (3, 0, 1, (6, 2))


def test_unlimited_and_game_over() -> None:
    line = A_BOB.replace("board:You:alice:5:", "board:You:alice:9999:").replace(":1:5:3:0:0:", ":0:0:0:0:0:")
    unlimited = board(line)
    assert unlimited.is_unlimited and unlimited.is_game_over
    assert not board(A_BOB).is_unlimited


def test_position_at_the_start_is_the_initial_position_for_both_sides() -> None:
    assert board(A_BOB).position() == Position.initial()
    assert board(A_ALICE).position() == Position.initial()
    assert board(A_WATCHER).position() == Position.initial()


def test_position_example_b() -> None:
    alice_side = [0] * 25
    for point, count in {3: 1, 5: 2, 6: 3, 8: 3, 13: 4, 24: 1}.items():
        alice_side[point - 1] = count
    alice_side[24] = 1  # on the bar
    bob_side = [0] * 25
    for point, count in {4: 1, 5: 2, 6: 4, 8: 3, 13: 4, 24: 1}.items():
        bob_side[point - 1] = count
    expected = Position(tuple(alice_side), tuple(bob_side))
    assert board(B_ALICE).position() == expected
    assert board(B_BOB).position() == expected.swap()
    assert board(B_ALICE).position().pips() == (156, 138)


def test_absolute_point() -> None:
    assert board(A_BOB).absolute_point(6) == 6  # O: own numbering is absolute
    assert board(A_ALICE).absolute_point(6) == 19  # X: 25 - own
    assert board(A_ALICE).absolute_point(24) == 1


def test_move_text_in_absolute_points() -> None:
    o_player, x_player = board(A_BOB), board(A_ALICE)
    assert o_player.move_command([Move(8, 3), Move(6, 3)]) == "move 8-3 6-3"
    assert x_player.move_command([Move(24, 18), Move(13, 11)]) == "move 1-7 12-14"
    assert o_player.move_text(Move(BAR_POINT, 22)) == "bar-22"
    assert x_player.move_text(Move(BAR_POINT, 22)) == "bar-3"
    assert o_player.move_text(Move(5, OFF_POINT)) == "5-off"
    assert x_player.move_text(Move(5, OFF_POINT)) == "20-off"


CAPTURES = Path(__file__).resolve().parent.parent / "wire" / "data"  # copied from shared/fibs-captures/boardcaps
_FIELDS_BEFORE = ("player1", "player2", "matchLength", "player1Score", "player2Score", "board", "turnColor",
                  "player1Dice", "player2Dice", "doublingCube", "player1MayDouble", "player2MayDouble",
                  "wasDoubled", "player1Color", "direction")


def _captured() -> list[dict[str, str]]:
    found = []
    for path in sorted(CAPTURES.glob("cap*.json")):
        for row in path.read_text().splitlines():
            records = json.loads(row.lstrip("#"))
            found.append(records[0]["crumbs"])
    return found


def test_every_captured_board_parses_to_a_consistent_position() -> None:
    """156 live fibs.com boards: rebuilt as lines (home/bar/forced/Crawford were not kept by the
    capture tool; home and bar follow from the colour), every field read back, 15 checkers a side."""
    fields_list = _captured()
    assert len(fields_list) == 156
    for fields in fields_list:
        colour = int(fields["player1Color"])
        home, bar = (0, 25) if colour == 1 else (25, 0)
        line = ":".join(["board", *(fields[k] for k in _FIELDS_BEFORE), str(home), str(bar),
                         fields["player1Home"], fields["player2Home"], fields["player1Bar"],
                         fields["player2Bar"], fields["canMove"], "0", "0", fields["redoubles"]])
        parsed = board(line)
        assert parsed.points == tuple(int(n) for n in fields["board"].split(":"))
        assert (parsed.player, parsed.colour, parsed.direction) == (fields["player1"], colour, -colour)
        position = parsed.position()
        assert 15 - sum(position.player) == parsed.player_home
        assert 15 - sum(position.opponent) == parsed.opponent_home
        assert (position.player[24], position.opponent[24]) == (parsed.player_bar, parsed.opponent_bar)
