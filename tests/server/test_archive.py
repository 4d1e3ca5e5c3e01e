"""archive and export over in-memory transports: matches really played to their end,
listed with their numbers, exported as .mat text that parses and replays to the stored
result; paging, the size limit and every refusal."""

from __future__ import annotations

import json
import re

import pytest

from fibsd.client import events as ev
from fibsd.client.parse import LineReader, Phase
from fibsd.rules.match import Match
from fibsd.store import FinishedMatch
from fibsd.wire.mat import mat_record, parse_mat
from tests.helpers import FakeServer, make_settings
from tests.server.test_listings import ask, finish_match, play
from tests.server.test_match import NAMES, random_rolls
from tests.server.test_watching import Watched

ROW = re.compile(r"^#(?P<id>[0-9]+) 2023-11-14 22:[0-9]{2} (?P<winner>\w+) (?P<w>[0-9]+)"
                 r" - (?P<loser>\w+) (?P<l>[0-9]+) \(3 point match\)$")


def table_with(**overrides: object) -> Watched:
    server = FakeServer(settings=make_settings(**overrides))
    for name in (*NAMES, "dave"):
        server.register(name)
    table = Watched(random_rolls(11), server=server)
    table.login("dave")
    for name in ("alice", "bob", "carol", "dave"):
        table.send(name, "toggle ready")
    table.lines()
    return table


def played(table: Watched) -> FinishedMatch:
    """alice and bob play a 3-point match to its end; its stored result."""
    play(table, "alice", "bob", "3")
    finish_match(table)
    (result,) = table.server.store.finished_matches("alice")
    return result


def test_archive_lists_a_finished_match_with_its_number() -> None:
    table = table_with()
    assert ask(table, "carol", "archive") == ["** carol has no finished matches."]
    result = played(table)
    listing = ask(table, "carol", "archive al")
    assert listing[0] == "Finished matches of alice, newest first (times in UTC):"
    assert len(listing) == 2
    row = ROW.match(listing[1])
    assert row is not None, listing[1]
    assert (int(row["id"]), row["winner"], int(row["w"]), row["loser"], int(row["l"])) == (
        result.id, result.winner, result.winner_points, result.loser, result.loser_points)
    assert ask(table, "bob", "archive") == [listing[0].replace("alice", "bob"), listing[1]]
    assert ask(table, "bob", "archive alice 2") == ["** alice has no finished matches on page 2."]


def test_export_sends_the_match_as_mat_text_that_replays_to_the_result() -> None:
    table = table_with()
    result = played(table)
    got = ask(table, "carol", f"export #{result.id}")
    header = f"Match #{result.id} in .mat format, {len(got) - 2} lines:"
    assert got[0] == header and got[-1] == f"End of match #{result.id}."
    text = "\n".join(got[1:-1]) + "\n"
    assert ask(table, "carol", f"export {result.id}") == got
    parsed = parse_mat(text)
    assert parsed.length == 3 and parsed.players == ("alice", "bob")
    assert parsed.tags["Site"] == "fibsd" and parsed.tags["Match ID"] == str(result.id)
    assert parsed.tags["EventDate"] == "2023.11.14"
    replayed = Match.from_record(mat_record(parsed))
    stored = Match.from_record(json.loads(result.record)["match"])
    winner = ("alice", "bob").index(result.winner)
    assert replayed.winner == stored.winner == winner
    assert replayed.score == stored.score
    assert replayed.score[winner] == result.winner_points
    assert parsed.games[-1].actions[-1].match
    # a client library reads the frame and the counted lines between
    reader = LineReader(Phase.RUN)
    events = [reader.feed(line) for line in got]
    assert events[0] == ev.ExportStart(result.id, len(got) - 2)
    assert events[1:-1] == [ev.MatLine(line) for line in got[1:-1]]
    assert events[-1] == ev.ExportEnd(result.id)


def test_archive_pages_are_bounded_by_page_size() -> None:
    table = table_with(**{"archive.page_size": 2})
    result = played(table)
    store = table.server.store
    for when in range(1, 5):  # four older copies under other names' pairings
        store.record_finished_match(FinishedMatch(
            "bob", "alice", 3, 3, when % 3, 1_600_000_000 + when, result.record))
    first = ask(table, "carol", "archive alice")
    assert len(first) == 4 and first[-1] == "Type 'archive alice 2' for more."
    assert ROW.match(first[1])["id"] == str(result.id)  # newest first
    second = ask(table, "carol", "archive alice 2")
    third = ask(table, "carol", "archive alice 3")
    assert len(second) == 4 and second[-1] == "Type 'archive alice 3' for more."
    assert len(third) == 2 and third[1].startswith("#2 2020-09-13 ")
    ids = [line.split()[0] for line in first[1:3] + second[1:3] + third[1:]]
    assert len(set(ids)) == 5


