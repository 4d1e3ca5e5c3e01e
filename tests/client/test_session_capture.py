"""Every line of the real 2020 fibs.com CLIP session, classified; none is unknown."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from fibsd.client import events as ev
from fibsd.client.parse import LineReader

SESSION = Path(__file__).resolve().parent.parent / "data" / "fibs-session-2020.txt"  # copied from shared/fibs-captures


def session_events() -> list[tuple[str, ev.Event]]:
    reader = LineReader()
    lines = SESSION.read_text().split("\n")
    assert lines[-1] == ""  # the file ends with a line end
    return [(line, reader.feed(line)) for line in lines[:-1]]


def test_no_line_is_unknown() -> None:
    unknown = [line for line, event in session_events() if isinstance(event, ev.Unknown)]
    assert unknown == []


def test_counts_by_kind() -> None:
    counts = Counter(type(event).__name__ for _, event in session_events())
    assert counts == {
        "Empty": 638, "Board": 275, "WhoInfo": 198, "Rolls": 141, "Moves": 132, "WhoEnd": 130,
        "LoginNotice": 21, "LogoutNotice": 18, "MatchResult": 18, "MatchStartReport": 18, "Banner": 17,
        "MotdLine": 13, "CantMove": 9, "Shouts": 6, "MatchResumeReport": 4, "OpeningRoll": 3, "Kibitzes": 3,
        "StartingNewGame": 2, "MakesFirstMove": 2, "Doubles": 2, "AcceptsDouble": 2, "ResignOffer": 2,
        "AcceptsResignation": 2, "Prompt": 1, "Welcome": 1, "OwnInfo": 1, "MotdStart": 1, "MotdEnd": 1,
        "VariableValue": 1, "YouWatch": 1, "NothingInteresting": 1, "Error": 1, "LeftGameReport": 1,
        "Score": 1, "MatchWon": 1,
    }


def test_free_text_is_only_the_banner_and_the_motd() -> None:
    """Banner and MotdLine are context kinds: they may only cover the logo and rules before the
    prompt and the lines between CLIP 3 and 4 - never a line after login."""
    events = session_events()
    kinds = [type(event) for _, event in events]
    prompt = kinds.index(ev.Prompt)
    assert set(kinds[:prompt]) == {ev.Banner, ev.Empty}
    assert ev.Banner not in kinds[prompt:]
    start, end = kinds.index(ev.MotdStart), kinds.index(ev.MotdEnd)
    assert set(kinds[start + 1:end]) == {ev.MotdLine}
    assert ev.MotdLine not in kinds[end:]
    assert events[prompt] == ("login: ", ev.Prompt("login: "))


def test_the_watched_match_in_detail() -> None:
    events = [event for _, event in session_events()]
    assert ev.YouWatch("GammonBot_VII") in events
    assert ev.OpeningRoll("GammonBot_VII", 6, "pipcat", 6) in events
    assert ev.Doubles("pipcat", False) in events
    assert ev.AcceptsDouble("GammonBot_VII", None) in events
    assert ev.ResignOffer("pipcat", "GammonBot_VII", 4, False) in events
    assert ev.Score(5, "GammonBot_VII", 4, "pipcat", 0) in events
    assert ev.MatchWon("GammonBot_VII", 5, 5, 0) in events
    assert ev.Moves("pipcat", (("bar", "24"), ("bar", "24"), ("17", "16"), ("17", "16"))) in events
    assert ev.Error("GammonBot_VII is not playing.") in events


def test_every_board_of_the_session_is_a_legal_position() -> None:
    boards = [event for _, event in session_events() if isinstance(event, ev.Board)]
    assert {b.player for b in boards} == {"GammonBot_VII"}
    for board in boards:
        position = board.position()
        assert 15 - sum(position.player) == board.player_home
        assert 15 - sum(position.opponent) == board.opponent_home
        assert board.direction == -board.colour
