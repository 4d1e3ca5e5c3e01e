"""GNU Backgammon at arm's length: one ``gnubg`` process per match, over files.

gnubg is GPL, fibsd MIT: no fibsd module imports it.  ``run_gnubg`` starts Debian's
``gnubg -t -q -p <script>`` (the program, with its embedded Python) on a ``.mat`` file
fibsd exported; the script below, fibsd's own text that only gnubg's interpreter runs,
imports the file, analyses the match (``set threads 1``, the given plies for checker
play and cube) and writes ``gnubg.match()`` as JSON, every cube equity put in
gnubg's normalised terms (EMG) the way gnubg's own statistics count them, and of each
play's candidates only the best and the one played (with how many there were).  Reading
that JSON into marks and summaries is ``fibsd.analysis.reading``'s.

The process runs in a session of its own, at the lowest priority, without a terminal,
with a time limit: on expiry the whole process group is killed, so a record that makes
gnubg loop, or a gnubg that hangs, costs one job's time and no more.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

# Where Debian puts it (not on a normal user's PATH): tried after PATH.
DEBIAN_GNUBG = "/usr/games/gnubg"
# gnubg prints its banner and boards on stdout; only so much is kept for a reason
_KEPT_OUTPUT = 2000

SCRIPT = r'''
import json, os
import gnubg

plies = int(os.environ["FIBSD_PLIES"])
for command in ("set threads 1",
                "set analysis chequerplay evaluation plies %d" % plies,
                "set analysis cubedecision evaluation plies %d" % plies,
                "set analysis chequerplay evaluation cubeful on",
                "set analysis cubedecision evaluation cubeful on"):
    gnubg.command(command)
gnubg.command('import mat "%s"' % os.environ["FIBSD_MAT"])
gnubg.command("analyse match")
match = gnubg.match(1, 0, 1, 0)
length = match["match-info"]["match-length"]
for game in match["games"]:
    info = game["info"]
    score = (info["score-X"], info["score-O"])
    cube, owner, offered = 1, -1, 0
    for entry in game["game"]:
        player = 0 if entry.get("player") == "X" else 1
        analysis = entry.get("analysis") or {}
        moves = analysis.get("moves")
        if moves:  # only the best and the played play are read: less JSON to write
            chosen = analysis.get("imove", 0)
            analysis["fibsd-candidates"] = len(moves)
            analysis["moves"] = [moves[0], moves[chosen]]
            analysis["imove"] = 1
        if "nd-cubeful-eq" in analysis:
            nd, dt = analysis["nd-cubeful-eq"], analysis["dt-cubeful-eq"]
            if length:
                ci = gnubg.cubeinfo(cube, owner, player, length, score, 0, 0)
                nd, dt = gnubg.mwc2eq(nd, ci), gnubg.mwc2eq(dt, ci)
            entry["fibsd-cube"] = {"nd": nd, "dt": dt, "dp": 1.0, "cube": cube}
        action = entry.get("action")
        if action == "double":  # a beaver is a double by the one doubled
            offered = (offered or cube) * 2
        elif action == "take":
            cube, owner, offered = offered or cube * 2, player, 0
        elif action == "drop":
            offered = 0
with open(os.environ["FIBSD_OUT"], "w") as out:
    json.dump(match, out)
'''


class EngineFailed(Exception):
    """gnubg did not analyse the match: the reason, as a job's ``failed`` shows it."""


def find_gnubg(configured: str = "gnubg") -> str | None:
    """The gnubg program to run: ``configured`` as a path, or a name on PATH and then
    in Debian's place (not on every user's PATH)."""
    fallback = [] if "/" in configured else [DEBIAN_GNUBG]
    for candidate in (configured, *fallback):
        found = shutil.which(candidate)
        if found:
            return found
    return None


def run_gnubg(program: str, mat: str, plies: int, time_limit: float) -> dict[str, Any]:
    """gnubg's analysis of the ``.mat`` text ``mat`` at ``plies``: its ``match()``
    dictionary with normalised cube equities; ``EngineFailed`` when it crashes, hangs
    past ``time_limit`` seconds or writes nothing readable."""
    with tempfile.TemporaryDirectory(prefix="fibsd-analysis-") as scratch:
        folder = Path(scratch)
        (folder / "match.mat").write_text(mat, encoding="utf-8")
        (folder / "analyse.py").write_text(SCRIPT, encoding="utf-8")
        out = folder / "analysis.json"
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": scratch,
               "LANG": "C.UTF-8", "FIBSD_MAT": str(folder / "match.mat"),
               "FIBSD_OUT": str(out), "FIBSD_PLIES": str(plies)}
        process = subprocess.Popen(
            [program, "-t", "-q", "-r", "-p", str(folder / "analyse.py")],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            cwd=scratch, env=env, start_new_session=True)
        try:
            output, _ = process.communicate(timeout=time_limit)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise EngineFailed(f"gnubg took longer than {time_limit:g} s") from None
        finally:
            _kill_group(process)  # anything it left running
        if process.returncode < 0:
            raise EngineFailed(f"gnubg died of signal {-process.returncode}"
                               f" ({signal.Signals(-process.returncode).name})")
        try:
            data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            tail = output.decode("utf-8", "replace").strip()[-_KEPT_OUTPUT:]
            last = tail.splitlines()[-1] if tail else ""
            raise EngineFailed(f"gnubg wrote no analysis (exit {process.returncode}):"
                               f" {last}") from None
        return data


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()
