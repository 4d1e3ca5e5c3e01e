"""/play warns that the password travels in clear over plain HTTP to any host but this
machine's loopback (clip.js ``sendsInClear``, run under Node)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NODE = shutil.which("node")
SCRIPT = Path(__file__).resolve().parent / "js" / "in_clear_check.mjs"

CASES = {
    ("http:", "localhost"): False,
    ("http:", "127.0.0.1"): False,
    ("http:", "127.8.9.10"): False,
    ("http:", "[::1]"): False,
    ("http:", "play.localhost"): False,
    ("https:", "fibs.example.org"): False,
    ("http:", "fibs.example.org"): True,
    ("http:", "192.168.1.20"): True,
    ("http:", "[2001:db8::1]"): True,
    ("http:", "127.0.0.1.example.org"): True,
    ("http:", "localhost.example.org"): True,
}


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (Debian: apt-get install nodejs)")
def test_the_page_warns_of_a_password_in_clear_off_loopback() -> None:
    assert NODE is not None
    cases = list(CASES)
    run = subprocess.run([NODE, str(SCRIPT)], input="\n".join(f"{p} {h}" for p, h in cases),
                         capture_output=True, text=True, timeout=60, check=True)
    assert dict(zip(cases, (line == "true" for line in run.stdout.split()))) == CASES
