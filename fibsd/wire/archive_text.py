"""The lines of ``archive`` (a page of a player's finished matches, with their numbers)
and ``export`` (one match as GNU Backgammon ``.mat`` text between two frame lines).

fibsd's own commands (FIBS had none); protocol/export.md says why the lines look as they
do.  Every line starts with a character no FIBS client reads as its own: ``#`` rows, plain
sentences, ``** `` refusals; the ``.mat`` text between the frame lines is told by the
count in the first one.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

ARCHIVE_USAGE = "** usage: archive [name] [page]"
EXPORT_USAGE = "** usage: export <match number>"


@dataclass(frozen=True)
class ArchiveRow:
    id: int
    finished: int  # Unix time
    winner: str
    loser: str
    winner_points: int
    loser_points: int
    length: int  # 0: unlimited


def finished_at(when: int) -> datetime.datetime:
    """A stored Unix time as the UTC date and time the archive shows."""
    return datetime.datetime.fromtimestamp(when, datetime.timezone.utc)


def archive_header(name: str) -> str:
    return f"Finished matches of {name}, newest first (times in UTC):"


def archive_row(row: ArchiveRow) -> str:
    """``#42 2026-11-24 03:07 alice 5 - bob 3 (5 point match)``, the winner first."""
    length = "unlimited match" if row.length == 0 else f"{row.length} point match"
    return (f"#{row.id} {finished_at(row.finished):%Y-%m-%d %H:%M} {row.winner}"
            f" {row.winner_points} - {row.loser} {row.loser_points} ({length})")


def archive_more(name: str, next_page: int) -> str:
    return f"Type 'archive {name} {next_page}' for more."


def no_archive(name: str, page: int) -> str:
    if page == 1:
        return f"** {name} has no finished matches."
    return f"** {name} has no finished matches on page {page}."


def no_such_match(match_id: int) -> str:
    return f"** There is no finished match #{match_id}."


def export_damaged(match_id: int) -> str:
    return f"** Match #{match_id} cannot be exported: its record is damaged."


def export_too_long(match_id: int, size: int, limit: int) -> str:
    return f"** Match #{match_id} is too long to send: {size} bytes (the limit is {limit})."


def export_flood(per_minute: int) -> str:
    return f"** You may export {per_minute} matches a minute. Please wait a little."


def export_header(match_id: int, lines: int) -> str:
    """The first frame line: exactly ``lines`` lines of .mat text follow, then the end."""
    return f"Match #{match_id} in .mat format, {lines} lines:"


def export_end(match_id: int) -> str:
    return f"End of match #{match_id}."
