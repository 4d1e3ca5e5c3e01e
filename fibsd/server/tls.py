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
        context = options.getContext()  # checks that the key is the certificate's
    except OpenSSLError as error:
        raise TlsError(f"the TLS key {tls.key} does not belong to the certificate "
                       f"{tls.certificate}") from error
    context.set_alpn_select_callback(_select_protocol)
    return options


def _select_protocol(connection: Any, offered: list[bytes]) -> Any:
    """ALPN: the first protocol the listener's factory speaks (the web face's
    ``acceptableProtocols``) that the client offers, else none.  Twisted's own callback
    answers a client whose offer it cannot meet with a fatal alert, and the game's port
    speaks no ALPN protocol at all: a client that offers any (``openssl s_client
    -alpn``, some TLS libraries by default) could not connect."""
    from OpenSSL.SSL import NO_OVERLAPPING_PROTOCOLS
    from twisted.internet.interfaces import IProtocolNegotiationFactory

    factory = connection.get_app_data().factory.wrappedFactory
    negotiating = IProtocolNegotiationFactory(factory, None)
    for protocol in negotiating.acceptableProtocols() if negotiating is not None else ():
        if protocol in offered:
            return protocol
    return NO_OVERLAPPING_PROTOCOLS


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
