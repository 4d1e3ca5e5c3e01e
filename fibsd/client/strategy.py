"""The bot's heuristic: which play, when to double, take, and accept a resignation.

Everything here is pure and deterministic: the same position always gets the same
answer, so a bot's games can be replayed and its tests need no luck.

Plays.  Each legal play's result is scored from the mover's side and the best
score wins (ties: the first in the rules engine's order).  Two regimes:

* Race (no contact: every checker of one side has passed every checker of the
  other).  Fewer pips is better; each checker borne off earns a bonus, and
  checkers stacked deep beyond three on a home point cost a little (wastage).
* Contact.  The sum of: the pip difference (weight 0.1, so a hit counts for the
  pips it costs the opponent), opposing checkers on the bar, a value for each
  made point (home board and bar point highest, then the 8 point, then the
  anchors in the opponent's home board), the longest prime, extra value for home
  points while the opponent is on the bar; minus the chance of being hit (the
  fraction of the 36 rolls that reach any blot directly or with both dice,
  ignoring blocks) and a little for each blot and each checker beyond three on
  a point.

Cube (match aware).  In a race the bot uses the Keith count: each side's pips,
plus 2 per checker on the 1 point, 1 per checker beyond one on the 2 point and
beyond three on the 3 point, and 1 per empty 4, 5 or 6 point; the side on roll
adds a seventh.  It doubles when its adjusted count exceeds the opponent's by at
most 4 (redoubles: 3) and takes when the doubler's exceeds its own by at least 2.
In contact it doubles only a blitz (the opponent on the bar against at least
five home points) and takes unless it is blitzed itself (two or more on the bar
against four home points) or far behind (its pips more than 30% above).  It never
doubles when its score plus the cube already wins the match, always doubles at
once when the opponent is one point from winning (the trailer's free double
after Crawford), and always takes when dropping would lose the match anyway.

Resignations.  It accepts when the points offered reach what it expects to
win: a single game, a gammon when the opponent has borne nothing off and needs
more pips to bring his checkers home than it needs to bear its own off (less
a roll), a backgammon when, on top of that, he still has checkers on the bar or
in its home board that far from escaping; and always when the points offered
win the match.  It never resigns itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fibsd.rules.play import Play
from fibsd.rules.position import BAR, CHECKERS, Position

# Value of a made point (two or more checkers) by the point's number 1..24.
POINT_VALUE = (0.0, 0.6, 1.0, 1.6, 2.6, 3.0, 3.0, 2.4, 2.0, 0.9, 0.7, 0.5, 0.5,
               0.5, 0.3, 0.3, 0.3, 0.6, 1.0, 1.2, 1.6, 1.6, 1.0, 0.8, 0.8)
PIP_WEIGHT = 0.1
OPPONENT_BAR = 1.5
SHOT_WEIGHT = 5.0
BLOT_COST = 0.3
PRIME_BONUS = 0.8
CLOSED_BOARD_BONUS = 0.7  # per home point while the opponent is on the bar
STACK_COST = 0.15
RACE_OFF_BONUS = 2.0
RACE_STACK_COST = 0.4
WIN = 1000.0


def _reach_masks() -> tuple[tuple[int, int], ...]:
    """Each distinct roll as (bitmask of the distances its dice reach, ways to roll it)."""
    rolls = []
    for a in range(1, 7):
        for b in range(a, 7):
            distances = {a * k for k in range(1, 5)} if a == b else {a, b, a + b}
            mask = 0
            for distance in distances:
                mask |= 1 << distance
            rolls.append((mask, 1 if a == b else 2))
    return tuple(rolls)


ROLLS = _reach_masks()


@dataclass(frozen=True)
class CubeState:
    """What the cube decisions need besides the position (``length`` None: unlimited)."""

    cube: int
    length: int | None
    my_score: int
    opponent_score: int
    redouble: bool = False  # the cube is already ours (or we answer a redouble)
    post_crawford: bool = False  # the Crawford game of this match has been played


# -- plays -----------------------------------------------------------------------


def choose_play(plays: Sequence[Play]) -> Play | None:
    """The best-scoring play (the first of equals); None when there is no legal play."""
    best: Play | None = None
    best_score = 0.0
    for play in plays:
        score = evaluate(play.result)
        if best is None or score > best_score:
            best, best_score = play, score
    return best


def _rearmost(side: tuple[int, ...]) -> int:
    """The highest occupied point in the side's own numbering (25 for the bar, 0 if none)."""
    if side[BAR]:
        return 25
    for index in range(23, -1, -1):
        if side[index]:
            return index + 1
    return 0


def has_contact(position: Position) -> bool:
    """Whether some checker still has to pass an opposing one."""
    mine = _rearmost(position.player)
    theirs = _rearmost(position.opponent)
    return mine > 0 and theirs > 0 and mine + theirs > 25


