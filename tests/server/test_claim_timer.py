"""The claim timer (protocol/fair-dice.md 3.3, ``LiveMatch._arm_claim``): one timer per
match, left alone by game actions, that looks at the silence of the moment when it fires.
The lines and their timing to the second are those of ``test_fair``'s claim tests; these
add the cases where a silence ends, changes hands or stops counting before its lines are
due."""

from __future__ import annotations

from pathlib import Path

from fibsd.rules.game import Phase
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire import game_text as text
from tests.helpers import FakeServer, make_settings
from tests.server.test_db_outage import writable_again
from tests.server.test_fair import abandon_table, fair_table, play_out
from tests.server.test_honest_writes import read_only_now
from tests.server.test_match import Table, boards_match_the_engine  # noqa: F401 (autouse)

NOTHING = {"alice": [], "bob": [], "carol": []}
WARN_ALICE = "** Please act: in one minute bob may claim this match."
WARN_BOB = "** Please act: in one minute alice may claim this match."
ALICE_MAY = "** alice has not acted for a while: you may type 'claim'."
BOB_MAY = "** bob has not acted for a while: you may type 'claim'."


def act(table: Table) -> None:
    """The player to act rolls or moves."""
    match = table.match
    if match.rules.phase is Phase.ROLL:
        table.send(match.names[match.rules.turn], "roll")
    else:
        table.play_move()
    table.lines()


def test_game_actions_leave_the_one_claim_timer_alone() -> None:
    table, _ = abandon_table(**{"fair.claim_after": 300})
    table.start("3")  # alice to move
    clock = table.server.clock
    (timer,) = clock.getDelayedCalls()  # the first silence's warning, 240 s from now
    armed = timer.getTime()
    for _ in range(12):  # each within the timer's 240 s: no timer is touched
        table.server.advance(10)
        act(table)
    assert clock.getDelayedCalls() == [timer] and timer.getTime() == armed
    silent = table.match.names[table.match.silent_player()]
    table.server.advance(120)  # the timer fires: 120 s of silence, nothing due yet
    assert table.lines() == NOTHING
    table.server.advance(119)
    assert table.lines() == NOTHING
    table.server.advance(1)
    assert table.lines(silent) == [WARN_ALICE if silent == "alice" else WARN_BOB]


def test_the_silence_changes_hands_after_a_move_and_restarts_after_a_roll() -> None:
    table, _ = abandon_table(**{"fair.claim_after": 300})
    table.start("3")  # alice to move
    table.server.advance(100)
    table.play_move()  # bob to roll
    table.lines()
    table.server.advance(100)
    table.send("bob", "roll")  # bob to move: his silence starts again
    table.lines()
    table.server.advance(239)  # alice's first silence would have been warned at 240
    assert table.lines() == NOTHING
    table.server.advance(1)
    assert table.lines() == {"alice": [], "bob": [WARN_BOB], "carol": []}
    table.server.advance(59)
    assert table.lines() == NOTHING
    table.server.advance(1)
    assert table.lines() == {"alice": [BOB_MAY], "bob": [], "carol": []}
    table.server.advance(3600)
    assert table.lines() == NOTHING


def test_an_ended_silence_is_not_warned() -> None:
    table, _ = abandon_table(**{"fair.claim_after": 300})
    table.start("3")
    table.server.advance(239)
    table.play_move()  # a second before alice's warning
    table.lines()
    table.server.advance(1)
    assert table.lines() == NOTHING
    table.server.advance(60)  # alice's claim would have been due now
    assert table.lines() == NOTHING
    table.server.advance(178)
    assert table.lines() == NOTHING
    table.server.advance(1)
    assert table.lines() == {"alice": [], "bob": [WARN_BOB], "carol": []}


