"""The ``toggle ratings`` printout of a rating change, line for line as FIBS prints it.

Numbers use C's ``%f`` (six decimals).  The winner comes first; KBackgammon reads the
block from ``rating calculation:`` up to the second ``change for`` line, so both
changes are always printed.
"""

from __future__ import annotations

from fibsd.rating import RatingChange


def format_rating_calculation(change: RatingChange, winner: str, loser: str) -> list[str]:
    """The block sent to players whose ``ratings`` toggle is on, without line ends."""
    k_line = "K=max(1 , -Experience/100+5) for {}: {:f}"
    return [
        "rating calculation:",
        f"rating difference D={change.difference:f}",
        f"match length      N={change.match_length}",
        f"Experience: {winner} {change.winner_experience} - {loser} {change.loser_experience}",
        "Probability that underdog wins: Pu=1/(10^(D*sqrt(N)/2000)+1)="
        f"{change.underdog_probability:f}",
        f"P={change.probability:f} is 1-Pu if underdog wins and Pu if favorite wins",
        k_line.format(winner, change.winner_k),
        f"change for {winner}: 4*K*sqrt(N)*P={change.winner_change:f}",
        k_line.format(loser, change.loser_k),
        f"change for {loser}: -4*K*sqrt(N)*P={change.loser_change:f}",
    ]
