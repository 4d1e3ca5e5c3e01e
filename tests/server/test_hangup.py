"""SIGHUP on a real server process: it reloads instead of dying (it used to end at once
with status 129, logging nothing): the log file is opened again (logrotate), the MOTD
and the TLS certificate are read again, bans written from the shell close the banned
users' connections, and one ``reload`` event says so."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from passlib.hash import argon2

from fibsd.store.sqlite import SQLiteStore
from tests.server.test_tls import self_signed

DEADLINE = 30.0  # seconds a condition may take before the test gives up


def _events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _await_event(path: Path, wanted: dict[str, Any], after: int = 0) -> dict[str, Any]:
    """The first event of the log file ``path`` past the ``after``-th with the fields
    of ``wanted``, waiting for it to be written."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        for event in _events(path)[after:]:
            if all(event.get(key) == value for key, value in wanted.items()):
                return event
        time.sleep(0.05)
    raise AssertionError(f"no event {wanted} in {path}: {_events(path)[after:]}")


def _login(port: int, name: str) -> tuple[socket.socket, bytes]:
    conn = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
    conn.sendall(f"login test 1008 {name} secret\r\n".encode())
    received = b""
    while b"\r\n6\r\n" not in received:
        received += conn.recv(4096)
    return conn, received


def _served_certificate(port: int) -> bytes:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) as raw, \
            context.wrap_socket(raw) as tls:
        served = tls.getpeercert(binary_form=True)
    assert served is not None
    return served


def _der(path: Path) -> bytes:
    return x509.load_pem_x509_certificate(path.read_bytes()).public_bytes(Encoding.DER)


def test_sighup_reloads_and_the_server_goes_on(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "tls").mkdir(parents=True)
    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        directory.mkdir()
        self_signed(directory)
    for name in ("fibsd.crt", "fibsd.key"):
        shutil.copy(first / name, site / "tls" / name)
    database = site / "fibsd.sqlite"
    store = SQLiteStore(database)
    for name in ("alice", "bob"):
        store.create_user(name, argon2.using(memory_cost=64, time_cost=1).hash("secret"), 1)
    store.close()
    (site / "motd.txt").write_text("The old message.\n")
    (site / "fibsd.toml").write_text(
        'motd = "motd.txt"\n[tls]\nenabled = true\nport = 0\n')
    log = tmp_path / "log" / "fibsd.jsonl"
    server = subprocess.Popen(
        [sys.executable, "-m", "fibsd", "--config", str(site / "fibsd.toml"),
         "--data-dir", str(site), "--port", "0", "--web-port", "0", "--interface",
         "127.0.0.1", "--log-file", str(log), "--log-format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
    try:
        port = _await_event(log, {"log_format": "fibsd listening on {interface} port {port}, "
                                                "database {database}"})["port"]
        tls_port = _await_event(
            log, {"log_format": "fibsd listening with TLS on {interface} port {port}"})["port"]
        assert _served_certificate(tls_port) == _der(first / "fibsd.crt")
        alice, _ = _login(port, "alice")
        banned = subprocess.run(
            [sys.executable, "-m", "fibsd", "--database", str(database), "admin", "ban",
             "alice", "forever", "spam"], capture_output=True, text=True, timeout=60)
        assert banned.returncode == 0, banned.stderr
        log.rename(log.with_suffix(".jsonl.1"))  # what logrotate does
        (site / "motd.txt").write_text("The new message.\n")
        for name in ("fibsd.crt", "fibsd.key"):
            shutil.copy(second / name, site / "tls" / name)

        server.send_signal(signal.SIGHUP)
        reloaded = _await_event(log, {"event": "reload"})
        assert (reloaded["log_file"], reloaded["motd"], reloaded["tls"], reloaded["cut"],
                reloaded["problems"]) == ("reopened", 6, "read again", "alice", "")
        assert reloaded["log_level"]["name"] == "info"
        assert not any(e.get("event") == "reload" for e in _events(log.with_suffix(".jsonl.1")))
        rest = b""
        while chunk := alice.recv(4096):
            rest += chunk
        alice.close()
        assert rest.endswith(b"** You are banned from this server.\r\n")
        assert _served_certificate(tls_port) == _der(second / "fibsd.crt")
        bob, welcome = _login(port, "bob")
        bob.close()
        assert b"The new message." in welcome and b"The old message." not in welcome

        # Files that cannot be used: logged, and the certificate in use stays.
        (site / "tls" / "fibsd.crt").write_text("not a certificate\n")
        server.send_signal(signal.SIGHUP)
        kept = _await_event(log, {"event": "reload"}, after=_events(log).index(reloaded) + 1)
        assert (kept["tls"], kept["cut"], kept["log_level"]["name"]) == ("kept", "none", "warn")
        assert kept["problems"].startswith(
            f"; the TLS certificate {site / 'tls' / 'fibsd.crt'} is not a PEM certificate: ")
        assert kept["problems"].endswith(": the certificate in use stays")
        assert _served_certificate(tls_port) == _der(second / "fibsd.crt")
        assert server.poll() is None

        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=DEADLINE) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.stdout is not None
    assert "Traceback" not in server.stdout.read() + log.read_text()
