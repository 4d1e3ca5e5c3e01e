"""Move text, both ways: what FIBS users type after ``move``, and standard notation.

Two numberings meet here.  FIBS move text uses *absolute* points, the same for both
players (fibs-protocol board-state.md 2): O moves 24 -> 1 and X moves 1 -> 24, so a point
in the mover's own numbering is the absolute point for O (direction -1) and 25 minus it
for X (direction +1).  ``parse_fibs_pairs`` returns absolute numbers with the
``FIBS_BAR``/``FIBS_OFF`` sentinels, which are deliberately not points in either numbering;
``to_mover_numbering`` turns them into the rules' numbering (bar 25, off 0) and
``to_absolute_numbering`` goes back.

Standard notation is always in the mover's numbering and follows gnubg's ``FormatMove``:
moves sorted by source then destination, highest first; one checker's consecutive steps
joined (``24/13``), keeping an intermediate point only where it hit (``6/2*/1``); a hit
destination starred once (``13/9*``); identical moves counted (``13/11(2)``).

>>> format_standard([Move(13, 11), Move(13, 11), Move(24, 20, hit=True)])
'24/20* 13/11(2)'
>>> parse_standard("bar/22 6/2*/1 13/10(2)")
[(25, 22), (6, 2), (2, 1), (13, 10), (13, 10)]
>>> to_mover_numbering(parse_fibs_pairs("b-3 19-off"), direction=1)
[(25, 22), (6, 0)]
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from fibsd.rules.errors import InvalidPlayText
from fibsd.rules.play import BAR_POINT, OFF_POINT, Move, Play

__all__ = [
    "FIBS_BAR",
    "FIBS_OFF",
    "parse_fibs_pairs",
    "to_mover_numbering",
    "to_absolute_numbering",
    "format_fibs_moves",
    "format_standard",
    "parse_standard",
]

FIBS_BAR = -1  # "bar" in absolute FIBS text: the mover's own bar, whichever colour
FIBS_OFF = -2  # "off" in absolute FIBS text

O_DIRECTION = -1  # O moves 24 -> 1; its numbering is the absolute one
X_DIRECTION = 1  # X moves 1 -> 24

_BAR_WORDS = ("bar", "b")
_OFF_WORDS = ("off", "o", "home", "h")

Pair = tuple[int, int]


# -- FIBS move text -----------------------------------------------------------------------


def parse_fibs_pairs(text: str) -> list[Pair]:
    """Read ``24-18 13-11``, ``13 7 8 7``, ``bar-22``, ``b-22``, ``6-off``, ``6-o``, ``6-home``.

    Points are absolute (1..24); ``bar`` may only start a pair and ``off`` only end one.
    Pairs are written ``a-b`` or as two blank-separated words, in any mixture.

    >>> parse_fibs_pairs("m-free 13 7 8-7 BAR-22 6-O")
    Traceback (most recent call last):
    ...
    fibsd.rules.errors.InvalidPlayText: cannot read pair 1 of 'm-free 13 7 8-7 BAR-22 6-O'
    >>> parse_fibs_pairs("13 7 8-7 BAR-22 6-O")
    [(13, 7), (8, 7), (-1, 22), (6, -2)]
    """
    words = text.replace("-", " ").split()
    pairs = []
    for index in range(0, len(words), 2):
        ordinal = index // 2 + 1
        if index + 1 == len(words):
            raise InvalidPlayText(text, ordinal)
        src = _fibs_word(words[index], True, text, ordinal)
        pairs.append((src, _fibs_word(words[index + 1], False, text, ordinal)))
    return pairs


def _fibs_word(word: str, source: bool, text: str, ordinal: int) -> int:
    word = word.lower()
    if word in _BAR_WORDS and source:
        return FIBS_BAR
    if word in _OFF_WORDS and not source:
        return FIBS_OFF
    if word.isascii() and word.isdigit() and 1 <= int(word) <= 24:
        return int(word)
    raise InvalidPlayText(text, ordinal)


def _to_mover(point: int, direction: int) -> int:
    if point == FIBS_BAR:
        return BAR_POINT
    if point == FIBS_OFF:
        return OFF_POINT
    return point if direction < 0 else 25 - point


def _to_absolute(point: int, direction: int) -> int:
    if point == BAR_POINT:
        return FIBS_BAR
    if point == OFF_POINT:
        return FIBS_OFF
    return point if direction < 0 else 25 - point


def to_mover_numbering(pairs: Iterable[Pair], direction: int) -> list[Pair]:
    """Absolute FIBS pairs to the mover's numbering (bar 25, off 0); ``direction`` is the
    mover's FIBS direction: -1 for O, +1 for X."""
    return [(_to_mover(src, direction), _to_mover(dst, direction)) for src, dst in pairs]


