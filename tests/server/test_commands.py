"""The command registry's abbreviation rules and the lobby's name completion."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fibsd.client import events as ev
from fibsd.client.parse import classify
from fibsd.rules.movegen import legal_plays
from fibsd.rules.notation import parse_fibs_pairs, to_mover_numbering
from fibsd.rules.position import Position
from fibsd.server.commands import command_names, resolve
from tests.helpers import FakeServer


@pytest.mark.parametrize(("typed", "meant"), [
    ("who", "who"), ("WHO", "who"), ("w", "who"), ("wh", "whisper"), ("whoi", "whois"),
    ("t", "tell"), ("s", "say"), ("k", "kibitz"), ("raww", "rawwho"), ("by", "bye"),
    ("he", "help"), ("q", "quit"), ("show", "show"), ("shou", "shout"),
])
def test_resolve(typed: str, meant: str) -> None:
    found = resolve(typed)
    assert found is not None and found.name == meant


@pytest.mark.parametrize("typed", ["re", "sh", "sho", "x", "", "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                   "wa"])
def test_unknown_or_ambiguous(typed: str) -> None:
    assert resolve(typed) is None


def test_name_completion_prefers_case_then_uniqueness() -> None:
    server = FakeServer()
    for name in ("Alice", "alex", "bob", "Bobby"):
        server.register(name)
        conn = server.connect()
        conn.send(f"login t 1008 {name} secret")
    lobby = server.lobby
    assert lobby.complete("bob").name == "bob"  # exact wins over the longer Bobby
    assert lobby.complete("Bob").name == "Bobby"  # with case: one match
    assert lobby.complete("Al").name == "Alice"
    assert lobby.complete("al").name == "alex"
    assert lobby.complete("a").name == "alex"  # with case: one match
    assert lobby.complete("AL") is None  # only without case: Alice and alex
    assert lobby.complete("B").name == "Bobby"
    assert lobby.complete("z") is None
    assert lobby.complete("") is None


HELP = Path(__file__).resolve().parent.parent.parent / "config" / "help"


@pytest.mark.parametrize("name", [*command_names(), "beginner", "formula"])
def test_help_topics_exist(name: str) -> None:
    assert (HELP / f"{name}.txt").is_file()


def test_help_texts_cannot_be_mistaken_for_protocol_lines() -> None:
    """No line starts with a digit (CLIP) or a star (`** ` replies), as client programs
    classify lines by their first character."""
    for path in HELP.glob("*.txt"):
        for line in path.read_text(encoding="ascii").splitlines():
            assert not line[:1].isdigit() and not line.startswith("*"), (path.name, line)
            assert len(line) <= 79, (path.name, line)


CLIENT_PATTERNS = Path(__file__).resolve().parents[1] / "data" / "client_patterns.txt"


def test_no_help_line_reads_as_a_fibs_event() -> None:
    """Issue 21: ``O moves from 24 down to 1, ...`` (help move) was read as a player's
    move, ``  show watchers  who is watching whom`` as someone watching.  No line of a
    help text may match a pattern of the protocol reference or be classified."""
    patterns = [re.compile(line.split("\t", 1)[1]) for line in CLIENT_PATTERNS.read_text().splitlines()
                if line and not line.startswith("#")]
    for path in sorted(HELP.glob("*.txt")):
        for line in path.read_text(encoding="ascii").splitlines():
            if line:
                assert [p.pattern for p in patterns if p.search(line)] == [], (path.name, line)
                assert classify(line) == ev.Unknown(line), (path.name, line)


_EXAMPLE = re.compile(r"^ +move (?P<pairs>[-0-9 ]+?) +if you are (?P<colour>[OX])")


def test_the_beginner_s_example_moves_are_legal_for_both_colours() -> None:
    """Issue 21: ``move 13-7 8-7`` was the only example, backwards for X (protocol/board.md:
    O moves from 24 down to 1, X from 1 up to 24)."""
    examples = [m for m in map(_EXAMPLE.match, (HELP / "beginner.txt").read_text().splitlines()) if m]
    assert sorted(m["colour"] for m in examples) == ["O", "X"]
    legal = {tuple(sorted((move.src, move.dst) for move in play.moves))
             for play in legal_plays(Position.initial(), (6, 1))}
    for example in examples:
        direction = -1 if example["colour"] == "O" else 1
        pairs = to_mover_numbering(parse_fibs_pairs(example["pairs"]), direction)
        assert tuple(sorted(pairs)) in legal, example.group(0)
