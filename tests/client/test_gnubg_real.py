"""The gnubg brain against a real GNU Backgammon (``gnubg -t`` with ``external``).

Skipped, with the reason, where gnubg is not installed; ``.ci/run`` installs it (Debian
package ``gnubg``, which puts it in /usr/games), so CI always runs these.  They check
the two things gnubg 1.07 reads differently from a FIBS board line: the score fields
(swapped) and the post-Crawford flag, on cube questions whose answer is not in doubt.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence

import pytest

from fibsd.client import events as ev
from fibsd.client.gnubg_brain import GnubgBrain
from fibsd.client.strategy import CubeState
from fibsd.rules.play import Play
from fibsd.rules.position import Position

GNUBG = shutil.which("gnubg") or shutil.which("gnubg", path="/usr/games")
STARTUP = 60.0  # seconds gnubg may take to load its networks and listen

pytestmark = pytest.mark.skipif(
    GNUBG is None, reason="gnubg is not installed (apt-get install gnubg; .ci/run does)")


class NoFallback:
    """A brain that fails the test if it is ever asked: every answer must be gnubg's."""

    def play(self, board: ev.Board, position: Position, dice: tuple[int, int],
             plays: Sequence[Play]) -> Play | None:
        raise AssertionError("gnubg did not answer a play")

    def double(self, position: Position, state: CubeState) -> bool:
        raise AssertionError("gnubg did not answer a cube question")

    def take(self, position: Position, state: CubeState) -> bool:
        raise AssertionError("gnubg did not answer a take question")

    def accept_resignation(self, position: Position, points: int, state: CubeState) -> bool:
        raise AssertionError("resignations are not gnubg's")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def brain() -> Iterator[GnubgBrain]:
    assert GNUBG is not None
    port = _free_port()
    process = subprocess.Popen([GNUBG, "-t", "-q"], stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert process.stdin is not None
    process.stdin.write(f"external localhost:{port}\n".encode())
    process.stdin.flush()
    deadline = time.monotonic() + STARTUP
    brain = GnubgBrain("localhost", port, fallback=NoFallback(), timeout=30.0)
    try:
        while True:  # poll until gnubg listens (it loads its networks first)
            try:
                brain._sock = socket.create_connection(("localhost", port), timeout=30.0)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield brain
    finally:
        brain.close()
        process.kill()
        process.wait()


def test_the_post_crawford_trailer_doubles(brain: GnubgBrain) -> None:
    """0-4 in a 5-point match after the Crawford game: the trailer doubles at once (the
    leader's drop costs one point he does not need).  gnubg said ``roll`` here when it
    read the scores swapped or missed the post-Crawford flag."""
    trailer = CubeState(1, 5, 0, 4, post_crawford=True)
    assert brain.double(Position.initial(), trailer) is True


def test_the_leader_who_needs_one_point_does_not_double(brain: GnubgBrain) -> None:
    leader = CubeState(1, 5, 4, 0, post_crawford=True)
    assert brain.double(Position.initial(), leader) is False
