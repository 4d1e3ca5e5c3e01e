"""Real FIBS output kept as test data: the Fibs.Net board captures and the 2020 session.

Each capture line is a JSON array: the ``board:`` fields as the capture tool's parser
split them, then the ASCII board (boardstyle 2) FIBS drew next, one line per record,
empty lines dropped.  Nine records are commented out with ``#`` in the original files:
between the two requests a roll, a "can't move" or a resignation offer happened, so
their status line belongs to a later moment than the fields (the checkers agree).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from fibsd.wire.board import Colour

DATA = Path(__file__).resolve().parent / "data"
CAPTURE_FILES = ("cap1.json", "cap2.json", "cap3.json", "cap4.json")


@dataclass(frozen=True)
class Capture:
    name: str  # "cap4.json:14"
    out_of_step: bool  # commented out: fields and picture from different moments
    line: str  # the board: line rebuilt from the captured fields
    raw: tuple[str, ...]  # the ASCII board as FIBS printed it, empty lines dropped


def _line(fields: dict[str, str]) -> str:
    """Rebuild the full line.  The tool did not keep tokens 43, 44 (home and bar
    index, fixed by the colour), 50 (forced move) and 51 (did Crawford); the
    last two are 0 here, which no drawing depends on."""
    colour = Colour(int(fields["player1Color"]))
    keys_before = ("player1", "player2", "matchLength", "player1Score", "player2Score",
                   "board", "turnColor", "player1Dice", "player2Dice", "doublingCube",
                   "player1MayDouble", "player2MayDouble", "wasDoubled", "player1Color",
                   "direction")
    keys_after = ("player1Home", "player2Home", "player1Bar", "player2Bar", "canMove")
    return ":".join(["board", *(fields[k] for k in keys_before), str(colour.home),
                     str(colour.bar), *(fields[k] for k in keys_after), "0", "0",
                     fields["redoubles"]])


def load_captures() -> list[Capture]:
    captures = []
    for file in CAPTURE_FILES:
        for number, text in enumerate((DATA / file).read_text().splitlines()):
            records = json.loads(text.lstrip("#"))
            captures.append(Capture(
                name=f"{file}:{number}",
                out_of_step=text.startswith("#"),
                line=_line(records[0]["crumbs"]),
                raw=tuple(r["crumbs"]["raw"] for r in records[1:]),
            ))
    return captures


def session_board_lines() -> list[str]:
    """Every board: line a watcher received in the July 2020 fibs.com session."""
    return (DATA / "session-2020-boards.txt").read_text().splitlines()