def test_one_warning_per_silence_and_a_new_one_for_the_next() -> None:
    table, _ = abandon_table(**{"fair.claim_after": 300})
    table.start("3")
    table.server.advance(240)
    assert table.lines() == {"alice": [WARN_ALICE], "bob": [], "carol": []}
    table.server.advance(30)
    assert table.lines() == NOTHING
    table.send("bob", "claim")  # a refusal is no action of the silent player
    assert table.lines("bob") == ["** alice may still act: you may claim in 30 seconds."]
    table.server.advance(30)
    assert table.lines() == {"alice": [], "bob": [ALICE_MAY], "carol": []}
    table.server.advance(1000)
    assert table.lines() == NOTHING  # warned once, told once
    table.play_move()  # bob's silence
    table.lines()
    table.server.advance(240)
    assert table.lines() == {"alice": [], "bob": [WARN_BOB], "carol": []}


def test_a_short_claim_after_moves_the_timer_earlier() -> None:
    """With ``claim_after`` under twice the warning, a silence that starts after the
    warning of the last one is warned before that one's claim would have been due."""
    table, _ = abandon_table(**{"fair.claim_after": 100})
    table.start("3")
    table.server.advance(40)
    assert table.lines() == {"alice": [WARN_ALICE], "bob": [], "carol": []}
    table.server.advance(10)
    table.play_move()  # bob's silence: warned at 90, claimable at 150
    table.lines()
    table.server.advance(39)
    assert table.lines() == NOTHING
    table.server.advance(1)
    assert table.lines() == {"alice": [], "bob": [WARN_BOB], "carol": []}
    table.server.advance(59)
    assert table.lines() == NOTHING
    table.server.advance(1)
    assert table.lines() == {"alice": [BOB_MAY], "bob": [], "carol": []}


def test_a_claim_after_under_the_warning_warns_at_once() -> None:
    table, _ = abandon_table(**{"fair.claim_after": 30})
    table.start("3")
    table.server.advance(0)
    assert table.lines() == {"alice": [WARN_ALICE], "bob": [], "carol": []}
    table.server.advance(29)
    assert table.lines() == NOTHING
    table.server.advance(1)
    assert table.lines() == {"alice": [], "bob": [ALICE_MAY], "carol": []}


def test_a_saved_match_leaves_no_timer() -> None:
    table, _ = abandon_table(**{"fair.claim_after": 300})
    table.start("3")
    assert len(table.server.clock.getDelayedCalls()) == 1
    table.send("alice", "leave")
    table.lines()
    assert "alice" not in table.server.lobby.matches
    assert table.server.clock.getDelayedCalls() == []
    table.server.advance(1000)
    assert table.lines() == NOTHING


def test_a_finished_match_leaves_no_timer() -> None:
    server = FakeServer(settings=make_settings(idle_timeout=0, **{"fair.claim_after": 300}))
    for name in ("alice", "bob", "carol"):
        server.register(name)
    table = fair_table(server, seeds=[bytes([n]) * 32 for n in range(8)])
    table.start("1")
    for _ in range(20):  # some of the game with time passing, then the rest at once
        table.server.advance(5)
        act(table)
    play_out(table)
    assert table.server.clock.getDelayedCalls() == []
    table.server.advance(1000)
    assert table.lines() == NOTHING


def test_a_paused_match_cancels_the_timer_and_arms_it_again_when_it_goes_on(
        tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "ro.sqlite")
    server = FakeServer(store=store, settings=make_settings(idle_timeout=0,
                                                             **{"fair.claim_after": 300}))
    for name in ("alice", "bob", "carol"):
        server.register(name)
    table = Table([(3, 5), (6, 2), (4, 1)], server=server)
    table.start("3")  # bob to move
    (timer,) = server.clock.getDelayedCalls()
    read_only_now(store)
    table.play_move()
    table.lines()
    assert table.match.paused and timer.cancelled
    table.server.advance(400)
    assert table.lines() == NOTHING
    writable_again(store)
    table.server.advance(30)  # the longest a write that failed while up waits to retry
    assert text.MATCH_GOES_ON in table.lines("alice")  # alice's silence starts now
    table.server.advance(239)
    assert table.lines() == NOTHING
    table.server.advance(1)
    assert table.lines() == {"alice": [WARN_ALICE], "bob": [], "carol": []}
    table.server.advance(60)
    assert table.lines() == {"alice": [], "bob": [ALICE_MAY], "carol": []}
