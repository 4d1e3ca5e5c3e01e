"""show games, show saved, show savedcount and ratings over in-memory transports, with
matches really played, saved by ``leave`` and by a dropped connection, and ratings
written to the store."""

from __future__ import annotations

import re

import pytest

from fibsd.rules.events import CannotMove, Moved
from fibsd.rules.game import Game
from fibsd.wire.board import Colour, consistency_problems, parse_board, view_position
from tests.server.test_match import random_rolls
from tests.server.test_watching import Watched


@pytest.fixture
def table() -> Watched:
    """alice, bob, carol and dave logged in (CLIP) and ready."""
    table = Watched(random_rolls(11))
    table.server.register("dave")
    table.login("dave")
    for name in ("alice", "bob", "carol", "dave"):
        table.send(name, "toggle ready")
    table.lines()
    return table


def play(table: Watched, inviter: str, joiner: str, length: str) -> None:
    table.send(inviter, f"invite {joiner} {length}")
    table.send(joiner, f"join {inviter}")
    table.lines()


def ask(table: Watched, name: str, line: str) -> list[str]:
    table.send(name, line)
    return table.lines(name)


def test_show_games(table: Watched) -> None:
    assert ask(table, "carol", "show games") == ["List of games:"]
    play(table, "alice", "bob", "5")
    table.play_until(lambda: table.match.rules.waiting_for_new_game)
    assert table.match.rules.score == (0, 1)
    play(table, "dave", "carol", "unlimited")
    assert ask(table, "carol", "show games") == [
        "List of games:",
        "alice           -             bob (5 point match 0-1)",
        "dave            -           carol (unlimited match 0-0)",
    ]
    table.send("alice", "leave")
    table.lines()
    assert ask(table, "bob", "show games") == [
        "List of games:", "dave            -           carol (unlimited match 0-0)"]


def test_show_saved_with_every_status_marker(table: Watched) -> None:
    assert ask(table, "alice", "show saved") == ["no saved games."]
    play(table, "alice", "bob", "5")
    table.play_until(lambda: table.match.rules.waiting_for_new_game)
    table.send("bob", "leave")
    play(table, "carol", "alice", "unlimited")
    table.send("alice", "leave")
    play(table, "alice", "dave", "3")
    table.clients["dave"].close()  # saved by the dropped connection
    table.lines()
    table.send("carol", "toggle ready")  # carol: logged in, not ready
    table.lines()
    assert ask(table, "alice", "show saved") == [
        "  opponent          matchlength   score (your points first)",
        "**bob                     5                0 -  1",
        " *carol                   unlimited         0 -  0",
        "  dave                    3                0 -  0",
    ]
    assert ask(table, "bob", "show saved") == [
        "  opponent          matchlength   score (your points first)",
        "**alice                   5                1 -  0",
    ]


def test_show_savedcount(table: Watched) -> None:
    assert ask(table, "alice", "show savedcount") == ["alice has no saved games."]
    play(table, "alice", "bob", "5")
    table.send("bob", "leave")
    table.lines()
    assert ask(table, "alice", "show savedcount") == ["alice has 1 saved game."]
    play(table, "carol", "alice", "3")
    table.send("alice", "leave")
    table.lines()
    assert ask(table, "bob", "show savedcount al") == ["alice has 2 saved games."]
    table.clients["alice"].close()
    table.lines()
    assert ask(table, "bob", "show savedcount alice") == ["alice has 2 saved games."]
    assert ask(table, "bob", "show savedcount zed") == ["** There is no user called 'zed'."]


def test_the_match_being_played_is_not_saved(table: Watched) -> None:
    """During a first match the store keeps it as saved, but it is not listed or counted:
    GNU Gibbon offered "resume" for it, which the server then refused."""
    play(table, "alice", "bob", "5")
    assert ask(table, "alice", "show saved") == ["no saved games."]
    assert ask(table, "bob", "show savedcount") == ["bob has no saved games."]
    assert ask(table, "carol", "show savedcount alice") == ["alice has no saved games."]
    table.play_until(lambda: table.match.rules.waiting_for_new_game)
    assert ask(table, "alice", "show saved") == ["no saved games."]
    table.send("bob", "leave")
    table.lines()
    play(table, "alice", "carol", "3")  # the match with bob is saved, this one is played
    assert ask(table, "alice", "show saved") == [
        "  opponent          matchlength   score (your points first)",
        "**bob                     5                0 -  1",
    ]
    assert ask(table, "dave", "show savedcount alice") == ["alice has 1 saved game."]
    assert ask(table, "carol", "show savedcount") == ["carol has no saved games."]
    table.send("carol", "leave")
    table.lines()
    assert ask(table, "dave", "show savedcount alice") == ["alice has 2 saved games."]


