"""The behaviour every ``Store`` implementation promises, run against each of them.

Nothing here may depend on how a backend stores things: only the ``Store`` methods
are used.  A new backend joins by adding one ``Backend`` line.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fibsd.store import (
    Departure,
    FinishedMatch,
    NameTaken,
    RatingStep,
    SavedMatch,
    Store,
    StoredMessage,
    UnknownUser,
    UserRecord,
)
from fibsd.store.sqlite import SQLiteStore


@dataclass(frozen=True)
class Backend:
    name: str
    # given the test's request (for fixtures such as ``postgres``) and a directory of
    # its own; opened twice with one directory, a persistent store is the same store
    open: Callable[[pytest.FixtureRequest, Path], Store]
    persistent: bool


def open_postgres(request: pytest.FixtureRequest, directory: Path) -> Store:
    """A new database on the session's PostgreSQL server, the same one for the same
    directory (its URL is kept there)."""
    from fibsd.store.postgres import PostgresStore

    server = request.getfixturevalue("postgres")
    kept = directory / "postgres.url"
    if not kept.exists():
        kept.write_text(server.new_database())
    return PostgresStore(kept.read_text())


BACKENDS = [
    Backend("sqlite-file", lambda _, directory: SQLiteStore(directory / "fibsd.sqlite"), True),
    Backend("sqlite-memory", lambda _, directory: SQLiteStore(":memory:"), False),
    Backend("postgres", open_postgres, True),
]
PERSISTENT = [backend for backend in BACKENDS if backend.persistent]


@pytest.fixture(params=BACKENDS, ids=lambda backend: backend.name)
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened = request.param.open(request, tmp_path)
    yield opened
    opened.close()


def with_users(store: Store, *names: str) -> Store:
    for created, name in enumerate(names, start=1000):
        store.create_user(name, f"hash-of-{name}", created)
    return store


def finished(winner: str, loser: str, when: int, **changes: float) -> FinishedMatch:
    return FinishedMatch(winner, loser, 5, 5, 2, when, f"record {when}", **changes)


# users


def test_create_user_returns_a_fresh_record(any_store: Store) -> None:
    record = any_store.create_user("alice", "h1", 1234)
    assert record == UserRecord(name="alice", password_hash="h1", created=1234)
    assert (record.rating, record.experience) == (1500.0, 0)


def test_get_user_returns_the_stored_record(any_store: Store) -> None:
    any_store.create_user("Alice", "h1", 1234)
    assert any_store.get_user("Alice") == UserRecord(
        name="Alice", password_hash="h1", created=1234
    )


def test_get_user_is_case_sensitive(any_store: Store) -> None:
    any_store.create_user("Alice", "h1", 1234)
    assert any_store.get_user("alice") is None
    assert any_store.get_user("bob") is None


def test_name_taken_ignores_case(any_store: Store) -> None:
    any_store.create_user("Alice", "h1", 1234)
    assert any_store.name_taken("Alice")
    assert any_store.name_taken("alice")
    assert any_store.name_taken("ALICE")
    assert not any_store.name_taken("Alic")


def test_create_user_refuses_a_name_differing_only_in_case(any_store: Store) -> None:
    any_store.create_user("Alice", "h1", 1234)
    with pytest.raises(NameTaken) as caught:
        any_store.create_user("aLICE", "h2", 1235)
    assert caught.value.name == "aLICE"
    assert any_store.get_user("aLICE") is None
    assert [name for name, _, _ in any_store.ratings()] == ["Alice"]


def test_set_password_hash(any_store: Store) -> None:
    with_users(any_store, "alice")
    any_store.set_password_hash("alice", "new-hash")
    user = any_store.get_user("alice")
    assert user is not None and user.password_hash == "new-hash"


def test_record_login_and_logout(any_store: Store) -> None:
    with_users(any_store, "alice")
    any_store.record_login("alice", 2000, "host.example.net")
    any_store.record_logout("alice", 2100)
    any_store.record_login("alice", 3000, "192.0.2.7")
    user = any_store.get_user("alice")
    assert user is not None
    assert (user.last_login, user.last_host, user.last_logout) == (3000, "192.0.2.7", 2100)


def test_set_address(any_store: Store) -> None:
    with_users(any_store, "alice")
    any_store.set_address("alice", "alice@example.com")
    user = any_store.get_user("alice")
    assert user is not None and user.address == "alice@example.com"


def test_save_settings_merges_with_stored_values(any_store: Store) -> None:
    with_users(any_store, "alice")
    any_store.save_settings("alice", {"boardstyle": "3", "ready": "0"})
    any_store.save_settings("alice", {"ready": "1", "timezone": "Europe/Sofia"})
    user = any_store.get_user("alice")
    assert user is not None
    assert user.settings == {"boardstyle": "3", "ready": "1", "timezone": "Europe/Sofia"}


def test_settings_belong_to_one_user(any_store: Store) -> None:
    with_users(any_store, "alice", "bob")
    any_store.save_settings("alice", {"ready": "1"})
    bob = any_store.get_user("bob")
    assert bob is not None and bob.settings == {}


def test_set_rating(any_store: Store) -> None:
    with_users(any_store, "alice")
    any_store.set_rating("alice", 1612.4, 834)
    user = any_store.get_user("alice")
    assert user is not None and (user.rating, user.experience) == (1612.4, 834)


def test_ratings_best_first(any_store: Store) -> None:
    with_users(any_store, "alice", "bob", "carol", "dave", "Eve")
    any_store.set_rating("alice", 1612.4, 834)
    any_store.set_rating("bob", 2160.34, 10)
    any_store.set_rating("carol", 1612.4, 900)
    assert any_store.ratings() == [
        ("bob", 2160.34, 10),
        ("carol", 1612.4, 900),
        ("alice", 1612.4, 834),
        ("dave", 1500.0, 0),
        ("Eve", 1500.0, 0),
    ]


@pytest.mark.parametrize(
    "write",
    [
        lambda s: s.set_password_hash("ghost", "h"),
        lambda s: s.record_login("ghost", 1, "host"),
        lambda s: s.record_logout("ghost", 1),
        lambda s: s.set_address("ghost", "a@example.com"),
        lambda s: s.save_settings("ghost", {"ready": "1"}),
        lambda s: s.set_rating("ghost", 1500.0, 0),
        lambda s: s.store_message(StoredMessage("alice", "ghost", 1, "hi")),
        lambda s: s.save_match(SavedMatch("alice", "ghost", 1, "r")),
        lambda s: s.record_finished_match(finished("alice", "ghost", 1), {"ghost": (1.0, 1)}),
        lambda s: s.set_password_hash("Alice", "h"),  # lookups are case-sensitive
    ],
)
def test_writes_for_an_unknown_user_raise(
    any_store: Store, write: Callable[[Store], None]
) -> None:
    with_users(any_store, "alice")
    with pytest.raises(UnknownUser):
        write(any_store)
    assert any_store.get_user("alice") == UserRecord("alice", "hash-of-alice", 1000)
    assert any_store.finished_matches("alice") == []
    assert any_store.saved_matches("alice") == []


# stored messages


def test_messages_come_oldest_first_and_are_removed(any_store: Store) -> None:
    with_users(any_store, "alice", "bob", "carol")
    late = StoredMessage("carol", "alice", 3000, "second")
    early = StoredMessage("bob", "alice", 2000, "first")
    same_time = StoredMessage("bob", "alice", 3000, "third: same second, stored later")
    for message in (late, early, same_time):
        any_store.store_message(message)
    any_store.store_message(StoredMessage("alice", "bob", 2500, "for bob"))
    assert any_store.count_messages("alice") == 3
    assert any_store.take_messages("alice") == [early, late, same_time]
    assert any_store.take_messages("alice") == []
    assert any_store.count_messages("alice") == 0
    assert any_store.take_messages("bob") == [StoredMessage("alice", "bob", 2500, "for bob")]


def test_messages_for_nobody(any_store: Store) -> None:
    assert any_store.take_messages("ghost") == []
    assert any_store.count_messages("ghost") == 0


# saved matches


def test_save_and_load_a_match_in_either_order(any_store: Store) -> None:
    with_users(any_store, "bob", "alice")
    any_store.save_match(SavedMatch("bob", "alice", 5000, "match record"))
    expected = SavedMatch("alice", "bob", 5000, "match record")
    assert any_store.load_match("bob", "alice") == expected
    assert any_store.load_match("alice", "bob") == expected


def test_save_match_replaces_the_pairs_match(any_store: Store) -> None:
    with_users(any_store, "alice", "bob")
    any_store.save_match(SavedMatch("alice", "bob", 5000, "old"))
    any_store.save_match(SavedMatch("bob", "alice", 6000, "new"))
    assert any_store.saved_matches("alice") == [SavedMatch("alice", "bob", 6000, "new")]


def test_load_missing_match(any_store: Store) -> None:
    with_users(any_store, "alice", "bob")
    assert any_store.load_match("alice", "bob") is None


def test_save_matches_commits_the_last_save_of_each_pair_and_answers_each(
        any_store: Store) -> None:
    with_users(any_store, "alice", "bob", "carol")
    saves = [SavedMatch("alice", "bob", 10, "one"), SavedMatch("carol", "alice", 11, "two"),
             SavedMatch("bob", "alice", 12, "three")]
    assert any_store.save_matches(saves) == [None, None, None]  # type: ignore[attr-defined]
    assert any_store.load_match("alice", "bob") == SavedMatch("alice", "bob", 12, "three")
    assert any_store.load_match("alice", "carol") == SavedMatch("alice", "carol", 11, "two")


def test_save_matches_with_an_unknown_player_fails_only_that_save(any_store: Store) -> None:
    with_users(any_store, "alice", "bob")
    outcomes = any_store.save_matches(  # type: ignore[attr-defined]
        [SavedMatch("alice", "bob", 10, "kept"), SavedMatch("alice", "nobody", 11, "lost")])
    assert outcomes[0] is None and isinstance(outcomes[1], UnknownUser)
    assert any_store.load_match("alice", "bob") == SavedMatch("alice", "bob", 10, "kept")
    assert any_store.saved_matches("alice") == [SavedMatch("alice", "bob", 10, "kept")]


def test_delete_saved_match_in_either_order(any_store: Store) -> None:
    with_users(any_store, "alice", "bob", "carol")
    any_store.save_match(SavedMatch("alice", "bob", 5000, "ab"))
    any_store.save_match(SavedMatch("alice", "carol", 5000, "ac"))
    any_store.delete_saved_match("bob", "alice")
    assert any_store.load_match("alice", "bob") is None
    assert any_store.load_match("alice", "carol") == SavedMatch("alice", "carol", 5000, "ac")
    any_store.delete_saved_match("bob", "alice")  # nothing left to delete: no error


def test_saved_matches_lists_each_players_matches_by_opponent(any_store: Store) -> None:
    with_users(any_store, "alice", "bob", "carol", "dave")
    any_store.save_match(SavedMatch("carol", "dave", 1, "cd"))
    any_store.save_match(SavedMatch("carol", "alice", 2, "ac"))
    any_store.save_match(SavedMatch("bob", "carol", 3, "bc"))
    assert any_store.saved_matches("carol") == [
        SavedMatch("alice", "carol", 2, "ac"),
        SavedMatch("bob", "carol", 3, "bc"),
        SavedMatch("carol", "dave", 1, "cd"),
    ]
    assert any_store.saved_matches("dave") == [SavedMatch("carol", "dave", 1, "cd")]
    assert any_store.saved_matches("ghost") == []


# finished matches


def test_finished_matches_oldest_first_for_winner_and_loser(any_store: Store) -> None:
    with_users(any_store, "alice", "bob", "carol")
    second = finished("bob", "alice", 7000, winner_rating_change=3.25, loser_rating_change=-3.25)
    first = finished("alice", "bob", 6000)
    other = finished("carol", "bob", 6500)
    for match in (second, first, other):
        any_store.record_finished_match(match)
    assert any_store.finished_matches("alice") == [first, second]
    assert any_store.finished_matches("bob") == [first, other, second]
    assert any_store.finished_matches("dave") == []


def test_finishing_a_match_sets_ratings_and_drops_the_saved_match(any_store: Store) -> None:
    with_users(any_store, "alice", "bob", "carol")
    any_store.save_match(SavedMatch("alice", "bob", 5000, "in play"))
    any_store.save_match(SavedMatch("alice", "carol", 5000, "other"))
    match = finished("bob", "alice", 7000, winner_rating_change=4.5, loser_rating_change=-4.5)
    any_store.record_finished_match(match, {"bob": (1504.5, 5), "alice": (1495.5, 5)})
    assert any_store.finished_matches("bob") == [match]
    assert any_store.load_match("alice", "bob") is None
    assert any_store.saved_matches("alice") == [SavedMatch("alice", "carol", 5000, "other")]
    assert any_store.ratings() == [("bob", 1504.5, 5), ("carol", 1500.0, 0), ("alice", 1495.5, 5)]


def test_a_result_may_name_players_without_accounts(any_store: Store) -> None:
    match = finished("gone", "also_gone", 8000)
    any_store.record_finished_match(match)
    assert any_store.finished_matches("gone") == [match]


def test_the_archive_pages_newest_first_with_ids(any_store: Store) -> None:
    results = [finished("alice", "bob", 6000), finished("bob", "alice", 7000),
               finished("carol", "bob", 6500), finished("alice", "carol", 7000),
               finished("dave", "alice", 5000)]
    for match in results:
        any_store.record_finished_match(match)
    everything = any_store.finished_matches("alice")
    ids = [match.id for match in everything]
    assert all(isinstance(i, int) for i in ids) and len(set(ids)) == 4
    newest = list(reversed(everything))  # equal times: the later stored first
    assert [m.finished for m in newest] == [7000, 7000, 6000, 5000]
    assert newest[0].loser == "carol"
    assert any_store.recent_finished_matches("alice", 10) == newest
    assert [m.id for m in any_store.recent_finished_matches("alice", 10)] == ids[::-1]
    assert [m.id for m in any_store.recent_finished_matches("alice", 2)] == ids[::-1][:2]
    assert [m.id for m in any_store.recent_finished_matches("alice", 2, 2)] == ids[::-1][2:]
    assert any_store.recent_finished_matches("alice", 2, 4) == []
    assert any_store.recent_finished_matches("nobody", 5) == []
    one = any_store.finished_match(ids[1])
    assert one == everything[1] and one is not None and one.id == ids[1]
    assert any_store.finished_match(max(ids) + 100) is None


def test_rating_steps_are_the_players_own_changes_oldest_first(any_store: Store) -> None:
    for match in (finished("alice", "bob", 6000, winner_rating_change=5.0,
                           loser_rating_change=-5.0),
                  finished("carol", "dave", 6100),
                  finished("bob", "alice", 7000, winner_rating_change=3.25,
                           loser_rating_change=-3.25)):
        any_store.record_finished_match(match)
    steps = any_store.rating_steps("alice", 10)
    assert [(s.finished, s.change) for s in steps] == [(6000, 5.0), (7000, -3.25)]
    assert steps[0].match_id < steps[1].match_id
    assert any_store.rating_steps("alice", 1) == [RatingStep(steps[1].match_id, 7000, -3.25)]
    assert any_store.rating_steps("erin", 10) == []


# persistence


@pytest.mark.parametrize("backend", PERSISTENT, ids=lambda backend: backend.name)
def test_everything_survives_close_and_reopen(
    backend: Backend, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    store = with_users(backend.open(request, tmp_path), "alice", "bob")
    store.record_login("alice", 2000, "host.example.net")
    store.set_address("alice", "alice@example.com")
    store.save_settings("alice", {"boardstyle": "3"})
    store.set_rating("alice", 1523.95, 13)
    store.store_message(StoredMessage("bob", "alice", 2500, "see you"))
    store.record_finished_match(finished("alice", "bob", 2900))
    store.save_match(SavedMatch("alice", "bob", 3000, "unfinished"))
    before = store.get_user("alice")
    store.close()

    store = backend.open(request, tmp_path)
    try:
        assert store.get_user("alice") == before
        assert before == UserRecord(
            name="alice",
            password_hash="hash-of-alice",
            created=1000,
            last_login=2000,
            last_host="host.example.net",
            rating=1523.95,
            experience=13,
            address="alice@example.com",
            settings={"boardstyle": "3"},
        )
        assert store.take_messages("alice") == [StoredMessage("bob", "alice", 2500, "see you")]
        assert store.load_match("bob", "alice") == SavedMatch("alice", "bob", 3000, "unfinished")
        assert store.finished_matches("bob") == [finished("alice", "bob", 2900)]
        assert store.name_taken("BOB")
    finally:
        store.close()


# administration (bans, the admin log, renaming and deleting accounts)


def test_rename_user_carries_matches_and_messages(any_store: Store) -> None:
    from fibsd.store import StoredMessage as Message

    with_users(any_store, "alice", "bob", "carol")
    any_store.save_match(SavedMatch("alice", "bob", 10, "rec"))
    any_store.record_finished_match(finished("alice", "carol", 20))
    any_store.store_message(Message("alice", "carol", 30, "hi"))
    any_store.record_departure(Departure("alice", "bob", "alice", 40))
    any_store.rename_user("alice", "zed")
    assert any_store.get_user("alice") is None
    assert any_store.get_user("zed") is not None
    assert any_store.load_match("zed", "bob") == SavedMatch("bob", "zed", 10, "rec")
    assert [m.winner for m in any_store.finished_matches("zed")] == ["zed"]
    assert [m.sender for m in any_store.take_messages("carol")] == ["zed"]
    assert any_store.due_departures(50) == [Departure("bob", "zed", "zed", 40)]


def test_rename_user_refuses_a_taken_name_and_an_unknown_user(any_store: Store) -> None:
    with_users(any_store, "alice", "bob")
    with pytest.raises(NameTaken):
        any_store.rename_user("alice", "BOB")
    with pytest.raises(UnknownUser):
        any_store.rename_user("nobody", "zed")
    any_store.rename_user("alice", "Alice")  # only the case changes: allowed
    assert any_store.get_user("Alice") is not None


def test_delete_user_removes_the_account_and_its_saved_matches(any_store: Store) -> None:
    with_users(any_store, "alice", "bob")
    any_store.save_match(SavedMatch("alice", "bob", 10, "rec"))
    any_store.record_finished_match(finished("alice", "bob", 20))
    any_store.delete_user("alice")
    assert any_store.get_user("alice") is None
    assert not any_store.name_taken("alice")
    assert any_store.saved_matches("bob") == []
    assert [m.winner for m in any_store.finished_matches("bob")] == ["alice"]
    with pytest.raises(UnknownUser):
        any_store.delete_user("alice")


def test_a_deleted_accounts_history_never_passes_to_a_newcomer_of_its_name(
    any_store: Store,
) -> None:
    """Issue 19: history belongs to the account, not to the name.  alice is the newest
    account, so SQLite would give her id to the next one."""
    from fibsd.store import AdminAction

    with_users(any_store, "bob", "carol", "alice")
    old = [finished("alice", "bob", 2000, winner_rating_change=4.0, loser_rating_change=-4.0),
           finished("carol", "alice", 2100, winner_rating_change=2.0, loser_rating_change=-2.0)]
    for match in old:
        any_store.record_finished_match(match)
    any_store.set_rating("alice", 1502.0, 2)
    any_store.save_match(SavedMatch("alice", "bob", 2200, "unfinished"))
    any_store.store_message(StoredMessage("bob", "alice", 2300, "rematch?"))
    any_store.record_departure(Departure("alice", "carol", "alice", 2400))
    any_store.log_admin(AdminAction(2500, "root", "delete", "alice", ""))
    any_store.delete_user("alice")
    assert any_store.finished_matches("alice") == old  # the name's, while nobody has it

    newcomer = any_store.create_user("alice", "new-hash", 3000)
    assert (newcomer.rating, newcomer.experience) == (1500.0, 0)
    assert any_store.finished_matches("alice") == []
    assert any_store.recent_finished_matches("alice", 10) == []
    assert any_store.rating_steps("alice", 10) == []
    assert any_store.reliability("alice") == (0, 0, 0)
    assert any_store.saved_matches("alice") == []
    assert any_store.load_match("alice", "bob") is None
    assert any_store.take_messages("alice") == []
    assert any_store.due_departures(10**9) == []
    # the opponents keep theirs, and the admin log reads as it was written
    assert any_store.finished_matches("bob") == old[:1]
    assert [m.loser for m in any_store.recent_finished_matches("carol", 10)] == ["alice"]
    assert [s.change for s in any_store.rating_steps("bob", 10)] == [-4.0]
    assert any_store.admin_log(1) == [AdminAction(2500, "root", "delete", "alice", "")]

    mine = finished("bob", "alice", 4000, winner_rating_change=1.0, loser_rating_change=-1.0)
    any_store.record_finished_match(mine, {"alice": (1499.0, 1), "bob": (1501.0, 1)})
    assert any_store.finished_matches("alice") == [mine]
    assert [s.change for s in any_store.rating_steps("alice", 10)] == [-1.0]
    assert any_store.reliability("alice") == (0, 0, 1)
    assert any_store.finished_matches("bob") == [old[0], mine]


def test_a_rename_takes_the_history_along_and_leaves_a_namesakes_behind(
    any_store: Store,
) -> None:
    with_users(any_store, "zed", "bob", "alice")
    namesakes = finished("zed", "bob", 2000)
    any_store.record_finished_match(namesakes)
    any_store.delete_user("zed")
    hers = finished("alice", "bob", 2100, winner_rating_change=3.0, loser_rating_change=-3.0)
    any_store.record_finished_match(hers)
    any_store.rename_user("alice", "zed")
    renamed = finished("zed", "bob", 2100, winner_rating_change=3.0, loser_rating_change=-3.0)
    assert any_store.finished_matches("zed") == [renamed]
    assert any_store.rating_steps("zed", 10)[0].change == 3.0
    assert any_store.finished_matches("alice") == []
    assert any_store.finished_matches("bob") == [namesakes, renamed]
    any_store.rename_user("zed", "alice")
    assert any_store.finished_matches("alice") == [hers]
    assert any_store.finished_matches("zed") == [namesakes]  # nobody's account


def test_bans_expire_and_match_names_and_addresses_ignoring_case(any_store: Store) -> None:
    from fibsd.store import Ban

    forever = Ban("name", "Mallory", 100, None, "root", "spam")
    brief = Ban("address", "10.0.0.7", 100, 200, "root", "")
    any_store.add_ban(forever)
    any_store.add_ban(brief)
    assert any_store.bans(150) == [forever, brief]
    assert any_store.bans(200) == [forever]
    assert any_store.ban_for("mallory", "10.0.0.7", 150) == forever
    assert any_store.ban_for("eve", "10.0.0.7", 150) == brief
    assert any_store.ban_for("eve", "10.0.0.7", 200) is None
    assert any_store.remove_ban("name", "MALLORY") is True
    assert any_store.remove_ban("name", "mallory") is False
    assert any_store.ban_for("mallory", "1.2.3.4", 150) is None


def test_the_admin_log_keeps_the_latest_actions_in_order(any_store: Store) -> None:
    from fibsd.store import AdminAction

    actions = [AdminAction(n, "root", "kick", f"user{n}", "") for n in range(5)]
    for action in actions:
        any_store.log_admin(action)
    assert any_store.admin_log(3) == actions[2:]


# registrations per network (access.registrations_per_hour)

def test_registrations_are_counted_per_network_within_the_window(any_store: Store) -> None:
    network = "203.0.113.5"
    assert [any_store.reserve_registration(network, 1000.0 + n, 3, 3600.0)
            for n in range(4)] == [None, None, None, 1000.0]
    assert any_store.reserve_registration("203.0.113.6", 1004.0, 3, 3600.0) is None
    assert any_store.registrations_since(network, 1000.5) == [1001.0, 1002.0]
    assert any_store.reserve_registration(network, 4600.0, 3, 3600.0) is None  # 1000 is out
    assert any_store.reserve_registration(network, 4600.5, 3, 3600.0) == 1001.0
    assert any_store.registrations_since(network, 0.0) == [1001.0, 1002.0, 4600.0]
    assert any_store.reserve_registration(network, 5000.0, 3, 3600.0) is None  # 1001, 1002 out
    assert any_store.reserve_registration("192.0.2.9", 5000.0, 0, 3600.0) == 5000.0


@pytest.mark.parametrize("backend", PERSISTENT, ids=lambda backend: backend.name)
def test_servers_reserving_registrations_at_once_never_pass_the_limit(
        backend: Backend, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Two servers on one database (a cluster's nodes), each reserving from its own
    thread: exactly the limit is counted, whatever the interleaving."""
    stores = [backend.open(request, tmp_path) for _ in range(2)]
    answers: list[float | None] = []

    def reserve(store: Store) -> None:
        for _ in range(10):
            answers.append(store.reserve_registration("198.51.100.7", 2000.0, 5, 3600.0))

    threads = [threading.Thread(target=reserve, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        store.close()
    assert sorted(answers, key=lambda answer: answer is not None) == [None] * 5 + [2000.0] * 15


def test_bot_flag(any_store: Store) -> None:
    any_store.create_user("alice", "h", 1)
    any_store.create_user("GnubgExpert", "h", 1)
    assert any_store.get_user("alice").bot is False  # type: ignore[union-attr]
    any_store.set_bot("GnubgExpert", True)
    assert any_store.get_user("GnubgExpert").bot is True  # type: ignore[union-attr]
    assert any_store.bot_names() == {"GnubgExpert"}
    any_store.set_bot("GnubgExpert", False)
    assert any_store.bot_names() == set()
    with pytest.raises(UnknownUser):
        any_store.set_bot("nobody", True)
