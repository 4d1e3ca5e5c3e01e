"""``fibsd admin delete`` from the shell while the real server runs (issue 19): it used
to delete a logged-in account under his session, which played on as a ghost and logged
critical tracebacks at its next writes.  Now the shell refuses until he is gone."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.server.test_registration_burst import TIMEOUT, _start, _until

DEADLINE = 30.0  # for the server to record a logout the shell then sees


def _admin(directory: Path, *words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fibsd", "--config", str(directory / "fibsd.toml"),
         "--database", str(directory / "fibsd.sqlite"), "admin", *words],
        capture_output=True, text=True, timeout=TIMEOUT)


def test_the_shell_does_not_delete_an_account_under_its_session(tmp_path: Path) -> None:
    server, port = _start(tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as alice:
            _until(alice, b"login: ")
            alice.sendall(b"guest\r\nname alice\r\n")
            _until(alice, b"password: ")
            alice.sendall(b"secret\r\n")
            _until(alice, b"password: ")
            alice.sendall(b"secret\r\n")
            _until(alice, b"move a checker for each die")
            refused = _admin(tmp_path, "delete", "alice")
            assert refused.returncode == 1 and refused.stdout == ""
            assert refused.stderr.startswith("fibsd admin: alice is logged in (since ")
            alice.sendall(b"who alice\r\n")  # her session goes on, with her account
            assert b"alice" in _until(alice, b"> ")
            alice.sendall(b"bye\r\n")
            while alice.recv(4096):
                pass
        deadline = time.monotonic() + DEADLINE
        while (done := _admin(tmp_path, "delete", "alice")).returncode != 0:
            assert "is logged in" in done.stderr and time.monotonic() < deadline
        assert done.stdout == "Deleted the account alice.\n"
    finally:
        server.send_signal(signal.SIGTERM)
        log, _ = server.communicate(timeout=30)
    assert "Traceback" not in log and "#critical" not in log and "#error" not in log
