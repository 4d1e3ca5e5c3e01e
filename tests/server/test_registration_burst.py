"""Registrations at once right after a start (issue 19): passlib loads its argon2
backend at the first hash, and two workers loading it together failed ("failed to
replace lazy loader"), so some of the first registrations got "Sorry, something went
wrong".  A real server process, started afresh each round, real argon2 cost."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

STARTS = 3
AT_ONCE = 8
TIMEOUT = 60.0


def _until(conn: socket.socket, *wanted: bytes) -> bytes:
    received = b""
    while not any(word in received for word in wanted):
        chunk = conn.recv(4096)
        if not chunk:
            return received
        received += chunk
    return received


def _register(port: int, name: str) -> str:
    """One registration by telnet; what the server said after the second password."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as conn:
        _until(conn, b"login: ")
        conn.sendall(b"guest\r\n")
        _until(conn, b"> ")
        conn.sendall(f"name {name}\r\n".encode())
        _until(conn, b"password: ")
        conn.sendall(b"secret\r\n")
        _until(conn, b"password: ")
        conn.sendall(b"secret\r\n")
        # the walk-through's last line, or the apology of a failure
        said = _until(conn, b"move a checker for each die", b"Please try again.")
        conn.sendall(b"bye\r\n")
        return said.decode("ascii", "replace")


def _start(directory: Path) -> tuple[subprocess.Popen[str], int]:
    config = directory / "fibsd.toml"
    config.write_text("[access]\nregistrations_per_hour = 100\n")
    server = subprocess.Popen(
        [sys.executable, "-m", "fibsd", "--config", str(config), "--port", "0",
         "--web-port", "0", "--interface", "127.0.0.1",
         "--database", str(directory / "fibsd.sqlite")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=directory)
    assert server.stdout is not None
    for line in server.stdout:
        found = re.search(r"fibsd listening on 127\.0\.0\.1 port ([0-9]+)", line)
        if found:
            return server, int(found.group(1))
    raise AssertionError("the server did not start")


def test_registrations_at_once_right_after_a_start_all_succeed(tmp_path: Path) -> None:
    names = ["anna", "bert", "cora", "dirk", "emma", "finn", "gina", "hugo"][:AT_ONCE]
    for start in range(STARTS):
        directory = tmp_path / f"start{start}"
        directory.mkdir()
        server, port = _start(directory)
        try:
            with ThreadPoolExecutor(AT_ONCE) as pool:
                said = list(pool.map(lambda name: _register(port, name), names))
        finally:
            server.send_signal(signal.SIGTERM)
            log, _ = server.communicate(timeout=30)
        assert [("You are registered." in text, "Sorry" in text) for text in said] == \
            [(True, False)] * AT_ONCE, said
        assert "Traceback" not in log and "lazy loader" not in log
        assert sorted(re.findall(r"(\w+) registers from", log)) == names
