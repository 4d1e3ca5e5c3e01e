"""Dice sources: scripted dice behave exactly; the system dice are fair."""

import math
from collections import Counter

import pytest

from fibsd.fair.stats import chi_square, upper_gamma_q
from fibsd.rules.dice import DiceExhausted, ScriptedDice, SeededDice, SystemDice


def test_scripted_dice_hand_out_rolls_in_order() -> None:
    dice = ScriptedDice([(3, 1), (6, 6), (1, 2)])
    assert dice.remaining == 3
    assert [dice.roll(), dice.roll()] == [(3, 1), (6, 6)]
    assert dice.remaining == 1
    assert repr(dice) == "ScriptedDice([(1, 2)])"
    assert dice.roll() == (1, 2)
    assert dice.remaining == 0


def test_scripted_dice_raise_when_exhausted() -> None:
    dice = ScriptedDice([(5, 2)])
    dice.roll()
    with pytest.raises(DiceExhausted) as caught:
        dice.roll()
    assert caught.value.used == 1
    assert str(caught.value) == "all 1 scripted rolls are used up"


def test_scripted_dice_accept_any_iterable_of_pairs() -> None:
    dice = ScriptedDice(iter([[4, 4]]))
    assert dice.roll() == (4, 4)


@pytest.mark.parametrize("bad", [(0, 1), (1, 7), (1,), (1, 2, 3), ("1", 2), (1.0, 2), (True, 2)])
def test_scripted_dice_refuse_anything_but_two_dice(bad: tuple[object, ...]) -> None:
    with pytest.raises(ValueError):
        ScriptedDice([(1, 1), bad])  # type: ignore[list-item]


def chi_square_survival(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X ~ chi-square(dof): 1 - P(dof/2, statistic/2), with the
    regularised lower incomplete gamma function P summed as its power series."""
    s = dof / 2
    x = statistic / 2
    term = 1.0 / s
    total = term
    n = 1
    while term > total * 1e-17:
        term *= x / (s + n)
        total += term
        n += 1
    lower = math.exp(s * math.log(x) - x - math.lgamma(s)) * total
    return 1.0 - lower


def test_chi_square_survival_matches_tables() -> None:
    # Critical values from standard chi-square tables.
    assert chi_square_survival(66.619, 35) == pytest.approx(0.001, rel=1e-3)
    assert chi_square_survival(49.802, 35) == pytest.approx(0.05, rel=1e-3)
    assert chi_square_survival(3.841, 1) == pytest.approx(0.05, rel=1e-3)


def test_system_dice_are_fair() -> None:
    """36,000 rolls: every ordered outcome occurs, and a chi-square test over the 36
    outcomes (35 degrees of freedom) does not reject fairness at p = 0.001.  A fair source
    fails this one time in a thousand."""
    rolls = 36_000
    dice = SystemDice()
    counts = Counter(dice.roll() for _ in range(rolls))
    outcomes = {(a, b) for a in range(1, 7) for b in range(1, 7)}
    assert set(counts) == outcomes
    expected = rolls / 36
    statistic = sum((counts[o] - expected) ** 2 / expected for o in outcomes)
    assert chi_square_survival(statistic, 35) > 0.001, (statistic, counts)


def test_system_dice_repr() -> None:
    assert repr(SystemDice()) == "SystemDice()"


# -- seeded dice (protocol/fair-dice.md; the worked examples are checked from the file
# itself by tests/server/test_fair.py) --------------------------------------------------

SEED = bytes(range(32))


def test_seeded_dice_roll_the_documented_example_and_count() -> None:
    dice = SeededDice(SEED, ("hello world", ""))
    assert dice.commitment == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    assert [dice.roll() for _ in range(3)] == [(5, 6), (3, 4), (3, 4)]
    assert dice.next_roll == 3


def test_seeded_dice_go_on_from_their_record() -> None:
    dice = SeededDice(SEED, ("a", "b"))
    dice.roll()
    again = SeededDice.from_record(dice.to_record())
    assert again.to_record() == {"server_seed": SEED.hex(), "texts": ["a", "b"], "next_roll": 1}
    assert again.roll() == dice.roll()


@pytest.mark.parametrize("record", [
    None, {}, {"server_seed": "00", "texts": ["", ""], "next_roll": 0},
    {"server_seed": SEED.hex(), "texts": [""], "next_roll": 0},
    {"server_seed": SEED.hex(), "texts": ["", ""], "next_roll": -1},
    {"server_seed": SEED.hex(), "texts": ["", ""], "next_roll": "1"},
    {"server_seed": SEED.hex(), "texts": ["", ""], "next_roll": 0, "unseeded": -2},
])
def test_bad_seeded_dice_records_are_refused(record: object) -> None:
    with pytest.raises(ValueError):
        SeededDice.from_record(record)


def test_chi_square_p_values() -> None:
    assert round(upper_gamma_q(2.5, 11.0705 / 2), 4) == 0.05  # 5 df, 95th percentile
    assert round(upper_gamma_q(17.5, 49.8018 / 2), 4) == 0.05  # 35 df
    assert chi_square([10] * 6) == (0.0, 1.0)
    statistic, p = chi_square([20, 0, 0, 0, 0, 0])
    assert round(statistic, 9) == 100.0 and p < 1e-15
    with pytest.raises(ValueError):
        chi_square([0] * 6)


def test_a_fresh_seed_goes_on_from_the_roll_reached() -> None:
    """Left or saved (fair-dice.md 1.2): the old seed is kept among the earlier ones,
    the fresh one rolls from the same roll number, both come back from the record."""
    first = SeededDice(bytes(range(32)), ("", "x"))
    for _ in range(5):
        first.roll()
    fresh = first.fresh(bytes(32))
    assert not fresh.used and (fresh.first_roll, fresh.next_roll) == (5, 5)
    assert fresh.earlier == ({"server_seed": bytes(range(32)).hex(), "texts": ["", "x"],
                              "first_roll": 0, "next_roll": 5},)
    mixed = fresh.with_texts(("a", "b"))
    again = SeededDice(bytes(32), ("a", "b"), 5)
    assert [mixed.roll() for _ in range(3)] == [again.roll() for _ in range(3)]
    assert SeededDice.from_record(mixed.to_record()) == mixed
    with pytest.raises(ValueError):
        mixed.with_texts(("", ""))  # it has rolled
