"""No phrase a user chose makes a line read as something else to a client's patterns.

Every pattern of the FIBS protocol reference (tests/data/client_patterns.txt) and
every line of fibsd's catalogue (protocol/catalogue) gives a text that matches it
(the catalogue's example; for a regular expression, a string built from it).  Each
text goes, as a user's words, into every place a line carries them outside a CLIP
number: away messages, the telnet forms of chat, dice texts, the .mat tags of
``export``.  A line must then match exactly the patterns it matches with a plain
text, classify as the same event in fibsd's own client, and never end the session
for a reader (FCM's ``Goodbye.``).

Patterns are applied as FIBS Cookie Monster applies them: a line that starts with a
digit is tried against the numeric table only, whose patterns are all anchored at
the line start (protocol reference README, "Column 0 matters"); other lines against
all of them, anchored or not.  Catalogue patterns must match the whole line.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

import pytest

from fibsd.client import events as ev
from fibsd.client.parse import LineReader, Phase, classify
from fibsd.wire import chat, fair_text, game_text
from fibsd.wire.mat import fair_dice_tags
from fibsd.wire.user_text import ANYWHERE, LONGEST_BLANKS, shown

ROOT = Path(__file__).resolve().parents[2]
PLAIN = "hello there"


def reference_patterns() -> list[re.Pattern[str]]:
    patterns = []
    for line in (ROOT / "tests" / "data" / "client_patterns.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            patterns.append(re.compile(line.split("\t", 1)[1]))
    return patterns


def catalogue() -> list[tuple[str, re.Pattern[str], str]]:
    entries = []
    for path in sorted((ROOT / "protocol" / "catalogue").glob("*.toml")):
        for line in tomllib.loads(path.read_text()).get("line", []):
            entries.append((line["id"], re.compile(line["pattern"]), line["example"]))
    return entries


REFERENCE = reference_patterns()
CATALOGUE = catalogue()


# -- a string that matches a regular expression --------------------------------------

_CATEGORY_CHAR = {sre.CATEGORY_DIGIT: "0", sre.CATEGORY_SPACE: " "}  # others: a letter


def _class_chars(items: list[tuple[object, object]]) -> set[str]:
    """The characters a class names by literal or range."""
    chars: set[str] = set()
    for op, arg in items:
        if op is sre.LITERAL:
            chars.add(chr(arg))  # type: ignore[arg-type]
        elif op is sre.RANGE:
            chars.update(chr(c) for c in range(arg[0], arg[1] + 1))  # type: ignore[index]
    return chars


def _class_char(items: list[tuple[object, object]]) -> str:
    """One character of a class (``[...]``); sample_of checks the whole result."""
    if items and items[0][0] is sre.NEGATE:
        excluded = _class_chars(items[1:])
        return next(c for c in "xa0 ." if c not in excluded)
    op, arg = items[0]
    if op is sre.LITERAL:
        return chr(arg)  # type: ignore[arg-type]
    if op is sre.RANGE:
        return chr(arg[0])  # type: ignore[index]
    return _CATEGORY_CHAR.get(arg, "a")  # type: ignore[call-overload]


def _built(tree: list[tuple[object, object]]) -> str:
    """The shortest plain choice at every node: repeats at their least (one at least),
    the first branch, no anchors."""
    out = []
    for op, arg in tree:
        if op is sre.LITERAL:
            out.append(chr(arg))  # type: ignore[arg-type]
        elif op is sre.NOT_LITERAL:
            out.append("x" if arg != ord("x") else "y")
        elif op is sre.ANY:
            out.append("x")
        elif op is sre.IN:
            out.append(_class_char(list(arg)))  # type: ignore[call-overload]
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            low, _high, sub = arg  # type: ignore[misc]
            out.append(_built(list(sub)) * max(low, 1))
        elif op is sre.SUBPATTERN:
            out.append(_built(list(arg[-1])))  # type: ignore[index]
        elif op is sre.BRANCH:
            out.append(_built(list(arg[1][0])))  # type: ignore[index]
        elif op is sre.CATEGORY:
            out.append(_CATEGORY_CHAR.get(arg, "a"))  # type: ignore[call-overload]
        elif op is sre.AT:
            continue
        else:
            raise NotImplementedError(op)
    return "".join(out)


def sample_of(pattern: str) -> str:
    text = _built(list(sre_parse.parse(pattern)))
    assert re.search(pattern, text), (pattern, text)
    return text


# Users' words are never empty ("** You can't say nothing.").
SAMPLES = sorted(text for text in {sample_of(p.pattern) for p in REFERENCE}
                 | {example for _, _, example in CATALOGUE} if text.strip())


# -- the places ----------------------------------------------------------------------

Place = Callable[[str], list[str]]
PLACES: dict[str, Place] = {
    "away (tell, invite, away list)": lambda t: [chat.is_away("alice", t)],
    "message": lambda t: [chat.message_received("alice", 1593791615, t).telnet,
                          chat.message_received("alice", 1593791615, t).clip],
    "tell": lambda t: [chat.tell_received("alice", t).telnet, chat.tell_received("alice", t).clip,
                       chat.you_tell("bob", t).telnet, chat.you_tell("bob", t).clip],
    "say": lambda t: [chat.say_received("alice", t).telnet, chat.say_received("alice", t).clip,
                      chat.you_say("bob", t).telnet, chat.you_say("bob", t).clip,
                      chat.say_to_yourself(t)],
    "shout": lambda t: [chat.shout_received("alice", t).telnet, chat.shout_received("alice", t).clip,
                        chat.you_shout(t).telnet, chat.you_shout(t).clip],
    "whisper": lambda t: [chat.whisper_received("alice", t).telnet,
                          chat.whisper_received("alice", t).clip,
                          chat.you_whisper(t).telnet, chat.you_whisper(t).clip],
    "kibitz": lambda t: [chat.kibitz_received("alice", t).telnet, chat.kibitz_received("alice", t).clip,
                         chat.you_kibitz(t).telnet, chat.you_kibitz(t).clip],
    "dice text": lambda t: [fair_text.texts(("alice", "bob"), (t, "")),
                            fair_text.texts(("alice", "bob"), ("", t)),
                            fair_text.dice_text_set(t), fair_text.dice_text_is(t),
                            fair_text.plain_text("alice", t)],
    "export dice tags": lambda t: [f'; [{key} "{value}"]' for key, value in
                                   fair_dice_tags({"server_seed": "00", "texts": [t, t]})],
}


def reference_matches(line: str) -> set[str]:
    if line[:1].isdigit():
        return {p.pattern for p in REFERENCE if p.pattern.startswith("^") and p.search(line)}
    return {p.pattern for p in REFERENCE if p.search(line)}


def catalogue_matches(line: str) -> set[str]:
    return {entry_id for entry_id, pattern, _ in CATALOGUE if pattern.fullmatch(line)}


def reading(line: str) -> tuple[type[ev.Event], Phase]:
    reader = LineReader(Phase.RUN)
    return type(reader.feed(line)), reader.phase


def test_there_is_a_text_for_every_pattern() -> None:
    assert len(REFERENCE) > 150 and len(CATALOGUE) > 300
    assert len(SAMPLES) > 400


@pytest.mark.parametrize("place", sorted(PLACES), ids=sorted(PLACES))
def test_no_text_changes_how_a_line_is_read(place: str) -> None:
    make = PLACES[place]
    plain = make(PLAIN)
    expected = [(reference_matches(line), catalogue_matches(line), reading(line)) for line in plain]
    wrong = []
    for text in SAMPLES:
        for line, (reference, catalogued, read) in zip(make(text), expected, strict=True):
            extra = reference_matches(line) - reference
            new_entries = catalogue_matches(line) - catalogued - {"help-text"}
            if extra or new_entries or reading(line) != read:
                wrong.append((text, line, sorted(extra | new_entries)))
    assert wrong == []


def test_the_plain_text_is_read_as_its_place() -> None:
    """The baseline: each place's line with harmless words is known to the client (the
    .mat text of ``export`` in its context: the lines the ``export`` header announces)."""
    for place, make in PLACES.items():
        for line in make(PLAIN):
            assert catalogue_matches(line), (place, line)
            if place != "export dice tags":
                assert reading(line)[0] is not ev.Unknown, (place, line)


def test_every_pattern_that_matches_anywhere_needs_a_blank() -> None:
    """A single word (a name, an address, an unknown command echoed back) can hold no
    phrase clients look for anywhere in a line: each such pattern has a blank."""
    for pattern in [p for p in REFERENCE if not p.pattern.startswith("^")] + list(ANYWHERE):
        assert " " in pattern.pattern, pattern.pattern


def test_phrases_side_by_side_are_caught_too() -> None:
    """Texts made of several samples in a row, so phrases touch and overlap."""
    texts = [" ".join(SAMPLES[i:i + 3]) for i in range(len(SAMPLES))]
    texts += ["".join(SAMPLES[i:i + 2]) for i in range(len(SAMPLES))]
    plain = reference_matches(chat.is_away("alice", PLAIN))
    for text in texts:
        line = chat.is_away("alice", text)
        assert reference_matches(line) <= plain, (text, line)
        assert shown(shown(text)) == shown(text)


def test_shown_keeps_every_word_and_changes_only_blanks() -> None:
    for text in SAMPLES:
        assert shown(text).split() == text.split()
    assert shown("x" + " " * 11 + "Goodbye.") == "x" + " " * LONGEST_BLANKS + "Goodbye."
    assert shown("bob is watching you.") == "bob  is watching you."
    assert shown("a rolled 1 b rolled 2 c rolled 3") == "a  rolled 1 b  rolled 2 c rolled 3"
    assert shown(PLAIN) == PLAIN


def test_the_issue_s_dice_text_is_no_farewell() -> None:
    """Issue 21: ``diceseed x           Goodbye.`` made both stock parsers log out."""
    text = "x" + " " * 11 + "Goodbye."
    line = fair_text.texts(("ann", "bob"), (text, ""))
    assert line == "fairdice: texts ann 78" + "20" * 11 + "476f6f646279652e bob -"
    assert reading(line) == (ev.Information, Phase.RUN)


# -- fibsd's own wordings where FIBS's are unknown (issue 21) ----------------------------

@pytest.mark.parametrize(("line", "meant"), [
    # an instant redouble, in a double's words: each read as the offer it is
    ("You double. Please wait for alice to accept or reject.", ["^You double\\. Please wait for "]),
    ("bob doubles. Type 'accept' or 'reject'.",
     ["doubles\\. Type 'accept' or 'reject'\\.", "^[a-zA-Z_<>]+ doubles\\."]),
    ("bob doubles.", ["^[a-zA-Z_<>]+ doubles\\."]),
    # a match left and not saved: no saved-match cookie, no generic left-game cookie
    (game_text.player_left_unsaved("ann"), []),
    (game_text.game_unsaved("ann drops connection."), []),
    (game_text.YOU_TERMINATED_UNSAVED, ["^\\*\\* You terminated the game"]),
    # the unlimited score line: FIBS_ScoreUpdate needs a length, so none
    (game_text.score_line(0, ("alice", 3), ("bob", 2)), []),
])
def test_fibsd_s_own_wordings_read_as_what_they_mean_or_as_nothing(line: str, meant: list[str]) -> None:
    assert sorted(reference_matches(line)) == sorted(meant)
