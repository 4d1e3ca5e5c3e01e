"""The listings' exact lines against the reference samples (between-games.md 8,
ratings.md 4), and the choice of ranks a ``ratings`` request lists."""

from __future__ import annotations

import re

import pytest

from fibsd.rules.events import (
    CannotMove,
    DoubleAccepted,
    Doubled,
    DoubleRejected,
    EndReason,
    GameWon,
    Moved,
    OpeningRoll,
    Redoubled,
    ResignAccepted,
    ResignOffered,
    ResignRejected,
    Rolled,
    WinKind,
)
from fibsd.rules.play import Move, Play
from fibsd.rules.position import Position
from fibsd.wire import listings_text as text
from fibsd.wire import watching_text
from fibsd.wire.listings_text import (
    GameRow,
    RatingRow,
    RatingsRequest,
    SavedRow,
    format_games,
    format_moves_list,
    format_ratings,
    format_saved,
    parse_ratings,
    rank_players,
    select_ratings,
    unranked_rows,
    with_own_row,
)

START = Position.initial()

# FIBS Cookie Monster's patterns (between-games.md 8, ratings.md 4).
FCM_LIMITED = re.compile(r"^[a-zA-Z_<>]+ +- +[a-zA-Z_<>]+ .+ point match")
FCM_UNLIMITED = re.compile(r"^[a-zA-Z_<>]+ +- +[a-zA-Z_<>]+ \(unlimited")
FCM_SAVED = re.compile(r"^  [a-zA-Z_<>]+ +[0-9]+ +[0-9]+ +- +")
FCM_SAVED_PLAYING = re.compile(r"^ \*[a-zA-Z_<>]+ +[0-9]+ +[0-9]+ +- +")
FCM_SAVED_READY = re.compile(r"^\*\*[a-zA-Z_<>]+ +[0-9]+ +[0-9]+ +- +[0-9]+")
FCM_RATINGS = re.compile(r"^\* *[0-9]+ +[a-zA-Z_<>]+ +[0-9]+\.[0-9]+ +[0-9]+")


def test_show_games_matches_the_reference_sample() -> None:
    assert format_games([GameRow("alice", "bob", 5, 2, 1), GameRow("carol", "dave", 0, 0, 3)]) == [
        "List of games:",
        "alice           -             bob (5 point match 2-1)",
        "carol           -            dave (unlimited match 0-3)",
    ]
    assert format_games([]) == ["List of games:"]


def test_show_games_rows_have_the_shapes_clients_parse() -> None:
    limited, unlimited = format_games([
        GameRow("GammonBot_VII", "a_player_with_a_long_name", 13, 10, 12),
        GameRow("x", "y", 0, 0, 0)])[1:]
    assert FCM_LIMITED.match(limited) and FCM_UNLIMITED.match(unlimited)


def test_show_saved_matches_the_reference_samples() -> None:
    rows = [SavedRow("GammonBot_VII", text.ABSENT, 5, 0, 0),
            SavedRow("BlunderBot_VI", text.LOGGED_IN, 3, 1, 0),
            SavedRow("bonehead", text.READY, 3, 1, 2),
            SavedRow("deadbeef", text.ABSENT, 0, 1, 2)]
    assert format_saved(rows) == [
        "  opponent          matchlength   score (your points first)",
        "  GammonBot_VII           5                0 -  0",
        " *BlunderBot_VI           3                1 -  0",
        "**bonehead                3                1 -  2",
        "  deadbeef                unlimited         1 -  2",
    ]


def test_show_saved_rows_keep_fcm_shapes_with_long_names_and_scores() -> None:
    name = "a_name_longer_than_twenty_four"
    absent, logged_in, ready = format_saved([SavedRow(name, text.ABSENT, 21, 19, 20),
                                             SavedRow(name, text.LOGGED_IN, 1, 0, 0),
                                             SavedRow(name, text.READY, 7, 6, 6)])[1:]
    assert FCM_SAVED.match(absent) and FCM_SAVED_PLAYING.match(logged_in)
    assert FCM_SAVED_READY.match(ready)
    assert format_saved([SavedRow(name, text.ABSENT, 0, 120, 3)])[1] == \
        f"  {name} unlimited       120 -  3"


def test_no_saved_games() -> None:
    assert format_saved([]) == ["no saved games."]