def to_absolute_numbering(pairs: Iterable[Pair], direction: int) -> list[Pair]:
    """The mover's pairs (bar 25, off 0) as absolute FIBS pairs with the sentinels."""
    return [(_to_absolute(src, direction), _to_absolute(dst, direction)) for src, dst in pairs]


def format_fibs_moves(moves: Iterable[Move | Pair], direction: int) -> str:
    """FIBS's moves text in absolute numbers, in the order given: ``bar-22 8-5 8-5 6-3``.

    The caller adds the ``<name> moves`` prefix and the `` .`` ending.

    >>> format_fibs_moves([Move(25, 22), Move(6, 0)], direction=1)
    'bar-3 19-off'
    """
    words = []
    for move in moves:
        src, dst = (move.src, move.dst) if isinstance(move, Move) else move
        words.append(f"{_fibs_text(_to_absolute(src, direction))}-"
                     f"{_fibs_text(_to_absolute(dst, direction))}")
    return " ".join(words)


def _fibs_text(point: int) -> str:
    return "bar" if point == FIBS_BAR else "off" if point == FIBS_OFF else str(point)


# -- standard notation ------------------------------------------------------------------


def _point_text(point: int) -> str:
    return "bar" if point == BAR_POINT else "off" if point == OFF_POINT else str(point)


def format_standard(play_or_moves: Play | Sequence[Move]) -> str:
    """Standard notation in the mover's numbering, as gnubg writes it (module docstring).

    >>> format_standard([Move(6, 2, hit=True), Move(2, 1), Move(24, 18), Move(18, 13)])
    '24/13 6/2*/1'
    """
    moves = play_or_moves.moves if isinstance(play_or_moves, Play) else play_or_moves
    hit_points = {move.dst for move in moves if move.hit}
    # Each chain lists a checker's points: source, hit points passed, destination.
    chains: list[list[int] | None] = [[move.src, move.dst] for move in sorted(moves, key=_descending)]
    for i, chain in enumerate(chains):
        if chain is None:
            continue
        for j in range(i + 1, len(chains)):
            later = chains[j]
            if later is not None and later[0] == chain[-1]:
                if chain[-1] not in hit_points:
                    chain.pop()
                chain.append(later[-1])
                chains[j] = None
    counted: list[tuple[list[int], int]] = []
    for chain in chains:
        if chain is None:
            continue
        for index, (seen, count) in enumerate(counted):
            if seen == chain:
                counted[index] = (seen, count + 1)
                break
        else:
            counted.append((chain, 1))
    starred: set[int] = set()
    words = []
    for chain, count in counted:
        parts = [_point_text(chain[0])]
        for point in chain[1:-1]:
            parts.append(f"{point}*")
            starred.add(point)
        last = chain[-1]
        parts.append(_point_text(last))
        if last in hit_points and last not in starred:
            parts[-1] += "*"
            starred.add(last)
        words.append("/".join(parts) + (f"({count})" if count > 1 else ""))
    return " ".join(words)


def _descending(move: Move) -> tuple[int, int]:
    return (-move.src, -move.dst)


_STANDARD_WORD = re.compile(r"(?P<points>[^()]+)(?:\((?P<count>[1-4])\))?")
_STANDARD_POINT = re.compile(r"(?P<point>bar|b|off|o|\d{1,2})\*?")


def parse_standard(text: str) -> list[Pair]:
    """Read standard notation into ``(src, dst)`` pairs in the mover's numbering.

    A chain gives one pair per link (``24/18/13`` is 24-18, 18-13), ``(n)`` repeats a
    word n times, and ``*`` is accepted and ignored: hits follow from the position.
    A link such as ``24/14`` stays one pair that spans several dice.
    """
    pairs: list[Pair] = []
    for ordinal, word in enumerate(text.split(), 1):
        shape = _STANDARD_WORD.fullmatch(word.lower())
        if shape is None:
            raise InvalidPlayText(text, ordinal)
        points = []
        for part in shape["points"].split("/"):
            point = _STANDARD_POINT.fullmatch(part)
            if point is None:
                raise InvalidPlayText(text, ordinal)
            points.append(_standard_point(point["point"], text, ordinal))
        if len(points) < 2 or BAR_POINT in points[1:] or OFF_POINT in points[:-1]:
            raise InvalidPlayText(text, ordinal)
        pairs.extend(list(zip(points, points[1:])) * int(shape["count"] or 1))
    return pairs


def _standard_point(word: str, text: str, ordinal: int) -> int:
    if word in _BAR_WORDS:
        return BAR_POINT
    if word in ("off", "o"):
        return OFF_POINT
    point = int(word)
    if not 1 <= point <= 24:
        raise InvalidPlayText(text, ordinal)
    return point
