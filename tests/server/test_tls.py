"""The optional TLS listener: the same protocol over TLS, on loopback, with a certificate
made here (the ``cryptography`` package pyOpenSSL is built on)."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_twisted
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from passlib.hash import argon2
from twisted.internet import reactor, ssl
from twisted.internet.endpoints import SSL4ClientEndpoint, connectProtocol

from fibsd.app import FibsService
from fibsd.store.sqlite import SQLiteStore
from tests.helpers import make_settings
from tests.server.test_app import _Recorder


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for ``localhost`` and 127.0.0.1, and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "fibsd.crt", directory / "fibsd.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.mark.parametrize("alpn", [None, [b"fibs"], [b"h2", b"http/1.1"]])
@pytest_twisted.ensureDeferred
async def test_a_clip_login_over_tls(tmp_path: Path, alpn: list[bytes] | None) -> None:
    """With and without ALPN: the game speaks no ALPN protocol, so a client that offers
    some (as TLS libraries may by default) gets none, not a fatal alert."""
    cert_path, key_path = self_signed(tmp_path)
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)
    store.create_user("alice", argon2.using(memory_cost=64, time_cost=1).hash("secret"), 1)
    store.close()
    settings = make_settings(**{
        "port": 0, "interface": "127.0.0.1", "database": str(database),
        "tls.enabled": True, "tls.port": 0, "tls.certificate": str(cert_path),
        "tls.key": str(key_path)})
    service = FibsService(settings, reactor)
    service.startService()
    try:
        await service.listening
        port = (await service.tls_listening).getHost().port
        trust = ssl.Certificate.loadPEM(cert_path.read_bytes())
        endpoint = SSL4ClientEndpoint(reactor, "127.0.0.1", port,
                                      ssl.optionsForClientTLS("localhost", trustRoot=trust,
                                                              acceptableProtocols=alpn))
        client = _Recorder()
        await connectProtocol(endpoint, client)
        await client.expect(b"login: ")
        assert client.transport is not None
        client.transport.write(b"login test 1008 alice secret\r\n")
        await client.expect(b"\r\n6\r\n")
        assert b"\r\n1 alice 1 127.0.0.1\r\n" in client.data
        assert b"\r\n5 alice - - 0 0 1500.00 0 0 " in client.data
        assert [p.session.user.name for p in service.factory.connections
                if p.session is not None and p.session.user is not None] == ["alice"]
    finally:
        await service.stopService()
    await client.lost
    assert client.data.endswith(b"Thanks for playing backgammon here. Come back soon!\r\n")


def _start(tmp_path: Path, config: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "fibsd.toml").write_text(config)
    return subprocess.run(
        [sys.executable, "-m", "fibsd", "--config", str(tmp_path / "fibsd.toml"),
         "--data-dir", str(tmp_path / "data"), "--port", "0", "--web-port", "0",
         "--interface", "127.0.0.1"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)


@pytest.mark.parametrize("slip", ["default files missing", "not PEM", "a directory",
                                  "key of another certificate", "key not PEM"])
def test_a_tls_mistake_stops_the_start_with_one_line_and_a_failure_status(
        tmp_path: Path, slip: str) -> None:
    """systemd's Restart=on-failure must see a failure: status 2, one line on stderr,
    no traceback, nothing listening meanwhile (the database is not even created)."""
    sites = tmp_path / "sites"
    sites.mkdir()
    cert, key = self_signed(sites)
    other = tmp_path / "other"
    other.mkdir()
    _, other_key = self_signed(other)
    default = tmp_path / "data" / "tls"
    config, expected = {
        "default files missing": (
            "", f"cannot read the TLS certificate {default / 'fibsd.crt'}: "
                "No such file or directory"),
        "not PEM": (
            'certificate = "sites/fibsd.key"\nkey = "sites/fibsd.key"\n',
            f"the TLS certificate {key} is not a PEM certificate: "),
        "a directory": (
            'certificate = "sites"\n', f"cannot read the TLS certificate {sites}: Is a directory"),
        "key of another certificate": (
            'certificate = "sites/fibsd.crt"\nkey = "other/fibsd.key"\n',
            f"the TLS key {other_key} does not belong to the certificate {cert}"),
        "key not PEM": (
            'certificate = "sites/fibsd.crt"\nkey = "sites/fibsd.crt"\n',
            f"the TLS key {cert} is not a PEM private key without a password: "),
    }[slip]
    result = _start(tmp_path, f"[tls]\nenabled = true\nport = 0\n{config}")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"fibsd: {expected}")
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "data" / "fibsd.sqlite").exists()


def test_a_tls_port_in_use_is_a_failure_too(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _start(tmp_path, f'[tls]\nenabled = true\nport = {port}\n'
                                  f'certificate = "{cert.name}"\nkey = "{key.name}"\n')
    assert result.returncode == 1
    assert f"fibsd cannot start: TLS port {port}: Couldn't listen on 127.0.0.1:{port}" in (
        result.stdout)
    assert "Traceback" not in result.stdout + result.stderr
