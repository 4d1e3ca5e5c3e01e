"""No clock line reads as something else to a client (protocol/clock.md section 7).

Each example of protocol/catalogue/clock.toml is tried against every pattern of the FIBS
protocol reference (tests/data/client_patterns.txt), as FIBS Cookie Monster applies
them, and classified by fibsd's own client."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from fibsd.client import events as ev
from fibsd.client.parse import classify
from fibsd.rules.clock import ClockSpec
from fibsd.wire import clock_text

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = [re.compile(line.split("\t", 1)[1]) for line in
            (ROOT / "tests" / "data" / "client_patterns.txt").read_text().splitlines()
            if line and not line.startswith("#")]
ENTRIES = tomllib.loads((ROOT / "protocol" / "catalogue" / "clock.toml").read_text())["line"]


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["id"] for entry in ENTRIES])
def test_no_client_pattern_takes_a_clock_line_for_another(entry: dict[str, str]) -> None:
    example = entry["example"]
    assert re.fullmatch(entry["pattern"], example)
    assert [p.pattern for p in PATTERNS if p.search(example)] == []
    event = classify(example)
    assert not isinstance(event, ev.Unknown)
    if example.startswith("** "):
        assert isinstance(event, ev.Error)


def test_the_texts_are_the_catalogue_s() -> None:
    spec = ClockSpec(12, 120)
    made = [clock_text.clock_set(spec), clock_text.clock_set(None), clock_text.clock_value(spec),
            clock_text.CLOCK_USAGE, clock_text.CLOCK_REQUIRED, clock_text.NO_CLOCK,
            clock_text.invitation_clock(spec, 840), clock_text.invitation_clock(spec, 36000),
            clock_text.clock_state(spec, ("alice", "bob"), (825, 840)),
            clock_text.clock_running("alice", 7.2), clock_text.CLOCK_STOPPED,
            clock_text.reserve_warning(60), clock_text.reserve_warning(10),
            clock_text.YOU_LOST_ON_TIME, clock_text.lost_on_time("alice"),
            clock_text.board_clocks(("alice", "bob"), (825, 840), 0),
            clock_text.board_clocks(("alice", "bob"), (825, 840), None)]
    for line in made:
        assert [e["id"] for e in ENTRIES if re.fullmatch(e["pattern"], line)], line
