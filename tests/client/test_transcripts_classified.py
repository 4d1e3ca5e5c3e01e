"""Every line a client receives in fibsd's golden transcripts (protocol/transcripts) classifies.

The transcripts are the server's exact output per connection; placeholders for
volatile fields are filled with plausible values, and prompts (``?`` lines) are
fed as the bare prompt text they stand for.  The one exception is the reply to
``help``: help topics are free prose with no marker, which only the client that
asked can know (the catalogue's ``help-text`` entry says the same).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fibsd.client import events as ev
from fibsd.client.parse import LineReader

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "protocol" / "transcripts"
FILLERS = {
    "{int}": "1593791615", "{host}": "host.example.net", "{date}": "Fri Jul  3 16:04:27 2020 UTC",
    "{idle}": "2:12", "{hh:mm}": "16:49", "{any}": "23",
}
_STEP = re.compile(r"^(?P<client>\w+) (?:(?P<connects>connects)$|(?P<kind>[<?>])(?: (?P<text>.*))?$)")


def received(path: Path) -> list[tuple[str, ev.Event, bool]]:
    """Each line or prompt every client received, as its reader classified it, and whether
    it came in reply to ``help``."""
    readers: dict[str, LineReader] = {}
    asked_help: dict[str, bool] = {}
    seen: list[tuple[str, ev.Event, bool]] = []
    for step in path.read_text().splitlines():
        match = _STEP.match(step)
        if match is None:
            continue
        client = match["client"]
        if match["connects"]:
            readers[client] = LineReader()
            continue
        if match["kind"] == ">":
            asked_help[client] = (match["text"] or "").split(" ")[0] == "help"
            continue
        text = match["text"] or ""
        for placeholder, value in FILLERS.items():
            text = text.replace(placeholder, value)
        line = text + " " if match["kind"] == "?" else text
        seen.append((line, readers[client].feed(line), asked_help.get(client, False)))
    return seen


PATHS = sorted(TRANSCRIPTS.glob("*.txt"))


def test_there_are_transcripts() -> None:
    assert len(PATHS) >= 5


@pytest.mark.parametrize("path", PATHS, ids=[path.name for path in PATHS])
def test_transcript_lines_classify(path: Path) -> None:
    events = received(path)
    assert events
    assert [line for line, event, help_reply in events if isinstance(event, ev.Unknown) and not help_reply] == []
