"""Fair play over the wire, in memory (protocol/fair-dice.md): seeded matches checked by
the independent verifier (tests/fair_verifier.py), the seed kept across a drop and a
restart, ``fibsd-verify``, abandonment counting, adjudication and ``claim``.  Every line
a client receives must match the message catalogue (``Table.lines``)."""

from __future__ import annotations

import hashlib
import json
import re
from io import StringIO
from pathlib import Path

import pytest

from fibsd.fair.verify import fair_document, main, verify
from fibsd.rules.game import Phase
from fibsd.server.fairplay import AbandonmentCheck
from fibsd.server.match import LiveMatch
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.mat import mat_text, parse_mat
from tests.fair_verifier import check_record, derive
from tests.helpers import FakeServer, make_settings
from tests.server.test_match import Table, boards_match_the_engine  # noqa: F401 (autouse)

DOC = Path(__file__).resolve().parents[2] / "protocol" / "fair-dice.md"
SEED = bytes(range(32))
DAY = 86400


def fair_table(server: FakeServer | None = None, seeds: list[bytes] | None = None) -> Table:
    """A ``Table`` whose matches roll fair dice from ``seeds`` (fresh ones if None)."""
    table = Table([], server=server)
    table.server.lobby.dice = None
    if seeds is not None:
        queue = list(seeds)
        table.server.lobby.draw_seed = lambda: queue.pop(0)
    return table


def play_out(table: Table, until=None) -> None:  # type: ignore[no-untyped-def]
    """Play the match to its end (or until ``until()``): rolls, first legal plays,
    ``join`` between games."""
    for _ in range(3000):
        match = table.server.lobby.matches.get("alice")
        if match is None or (until is not None and until()):
            return
        if match.rules.waiting_for_new_game:
            for name in match.names:
                table.send(name, "join")
        elif match.rules.phase is Phase.ROLL:
            table.send(match.names[match.rules.turn], "roll")
        else:
            table.play_move()
        table.lines()
    raise AssertionError("the match did not end")


def finished_records(server: FakeServer) -> list[str]:
    rows = server.store._conn.execute("SELECT record FROM finished_matches ORDER BY id")
    return [record for (record,) in rows.fetchall()]


def test_the_worked_examples_of_the_document() -> None:
    """The independent verifier reproduces fair-dice.md's examples, read from the file."""
    doc = DOC.read_text()
    seed = bytes.fromhex(re.search(r"server seed  ([0-9a-f]{64})", doc)[1])
    commitment = re.search(r"commitment   ([0-9a-f]{64})", doc)[1]
    import hashlib

    assert hashlib.sha256(seed).hexdigest() == commitment
    first = re.search(r"The first ten rolls.*?\n\n    ((?:[1-6]{2} ){9}[1-6]{2})\n", doc, re.S)[1]
    assert derive(seed, "", "", 10) == first.split()
    mixed = re.search(r"rolls 0-9    ((?:[1-6]{2} ){9}[1-6]{2})", doc)[1]
    assert derive(seed, "hello world", "", 10) == mixed.split()
    assert derive(seed, "", "", 75)[74] == "31"  # the roll that skips a byte


def test_whole_matches_with_fair_dice_verify() -> None:
    table = fair_table()
    table.start("1")
    play_out(table)
    for length in ("3", "unlimited"):
        table.send("alice", f"invite bob {length}")
        table.send("bob", "join alice")
        table.lines()
        play_out(table, lambda: length == "unlimited" and table.match.rules.number == 3)
    table.send("alice", "leave")  # an unlimited match ends by leaving: saved, not finished
    table.lines()
    records = finished_records(table.server)
    assert len(records) == 2
    assert all(check_record(record) > 0 for record in records)
    saved = table.server.store.load_match("alice", "bob")
    assert saved is not None and check_record(saved.record) > 0
    # every player was told the seed at the end, and it is the record's; the unlimited
    # match's at the leave: the saved match goes on under a fresh seed (fair-dice.md 1.2)
    dice = json.loads(saved.record)["dice"]
    (left,) = dice["earlier"]
    assert (left["first_roll"], left["next_roll"]) == (0, dice["next_roll"])
    assert dice["first_roll"] == dice["next_roll"] and dice["server_seed"] != left["server_seed"]
    seeds = [json.loads(r)["dice"]["server_seed"] for r in records] + [left["server_seed"]]
    for name in ("alice", "bob"):
        told = [line for line in table.received[name]
                if line.startswith("fairdice: server seed")]
        assert told == [f"fairdice: server seed {seed}" for seed in seeds]
    assert derive(bytes.fromhex(left["server_seed"]), *left["texts"], left["next_roll"]) == [
        f"{a}{b}" for a, b in fair_document(json.loads(saved.record))["rolls"]]