def player(number: int) -> str:
    """Names are letters (case does not tell names apart): playeraa .. playerbd."""
    return "player" + "ab"[(number - 1) // 26] + "abcdefghijklmnopqrstuvwxyz"[(number - 1) % 26]


def test_ratings_lists_the_experienced_with_the_requester_starred(table: Watched) -> None:
    store = table.server.store
    for name, rating, experience in [("alice", 1712.5, 120), ("bob", 1655.125, 50),
                                     ("carol", 1800.0, 49), ("dave", 1500.0, 0)]:
        store.set_rating(name, rating, experience)
    for number in range(1, 31):
        store.create_user(player(number), "x", 0)
        store.set_rating(player(number), 2000.0 - number * 10, 1000 + number)
    top = ask(table, "alice", "ratings")
    assert top[:3] == [" rank name            rating    Experience",
                       "    1 playeraa        1990.00        1001",
                       "    2 playerab        1980.00        1002"]
    assert len(top) == 22 and top[20] == "   20 playerat        1800.00        1020"
    assert top[21] == "*  29 alice           1712.50         120"
    assert ask(table, "bob", "ratings from 29 to 33") == [
        " rank name            rating    Experience",
        "   29 alice           1712.50         120",
        "   30 playerbc        1710.00        1029",
        "   31 playerbd        1700.00        1030",
        "*  32 bob             1655.12          50",
    ]
    around = ask(table, "carol", "ratings playeraj")
    assert [line[1:5] for line in around[1:]] == [f"{rank:>4}" for rank in range(5, 16)] + ["  33"]
    # carol is unrated: numbered after the 32 ranked players
    assert around[-1] == "*  33 carol           1800.00          49"


def test_ratings_forms_and_errors(table: Watched) -> None:
    store = table.server.store
    store.set_rating("alice", 1712.5, 120)
    store.set_rating("bob", 1655.125, 50)
    store.set_rating("carol", 1800.0, 49)
    header = " rank name            rating    Experience"
    alice = "    1 alice           1712.50         120"
    bob = "    2 bob             1655.12          50"
    carol = "*   3 carol           1800.00          49"  # unrated: after the ranked ones
    assert ask(table, "carol", "ratings") == [header, alice, bob, carol]
    dave = "*   4 dave            1500.00           0"
    assert ask(table, "dave", "ratings from 2 to 2") == [header, bob, dave]
    assert ask(table, "alice", "ratings Bob") == [header, "*" + alice[1:], bob]
    assert ask(table, "dave", "ratings carol") == [
        header, "    3 carol           1800.00          49", dave]
    for line, error in [("ratings zed", "** There is no user called 'zed'."),
                        ("ratings alice bob",
                         "** Please use only one of the given names 'alice' and 'bob'."),
                        ("ratings from x", "** Please give a positive number after 'from'."),
                        ("ratings from 3 to 0", "** Please give a positive number after 'to'."),
                        ("ratings from 5 to 2", "** invalid range from 5 to 2."),
                        ("ratings from 1 to 500", "** range currently limited to 100.")]:
        assert ask(table, "alice", line) == [error], line


def test_the_threshold_comes_from_the_settings() -> None:
    from tests.helpers import FakeServer, make_settings
    server = FakeServer(settings=make_settings(rated_experience=0))
    for name in ("alice", "bob", "carol"):
        server.register(name)
    table = Watched(random_rolls(1), server=server)
    assert ask(table, "alice", "ratings") == [
        " rank name            rating    Experience",
        "*   1 alice           1500.00           0",
        "    2 bob             1500.00           0",
        "    3 carol           1500.00           0",
    ]


def test_a_rated_match_moves_the_list(table: Watched) -> None:
    store = table.server.store
    store.set_rating("alice", 1600.0, 100)
    store.set_rating("bob", 1600.0, 100)
    table.user("alice").rating = table.user("bob").rating = 1600.0
    table.user("alice").experience = table.user("bob").experience = 100
    play(table, "alice", "bob", "1")
    table.play_until(lambda: "alice" not in table.server.lobby.matches)
    listing = ask(table, "carol", "ratings")
    assert listing[1:3] == ["    1 bob             1608.00         101",  # bob won
                            "    2 alice           1592.00         101"]


def finish_match(table: Watched) -> None:
    """Play alice's match to its end, joining each next game."""
    while "alice" in table.server.lobby.matches:
        if table.match.rules.waiting_for_new_game:
            table.send("alice", "join")
            table.send("bob", "join")
            table.lines()
        table.play_until(lambda: "alice" not in table.server.lobby.matches
                         or table.match.rules.waiting_for_new_game)


def shows(line: str, game: Game, player: int) -> bool:
    """Whether the board ``line`` is ``game``'s position as ``player`` sees it."""
    view = parse_board(line)
    return consistency_problems(view) == [] and \
        view_position(view, Colour(view.colour)) == game.position_for(player)


def test_oldboard_shows_the_last_finished_game(table: Watched) -> None:
    table.unchecked = frozenset(("alice", "bob", "carol"))
    assert ask(table, "carol", "oldboard") == ["** carol has not finished a game yet."]
    play(table, "alice", "bob", "3")
    assert ask(table, "carol", "oldboard alice") == ["** alice has not finished a game yet."]
    table.play_until(lambda: table.match.rules.waiting_for_new_game)
    finished = table.match.rules.game
    assert finished is not None and finished.over
    first = ask(table, "carol", "oldboard al")
    assert len(first) == 1 and parse_board(first[0]).player == "alice"
    assert shows(first[0], finished, 0)
    assert ask(table, "alice", "oldboard") == [first[0].replace("board:alice:", "board:You:", 1)]
    table.send("alice", "join")
    table.send("bob", "join")
    table.lines()
    assert ask(table, "carol", "oldboard alice") == first  # the next game is under way
    match = table.match
    finish_match(table)
    last = ask(table, "carol", "oldboard bob")  # from the store now
    assert len(last) == 1 and parse_board(last[0]).player == "bob"
    assert shows(last[0], match.rules.games[-1], 1)
    table.clients["bob"].close()
    table.lines()
    assert ask(table, "carol", "oldboard bob") == last
    table.send("carol", "set boardstyle 2")
    table.lines()
    ascii_board = ask(table, "carol", "oldboard alice")
    assert len(ascii_board) > 10 and not ascii_board[0].startswith("board:")


MOVES_ENTRY = re.compile(r"^[XO]: \([1-6] [1-6]\) ")


def test_oldmoves_lists_the_last_finished_game(table: Watched) -> None:
    assert ask(table, "carol", "oldmoves alice") == ["** alice has not finished a game yet."]
    play(table, "alice", "bob", "3")
    table.play_until(lambda: table.match.rules.waiting_for_new_game)
    listing = ask(table, "carol", "oldmoves al")
    assert listing[:4] == ["Score is 0-0 in a 3 point match.", "alice is X - bob is O.",
                           "O: (5 4) 13-8 13-9", "X: (4 4) 1-5 1-5 5-9 5-9"]
    assert listing[-2:] == ["O: (5 1) 1-off", "O: wins 1 point"]
    turns = listing[2:-1]
    assert all(MOVES_ENTRY.match(line) for line in turns)
    history = table.match.rules.game.history
    assert len(turns) == sum(isinstance(e, (Moved, CannotMove)) for e in history)
    assert ask(table, "alice", "oldmoves") == listing
    table.send("alice", "join")
    table.send("bob", "join")
    table.lines()
    assert ask(table, "bob", "oldmoves alice") == listing  # until the next game ends
    finish_match(table)
    last = ask(table, "carol", "oldmoves bob")  # game 3 of 3, from the store
    assert last[:2] == ["Score is 0-2 in a 3 point match.", "alice is X - bob is O."]
    assert last[-1] == "O: wins 1 point"
