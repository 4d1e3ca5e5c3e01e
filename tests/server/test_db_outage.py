"""A database that fails never takes back what players saw (issue 19): a match whose
write fails for want of the database pauses where its last stored write left it, its
players and watchers are told once, commands about it are answered that it waits, and
it goes on by itself, the held lines sent, once the same write is stored.

Real SQLite failures (as in ``test_honest_writes``): ``PRAGMA query_only`` makes the
file refuse writes under a running server, ``max_page_count`` fills it; the same
pragmas undone bring it back.  The PostgreSQL outages (stopped, hung) are in
``tests/test_postgres_outage.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from fibsd.server.match import _finish_unless_stored
from fibsd.store import FinishedMatch
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire import game_text as text
from tests.server.test_honest_writes import (
    disk_full,
    everything,
    read_only_now,
    small_pages,
    table_on,
    write_failures,
)
from fibsd.rules.game import Phase
from tests.helpers import FakeServer, make_settings
from tests.server.test_match import Table, random_rolls

WAITS = text.MATCH_WAITS
GOES_ON = text.MATCH_GOES_ON


def writable_again(store: SQLiteStore) -> None:
    store._conn.execute("PRAGMA query_only = OFF")  # noqa: SLF001
    store._conn.execute("PRAGMA max_page_count = 1073741823")  # noqa: SLF001


def stored_rolls(store: SQLiteStore) -> int:
    saved = store.load_match("alice", "bob")
    assert saved is not None
    games = json.loads(saved.record)["match"]["games"]
    return sum(1 for game in games for entry in game if entry[0] in ("opening", "roll"))


def test_a_roll_whose_write_fails_is_not_shown_until_it_is_stored(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "ro.sqlite")
    table = table_on(store, [(3, 5), (6, 2), (4, 1)])
    table.start("3")
    table.match.add_watcher(table.user("carol"), "bob")
    table.play_move()  # bob's opening 5-3; alice is to roll
    table.lines()
    before = stored_rolls(store)
    read_only_now(store)
    with write_failures() as failures:
        table.send("alice", "roll")
        got = table.lines()
    # Nobody sees the roll: each is told once that the match waits.
    assert got == {"alice": [WAITS], "bob": [WAITS], "carol": [WAITS]}
    assert len(failures) == 1 and failures[0]["what"] == "save_match"
    assert table.match.paused
    # Commands about the match are answered at once; the store still has the old state.
    table.send("alice", "move 1-7")
    table.send("bob", "board")
    table.send("carol", "board")
    got = table.lines()
    assert got == {"alice": [WAITS], "bob": [WAITS], "carol": [WAITS]}
    assert stored_rolls(store) == before
    # Still refused: the same write is tried again later, and nothing else is said.
    table.server.advance(0.5)
    assert table.lines() == {"alice": [], "bob": [], "carol": []}
    writable_again(store)
    table.server.advance(1.0)
    got = table.lines()
    for name in ("alice", "bob", "carol"):
        assert got[name][0] == GOES_ON
    assert "You roll 6 and 2." in got["alice"]
    assert "alice rolls 6 and 2." in got["bob"]
    assert "alice rolls 6 and 2." in got["carol"]
    assert stored_rolls(store) == before + 1
    assert not table.match.paused
    # Play goes on from there; the roll was shown exactly once.
    assert sum(line.endswith(" 6 and 2.") for line in everything(table)) == 3
    table.play_move()
    assert any(line.startswith("alice moves") for line in table.lines("bob"))


def test_a_full_disk_pauses_the_match_and_the_end_is_shown_only_once_stored(
        tmp_path: Path) -> None:
    store = small_pages(tmp_path / "full.sqlite")
    table = table_on(store, [(3, 5)] + random_rolls(7))
    for name in ("alice", "bob"):
        table.send(name, "toggle ratings")
    table.start("1")
    table.lines()
    disk_full(store)
    table.play_until(lambda: table.match.paused)
    assert WAITS in table.received["alice"] and WAITS in table.received["bob"]
    assert text.GAME_NOT_SAVED not in everything(table)
    writable_again(store)
    table.server.advance(0.5)
    table.lines()
    assert GOES_ON in table.received["alice"]
    table.play_until(lambda: "alice" not in table.server.lobby.matches)
    finished = store.finished_matches("alice")
    assert len(finished) == 1
    for name in ("alice", "bob"):
        assert "rating calculation:" in table.received[name]
        stored = store.get_user(name)
        user = table.user(name)
        assert stored is not None and (stored.rating, stored.experience) == (
            user.rating, user.experience) != (1500.0, 0)


def test_the_end_of_a_match_waits_for_the_database_and_then_rates_once(
        tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "ro.sqlite")
    table = table_on(store, [(3, 5)] + random_rolls(4))
    table.send("bob", "toggle ratings")
    table.start("1")
    read_only_now(store)
    table.send("alice", "resign n")
    table.lines()
    writable_again(store)
    table.server.advance(0.5)
    table.lines()
    read_only_now(store)
    table.send("bob", "accept")
    got = table.lines()
    assert got["bob"] == [WAITS] and got["alice"] == [WAITS]
    assert not any("win" in line for line in everything(table)[-3:])
    assert table.user("bob").rating == 1500.0
    assert store.finished_matches("bob") == []
    # The two cannot start again over the result that waits.
    table.send("alice", "invite bob 1")
    assert table.lines("alice") == [WAITS]
    writable_again(store)
    table.server.advance(0.5)
    got = table.lines()
    assert got["bob"][0] == GOES_ON
    assert "You win the 1 point match 1-0 ." in got["bob"]
    assert "rating calculation:" in got["bob"]
    assert table.user("bob").rating > 1500.0
    finished = store.finished_matches("bob")
    assert len(finished) == 1
    stored = store.get_user("bob")
    assert stored is not None and stored.rating == table.user("bob").rating
    assert store.load_match("alice", "bob") is None


def test_a_retried_end_whose_first_try_was_stored_is_not_stored_twice(
        store: SQLiteStore) -> None:
    for name in ("alice", "bob"):
        store.create_user(name, "h", 1)
    finished = FinishedMatch("bob", "alice", 1, 1, 0, 50, "the record", 4.5, -4.5)
    ratings = {"bob": (1504.5, 1), "alice": (1495.5, 1)}
    store.record_finished_match(finished, new_ratings=ratings)  # its answer was lost
    _finish_unless_stored(store, finished, {"bob": (1509.0, 2), "alice": (1491.0, 2)})
    assert len(store.finished_matches("bob")) == 1
    bob = store.get_user("bob")
    assert bob is not None and (bob.rating, bob.experience) == (1504.5, 1)
    _finish_unless_stored(store, FinishedMatch("bob", "alice", 1, 1, 0, 60, "another"),
                          None)
    assert len(store.finished_matches("bob")) == 2


def test_a_drop_waits_for_the_database_and_then_says_saved(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "ro.sqlite")
    table = table_on(store, [(3, 5), (6, 2)])
    table.start("3")
    table.match.add_watcher(table.user("carol"), "bob")
    table.lines()
    read_only_now(store)
    table.clients["bob"].close()
    got = table.lines()
    assert WAITS in got["alice"] and WAITS in got["carol"]
    assert not any("saved" in line for line in everything(table))
    writable_again(store)
    table.server.advance(0.5)
    got = table.lines()
    line = "bob drops connection. The game was saved."
    assert got["alice"][:2] == [GOES_ON, line]
    assert store.load_match("alice", "bob") is not None


def test_a_leave_waits_for_the_database_and_the_two_cannot_start_over_it(
        tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "ro.sqlite")
    table = table_on(store, [(3, 5), (6, 2)])
    table.start("3")
    read_only_now(store)
    table.send("bob", "leave")
    got = table.lines()
    assert got["alice"] == [WAITS] and got["bob"] == [WAITS]
    # A new start or a resume of the two would be overwritten by the save that waits.
    table.send("alice", "invite bob 1")
    table.send("alice", "invite bob")
    assert table.lines("alice") == [WAITS, WAITS]
    writable_again(store)
    table.server.advance(0.5)
    got = table.lines()
    assert got["bob"][:2] == [GOES_ON, "** You terminated the game. The game was saved."]
    assert got["alice"][:2] == [GOES_ON, "** Player bob has left the game. The game was saved."]
    table.send("alice", "invite bob")
    assert table.lines("alice")[0] == "** You invited bob to resume a saved match."


def test_a_drop_while_the_match_waits_is_saved_after_the_action_it_waited_behind(
        tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "ro.sqlite")
    table = table_on(store, [(3, 5), (6, 2), (4, 1)])
    table.start("3")
    table.play_move()  # bob's opening 5-3; alice is to roll
    table.lines()
    before = stored_rolls(store)
    read_only_now(store)
    table.send("alice", "roll")
    table.clients["alice"].close()
    got = table.lines()
    assert got["bob"] == [WAITS, "8 alice alice drops connection."]
    writable_again(store)
    table.server.advance(0.5)
    got = table.lines()
    # The roll first (stored by its own write), then the departure's save.
    assert got["bob"][0] == GOES_ON
    rolled = got["bob"].index("alice rolls 6 and 2.")
    assert got["bob"].index("alice drops connection. The game was saved.") > rolled
    assert stored_rolls(store) == before + 1


def test_a_restart_during_the_wait_rolls_the_same_unseen_dice_from_the_stored_state(
        tmp_path: Path) -> None:
    """Fair dice (no script): the roll nobody saw is rolled again after a crash, the
    same dice from the same stored state, and no roll anyone saw comes back."""
    path = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(path)
    table = table_on(store, [])
    table.server.lobby.dice = None  # each match rolls its own seeded dice
    table.start("3")
    rules = table.match.rules
    table.play_until(lambda: rules.phase is Phase.ROLL and rules.turn == 0)
    seen = [line for line in everything(table) if " roll" in line]
    read_only_now(store)
    table.send("alice", "roll")
    assert table.lines("alice") == [WAITS]
    unseen = table.match.rules.game.dice
    assert unseen is not None
    # The process dies here; a new server opens the same file.
    again = Table([], server=FakeServer(store=SQLiteStore(path)))
    again.server.lobby.dice = None
    again.send("alice", "invite bob")  # both ready still: the toggle was saved
    again.send("bob", "join alice")
    assert "bob has joined you. Your running match was loaded." in again.lines(
        "alice")
    again.send("alice", "roll")
    rolled = again.lines("alice")
    assert f"You roll {unseen[0]} and {unseen[1]}." in rolled
    assert seen == [line for line in everything(table) if " roll" in line]  # nothing new


def test_nobody_can_claim_a_match_while_it_waits_for_the_database(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "ro.sqlite")
    server = FakeServer(store=store, settings=make_settings(**{"fair.claim_after": 300}))
    for name in ("alice", "bob", "carol"):
        server.register(name)
    table = Table([(3, 5), (6, 2), (4, 1)], server=server)
    table.start("3")
    table.play_move()  # bob's opening; alice is to roll
    table.lines()
    read_only_now(store)
    table.send("alice", "roll")
    table.lines()
    table.server.advance(400)  # alice is silent only because the match waits
    assert table.lines() == {"alice": [], "bob": [], "carol": []}  # no claim warnings
    table.send("bob", "claim")
    assert table.lines("bob") == [WAITS]
    writable_again(store)
    table.server.advance(30)  # the longest a write that failed while up waits to retry
    assert GOES_ON in table.lines("bob")
    table.send("bob", "claim")  # alice's silence starts again only now
    assert table.lines("bob") == ["** alice may still act: you may claim in 300 seconds."]
    assert "alice" in table.server.lobby.matches
