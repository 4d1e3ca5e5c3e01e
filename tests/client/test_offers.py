"""What the bot reads from ``show saved``, the invitation warning and invite refusals,
on the lines of protocol/watching.md and protocol/catalogue/between.toml."""

from __future__ import annotations

import pytest

from fibsd.client.offers import (
    UNLIMITED, Refusal, SavedMatch, describe_lengths, invite_refusal, lost_join_race,
    parse_lengths, saved_count_of, saved_line, warning_length,
)


def test_the_show_saved_lines_of_the_reference() -> None:
    assert saved_line("  opponent          matchlength   score (your points first)") is None
    assert saved_line("**bob                     5                0 -  1") == SavedMatch("bob", True, 5, 0, 1)
    assert saved_line(" *carol                   unlimited         0 -  0") == \
        SavedMatch("carol", True, UNLIMITED, 0, 0)
    assert saved_line("  dave                    3                0 -  0") == SavedMatch("dave", False, 3, 0, 0)
    assert saved_count_of("alice has 2 saved games.") == "alice"
    assert saved_count_of("alice has no saved games.") == "alice"
    assert saved_count_of("alice has 1 saved game.") == "alice"
    assert saved_count_of("no saved games.") is None
    assert SavedMatch("bob", True, 5, 0, 1).describe() == "5 point match (0-1)"


def test_the_warning_says_the_saved_length() -> None:
    assert warning_length("WARNING: Don't accept if you want to continue the saved 7 point match!") == 7
    assert warning_length("WARNING: Don't accept if you want to continue the saved unlimited match!") \
        == UNLIMITED


@pytest.mark.parametrize(("text", "refusal"), [
    ("You're not experienced enough to play a match of that length.", Refusal.FINAL),
    ("The second argument to 'invite' has to be a number from 1 to 99", Refusal.FINAL),
    ("There's no saved match with bob. Please give a match length.", Refusal.NO_SAVED),
    ("You are already playing.", Refusal.PLAYING),
    ("bob is refusing games.", Refusal.LATER),
    ("bob is already playing with someone else.", Refusal.LATER),
    ("There is no one called bob.", Refusal.LATER),
    ("Please wait for your last invitation to be accepted.", Refusal.LATER),
    ("Sorry, the server's database is not available at the moment. Please try again in a "
     "minute.", Refusal.LATER),
    ("You can't play two games at once", None),
])
def test_invite_refusals(text: str, refusal: Refusal | None) -> None:
    assert invite_refusal(text) is refusal


def test_a_join_that_lost_the_race() -> None:
    assert lost_join_race("You can't play two games at once")
    assert lost_join_race("bob didn't invite you.")
    assert not lost_join_race("You're not experienced enough to play a match of that length.")


def test_lengths() -> None:
    assert parse_lengths("any") is None
    lengths = parse_lengths("1-3, 5,7,unlimited")
    assert lengths == frozenset({1, 2, 3, 5, 7, UNLIMITED})
    assert describe_lengths(lengths) == "1-3 point, 5 point, 7 point and unlimited"
    assert describe_lengths(frozenset({1})) == "1 point"
    for wrong in ("0", "5-3", "seven", ""):
        with pytest.raises(ValueError):
            parse_lengths(wrong)
