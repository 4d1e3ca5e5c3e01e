"""The TLS listener's certificate and key: read before anything listens, and again on
SIGHUP.

A mistake in them (a file missing or unreadable, not PEM, a key that is not the
certificate's) is an operator's slip, not a bug: ``TlsFiles`` raises ``TlsError`` with
one line naming the file and the reason, which the start turns into a non-zero exit
(so a service manager sees the failure) and a reload into a logged refusal that keeps
the certificate in use.

``TlsFiles`` is the listener's context factory: every new connection asks it for the
context (``getContext``), so connections accepted after a reload use the new
certificate while those open keep theirs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from twisted.internet.interfaces import IOpenSSLContextFactory
from zope.interface import implementer

from fibsd.config import Tls


class TlsError(Exception):
    """The TLS certificate or key cannot be used; the message says which and why."""


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise TlsError(f"cannot read the TLS {what} {path}: {error.strerror}") from error


def load(tls: Tls) -> Any:
    """A ``CertificateOptions`` for ``tls``'s files, checked; raises ``TlsError``."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from OpenSSL.SSL import Error as OpenSSLError
    from twisted.internet import ssl

    certificate_pem, key_pem = _read(tls.certificate, "certificate"), _read(tls.key, "key")
    try:
        # The certificate file may hold the chain after it (a "fullchain.pem").
        leaf, *chain = x509.load_pem_x509_certificates(certificate_pem)
    except ValueError as error:
        raise TlsError(f"the TLS certificate {tls.certificate} is not a PEM certificate: "
                       f"{error}") from error
    try:
        key = load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError) as error:  # TypeError: it needs a password
        raise TlsError(f"the TLS key {tls.key} is not a PEM private key without a "
                       f"password: {error}") from error
    options = ssl.CertificateOptions(privateKey=key, certificate=leaf, extraCertChain=chain)
    try:
        options.getContext()  # checks that the key is the certificate's
    except OpenSSLError as error:
        raise TlsError(f"the TLS key {tls.key} does not belong to the certificate "
                       f"{tls.certificate}") from error
    return options


@implementer(IOpenSSLContextFactory)
class TlsFiles:
    """The context factory of the TLS listener, reloadable (``reload``)."""

    def __init__(self, tls: Tls) -> None:
        self.tls = tls
        self.options = load(tls)

    def getContext(self) -> Any:  # noqa: N802 (Twisted's name)
        return self.options.getContext()

    def reload(self) -> None:
        """Read the files again; on ``TlsError`` the certificate in use stays."""
        self.options = load(self.tls)
