"""The FIBS rating formula against live fibs.com results (ratings.md 3) and its properties."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fibsd.rating import k_factor, rate_match, underdog_probability
from fibsd.wire.ratings_text import format_rating_calculation

# (winner rating, exp, loser rating, exp, N, D, Pu, change, live winner after, live loser after)
LIVE = [
    pytest.param(2026.77, 1229928, 1726.46, 10305, 5, "300.31", "0.315807", "2.8247",
                 2029.60, 1723.63, id="GammonBot_VI-pipcat"),
    pytest.param(1498.92, 1222380, 891.29, 10004, 1, "607.63", "0.331910", "1.3276",
                 1500.25, 889.96, id="BlunderBot_III-nena"),
    pytest.param(2033.88, 1208954, 1723.63, 10310, 5, "310.25", "0.310304", "2.7754",
                 2036.66, 1720.86, id="GammonBot_VII-pipcat"),
]


@pytest.mark.parametrize(
    "w, we, lo, le, n, d, pu, change, w_after, l_after", LIVE)
def test_live_fibs_results(w: float, we: int, lo: float, le: int, n: int, d: str, pu: str,
                           change: str, w_after: float, l_after: float) -> None:
    result = rate_match(w, we, lo, le, n)
    assert f"{result.difference:.2f}" == d
    assert f"{result.underdog_probability:.6f}" == pu
    assert result.probability == result.underdog_probability  # the favourite won
    assert (result.winner_k, result.loser_k) == (1.0, 1.0)
    assert f"{result.winner_change:.4f}" == change
    assert f"{-result.loser_change:.4f}" == change
    # FIBS kept unrounded ratings; the inputs here are the displayed (rounded) ones,
    # so the live results are reproduced to within one cent.
    assert abs(result.new_winner_rating - w_after) < 0.0101
    assert abs(result.new_loser_rating - l_after) < 0.0101
    assert (result.new_winner_experience, result.new_loser_experience) == (we + n, le + n)


def test_one_point_match_reproduced_to_the_cent() -> None:
    result = rate_match(1498.92, 1222380, 891.29, 10004, 1)
    assert (f"{result.new_winner_rating:.2f}", f"{result.new_loser_rating:.2f}") == (
        "1500.25", "889.96")


def test_newcomer_beats_an_established_player() -> None:
    """ratings.md 2: 1500/0 beats 1800/2000 in a 3-point match."""
    result = rate_match(1500.0, 0, 1800.0, 2000, 3)
    assert (result.difference, result.favourite_won) == (300.0, False)
    assert f"{result.underdog_probability:.6f}" == "0.354749"
    assert f"{result.probability:.6f}" == "0.645251"
    assert (result.winner_k, result.loser_k) == (5.0, 1.0)
    assert (f"{result.winner_change:.2f}", f"{result.loser_change:.2f}") == ("22.35", "-4.47")
    assert result.winner_change == pytest.approx(4 * 5 * math.sqrt(3) * 0.645251, abs=1e-5)


def test_printout_matches_fibs() -> None:
    """ratings.md 5, character for character."""
    result = rate_match(2026.77, 1229928, 1726.46, 10305, 5)
    assert format_rating_calculation(result, "GammonBot_VI", "pipcat") == [
        "rating calculation:",
        "rating difference D=300.310000",
        "match length      N=5",
        "Experience: GammonBot_VI 1229928 - pipcat 10305",
        "Probability that underdog wins: Pu=1/(10^(D*sqrt(N)/2000)+1)=0.315807",
        "P=0.315807 is 1-Pu if underdog wins and Pu if favorite wins",
        "K=max(1 , -Experience/100+5) for GammonBot_VI: 1.000000",
        "change for GammonBot_VI: 4*K*sqrt(N)*P=2.824664",
        "K=max(1 , -Experience/100+5) for pipcat: 1.000000",
        "change for pipcat: -4*K*sqrt(N)*P=-2.824664",
    ]


def test_printout_when_the_underdog_wins() -> None:
    lines = format_rating_calculation(rate_match(1500.0, 0, 1800.0, 2000, 3), "new", "old")
    assert lines[3:] == [
        "Experience: new 0 - old 2000",
        "Probability that underdog wins: Pu=1/(10^(D*sqrt(N)/2000)+1)=0.354749",
        "P=0.645251 is 1-Pu if underdog wins and Pu if favorite wins",
        "K=max(1 , -Experience/100+5) for new: 5.000000",
        "change for new: 4*K*sqrt(N)*P=22.352152",
        "K=max(1 , -Experience/100+5) for old: 1.000000",
        "change for old: -4*K*sqrt(N)*P=-4.470430",
    ]


def test_printout_lines_are_in_the_catalogue() -> None:
    path = Path(__file__).resolve().parents[1] / "protocol" / "catalogue" / "rating.toml"
    with open(path, "rb") as file:
        patterns = [re.compile(e["pattern"]) for e in tomllib.load(file)["line"]]
    for args in ((2026.77, 1229928, 1726.46, 10305, 5), (1500.0, 0, 1800.0, 2000, 3),
                 (1500.0, 0, 1500.0, 0, 99)):
        for line in format_rating_calculation(rate_match(*args), "alice", "bob_b"):
            assert any(p.fullmatch(line) for p in patterns), line


@pytest.mark.parametrize("experience, k", [
    (0, 5.0), (50, 4.5), (100, 4.0), (250, 2.5), (399, 1.01), (400, 1.0), (1348614, 1.0)])
def test_k_uses_the_players_own_experience_before_the_match(experience: int, k: float) -> None:
    assert k_factor(experience) == pytest.approx(k)
    # A 5-point match does not lower K first (MacFIBS's variant would give k - 0.05).
    assert rate_match(1500.0, experience, 1500.0, 10_000, 5).winner_k == pytest.approx(k)


def test_equal_ratings_give_one_half() -> None:
    result = rate_match(1600.0, 500, 1600.0, 500, 7)
    assert (result.underdog_probability, result.probability) == (0.5, 0.5)
    assert result.winner_change == pytest.approx(2 * math.sqrt(7))


def test_unlimited_or_empty_matches_are_not_rated() -> None:
    with pytest.raises(ValueError):
        rate_match(1500.0, 0, 1500.0, 0, 0)


ratings = st.floats(min_value=500.0, max_value=2500.0, allow_nan=False)
experiences = st.integers(min_value=0, max_value=2_000_000)
lengths = st.integers(min_value=1, max_value=99)


@given(ratings, ratings, st.integers(400, 2_000_000), st.integers(400, 2_000_000), lengths)
def test_zero_sum_when_both_k_are_one(a: float, b: float, ea: int, eb: int, n: int) -> None:
    result = rate_match(a, ea, b, eb, n)
    assert result.winner_change + result.loser_change == 0.0
    assert result.winner_change > 0


@given(ratings, ratings, experiences, lengths)
def test_zero_sum_when_experience_is_equal(a: float, b: float, e: int, n: int) -> None:
    result = rate_match(a, e, b, e, n)
    assert result.winner_change == -result.loser_change


@given(ratings, ratings, experiences, experiences, lengths)
def test_symmetric_in_the_players(a: float, b: float, ea: int, eb: int, n: int) -> None:
    """Only the difference and who won matter; and a player's change does not depend
    on the other's experience."""
    a_wins, b_wins = rate_match(a, ea, b, eb, n), rate_match(b, eb, a, ea, n)
    assert a_wins.difference == b_wins.difference
    assert a_wins.underdog_probability == b_wins.underdog_probability
    shifted = rate_match(a + 100.0, ea, b + 100.0, eb + 1000, n)
    assert shifted.winner_change == pytest.approx(a_wins.winner_change)
    # With equal K, each player's expected change is zero: the favourite's chance to win
    # times what he gains equals the underdog's chance times what the favourite loses.
    fav_wins = rate_match(max(a, b), 500, min(a, b), 500, n)
    dog_wins = rate_match(min(a, b), 500, max(a, b), 500, n)
    pu = fav_wins.underdog_probability
    assert (1 - pu) * fav_wins.winner_change == pytest.approx(-pu * dog_wins.loser_change)