def test_a_drop_reveals_the_seed_and_the_match_resumes_under_a_new_one(
        tmp_path: Path) -> None:
    """The commitment shown before the join holds for the rolls up to the drop; the drop
    reveals that seed (to the player still there), the saved match keeps it among its
    earlier seeds and carries a fresh one, whose commitment the resume invitation
    shows; after a restart the resumed match rolls from it, with the texts in force at
    the resume, and the finished record verifies seed by seed."""
    database = tmp_path / "fibsd.sqlite"
    fresh = bytes(range(100, 132))
    table = fair_table(FakeServer(store=SQLiteStore(database)), [SEED, fresh])
    for name in ("alice", "bob", "carol"):
        table.server.register(name)
        table.login(name)
    table.send("alice", "diceseed alice's")
    assert table.lines("alice") == ["** Your dice text may have at most 64 characters: letters,"
                                    " digits, blanks and punctuation other than quotes and"
                                    " backslashes."]
    table.send("bob", "diceseed lucky 7")
    table.send("alice", "toggle ready")
    table.send("bob", "toggle ready")
    table.send("alice", "invite bob 5")
    table.lines()
    table.send("bob", "fairdice")
    commitment = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    assert table.lines("bob") == [f"fairdice: invitation alice bob commitment {commitment}"]
    table.send("bob", "join alice")
    play_out(table, lambda: table.match.rules.number == 2)
    made = table.match.fair.next_roll
    table.clients["bob"].close()  # dropped: the seed of the rolls so far is revealed
    got = table.lines("alice")
    at = got.index("bob drops connection. The game was saved.")
    assert got[at + 1] == f"fairdice: server seed {SEED.hex()}"
    saved = table.server.store.load_match("alice", "bob")
    dice = json.loads(saved.record)["dice"]
    assert dice["earlier"] == [{"server_seed": SEED.hex(), "texts": ["", "lucky 7"],
                                "first_roll": 0, "next_roll": made}]
    assert (dice["server_seed"], dice["first_roll"], dice["next_roll"]) == (fresh.hex(), made, made)
    table.server.factory.shutdown(table.server.clock)  # a restart on the same database
    table.server.store.close()
    table = fair_table(FakeServer(store=SQLiteStore(database)), [])
    for name in ("alice", "bob", "carol"):
        table.login(name)  # ready: the toggle was kept
    table.send("bob", "diceseed again")
    table.send("alice", "invite bob")
    table.lines()
    table.send("bob", "fairdice")
    renewed = hashlib.sha256(fresh).hexdigest()
    assert table.lines("bob") == [f"fairdice: invitation alice bob commitment {renewed}"]
    table.send("bob", "join alice")
    table.send("carol", "watch alice")
    table.lines()
    table.send("carol", "fairdice")
    counter = table.match.fair.next_roll
    assert table.lines("carol") == [f"fairdice: match alice bob commitment {renewed}",
                                    f"fairdice: texts alice - bob {b'again'.hex()}",
                                    f"fairdice: {counter} rolls so far",
                                    f"fairdice: earlier seed {SEED.hex()} rolls 0-{made - 1}",
                                    f"fairdice: texts alice - bob {b'lucky 7'.hex()}"]
    table.send("carol", "fairdice texts")
    assert table.lines("carol") == ["fairdice: alice has no dice text.",
                                    "fairdice: text of bob: again"]
    play_out(table)
    (record,) = finished_records(table.server)
    assert check_record(record, commitment) > counter
    out = StringIO()
    assert verify(fair_document(json.loads(record)), out)
    assert f"from roll {made}: server seed {fresh.hex()}, commitment {renewed}" in \
        out.getvalue().splitlines()
    # the export's header carries every seed, each with the roll it starts at
    tags = parse_mat(mat_text(record, fair_dice=True)).tags
    assert (tags["Dice Seed"], tags["Dice Text Hex 2"]) == (SEED.hex(), b"lucky 7".hex())
    assert (tags[f"Dice Seed From Roll {made}"], tags[f"Dice Text Hex 1 From Roll {made}"],
            tags[f"Dice Text Hex 2 From Roll {made}"]) == (fresh.hex(), "", b"again".hex())