@pytest.mark.parametrize(("count", "line"), [
    (0, "alice has no saved games."), (1, "alice has 1 saved game."),
    (2, "alice has 2 saved games."), (11, "alice has 11 saved games."),
])
def test_saved_count(count: int, line: str) -> None:
    assert text.saved_count("alice", count) == line


def test_ratings_lines_match_the_reference_sample() -> None:
    rows = [RatingRow(1, "GammonBot_XI", 2160.34, 1034159),
            RatingRow(57, "someplayer", 1612.4, 834)]
    assert format_ratings(rows, "someplayer") == [
        " rank name            rating    Experience",
        "    1 GammonBot_XI    2160.34     1034159",
        "*  57 someplayer      1612.40         834",
    ]
    assert FCM_RATINGS.match(format_ratings(rows, "GammonBot_XI")[1])


def test_ratings_round_the_unrounded_value_like_printf() -> None:
    assert text.format_rating_row(RatingRow(3, "x", 1543.885, 10), own=False) == \
        "    3 x               1543.88          10"
    assert text.format_rating_row(RatingRow(3, "x", 889.9649, 0), own=True) == \
        "*   3 x                889.96           0"


ACCOUNTS = [("ann", 1900.0, 400), ("ben", 1800.0, 20), ("cid", 1700.0, 90), ("dot", 1600.0, 50),
            ("eve", 1500.0, 0)]


def test_rank_players_keeps_the_experienced_in_order() -> None:
    assert rank_players(ACCOUNTS, 50) == [RatingRow(1, "ann", 1900.0, 400),
                                          RatingRow(2, "cid", 1700.0, 90),
                                          RatingRow(3, "dot", 1600.0, 50)]
    assert [row.name for row in rank_players(ACCOUNTS, 0)] == ["ann", "ben", "cid", "dot", "eve"]


def test_unranked_players_are_numbered_after_the_ranked_ones() -> None:
    assert unranked_rows(ACCOUNTS, 50) == [RatingRow(4, "ben", 1800.0, 20),
                                           RatingRow(5, "eve", 1500.0, 0)]


def test_two_unrated_players_never_share_a_rank() -> None:
    fresh = [("amy", 1500.0, 0), ("bea", 1500.0, 0)]
    assert rank_players(fresh, 50) == []
    assert unranked_rows(fresh, 50) == [RatingRow(1, "amy", 1500.0, 0),
                                        RatingRow(2, "bea", 1500.0, 0)]


def test_the_own_row_is_added_in_rank_order() -> None:
    ranked = rank_players(ACCOUNTS, 50)
    assert with_own_row(ranked[:1], ranked[2]) == [ranked[0], ranked[2]]
    assert with_own_row(ranked, ranked[1]) == ranked
    ben = unranked_rows(ACCOUNTS, 50)[0]
    assert with_own_row(ranked, ben) == [*ranked, ben]


@pytest.mark.parametrize(("words", "request_"), [
    ("", RatingsRequest(1, 20)),
    ("from 5 to 9", RatingsRequest(5, 9)),
    ("FROM 5 TO 5", RatingsRequest(5, 5)),
    ("from 30", RatingsRequest(30, 49)),
    ("to 7", RatingsRequest(1, 7)),
    ("from 1 to 100", RatingsRequest(1, 100)),
    ("Alice", RatingsRequest(name="Alice")),
])
def test_parse_ratings(words: str, request_: RatingsRequest) -> None:
    assert parse_ratings(words.split()) == request_


