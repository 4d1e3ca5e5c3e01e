"""A check for every ``board:`` line a test makes the server render: read back with
``parse_board``, it must show the engine's state at that moment, as its recipient sees it
(board-state.md 3-6).  Installed with ``check_every_board(monkeypatch)``."""

from __future__ import annotations

from typing import Any

import pytest

from fibsd.server.match import LiveMatch
from fibsd.wire.board import UNLIMITED, Colour, consistency_problems, parse_board, view_position


def problems_of(match: LiveMatch, user: Any, line: str, *,
                rolled: tuple[int, tuple[int, int]] | None = None,
                seen_as: str | None = None) -> list[str]:
    """How ``line``, rendered for ``user``, differs from the engine's state (empty if not)."""
    view = parse_board(line)
    problems = consistency_problems(view)
    plays = user.name in match.names and seen_as in (None, user.name)
    if seen_as is None:
        seen_as = user.name if user.name in match.names else user.watching or match.names[0]
    player = match.names.index(seen_as)
    rules = match.rules

    def expect(what: str, got: object, wanted: object) -> None:
        if got != wanted:
            problems.append(f"{what}: {got!r}, the engine says {wanted!r}")

    expect("names", (view.player, view.opponent),
           ("You" if plays else seen_as, match.names[1 - player]))
    expect("length", view.match_length, rules.length or UNLIMITED)
    expect("colour", view.colour, int(match.colour(player)))
    expect("position", view_position(view, Colour(view.colour)), rules.position_for(player))
    score = list(rules.score)  # sent with a game-ending action: the score before it
    if match._ending_game and rules.game is not None and rules.game.result is not None:
        score[rules.game.result.winner] -= rules.game.result.points
    expect("score", (view.player_score, view.opponent_score),
           (score[player], score[1 - player]))
    expect("cube", view.cube, rules.cube)
    expect("may double", (view.player_may_double, view.opponent_may_double),
           (rules.may_double(player), rules.may_double(1 - player)))
    expect("was doubled", view.was_doubled,
           rules.pending_double is not None and rules.to_act == player)
    expect("post-Crawford", view.did_crawford, rules.did_crawford)
    if rules.length:
        expect("redoubles", view.redoubles, 0)
    if rolled is not None:
        shown = view.player_dice if rolled[0] == player else view.opponent_dice
        expect("rolled dice", shown, rolled[1])
    elif rules.game is None or rules.game.over:
        expect("turn between games", view.turn, 0)
    else:
        acting = rules.to_act if rules.pending_double else rules.turn
        expect("turn", view.turn, int(match.colour(acting)))
        if rules.dice is not None:
            shown = view.player_dice if rules.turn == player else view.opponent_dice
            expect("dice", sorted(shown), sorted(rules.dice))
    return problems


def check_every_board(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every ``LiveMatch.board_lines`` call check its ``board:`` line; returns the
    list the checked lines are collected in (a test can assert it saw some)."""
    render = LiveMatch.board_lines
    seen: list[str] = []

    def checked(match: LiveMatch, user: Any, *, rolled: Any = None,
                seen_as: str | None = None) -> list[str]:
        lines = render(match, user, rolled=rolled, seen_as=seen_as)
        if lines[0].startswith("board:"):
            seen.append(lines[0])
            assert problems_of(match, user, lines[0], rolled=rolled, seen_as=seen_as) == [], \
                lines[0]
        return lines

    monkeypatch.setattr(LiveMatch, "board_lines", checked)
    return seen
