"""What GNU Backgammon itself reports for a .mat file: ``gnubg -t`` driven over a
pipe with its own commands (``analyse match``, ``show statistics match``), its table
read back.  An independent route from the worker's (which runs a Python script inside
gnubg and reads ``gnubg.match()``): the tests compare the two."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from fibsd.analysis.engine import find_gnubg

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_SECTIONS = ("Chequerplay statistics", "Luck statistics", "Cube statistics",
             "Overall statistics")


def gnubg_statistics(mat: Path, plies: int) -> dict[str, tuple[float, float]]:
    """``section: label`` -> (player 1's first figure, player 2's), for every row of
    ``show statistics match`` after ``analyse match`` at ``plies``."""
    program = find_gnubg()
    assert program is not None, "gnubg is not installed"
    commands = "\n".join([
        "set threads 1",
        f"set analysis chequerplay evaluation plies {plies}",
        f"set analysis cubedecision evaluation plies {plies}",
        f'import mat "{mat}"',
        "analyse match",
        "show statistics match",
        "",
    ])
    output = subprocess.run([program, "-t", "-q", "-r"], input=commands, text=True,
                            capture_output=True, timeout=600, cwd=mat.parent,
                            env={"HOME": str(mat.parent), "PATH": "/usr/bin:/bin",
                                 "LANG": "C.UTF-8"}).stdout
    rows: dict[str, tuple[float, float]] = {}
    section = ""
    for line in output.splitlines():
        if line.strip() in _SECTIONS:
            section = line.strip()
            continue
        label, _, rest = line.partition("  ")
        numbers = _NUMBER.findall(_figures(rest))
        if section and label and len(numbers) == 2:
            rows[f"{section}: {label.strip()}"] = (float(numbers[0]), float(numbers[1]))
    return rows


def _figures(text: str) -> str:
    """A row's text without the parenthesised MWC figures."""
    return re.sub(r"\((?:[^()]|\([^()]*\))*\)", " ", text)