@pytest.mark.parametrize(("words", "error"), [
    ("from", "** Please give a positive number after 'from'."),
    ("from 0 to 5", "** Please give a positive number after 'from'."),
    ("from x to 5", "** Please give a positive number after 'from'."),
    ("from 5 to", "** Please give a positive number after 'to'."),
    ("from 5 to -1", "** Please give a positive number after 'to'."),
    ("from 9 to 3", "** invalid range from 9 to 3."),
    ("from 1 to 101", "** range currently limited to 100."),
    ("alice bob", "** Please use only one of the given names 'alice' and 'bob'."),
])
def test_parse_ratings_errors(words: str, error: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_ratings(words.split())
    assert str(raised.value) == error


def test_select_ratings() -> None:
    ranked = [RatingRow(rank, f"p{rank}", 2000.0 - rank, 100) for rank in range(1, 31)]
    assert select_ratings(ranked, RatingsRequest()) == ranked[:20]
    assert select_ratings(ranked, RatingsRequest(28, 40)) == ranked[27:]
    assert select_ratings(ranked, RatingsRequest(name="p10"), ranked[9]) == ranked[4:15]
    assert select_ratings(ranked, RatingsRequest(name="p2"), ranked[1]) == ranked[:7]
    outsider = RatingRow(31, "new", 1000.0, 0)
    assert select_ratings(ranked, RatingsRequest(name="new"), outsider) == [outsider]
    assert select_ratings(ranked, RatingsRequest(name="nobody"), None) == []


def test_watching_lines() -> None:
    assert watching_text.stop_watching("bob") == "You stop watching bob."
    assert watching_text.stop_watching("bob", replaced=True) == "** You stop watching bob."
    assert watching_text.doesnt_want_you_to("bob", "look") == "** bob doesn't want you to look."
    assert watching_text.watched_logs_out("bob") == "bob logs out. You're not watching anymore."


def test_moves_list_of_a_game() -> None:
    history = [
        OpeningRoll((3, 3)), OpeningRoll((5, 3)),
        Moved(0, Play((Move(8, 3), Move(6, 3)), START)),
        Rolled(1, (6, 2), 2), Moved(1, Play((Move(24, 18), Move(13, 11)), START)),
        Doubled(0, 2), DoubleAccepted(1, 2),
        Rolled(0, (4, 2), 0), CannotMove(0, (4, 2)),
        Rolled(1, (1, 1), 4), Moved(1, Play((Move(25, 24), Move(6, 0)), START)),
        ResignOffered(0, WinKind.GAMMON, 4), ResignRejected(1), Redoubled(1, 4, 1),
        DoubleRejected(0), GameWon(1, 2, WinKind.SINGLE, EndReason.DROPPED),
    ]
    assert format_moves_list(history, ("alice", "bob"), 1, (0, 2), 5) == [
        "Score is 2-0 in a 5 point match.",
        "bob is X - alice is O.",
        "O: (5 3) 8-3 6-3",
        "X: (6 2) 1-7 12-14",
        "O: doubles",
        "X: accepts",
        "O: (4 2) can't move",
        "X: (1 1) bar-1 19-off",
        "O: wants to resign",  # refused: no line, gnubg would read a drop
        "X: doubles",
        "O: rejects",
        "X: wins 2 points",
    ]
    resigned = [OpeningRoll((5, 3)), Moved(0, Play((Move(8, 3), Move(6, 3)), START)),
                ResignOffered(1, WinKind.GAMMON, 2), ResignAccepted(0, 2),
                GameWon(0, 2, WinKind.GAMMON, EndReason.RESIGNED)]
    assert format_moves_list(resigned, ("alice", "bob"), 1, (0, 0), 5)[2:] == [
        "O: (5 3) 8-3 6-3", "X: wants to resign", "O: wins 2 points"]
    assert format_moves_list([], ("a", "b"), 0, (0, 0), 0) == [
        "Score is 0-0 in an unlimited match.", "a is X - b is O."]


def test_protocol_play_md_lists_only_words_the_moves_list_writes() -> None:
    """Issue 21: play.md said oldmoves writes ``O: redoubles`` where fibsd writes
    ``O: doubles`` (FCM's ``^[XO]: doubles`` cookie; no FIBS word for a redouble is
    known).  Every action line play.md quotes must be one the formatter produces."""
    from pathlib import Path

    play_md = (Path(__file__).resolve().parents[2] / "protocol" / "play.md").read_text()
    quoted = set(re.findall(r"`[XO]: ([a-z][a-z' ]*[a-z])`", play_md.replace("\n    ", " ")))
    history = [OpeningRoll((5, 3)), Moved(0, Play((Move(8, 3), Move(6, 3)), START)),
               Doubled(1, 2), Redoubled(0, 4, 1), DoubleAccepted(1, 4), Doubled(1, 8),
               DoubleRejected(0), ResignOffered(1, WinKind.SINGLE, 1)]
    written = {line[3:] for line in format_moves_list(history, ("a", "b"), 1, (0, 0), 0)[2:]}
    assert quoted and quoted - {"wins 2 points"} <= written | {"can't move"}
    assert "doubles" in quoted and "redoubles" not in quoted