@given(st.floats(min_value=0.0, max_value=3000.0), lengths)
def test_underdog_never_favoured(difference: float, n: int) -> None:
    assert 0.0 < underdog_probability(difference, n) <= 0.5


# Every value a store can hold: SQLite REAL ratings (finite doubles) and INTEGER
# experience and match lengths (64-bit).
_STORED_INT = 2**63 - 1


@given(
    winner_rating=st.floats(allow_nan=False, allow_infinity=False),
    loser_rating=st.floats(allow_nan=False, allow_infinity=False),
    winner_experience=st.integers(0, _STORED_INT),
    loser_experience=st.integers(0, _STORED_INT),
    match_length=st.one_of(st.integers(1, 99), st.integers(1, _STORED_INT)),
)
def test_the_formula_never_overflows_for_any_stored_value(
    winner_rating: float, loser_rating: float, winner_experience: int, loser_experience: int,
    match_length: int,
) -> None:
    """Issue 9: a 5,000,000-point match between unequal ratings raised OverflowError at
    the match end, so the match could never finish."""
    change = rate_match(winner_rating, winner_experience, loser_rating, loser_experience,
                        match_length)
    assert 0.0 <= change.underdog_probability <= 0.5
    assert 0.0 <= change.probability <= 1.0
    assert math.isfinite(change.winner_change) and change.winner_change >= 0.0
    assert math.isfinite(change.loser_change) and change.loser_change <= 0.0
    assert math.isfinite(change.new_winner_rating) and math.isfinite(change.new_loser_rating)
    assert len(format_rating_calculation(change, "alice", "bob")) == 10


def test_a_huge_difference_gives_the_limits_exactly() -> None:
    assert underdog_probability(41_255.72 - 1500.0, 5_000_000) == 0.0
    assert underdog_probability(4000.0, 99) == 1.0 / (10.0 ** (4000.0 * math.sqrt(99) / 2000) + 1)
    upset = rate_match(1500.0, 0, 41_255.72, 0, 5_000_000)
    assert upset.probability == 1.0 and upset.winner_change == 4.0 * 5.0 * math.sqrt(5_000_000)
