"""The lines of ``analysis`` and its notice (fibsd.wire.analysis_text) are read by no
FIBS client as anything else: no stock client pattern of the protocol reference
(tests/data/client_patterns.txt, applied as FIBS Cookie Monster applies them) matches
one, fibsd's own client reads the sentences as unknown and the ``** `` ones as errors,
and each matches its catalogue entry (protocol/catalogue/analysis.toml)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from fibsd.client import events as ev
from fibsd.client.parse import classify
from fibsd.wire import analysis_text as text
from tests.wire.test_user_text_patterns import REFERENCE

CATALOGUE = Path(__file__).resolve().parents[2] / "protocol" / "catalogue" / "analysis.toml"
ENTRIES = [re.compile(e["pattern"]) for e in tomllib.loads(CATALOGUE.read_text())["line"]]
ROW = text.SummaryRow("alice", 7.3, 5.1, 2.0, -1.2, 43, 3, 1, 0)
LINES = [
    text.header(42, ("alice", "bob"), 5, 2),
    text.header(42, ("alice", "bob"), 0, None),
    text.summary(ROW),
    text.summary(text.SummaryRow("bob", None, None, None, None, 0, 0, 0, 0)),
    text.worst_header(0),
    text.worst_header(3),
    text.decision(text.Decision(2, "alice", "checker", "24/20 13/12*", "bar/22 6/off", 0.123,
                                "bad")),
    text.decision(text.Decision(1, "bob", "cube", "no double", "double", 0.05, None)),
    text.decision(text.Decision(3, "bob", "take", "pass", "take", 0.5, "very bad")),
    text.deeper_queued(42, 3),
    text.ready(42, ("alice", "bob")),
]
ERRORS = [
    text.USAGE, text.NOT_YOURS, text.OFF, text.no_match(7), text.no_matches("alice"),
    text.deeper_refused(42, 3), text.deeper_flood(3),
    *[text.state_line(42, state, "gnubg cannot read it") for state in
      ("queued", "running", "failed", "off")],
]


def stock_matches(line: str) -> list[str]:
    """The reference patterns that read ``line`` (a line starting with a digit is tried
    against the anchored CLIP table only, as FCM does)."""
    return [p.pattern for p in REFERENCE
            if (p.match(line) if line[:1].isdigit() else p.search(line))]


@pytest.mark.parametrize("line", LINES + ERRORS)
def test_no_stock_client_reads_the_line_as_its_own(line: str) -> None:
    assert not line[:1].isdigit()
    assert stock_matches(line) == []
    assert [p.pattern for p in ENTRIES if p.fullmatch(line)] != []


@pytest.mark.parametrize("line", LINES)
def test_fibsd_s_client_reads_the_sentences_as_information(line: str) -> None:
    assert classify(line) == ev.Information(kind="analysis", text=line)


@pytest.mark.parametrize("line", ERRORS)
def test_the_refusals_are_errors(line: str) -> None:
    assert classify(line) == ev.Error(line[3:])