def evaluate(position: Position) -> float:
    """The mover's score of a position the mover has just played to (higher is better)."""
    me, opp = position.player, position.opponent
    if sum(me) == 0:
        return WIN + CHECKERS - sum(opp)
    my_pips, opp_pips = position.pips()
    if not has_contact(position):
        stacks = sum(max(0, n - 3) for n in me[:6])
        return -my_pips + RACE_OFF_BONUS * (CHECKERS - sum(me)) - RACE_STACK_COST * stacks
    score = PIP_WEIGHT * (opp_pips - my_pips) + OPPONENT_BAR * opp[BAR]
    run = longest = 0
    home_points = 0
    blots = 0
    targets = 0  # bit d set: an opposing checker is d pips short of one of our blots
    for index in range(24):
        count = me[index]
        if count >= 2:
            score += POINT_VALUE[index + 1] - STACK_COST * max(0, count - 3)
            run += 1
            longest = max(longest, run)
            if index < 6:
                home_points += 1
        else:
            run = 0
            if count == 1:
                blots += 1
                targets |= _hitters(opp, index + 1)
    if longest >= 3:
        score += PRIME_BONUS * (longest - 2)
    if opp[BAR]:
        score += CLOSED_BOARD_BONUS * home_points
    if targets:
        shots = sum(ways for mask, ways in ROLLS if mask & targets)
        score -= SHOT_WEIGHT * shots / 36
    return score - BLOT_COST * blots


def _hitters(opp: tuple[int, ...], point: int) -> int:
    """Bitmask of the distances from which opposing checkers can reach our ``point``.

    The opponent's own point q is our point 25 - q, and his bar is our 0; he moves
    towards our higher numbers.
    """
    mask = 0
    if opp[BAR]:
        mask |= 1 << point
    for own in range(26 - point, 25):  # his points behind the blot
        if opp[own - 1]:
            mask |= 1 << (point + own - 25)
    return mask


# -- cube ------------------------------------------------------------------------


def keith_count(side: tuple[int, ...]) -> int:
    """Pips plus the Keith count's penalties for wasted checkers (module doc)."""
    pips = sum(n * (i + 1) for i, n in enumerate(side))
    return (pips + 2 * side[0] + max(0, side[1] - 1) + max(0, side[2] - 3)
            + sum(1 for i in (3, 4, 5) if side[i] == 0))


def _home_points(side: tuple[int, ...]) -> int:
    return sum(1 for n in side[:6] if n >= 2)


def should_double(position: Position, state: CubeState) -> bool:
    """Whether to double before rolling; ``position`` from our side, we are on roll.

    The caller has checked that the rules allow a double at all.
    """
    if state.length is not None:
        if state.my_score + state.cube >= state.length:
            return False  # the cube we have already wins the match: a double gains nothing
        if state.opponent_score == state.length - 1:
            return True  # post-Crawford: he wins with any game, so the cube costs us nothing
    if has_contact(position):
        return bool(position.opponent[BAR]) and _home_points(position.player) >= 5
    mine = keith_count(position.player) * 8 / 7
    margin = 3 if state.redouble else 4
    return mine - keith_count(position.opponent) <= margin


def should_take(position: Position, state: CubeState) -> bool:
    """Whether to take a double; ``position`` from our side, the doubler is on roll."""
    if state.length is not None and state.opponent_score + state.cube >= state.length:
        return True  # dropping loses the match: play on
    if has_contact(position):
        my_pips, opp_pips = position.pips()
        blitzed = position.player[BAR] >= 2 and _home_points(position.opponent) >= 4
        return not blitzed and my_pips <= 1.3 * opp_pips
    doubler = keith_count(position.opponent) * 8 / 7
    return doubler - keith_count(position.player) >= 2


# -- resignations ----------------------------------------------------------------


def expected_kind(position: Position) -> int:
    """What we expect to win, in cube units (1 single, 2 gammon, 3 backgammon); we are
    the side not resigning and ``position`` is from our side."""
    me, opp = position.player, position.opponent
    if sum(opp) < CHECKERS:
        return 1
    my_pips = position.pips()[0]
    to_home = sum(n * (own + 1 - 6) for own, n in enumerate(opp) if own >= 6)
    if to_home + 8 <= my_pips:
        return 1
    to_escape = sum(n * (own + 1 - 18) for own, n in enumerate(opp) if own >= 18)
    return 3 if to_escape and to_escape + 8 > my_pips else 2


def accept_resignation(position: Position, points: int, state: CubeState) -> bool:
    """Whether to accept an offer of ``points`` (already multiplied by the cube)."""
    if state.length is not None and state.my_score + points >= state.length:
        return True
    return points >= expected_kind(position) * state.cube
