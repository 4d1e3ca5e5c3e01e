"""Every way the rules can refuse something, as data.

Syntax errors (``InvalidPlayText``) are split from errors that depend on the position or
the game's state.  None carries FIBS wording: the wire layer maps each class to its line.
``ordinal`` fields are 1-based positions of the offending pair in what the player typed.
"""

from __future__ import annotations


class RulesError(Exception):
    """Base of every refusal by the rules engine."""


# -- move text --------------------------------------------------------------------


class InvalidPlayText(RulesError, ValueError):
    """The move text cannot be read (a word other than a point, bar or off)."""

    def __init__(self, text: str, ordinal: int) -> None:
        super().__init__(f"cannot read pair {ordinal} of {text!r}")
        self.text = text
        self.ordinal = ordinal


# -- a play that does not fit the position ------------------------------------------


class IllegalPlay(RulesError):
    """The submitted moves are not one of the legal plays for this roll."""


class WrongMoveCount(IllegalPlay):
    """Fewer pairs than the roll requires (``required`` is the number of dice playable)."""

    def __init__(self, required: int, given: int) -> None:
        super().__init__(f"{given} moves given, {required} required")
        self.required = required
        self.given = given


class TooManyMoves(IllegalPlay):
    def __init__(self, allowed: int, given: int) -> None:
        super().__init__(f"{given} moves given, at most {allowed} allowed")
        self.allowed = allowed
        self.given = given


class _PairError(IllegalPlay):
    def __init__(self, ordinal: int, detail: str) -> None:
        super().__init__(f"move {ordinal}: {detail}")
        self.ordinal = ordinal


class MustEnterFirst(_PairError):
    """A checker is on the bar and this pair does not enter one."""

    def __init__(self, ordinal: int) -> None:
        super().__init__(ordinal, "checkers on the bar must enter first")


class MovesBackwards(_PairError):
    def __init__(self, ordinal: int) -> None:
        super().__init__(ordinal, "moves backwards")


class NoCheckerThere(_PairError):
    """``point`` is in the mover's numbering; 25 means the bar."""

    def __init__(self, ordinal: int, point: int) -> None:
        super().__init__(ordinal, f"no checker on {point}")
        self.point = point


class WrongDistance(_PairError):
    """No die left (or none the forced-play rules allow) matches ``distance``."""

    def __init__(self, ordinal: int, distance: int) -> None:
        super().__init__(ordinal, f"cannot move {distance} points")
        self.distance = distance


class PointBlocked(_PairError):
    def __init__(self, ordinal: int, point: int) -> None:
        super().__init__(ordinal, f"point {point} is blocked")
        self.point = point


class CannotBearOff(_PairError):
    """Bearing off now is illegal (checkers outside home, or a higher point occupied)."""

    def __init__(self, ordinal: int) -> None:
        super().__init__(ordinal, "cannot bear off this checker")


class NotAWholePlay(IllegalPlay):
    """Each pair was possible, but together they are not a legal whole turn."""


# -- game and match state -------------------------------------------------------------


class GameStateError(RulesError):
    """An action that the game's current phase does not allow."""


class NotYourTurn(GameStateError):
    pass


class MustRollFirst(GameStateError):
    pass


class AlreadyRolled(GameStateError):
    pass


class AwaitingDoubleAnswer(GameStateError):
    """The opponent has not yet answered this player's double."""


class AwaitingResignAnswer(GameStateError):
    """The opponent has not yet answered this player's resignation."""


class NothingToAnswer(GameStateError):
    """accept/reject with no double or resignation offered to this player."""


class CubeUnavailable(GameStateError):
    """A double that is not allowed now; ``reason`` names why."""

    CRAWFORD = "crawford"
    OPPONENT_OWNS = "opponent-owns"
    AFTER_ROLL = "after-roll"
    NOT_ON_ROLL = "not-on-roll"
    REDOUBLE_LIMIT = "redouble-limit"
    CUBE_DEAD = "cube-dead"  # doubling cannot change the match result

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class InvalidResignation(GameStateError):
    """A resignation for fewer points than allowed or of an unknown kind."""


class GameOver(GameStateError):
    pass


class MustAnswerFirst(GameStateError):
    """The opponent's double or resignation awaits this player's accept or reject;
    ``offer`` names which (``DOUBLE`` or ``RESIGNATION``)."""

    DOUBLE = "double"
    RESIGNATION = "resignation"

    def __init__(self, offer: str) -> None:
        super().__init__(offer)
        self.offer = offer


class GameInProgress(GameStateError):
    """A new game was asked for while the current one is still being played."""


class MatchOver(GameStateError):
    """The match has a winner; no further game can start."""


class InvalidRecord(RulesError, ValueError):
    """A saved match record that cannot be read or does not replay; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
