"""The texts an operator keeps in files: the message of the day and the help directory.

They are read when the server starts (``fibsd.app``) and again at ``admin reload``
(``fibsd.server.commands.admin``): both read them here."""

from __future__ import annotations

from pathlib import Path

from twisted.logger import Logger

from fibsd.wire import clip

log = Logger()


def read_motd(path: Path) -> tuple[str, ...]:
    """The MOTD box; no box at all when the file is missing or empty."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        log.warn("No message of the day: cannot read {path}", path=str(path))
        return ()
    return tuple(clip.format_motd_box(text)) if text.strip() else ()


def help_problem(help_dir: Path) -> str | None:
    """What is wrong with the help directory, or None."""
    if not help_dir.is_dir():
        return f"The help directory {help_dir} is missing: 'help <topic>' finds no text."
    return None
