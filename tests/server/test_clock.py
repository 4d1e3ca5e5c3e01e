"""Match clocks over the wire, in memory, on the fake reactor clock (protocol/clock.md):
``set clock``, the invitation's line, the delay used before the reserve, the warnings,
loss on time in each phase, a saved and resumed match, a crash and restart that
charges no down-time.  Every line a client receives must match the catalogue
(``Table.lines``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fibsd.rules.clock import ClockSpec, InvalidClock, MatchClock, format_duration
from fibsd.rules.ending import ended
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import FakeServer, make_settings
from tests.server.test_match import Table, boards_match_the_engine  # noqa: F401 (autouse)

OPENING = [(5, 3)] + [(6, 1)] * 40  # alice (O, coin 0) moves first


def clock_table(store: SQLiteStore | None = None, register: bool = True,
                **settings: object) -> Table:
    server = FakeServer(store=store, settings=make_settings(
        idle_timeout=0, **{"clock.lag_allowance_ms": 0, **settings}))
    if register:
        for name in ("alice", "bob", "carol"):
            server.register(name)
    return Table(list(OPENING), coin=0, server=server)


def clocked(table: Table, length: str = "3", clock: str = "10s+1m") -> None:
    """alice invites bob with ``clock``; bob joins; alice is to move."""
    table.send("alice", f"set clock {clock}")
    table.lines()
    table.start(length)


def clock_lines(table: Table, name: str = "alice") -> list[str]:
    table.send(name, "clock")
    return table.lines(name)


def finished(table: Table) -> dict:
    (record,) = table.server.store._conn.execute(  # noqa: SLF001
        "SELECT record FROM finished_matches").fetchone()
    return json.loads(record)


# -- the pure model ---------------------------------------------------------------------------


def test_the_spec_reads_and_writes_the_set_clock_text() -> None:
    assert ClockSpec.parse("12s+2m") == ClockSpec(12, 120)
    assert ClockSpec.parse(" 0s+90s ") == ClockSpec(0, 90)
    assert ClockSpec(0, 90).text() == "0s+90s"
    assert ClockSpec.parse("off") is None
    for bad in ("12s", "12+2m", "s+2m", "12s+0s", "11m+2m", "12s+61m", "12h+2m", "-1s+2m",
                "12s+2m+1s", "１2s+2m"):
        with pytest.raises(InvalidClock):
            ClockSpec.parse(bad)
    assert ClockSpec(12, 120).reserve(7) == 840
    assert ClockSpec(12, 120).reserve(0) == 600  # unlimited: counted as 5 points
    assert [format_duration(s) for s in (0, 0.2, 59.5, 75, 3600)] == [
        "0:00", "0:01", "1:00", "1:15", "1:00:00"]


def test_the_delay_is_used_before_the_reserve_and_is_not_banked() -> None:
    clock = MatchClock.new(ClockSpec(10, 60), 1)
    clock.start(0, 100.0)
    assert clock.deadline() == 170.0
    assert clock.stop(104.0) == 0.0  # within the delay
    clock.start(0, 200.0)
    assert clock.left(0, 215.0) == 55.0
    assert clock.stop(215.0) == 5.0
    assert clock.reserves == [55.0, 60.0]
    clock.start(1, 300.0, allowance=0.3)  # the lag allowance comes off too
    assert clock.stop(310.5) == pytest.approx(0.2)
    assert MatchClock.from_record(clock.to_record()).reserves == [55.0, 59.8]


# -- set clock ----------------------------------------------------------------------------------


def test_set_clock_is_kept_and_the_fibs_listing_is_unchanged() -> None:
    table = clock_table()
    table.send("alice", "set clock")
    assert table.lines("alice") == ["Value of 'clock' is off"]
    table.send("alice", "set clock 12s+2m")
    assert table.lines("alice") == ["Value of 'clock' set to 12s+2m."]
    table.send("alice", "set clock 12x")
    assert table.lines("alice") == [
        "** Valid arguments are 'off' or a delay and a reserve per point, like '12s+2m'."]
    table.send("alice", "set")
    assert not any("clock" in line for line in table.lines("alice"))
    table.clients["alice"].close()
    table.lines()
    table.login("alice")
    table.send("alice", "set clock")
    assert table.lines("alice") == ["Value of 'clock' is 12s+2m"]
    table.send("alice", "set clock off")
    assert table.lines("alice") == ["Value of 'clock' set to off."]


def test_the_site_default_and_a_pure_fibs_site() -> None:
    table = clock_table(**{"clock.default": "5s+1m"})
    table.send("alice", "set clock")
    assert table.lines("alice") == ["Value of 'clock' is 5s+1m"]
    fibs = clock_table(**{"clock.enabled": False})
    fibs.send("alice", "set clock 12s+2m")
    assert fibs.lines("alice") == ["** Invalid argument. Type 'help set'."]
    fibs.start("3")
    assert fibs.match.clocks is None
    fibs.send("alice", "clock")
    assert fibs.lines("alice") == ["** This match has no clock."]


def test_a_site_may_require_a_clock_for_rated_matches() -> None:
    table = clock_table(**{"clock.required_for_rated": True})
    table.send("alice", "toggle ready")
    table.send("bob", "toggle ready")
    table.lines()
    table.send("alice", "invite bob 3")
    assert table.lines("alice") == [
        "** Rated matches need a clock on this server: type 'set clock 12s+2m'."]
    table.send("alice", "invite bob unlimited")  # not rated: no clock needed
    assert table.lines("alice") == ["** You invited bob to an unlimited match."]


def test_the_invitation_keeps_fibs_lines_and_adds_the_clock() -> None:
    table = clock_table()
    table.send("alice", "set clock 12s+2m")
    table.send("alice", "toggle ready")
    table.send("bob", "toggle ready")
    table.lines()
    table.send("alice", "invite bob 7")
    assert table.lines("bob") == [
        "alice wants to play a 7 point match with you.",
        "Type 'join alice' to accept.",
        "** With a clock: 12 seconds of delay a decision and 14:00 of reserve each.",
    ]
    table.send("bob", "join alice")
    table.lines()
    assert table.match.clocks.state.spec == ClockSpec(12, 120)
    assert table.match.clocks.state.reserves == [840.0, 840.0]


def test_changed_clock_terms_make_a_crossing_join_ask_again() -> None:
    """A join typed for an invitation without a clock must not start a clocked match."""
    table = clock_table()
    table.send("alice", "toggle ready")
    table.send("bob", "toggle ready")
    table.send("alice", "invite bob 3")
    table.lines()
    table.send("alice", "set clock 5s+1m")
    table.send("alice", "invite bob 3")
    table.lines()
    table.send("bob", "join alice")
    lines = table.lines("bob")
    assert "** With a clock: 5 seconds of delay a decision and 3:00 of reserve each." in lines
    assert "alice" not in table.server.lobby.matches


# -- running -------------------------------------------------------------------------------


def test_delay_then_reserve_over_the_wire() -> None:
    table = clock_table()
    clocked(table)
    assert clock_lines(table, "carol") == ["** You're not playing."]
    assert clock_lines(table) == ["clock: 10s+1m alice 3:00 bob 3:00",
                                  "clock: running for alice, 0:10 of delay left"]
    table.server.advance(8)
    assert clock_lines(table, "bob") == ["clock: 10s+1m alice 3:00 bob 3:00",
                                         "clock: running for alice, 0:02 of delay left"]
    table.server.advance(17)
    assert clock_lines(table) == ["clock: 10s+1m alice 2:45 bob 3:00",
                                  "clock: running for alice, 0:00 of delay left"]
    table.play_move()
    table.lines()
    assert clock_lines(table) == ["clock: 10s+1m alice 2:45 bob 3:00",
                                  "clock: running for bob, 0:10 of delay left"]
    table.send("carol", "watch alice")
    table.lines()
    assert clock_lines(table, "carol") == ["clock: 10s+1m alice 2:45 bob 3:00",
                                           "clock: running for bob, 0:10 of delay left"]


def test_a_refused_command_does_not_stop_the_clock() -> None:
    table = clock_table()
    clocked(table)
    table.server.advance(30)
    table.send("alice", "move 1-2")
    assert table.lines("alice")[0].startswith("** ")
    assert clock_lines(table)[0] == "clock: 10s+1m alice 2:40 bob 3:00"


def test_warnings_at_sixty_and_ten_seconds() -> None:
    table = clock_table()
    clocked(table, "2", "10s+1m")  # 2:00 each
    table.server.advance(69)
    assert table.lines("alice") == []
    table.server.advance(1)
    assert table.lines() == {"alice": ["** Your clock: 60 seconds of reserve left."],
                             "bob": [], "carol": []}
    table.server.advance(49)
    assert table.lines("alice") == []
    table.server.advance(1)
    assert table.lines("alice") == ["** Your clock: 10 seconds of reserve left."]
    table.server.advance(1)
    table.play_move()  # with 9 seconds left
    table.lines()
    table.send("bob", "roll")
    table.play_move()
    table.lines()
    table.server.advance(18.5)  # alice's delay, then her last 9 seconds: below every warning
    assert table.lines("alice") == []
    table.server.advance(0.5)
    assert table.lines("alice")[1] == "** Your clock ran out: you lose on time."


LOSS_BY = {
    "alice": ["", "** Your clock ran out: you lose on time.", "",
              "bob wins the 3 point match 0-0 ."],
    "bob": ["", "** The clock of alice ran out: alice loses on time.", "",
            "You win the 3 point match 0-0 ."],
}


def _check_loss_on_time(table: Table, after: float) -> None:
    table.server.advance(after - 0.001)
    assert not [line for line in table.lines("alice") if "lose" in line]
    assert "alice" in table.server.lobby.matches
    table.server.advance(0.001)
    got = table.lines()
    for name, expected in LOSS_BY.items():
        assert [line for line in got[name] if not line[:1].isdigit()] == expected
    assert "bob wins a 3 point match against alice  0-0 ." in got["carol"]
    assert "alice" not in table.server.lobby.matches
    record = finished(table)
    assert record["ended"] == "time" and ended(record) == "time"
    assert record["clock"]["reserves_ms"] == [0, 180000]
    assert (table.user("alice").rating, table.user("bob").rating) == pytest.approx(
        (1482.68, 1517.32), abs=0.01)  # rated as a lost 3-point match
    table.server.advance(600)
    assert table.lines() == {"alice": [], "bob": [], "carol": []}  # no timer left


def test_loss_on_time_while_moving() -> None:
    table = clock_table()
    clocked(table)
    _check_loss_on_time(table, 190)


def test_loss_on_time_while_to_roll() -> None:
    table = clock_table()
    clocked(table)
    table.play_move()
    table.send("bob", "roll")
    table.play_move()
    assert table.lines("alice")[-1] == "It's your turn to roll or double."
    _check_loss_on_time(table, 190)


def test_loss_on_time_while_to_answer_a_double() -> None:
    table = clock_table()
    clocked(table)
    table.play_move()
    table.lines()
    table.send("bob", "double")
    assert table.lines("alice") == ["", "bob doubles. Type 'accept' or 'reject'."]
    _check_loss_on_time(table, 190)


def test_loss_on_time_while_to_answer_a_resignation() -> None:
    table = clock_table()
    clocked(table)
    table.play_move()
    table.send("bob", "resign n")
    assert table.lines("alice")[-1].startswith("bob wants to resign.")
    _check_loss_on_time(table, 190)


def test_a_site_may_score_a_loss_on_time_as_the_game() -> None:
    table = clock_table(**{"clock.on_timeout": "game"})
    clocked(table)
    table.server.advance(190)
    got = table.lines()
    assert got["alice"][2:4] == ["", "** Your clock ran out: you lose on time."]
    assert "score in 3 point match: alice-0 bob-1" in got["alice"]
    assert "alice" in table.server.lobby.matches  # the match goes on
    assert table.match.rules.score == (0, 1)
    assert clock_lines(table)[1] == "clock: stopped"


def test_a_game_lost_on_time_that_ends_the_match_is_a_loss_on_time() -> None:
    table = clock_table(**{"clock.on_timeout": "game"})
    clocked(table, "1")
    table.server.advance(70)
    got = table.lines()
    assert "bob wins the 1 point match 1-0 ." in got["alice"]
    record = finished(table)
    assert (record["ended"], record["match"]["games"][0][-2:]) == ("time", [
        ["resign", 0, 1], ["accept", 1]])


def test_the_lag_allowance_is_the_quickest_own_answer_up_to_the_bound() -> None:
    table = clock_table(**{"clock.lag_allowance_ms": 500})
    clocked(table, "3", "0s+1m")
    table.server.advance(2)  # unmeasured: the bound comes off
    table.play_move()
    table.lines()
    assert table.match.clocks.state.reserves[0] == pytest.approx(178.5)
    table.send("bob", "roll")
    table.play_move()
    table.lines()
    table.server.advance(0.2)  # her quickest answer so far
    table.send("alice", "roll")
    table.lines()
    assert table.match.clocks.state.reserves[0] == pytest.approx(178.5)
    table.server.advance(3)  # now 0.2 s come off
    table.play_move()
    table.lines()
    assert table.match.clocks.state.reserves[0] == pytest.approx(175.7)


# -- saved, resumed, restarted --------------------------------------------------------------


def test_a_saved_match_keeps_its_clocks_and_resumes_with_them() -> None:
    table = clock_table()
    clocked(table)
    table.server.advance(40)  # 30 seconds of alice's reserve
    table.send("bob", "leave")
    table.lines()
    saved = json.loads(table.server.store.load_match("alice", "bob").record)
    assert saved["clock"] == {"delay": 10, "per_point": 60, "reserves_ms": [150000, 180000]}
    table.server.advance(3600)  # nobody's clock runs while the match is saved
    table.send("alice", "invite bob")
    table.send("bob", "join alice")
    table.lines()
    assert clock_lines(table) == ["clock: 10s+1m alice 2:30 bob 3:00",
                                  "clock: running for alice, 0:10 of delay left"]
    _check_loss_on_time(table, 160)


def test_a_crash_and_restart_charge_no_down_time(tmp_path: Path) -> None:
    path = tmp_path / "fibsd.sqlite"
    table = clock_table(SQLiteStore(str(path)))
    clocked(table)
    table.server.advance(25)
    table.play_move()  # alice used 15 seconds of reserve; stored with the move
    table.send("bob", "roll")
    table.lines()
    table.server.advance(100)  # bob thinks; then the server dies without saving anything
    table.server.store.close()
    again = clock_table(SQLiteStore(str(path)), register=False)
    again.server.advance(7200)  # down for two hours
    again.send("alice", "invite bob")
    again.send("bob", "join alice")
    again.lines()
    assert clock_lines(again) == ["clock: 10s+1m alice 2:45 bob 3:00",
                                  "clock: running for bob, 0:10 of delay left"]


# -- telnet boards --------------------------------------------------------------------------


def test_telnet_boards_show_both_clocks_and_clip_boards_do_not_change() -> None:
    table = clock_table()
    clocked(table)
    table.send("carol", "set boardstyle 2")
    table.send("carol", "watch alice")
    assert "    clock: alice 3:00*  bob 3:00 " in table.lines("carol")
    table.send("bob", "board")
    assert table.lines("bob")[-1].startswith("board:You:alice:3:")


def test_a_telnet_player_s_ascii_board_ends_with_both_clocks() -> None:
    server = FakeServer(settings=make_settings(idle_timeout=0, **{"clock.lag_allowance_ms": 0}))
    for name in ("alice", "bob", "carol"):
        server.register(name)
    table = Table(list(OPENING), coin=0, server=server, telnet=("bob",))
    table.send("bob", "set boardstyle 2")
    table.lines()
    clocked(table)
    table.server.advance(25)
    table.send("bob", "board")
    lines = [line.removeprefix("> ") for line in table.lines("bob")]
    assert "    clock: alice 2:45*  bob 3:00 " in lines
    assert lines[-1] == "    clock: alice 2:45*  bob 3:00 "  # the board's last line


# -- a dropped connection's grace ([pace] drop_grace) ---------------------------------------


def test_the_dropped_player_s_clock_runs_through_the_grace() -> None:
    table = clock_table(**{"pace.drop_grace": 60})
    clocked(table)  # alice to move: 10 seconds of delay, then her 3:00
    table.clients["alice"].close()
    table.lines()
    table.server.advance(40)
    table.login("alice")  # back within the grace: 30 seconds of her reserve are gone
    assert "alice" in table.server.lobby.matches
    assert clock_lines(table) == ["clock: 10s+1m alice 2:30 bob 3:00",
                                  "clock: running for alice, 0:00 of delay left"]


def test_after_the_grace_the_saved_match_keeps_its_clocks() -> None:
    table = clock_table(**{"pace.drop_grace": 60})
    clocked(table)
    table.clients["alice"].close()
    table.server.advance(60)  # the grace ends without her: saved, her 50 seconds charged
    table.lines()
    assert "alice" not in table.server.lobby.matches
    saved = json.loads(table.server.store.load_match("alice", "bob").record)
    assert saved["clock"]["reserves_ms"] == [130000, 180000]


def test_a_dropped_player_loses_on_time_during_the_grace() -> None:
    table = clock_table(**{"pace.drop_grace": 600})
    clocked(table)
    table.clients["alice"].close()
    table.lines()
    table.server.advance(190)
    got = table.lines()
    assert [line for line in got["bob"] if not line[:1].isdigit()] == LOSS_BY["bob"]
    record = finished(table)
    assert record["ended"] == "time"
    (result,) = table.server.store.finished_matches("bob")
    assert result.winner_rating_change > 0 > result.loser_rating_change  # rated as lost
