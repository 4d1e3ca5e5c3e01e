"""The command registry's abbreviation rules and the lobby's name completion."""

from __future__ import annotations

from pathlib import Path

import pytest

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


@pytest.mark.parametrize("name", [*command_names(), "beginner"])
def test_help_topics_exist(name: str) -> None:
    assert (HELP / f"{name}.txt").is_file()


def test_help_texts_cannot_be_mistaken_for_protocol_lines() -> None:
    """No line starts with a digit (CLIP) or a star (`** ` replies), as client programs
    classify lines by their first character."""
    for path in HELP.glob("*.txt"):
        for line in path.read_text(encoding="ascii").splitlines():
            assert not line[:1].isdigit() and not line.startswith("*"), (path.name, line)
            assert len(line) <= 79, (path.name, line)