def test_a_saved_match_from_before_fair_dice_goes_on_with_a_seed() -> None:
    table = fair_table(seeds=[SEED, bytes(32)])
    table.start("3")
    play_out(table, lambda: table.match.fair.next_roll >= 6)
    data = json.loads(table.match.to_record())
    made = data["dice"]["next_roll"]
    del data["dice"]
    resumed = LiveMatch.from_record(table.server.lobby, json.dumps(data))
    assert resumed.fair is not None and resumed.fair.server_seed == bytes(32)
    assert (resumed.fair.next_roll, resumed.fair.unseeded) == (made, made)
    assert json.loads(resumed.to_record())["dice"]["unseeded"] == made


def test_fibsd_verify_prints_each_roll_and_stops_at_a_mismatch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = fair_table(seeds=[SEED])
    table.start("1")
    play_out(table)
    (record,) = finished_records(table.server)
    path = tmp_path / "match.json"
    path.write_text(record)
    assert main([str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    rolls = [f"{a}{b}" for a, b in fair_document(json.loads(record))["rolls"]]
    assert out[0] == "commitment 630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd OK"
    assert out[1:-1] == [f"roll {n} {roll} OK" for n, roll in enumerate(rolls)]
    assert out[-1] == f"all {len(rolls)} rolls agree"
    document = fair_document(json.loads(record))
    document["rolls"][1] = [7 - document["rolls"][1][0], document["rolls"][1][1]]
    out_io = StringIO()
    assert not verify(document, out_io)
    assert out_io.getvalue().splitlines()[-1].startswith("roll 1 ")
    assert "MISMATCH: the seed gives " + rolls[1] in out_io.getvalue()
    path.write_text("{}")
    assert main([str(path)]) == 2


# -- abandonment ------------------------------------------------------------------------


def abandon_table(**settings: object) -> tuple[Table, AbandonmentCheck]:
    server = FakeServer(settings=make_settings(idle_timeout=0, **settings))
    for name in ("alice", "bob", "carol"):
        server.register(name)
    table = Table([(5, 3)] + [(6, 1)] * 40, coin=0, server=server)
    return table, AbandonmentCheck(server.services)


def login_lines(table: Table, name: str) -> list[str]:
    """Log ``name`` in on a new connection; the whole login output."""
    client = table.server.connect()
    client.received()
    client.send(f"login test 1008 {name} secret")
    lines = client.lines()
    table.clients[name] = client
    table.received[name] = []
    return lines


def whois_bob(table: Table) -> str:
    table.send("carol", "whois bob")
    return table.lines("carol")[-1]


def test_the_abandonment_check_goes_on_after_the_database_failed() -> None:
    table, check = abandon_table(**{"fair.abandon_check_interval": 60})
    table.start("3")
    table.clients["bob"].close()
    table.lines()
    table.login("alice")  # the offer
    table.server.store._conn.execute("PRAGMA query_only = ON")  # noqa: SLF001
    table.server.advance(7 * DAY + 1)
    check.start()
    table.server.advance(60)  # the check fails: the database refuses the count
    assert check._loop.running  # noqa: SLF001
    table.server.store._conn.execute("PRAGMA query_only = OFF")  # noqa: SLF001
    table.server.advance(60)
    assert whois_bob(table) == "  Abandoned matches: 1 of 1 (reliability 0%)."
    check.stop()


def test_a_dropped_match_counts_as_abandoned_once_offered_and_not_resumed() -> None:
    table, check = abandon_table()
    table.start("3")
    table.clients["bob"].close()
    table.lines()
    table.server.advance(7 * DAY + 1)
    check.check()
    assert whois_bob(table) == "  Abandoned matches: 0 of 0 (reliability 100%)."  # no offer
    table.login("bob")  # both still ready
    table.send("alice", "invite bob")
    table.send("bob", "join alice")  # resumed: no departure
    table.clients["bob"].close()
    table.lines()
    table.clients["alice"].close()
    table.login("alice")  # alice's login offers to resume
    table.server.advance(6 * DAY)
    check.check()
    assert whois_bob(table) == "  Abandoned matches: 0 of 0 (reliability 100%)."  # still in time
    table.server.advance(DAY + 1)
    check.check()
    assert whois_bob(table) == "  Abandoned matches: 1 of 1 (reliability 0%)."
    assert table.server.store.load_match("alice", "bob") is not None  # kept: no adjudication
    table.login("bob")
    assert table.lines("bob") == []  # no notice without adjudication


def test_adjudication_scores_rates_and_tells_both_at_login() -> None:
    table, check = abandon_table(**{"fair.adjudicate": True})
    table.start("5")
    table.clients["bob"].close()
    table.clients["alice"].close()
    table.lines()
    table.login("alice")
    table.server.advance(7 * DAY + 1)
    check.check()
    table.lines()
    assert table.server.store.load_match("alice", "bob") is None
    finished = table.server.store.finished_matches("bob")
    assert [(f.winner, f.loser, f.length, f.winner_points, f.loser_points) for f in finished] == [
        ("alice", "bob", 5, 0, 0)]
    assert finished[0].loser_rating_change < 0 < finished[0].winner_rating_change
    assert json.loads(finished[0].record)["ended"] == "adjudication"
    assert table.user("alice").rating == 1500 + finished[0].winner_rating_change
    table.clients["alice"].close()
    assert login_lines(table, "alice")[-1] == (
        "** Your 5-point match with bob was adjudicated at 0-0: you win.")
    assert login_lines(table, "bob")[-1] == (
        "** Your 5-point match with alice was adjudicated at 0-0: alice wins.")
    assert login_lines(table, "bob")[-1] == "6"  # told once
    assert whois_bob(table) == "  Abandoned matches: 1 of 1 (reliability 0%)."


def test_dropping_twice_on_ones_own_turn_when_behind_counts_at_once() -> None:
    table, check = abandon_table()
    table.start("3")  # alice 5, bob 3: alice moves first, then bob is on roll and behind
    table.play_move()
    table.lines()
    assert table.match.silent_player() == 1
    for _ in range(2):
        table.clients["bob"].close()
        table.lines()
        table.login("bob")
        table.send("alice", "invite bob")
        if _ == 0:
            table.send("bob", "join alice")
        table.lines()
    check.check()  # no time has passed, and alice's invitation was the offer anyway
    assert whois_bob(table) == "  Abandoned matches: 1 of 1 (reliability 0%)."


def test_pure_fibs_settings_show_and_count_nothing() -> None:
    table, check = abandon_table(**{"fair.reliability": False, "fair.abandon_days": 0,
                                    "fair.announce_seed": False})
    table.start("3")
    table.clients["bob"].close()
    table.lines()
    table.send("carol", "whois bob")
    assert table.lines("carol")[-1] == "  No email address."
    assert table.server.store.due_departures(2**40) == []


# -- claim --------------------------------------------------------------------------------


def test_claim_after_silence_with_a_warning_first() -> None:
    table, _ = abandon_table(**{"fair.claim_after": 300})
    table.start("3")  # alice to move
    table.send("bob", "claim")
    assert table.lines("bob") == ["** alice may still act: you may claim in 300 seconds."]
    table.send("alice", "claim")
    assert table.lines("alice") == ["** It's your turn: there is nothing to claim."]
    table.server.advance(239)
    assert table.lines() == {"alice": [], "bob": [], "carol": []}
    table.server.advance(1)
    assert table.lines("alice") == ["** Please act: in one minute bob may claim this match."]
    table.play_move()  # acting starts the silence again, now bob's
    table.lines()
    table.server.advance(300)
    got = table.lines()
    assert got["bob"] == ["** Please act: in one minute alice may claim this match."]
    assert got["alice"] == ["** bob has not acted for a while: you may type 'claim'."]
    if not table.user("carol").toggles["report"]:
        table.send("carol", "toggle report")
    table.lines()
    table.send("alice", "claim")
    got = table.lines()
    assert got["alice"][0] == "** You claimed the match: it was saved as abandoned by bob."
    assert got["bob"][0] == "** alice claimed the match because you did not act. The game was saved."
    assert "bob has left the game with alice." in got["carol"]
    assert "alice" not in table.server.lobby.matches
    assert table.server.store.load_match("alice", "bob") is not None
    (departure,) = table.server.store.due_departures(2**40)
    assert departure.dropper == "bob"
    table.server.advance(1000)
    assert table.lines() == {"alice": [], "bob": [], "carol": []}  # the timers are gone


def test_claim_refusals() -> None:
    table, _ = abandon_table()
    table.send("alice", "claim")
    assert table.lines("alice") == ["** You're not playing."]
    table.start("3")
    table.send("bob", "claim")
    assert table.lines("bob") == ["** Claims are switched off on this server."]
    table.server.advance(3600)
    assert table.lines() == {"alice": [], "bob": [], "carol": []}  # no warnings when off


def test_the_independent_verifier_rejects_a_changed_roll_or_commitment() -> None:
    table = fair_table(seeds=[SEED])
    table.start("1")
    play_out(table)
    (record,) = finished_records(table.server)
    data = json.loads(record)
    entry = data["match"]["games"][0][-1 if data["match"]["games"][0][-1][0] == "roll" else 0]
    check_record(record, "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd")
    with pytest.raises(AssertionError):
        check_record(record, "0" * 64)
    opening = data["match"]["games"][0][0]
    opening[1] = 7 - opening[1] if opening[1] != 7 - opening[1] else opening[1]
    assert entry is not None
    with pytest.raises(AssertionError):
        check_record(json.dumps(data))


def test_the_same_invitation_again_keeps_its_commitment() -> None:
    table = fair_table(seeds=[SEED, bytes(32)])
    table.send("alice", "toggle ready")
    table.send("bob", "toggle ready")
    table.send("alice", "invite bob 3")
    table.send("alice", "invite bob 3")
    table.lines()
    table.send("alice", "fairdice")
    assert table.lines("alice") == [
        "fairdice: invitation alice bob commitment"
        " 630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"]
    table.send("alice", "invite bob 5")  # other terms: a new seed
    table.lines()
    table.send("bob", "fairdice")
    assert table.lines("bob") == [
        "fairdice: invitation alice bob commitment"
        " 66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"]


def test_the_check_runs_on_the_clock_every_interval() -> None:
    table, check = abandon_table(**{"fair.abandon_check_interval": 600})
    check.start()
    try:
        table.start("3")
        table.clients["bob"].close()
        table.clients["alice"].close()
        table.login("alice")
        table.lines()
        table.server.advance(7 * DAY)
        assert whois_bob(table) == "  Abandoned matches: 0 of 0 (reliability 100%)."
        table.server.advance(600)  # the next check finds it due
        assert whois_bob(table) == "  Abandoned matches: 1 of 1 (reliability 0%)."
    finally:
        check.stop()


def test_a_dice_text_longer_than_the_limit_is_refused() -> None:
    table, _ = abandon_table(**{"fair.max_dice_text": 8})
    table.send("alice", "diceseed 123456789")
    assert table.lines("alice") == [
        "** Your dice text may have at most 8 characters: letters, digits, blanks and"
        " punctuation other than quotes and backslashes."]
    table.send("alice", "diceseed 12345678")
    assert table.lines("alice") == ["fairdice: your dice text in hex is now 3132333435363738."]
    assert table.user("alice").dice_text == "12345678"


def test_fairdice_of_finished_matches_is_rate_limited() -> None:
    table, _ = abandon_table(**{"limits.fairdice_per_minute": 2})
    table.send("alice", "fairdice 7")
    table.send("alice", "fairdice 7")
    table.send("alice", "fairdice 7")
    assert table.lines("alice") == ["** There is no finished match 7."] * 2 + [
        "** Please wait a little before you use 'fairdice' again."]
    table.server.advance(30)  # half a minute refills one
    table.send("alice", "fairdice 7")
    assert table.lines("alice") == ["** There is no finished match 7."]
    table.send("alice", "fairdice")  # the current match and invitations are free
    assert table.lines("alice") == [
        "** You have no match, invitation or finished match with fair dice."]


def test_a_match_saved_by_a_shutdown_is_left_by_no_one() -> None:
    table, _ = abandon_table()
    table.start("3")
    table.play_move()
    table.lines()
    table.server.factory.shutdown(table.server.clock)
    table.server.settle()
    assert table.server.store.load_match("alice", "bob") is not None
    assert table.server.store.due_departures(2**40) == []
    saved = table.server.store.load_match("alice", "bob")
    assert "own_turn_drops" not in json.loads(saved.record)


def test_a_saved_match_replaced_by_a_new_one_reveals_its_seed(tmp_path: Path) -> None:
    """A match saved as it was played (the server died: nobody left it, so its seed was
    never revealed) is replaced by a new match between the pair: both players are told
    its seed, and it gives every roll the saved record holds."""
    database = tmp_path / "fibsd.sqlite"
    table = fair_table(FakeServer(store=SQLiteStore(database)), [SEED])
    for name in ("alice", "bob", "carol"):
        table.server.register(name)
        table.login(name)
    table.start("unlimited")
    play_out(table, lambda: table.match.fair.next_roll >= 9)
    record = table.server.store.load_match("alice", "bob").record
    # no shutdown: a new server on the same file, as after a crash
    table = fair_table(FakeServer(store=SQLiteStore(database)), [bytes(range(50, 82))])
    for name in ("alice", "bob", "carol"):
        table.login(name)  # ready: the toggle was kept
    table.send("alice", "invite bob 1")
    table.lines()
    table.send("bob", "join alice")
    got = table.lines()
    line = f"fairdice: saved match alice bob server seed {SEED.hex()}"
    assert got["alice"][-1] == line and got["bob"][-1] == line
    assert got["bob"][0] == "** You are now playing a 1 point match with alice"
    assert check_record(record) >= 9
    rolls = fair_document(json.loads(record))["rolls"]
    assert derive(SEED, "", "", len(rolls)) == [f"{a}{b}" for a, b in rolls]
    table.send("alice", "invite carol 1")  # (alice is playing: the new match goes on)
    assert table.lines("alice") == ["** You are already playing."]


def test_dicetest_counts_the_rolls_and_an_idle_user_holds_no_counts() -> None:
    """Issue 26: the 36 counts are made at a user's first roll (or ``dicetest``), not at
    login; ``dicetest`` reads the same before and after they exist."""
    from fibsd.wire import fair_text

    table = Table([(3, 5), (6, 2)])
    assert all(table.user(name)._rolls_seen is None for name in ("alice", "bob", "carol"))
    table.send("carol", "dicetest")
    assert table.lines("carol") == fair_text.dicetest([0] * 36)
    table.start()
    assert table.user("alice")._rolls_seen is None
    table.play_move()  # bob's opening move; alice rolls 6-2
    table.send("alice", "roll")
    table.lines()
    table.send("alice", "dicetest")
    counts = [0] * 36
    counts[6 * 5 + 1] = 1
    got = table.lines("alice")
    assert got[0] == "n: 1" and got == fair_text.dicetest(counts)
