"""A finished match in GNU Backgammon's SGF, with fibsd's stored analysis in it.

``/matches/<id>.sgf`` is made from the replay's games (``fibsd.web.replay``: the same
action lists as ``/matches/<id>.json``, so an analysis mark's ``(game, action)`` names
its node here too).  The layout is the one gnubg writes and reads back: one game tree
per game, a root node with the match information (``MI``, ``PW``/``PB``, ``RU``,
``RE``), then a node per move (``W[<dice><from><to>...]``, points as letters ``a``-``x``
seen from white, ``y`` the bar, ``z`` off), ``double``, ``take`` and ``drop``.  White
is the record's first player (gnubg's "player 1", the .mat's left column).

The analysis goes in gnubg's own properties, so that its GUI shows it: a checker play's
``A`` lists the best play and the play made with their equities (the index first says
which was played), skill marks ``DO``/``BM`` on the decision (``DC``/``BC`` for a
missed double on the move after it), and a comment ``C`` with fibsd's words.  fibsd
keeps only equities, not gnubg's win and gammon chances, so those are written as 0
(gnubg recomputes its statistics from the equities); a resignation is the ``R`` of
``RE``, as gnubg itself writes it.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from fibsd.rules.errors import InvalidPlayText
from fibsd.rules.notation import (
    O_DIRECTION,
    X_DIRECTION,
    parse_fibs_pairs,
    parse_standard,
    to_mover_numbering,
)

APPLICATION = "fibsd"
SKILL_PROPERTY = {"doubtful": "DO[]", "bad": "BM[1]", "very bad": "BM[2]"}
CUBE_SKILL_PROPERTY = {"doubtful": "DC[]", "bad": "BC[1]", "very bad": "BC[2]"}


class MarkLike(Protocol):
    """What the writer reads of ``fibsd.analysis.model.Mark``."""

    @property
    def game(self) -> int: ...
    @property
    def action(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def error(self) -> float: ...
    @property
    def skill(self) -> str | None: ...
    @property
    def played(self) -> str: ...
    @property
    def best(self) -> str: ...
    @property
    def best_equity(self) -> float: ...
    @property
    def played_equity(self) -> float: ...


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _letter(point: int, white: bool) -> str:
    """A point in the mover's numbering (bar 25, off 0) as gnubg's SGF letter."""
    if point == 25:
        return "y"
    if point == 0:
        return "z"
    return chr(ord("a") + (point - 1 if white else 24 - point))


def move_letters(moves: str, direction: int, white: bool) -> str | None:
    """``24-18 13-9`` (absolute FIBS notation, the record's) or ``24/18 13/9`` (the
    mover's own numbering) as SGF letters; None for text that is not a play."""
    try:
        if "/" in moves:
            pairs = [(src, dst) for src, dst in parse_standard(moves)]
        else:
            pairs = to_mover_numbering(parse_fibs_pairs(moves), direction)
    except (InvalidPlayText, ValueError):
        return None
    # gnubg's own order: the farthest checker first (a chain like 13/8 8/5 keeps its order)
    pairs.sort(reverse=True)
    return "".join(_letter(src, white) + _letter(dst, white) for src, dst in pairs)


def sgf_text(players: Sequence[str], length: int, games: Sequence[Mapping[str, Any]],
             marks: Iterable[MarkLike] = (), plies: int = 0, date: str | None = None,
             site: str = "") -> str:
    """The SGF collection of the match whose replayed ``games`` (the JSON export's) are
    given; ``marks`` are the analysis, ``plies`` the depth it was made at."""
    by_action: dict[tuple[int, int], MarkLike] = {(m.game, m.action): m for m in marks}
    trees = []
    for index, game in enumerate(games):
        root = _root(players, length, game, index, date if index == 0 else None,
                     site if index == 0 else "")
        nodes = _nodes(players, game, by_action, plies)
        trees.append("(;" + root + "".join("\n;" + node for node in nodes) + ")")
    return "\n".join(trees) + "\n"


def _root(players: Sequence[str], length: int, game: Mapping[str, Any], index: int,
          date: str | None, site: str) -> str:
    score = game["score"]
    parts = ["FF[4]GM[6]CA[UTF-8]", f"AP[{APPLICATION}]",
             f"MI[length:{length}][game:{index}][ws:{score[0]}][bs:{score[1]}]",
             f"PW[{_escape(players[0])}]", f"PB[{_escape(players[1])}]"]
    if date:
        parts.append(f"DT[{date}]")
    if site:
        parts.append(f"PC[{_escape(site)}]")
    if length > 0:
        parts.append("RU[Crawford:CrawfordGame]" if game.get("crawford") else "RU[Crawford]")
    winner = game.get("winner")
    if winner is not None:
        colour = "W" if winner == players[0] else "B"
        actions = [a["action"] for a in game["actions"]]
        resigned = "R" if "accept_resignation" in actions else ""
        parts.append(f"RE[{colour}+{game['points']}{resigned}]")
    return "".join(parts)


def _nodes(players: Sequence[str], game: Mapping[str, Any],
           marks: Mapping[tuple[int, int], MarkLike], plies: int) -> list[str]:
    number = game["number"]
    direction = {game["O"]: O_DIRECTION, game["X"]: X_DIRECTION}
    dice: dict[str, tuple[int, int]] = {}
    pending: list[str] = []  # properties of a "no double" mark, for the move that follows
    nodes: list[str] = []
    for position, action in enumerate(game["actions"]):
        kind = action["action"]
        mark = marks.get((number, position))
        player = action.get("player")
        colour = "W" if player == players[0] else "B"
        if kind == "opening":
            faces = action["dice"]
            a, b = faces[players[0]], faces[players[1]]
            if a != b:
                first = players[0] if a > b else players[1]
                dice[first] = (max(a, b), min(a, b))
            continue
        if kind == "roll":
            dice[player] = (action["dice"][0], action["dice"][1])
            if mark is not None and mark.kind == "cube":
                pending = _cube_mark(mark)
            continue
        props: list[str] = []
        if kind in ("move", "cannot_move"):
            d = dice.pop(player, tuple(action.get("dice", (0, 0))))
            letters = ""
            if kind == "move":
                letters = move_letters(action["moves"], direction[player],
                                       player == players[0]) or ""
            props.append(f"{colour}[{d[0]}{d[1]}{letters}]")
            if mark is not None and mark.kind == "cube":  # "no double" on the move itself
                pending = _cube_mark(mark)
            props += pending
            pending = []
            if mark is not None and mark.kind == "checker":
                props += _checker_mark(mark, direction[player], player == players[0], plies)
        elif kind in ("double", "take", "drop"):
            props.append(f"{colour}[{kind}]")
            if mark is not None:
                props += _decision_mark(mark)
        else:  # resignations, wins, automatic doubles: told by the root's RE
            continue
        nodes.append(_one_comment(props))
    return nodes


def _one_comment(props: list[str]) -> str:
    """The node's properties with its comments joined into one ``C`` (gnubg reads one)."""
    comments = [p[2:-1] for p in props if p.startswith("C[")]
    kept = [p for p in props if not p.startswith("C[")]
    return "".join(kept + ([f"C[{' / '.join(comments)}]"] if comments else []))


def _evaluation(letters: str, equity: float, plies: int) -> str:
    return (f"{letters} E ver 3 0.000000 0.000000 0.000000 0.000000 0.000000 "
            f"{equity:.6f} {plies}C 0 1 0.000000 1")


def _comment(mark: MarkLike) -> str:
    skill = f" ({mark.skill})" if mark.skill else ""
    return (f"C[{_escape(f'fibsd: {mark.played}, error {mark.error:.3f}{skill}; best: {mark.best} ({mark.best_equity:+.3f})')}]")


def _checker_mark(mark: MarkLike, direction: int, white: bool, plies: int) -> list[str]:
    props = []
    best = move_letters(mark.best, direction, white)
    played = move_letters(mark.played, direction, white)
    if best is not None and played is not None:
        entries = [_evaluation(best, mark.best_equity, plies)]
        if played != best:
            entries.append(_evaluation(played, mark.played_equity, plies))
        props.append(f"A[{len(entries) - 1}]" + "".join(f"[{e}]" for e in entries))
    if mark.skill in SKILL_PROPERTY:
        props.append(SKILL_PROPERTY[mark.skill])
    props.append(_comment(mark))
    return props


def _cube_mark(mark: MarkLike) -> list[str]:
    """A "no double" judged: its marks go on the move that follows (gnubg's place)."""
    props = [CUBE_SKILL_PROPERTY[mark.skill]] if mark.skill in CUBE_SKILL_PROPERTY else []
    return props + ([_comment(mark)] if mark.error > 0 else [])


def _decision_mark(mark: MarkLike) -> list[str]:
    props = [SKILL_PROPERTY[mark.skill]] if mark.skill in SKILL_PROPERTY else []
    return props + [_comment(mark)]
