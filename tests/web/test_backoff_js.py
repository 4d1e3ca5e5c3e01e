"""The web client's reconnection delays (clip.js ``backoff``, run under Node): half a
second at first, doubled after each failed try, never above 30 seconds, each within
20 % either way so that pages cut by one outage do not come back at one instant."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NODE = shutil.which("node")
SCRIPT = Path(__file__).resolve().parent / "js" / "backoff_check.mjs"


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (Debian: apt-get install nodejs)")
def test_the_delays_double_up_to_a_cap_with_some_spread() -> None:
    assert NODE is not None
    tries = list(range(12))
    run = subprocess.run([NODE, str(SCRIPT)], input="\n".join(map(str, tries)),
                         capture_output=True, text=True, timeout=60, check=True)
    for count, line in zip(tries, run.stdout.split("\n")):
        low, high = map(float, line.split())
        base = min(500 * 2 ** count, 30000)
        assert base * 0.8 <= low < high <= base * 1.2, (count, low, high)
