"""FIBS's rating formula, with every intermediate term kept for ``toggle ratings``.

For a match of length N won by W against L (ratings and experiences before the match):

    D  = |r_W - r_L|
    Pu = 1 / (10^(D * sqrt(N) / 2000) + 1)      chance that the underdog wins
    P  = Pu if the favourite won, else 1 - Pu   (D = 0 gives 0.5 either way)
    K  = max(1, 5 - E / 100)                    each player's OWN experience before the match
    W gains 4 * K_W * sqrt(N) * P, L loses 4 * K_L * sqrt(N) * P; both gain N experience.

K uses the experience *before* the match, as the server's own ``help formula`` and the
``toggle ratings`` printout do (MacFIBS's help counts the current match too; the server
text wins).  Ratings are kept unrounded; only the display rounds to two decimals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RatingChange:
    """The outcome of one rated match and how it was reached."""

    match_length: int
    winner_rating: float  # before
    loser_rating: float
    winner_experience: int  # before
    loser_experience: int
    difference: float  # D
    underdog_probability: float  # Pu
    probability: float  # P
    winner_k: float
    loser_k: float
    winner_change: float  # > 0
    loser_change: float  # < 0, the same size when the two K are equal

    @property
    def favourite_won(self) -> bool:
        """True when the winner was rated at least as high as the loser."""
        return self.winner_rating >= self.loser_rating

    @property
    def new_winner_rating(self) -> float:
        return self.winner_rating + self.winner_change

    @property
    def new_loser_rating(self) -> float:
        return self.loser_rating + self.loser_change

    @property
    def new_winner_experience(self) -> int:
        return self.winner_experience + self.match_length

    @property
    def new_loser_experience(self) -> int:
        return self.loser_experience + self.match_length


def k_factor(experience: int) -> float:
    """How fast a player's rating moves: 5 for a newcomer, 1 from 400 experience on."""
    return max(1.0, 5.0 - experience / 100)


# Above this exponent 10^x + 1 == 10^x in floating point, and from about 308 on 10^x
# overflows: the chance is then 10^-x (0.0 once that underflows), never an error.
_LARGE_EXPONENT = 300.0


def underdog_probability(difference: float, match_length: int) -> float:
    """FIBS's chance that the lower-rated player wins a match of this length; defined
    for every rating difference and length a store can hold."""
    exponent = difference * math.sqrt(match_length) / 2000.0
    if exponent > _LARGE_EXPONENT:
        return math.pow(10.0, -exponent)
    return 1.0 / (math.pow(10.0, exponent) + 1.0)


def rate_match(winner_rating: float, winner_experience: int, loser_rating: float,
               loser_experience: int, match_length: int) -> RatingChange:
    """Apply the formula to a finished fixed-length match.

    >>> change = rate_match(1500.0, 0, 1800.0, 2000, 3)
    >>> round(change.winner_change, 2), round(change.loser_change, 2)
    (22.35, -4.47)
    """
    if match_length < 1:
        raise ValueError(f"only finished fixed-length matches are rated, not {match_length}")
    difference = abs(winner_rating - loser_rating)
    pu = underdog_probability(difference, match_length)
    p = pu if winner_rating >= loser_rating else 1.0 - pu
    winner_k = k_factor(winner_experience)
    loser_k = k_factor(loser_experience)
    root = math.sqrt(match_length)
    return RatingChange(
        match_length=match_length,
        winner_rating=winner_rating,
        loser_rating=loser_rating,
        winner_experience=winner_experience,
        loser_experience=loser_experience,
        difference=difference,
        underdog_probability=pu,
        probability=p,
        winner_k=winner_k,
        loser_k=loser_k,
        winner_change=4.0 * winner_k * root * p,
        loser_change=-4.0 * loser_k * root * p,
    )