def test_export_refuses_a_text_over_the_limit() -> None:
    table = table_with(**{"archive.max_export_bytes": 1024})
    result = played(table)
    got = ask(table, "carol", f"export {result.id}")
    assert len(got) == 1
    found = re.fullmatch(rf"\*\* Match #{result.id} is too long to send: ([0-9]+) bytes"
                         r" \(the limit is 1024\)\.", got[0])
    assert found is not None and int(found[1]) > 1024


@pytest.mark.parametrize(("line", "answer"), [
    ("export", "** usage: export <match number>"),
    ("export 1 2", "** usage: export <match number>"),
    ("export x", "** usage: export <match number>"),
    ("export 0", "** usage: export <match number>"),
    ("export 99999999999999999999", "** usage: export <match number>"),
    ("export 77", "** There is no finished match #77."),
    ("archive a b", "** usage: archive [name] [page]"),
    ("archive alice 0", "** usage: archive [name] [page]"),
    ("archive alice 1000000", "** usage: archive [name] [page]"),
    ("archive nobody", "** nobody has no finished matches."),
])
def test_refusals(line: str, answer: str) -> None:
    table = table_with()
    assert ask(table, "carol", line) == [answer]


def test_a_damaged_record_is_refused_and_the_session_goes_on() -> None:
    table = table_with()
    table.server.store.record_finished_match(
        FinishedMatch("alice", "bob", 3, 3, 0, 1_700_000_000, '{"players": ["a", "b"]}'))
    (damaged,) = table.server.store.finished_matches("alice")
    assert ask(table, "carol", f"export {damaged.id}") == [
        f"** Match #{damaged.id} cannot be exported: its record is damaged."]
    assert ask(table, "carol", "archive alice")[1].startswith(f"#{damaged.id} ")


def test_the_new_words_leave_fibs_abbreviations_alone() -> None:
    table = table_with()
    assert ask(table, "carol", "ex 77") == ["** There is no finished match #77."]
    assert ask(table, "carol", "ar") == ["** carol has no finished matches."]
    assert ask(table, "carol", "a") == ["** Unknown command: 'a'"]  # about, accept, ...


def test_exports_are_limited_per_user_and_minute() -> None:
    table = table_with(**{"archive.exports_per_minute": 2})
    result = played(table)
    for _ in range(2):
        assert ask(table, "carol", f"export {result.id}")[0].startswith(f"Match #{result.id} ")
    flood = ["** You may export 2 matches a minute. Please wait a little."]
    assert ask(table, "carol", f"export {result.id}") == flood
    assert ask(table, "carol", "export 77") == flood  # every request counts
    assert ask(table, "dave", f"export {result.id}")[0].startswith("Match #")  # per user
    table.server.advance(60)
    assert ask(table, "carol", f"export {result.id}")[0].startswith(f"Match #{result.id} ")


def test_an_exported_match_with_fair_dice_carries_its_seed_and_texts() -> None:
    """protocol/fair-dice.md: the .mat header alone is enough to check every roll."""
    from tests.fair_verifier import derive

    table = table_with()
    table.server.lobby.dice = None
    table.server.lobby.draw_seed = lambda: bytes(range(32))
    table.send("alice", "diceseed hello world")
    result = played(table)
    got = ask(table, "carol", f"export {result.id}")
    tags = parse_mat("\n".join(got[1:-1]) + "\n").tags
    assert (tags["Dice Seed"], tags["Dice Text Hex 1"], tags["Dice Text Hex 2"]) == (
        bytes(range(32)).hex(), "hello world".encode().hex(), "")
    texts = [bytes.fromhex(tags[f"Dice Text Hex {n}"]).decode() for n in (1, 2)]
    rolls = [f"{e[1]}{e[2]}" if e[0] == "opening" else f"{e[2]}{e[3]}"
             for game in json.loads(result.record)["match"]["games"] for e in game
             if e[0] in ("opening", "roll")]
    assert derive(bytes.fromhex(tags["Dice Seed"]), texts[0], texts[1],
                  len(rolls)) == rolls
