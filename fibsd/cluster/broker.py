"""The node's two connections to Redis: one publishes, one listens.

A small RESP client of its own rather than txredisapi: a node publishes once per
destination per reactor turn and never needs an answer, while txredisapi makes a
Deferred and waits for a reply per command (measurably slower per game action), and
its subscriber does not say when a subscription is in place, which is when a node may
greet the others.  Both connections come back by themselves after a broker restart
(``ReconnectingClientFactory``); what was published meanwhile is lost, and the node
(fibsd.cluster.node) resynchronises with the others when it hears them again.

The broker is reached as ``redis://`` (TCP), ``rediss://`` (TLS, checked against
``cluster.tls_ca`` or the system's CAs, with a client certificate if configured) or
``unix://``; a password in the URL is sent with AUTH (``user:password`` for a Redis ACL
user).  A value longer than ``cluster.max_message_bytes`` is skipped as it arrives,
never held: the listener hands on ``None`` for such a message.

Redis delivers the messages one connection publishes to each subscriber in the order
they were published: that is the ordered stream between two nodes that the cluster
relies on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from twisted.internet.protocol import Protocol, ReconnectingClientFactory
from twisted.logger import Logger

_log = Logger()


@dataclass(frozen=True)
class Address:
    """Where the broker listens: ``redis://[[user]:password@]host[:port][/db]``,
    ``rediss://...`` (TLS) or ``unix:///path/to/redis.sock`` (pub/sub ignores the
    database number)."""

    host: str = "127.0.0.1"
    port: int = 6379
    path: str = ""  # a Unix socket instead of host and port
    user: str = ""  # a Redis ACL user (Redis 6 and later); empty: the default user
    password: str = ""
    tls: bool = False

    @classmethod
    def from_url(cls, url: str) -> Address:
        parts = urlsplit(url)
        password = unquote(parts.password or "")
        user = unquote(parts.username or "")
        if parts.scheme == "unix":
            return cls(path=parts.path, user=user, password=password)
        return cls(host=parts.hostname or "127.0.0.1", port=parts.port or 6379,
                   user=user, password=password, tls=parts.scheme == "rediss")

    def auth(self) -> bytes | None:
        """The AUTH command for this address (None: none needed)."""
        if not self.password:
            return None
        if self.user:
            return command(b"AUTH", self.user.encode(), self.password.encode())
        return command(b"AUTH", self.password.encode())


def tls_options(address: Address, settings: Any) -> Any:
    """The client TLS options for a ``rediss://`` broker (None for another); raises
    ValueError with one line when a configured file cannot be used."""
    if not address.tls:
        return None
    from twisted.internet import ssl

    try:
        trust = ssl.platformTrust()
        if settings.tls_ca:
            trust = ssl.Certificate.loadPEM(Path(settings.tls_ca).read_bytes())
        client = None
        if settings.tls_certificate or settings.tls_key:
            client = ssl.PrivateCertificate.loadPEM(
                Path(settings.tls_certificate).read_bytes()
                + b"\n" + Path(settings.tls_key).read_bytes())
        return ssl.optionsForClientTLS(address.host, trustRoot=trust,
                                       clientCertificate=client)
    except Exception as error:  # OSError, or OpenSSL's own errors for a bad file
        raise ValueError(f"cluster broker TLS (tls_ca, tls_certificate, tls_key): "
                         f"{getattr(error, 'strerror', None) or error}") from error


def command(*words: bytes) -> bytes:
    """One Redis command in RESP (an array of bulk strings)."""
    return b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words)


class Incomplete(Exception):
    """The buffer ends inside a reply: wait for more bytes."""


class TooLarge:
    """A value over the size limit, left unread (its size in bytes)."""

    def __init__(self, size: int) -> None:
        self.size = size


MAX_ITEMS = 64  # arrays Redis sends fibsd are short (subscribe confirmations, messages)


def parse(buffer: bytes | bytearray, pos: int, limit: int = 1 << 62) -> tuple[object, int]:
    """One RESP value at ``pos``: (value, position after it).  A bulk string over
    ``limit`` bytes is ``TooLarge``, with a position past its end even if that is
    beyond the buffer (the rest is to be skipped); it may only end an array.  Raises
    ValueError for what is not RESP."""
    end = buffer.find(b"\r\n", pos)
    if end < 0:
        raise Incomplete
    kind = buffer[pos:pos + 1]
    if kind == b"*":
        count = int(buffer[pos + 1:end])
        if count > MAX_ITEMS:
            raise ValueError(f"an array of {count} items")
        pos = end + 2
        items = []
        for index in range(max(count, 0)):
            item, pos = parse(buffer, pos, limit)
            if isinstance(item, TooLarge) and index < count - 1:
                raise ValueError("an oversized value inside an array")
            items.append(item)
        return items, pos
    if kind == b"$":
        size = int(buffer[pos + 1:end])
        if size < 0:
            return None, end + 2
        start = end + 2
        if size > limit:
            return TooLarge(size), start + size + 2
        if len(buffer) < start + size + 2:
            raise Incomplete
        return bytes(buffer[start:start + size]), start + size + 2
    if kind == b":":
        return int(buffer[pos + 1:end]), end + 2
    return bytes(buffer[pos:end]), end + 2  # +OK or -ERR ...


class _Connection(Protocol):
    factory: _Factory

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._skip = 0  # bytes of an oversized value still to come (and be dropped)
        self._skipped: object = None  # the reply that held it, handed on once skipped

    def connectionMade(self) -> None:
        self.factory.resetDelay()
        auth = self.factory.address.auth()
        if auth is not None:
            self.transport.write(auth)
        self.factory.made(self)

    def connectionLost(self, reason: object = None) -> None:
        self.factory.lost(self)

    def dataReceived(self, data: bytes) -> None:
        if self._skip:
            skipped = min(self._skip, len(data))
            self._skip -= skipped
            data = data[skipped:]
            if self._skip:
                return
            self.reply(self._skipped)
            self._skipped = None
        self._buffer += data
        pos = 0
        try:
            while pos < len(self._buffer):
                value, pos = parse(self._buffer, pos, self.factory.limit)
                if pos > len(self._buffer):  # an oversized value: skip the rest of it
                    self._skip, self._skipped = pos - len(self._buffer), value
                    pos = len(self._buffer)
                    break
                self.reply(value)
        except Incomplete:
            pass
        except ValueError as error:  # not Redis speaking: start again on a new connection
            _log.error("cluster broker sent what is not RESP ({error}); reconnecting",
                       event="error", error=str(error)[:100])
            pos = len(self._buffer)
            self.transport.loseConnection()
        del self._buffer[:pos]

    def reply(self, value: object) -> None:
        if isinstance(value, bytes) and value.startswith(b"-"):
            _log.error("cluster broker error: {error}", event="error",
                       error=value[1:200].decode("utf-8", "replace"))


class _Factory(ReconnectingClientFactory):
    protocol = _Connection
    # Soon back after a broker restart: the others judge this node by its heartbeats
    # once their own link is back, and wait ``dead_after_ms`` (3 s by default) for it.
    maxDelay = 0.25
    initialDelay = 0.1
    noisy = False  # each reconnection is not worth a log line; a lost broker is

    def __init__(self, address: Address, made: Callable[[_Connection], None],
                 lost: Callable[[_Connection], None], limit: int = 1 << 62) -> None:
        self.address = address
        self.made = made
        self.lost = lost
        self.limit = limit


class Subscriber(_Connection):
    """Subscribes to the factory's channels; hands each message on."""

    factory: _SubscriberFactory

    def connectionMade(self) -> None:
        super().connectionMade()
        self._waiting = len(self.factory.channels)
        self.transport.write(command(b"SUBSCRIBE", *self.factory.channels))

    def reply(self, value: object) -> None:
        if isinstance(value, list) and len(value) >= 3:
            kind = value[0]
            if kind == b"message":
                payload = value[2]
                self.factory.received(value[1], None if isinstance(payload, TooLarge)
                                      else payload)
            elif kind == b"subscribe":
                self._waiting -= 1
                if self._waiting == 0:
                    self.factory.subscribed()
            return
        super().reply(value)


class _SubscriberFactory(_Factory):
    protocol = Subscriber

    def __init__(self, address: Address, channels: Sequence[bytes],
                 received: Callable[[bytes, bytes | None], None],
                 subscribed: Callable[[], None], made: Callable[[_Connection], None],
                 lost: Callable[[_Connection], None], limit: int) -> None:
        super().__init__(address, made, lost, limit)
        self.channels = list(channels)
        self.received = received
        self.subscribed = subscribed


class Broker:
    """Publish to channels, receive ``channels``' messages; ``ready`` is called each
    time both connections are (again) in place, subscribed, and ``gone`` when they
    were and one is lost.  ``settings``: ``[cluster]`` (the URL, TLS files, the
    message size limit).  Raises ValueError when the TLS files cannot be used."""

    def __init__(self, reactor: object, settings: Any, channels: Sequence[bytes],
                 received: Callable[[bytes, bytes | None], None], ready: Callable[[], None],
                 gone: Callable[[], None] = lambda: None) -> None:
        self.reactor = reactor
        self._ready = ready
        self._gone = gone
        self._listening = False  # the subscription is in place
        self._announced = False  # ``ready`` was called for the connections up now
        self.address = Address.from_url(settings.url)
        self._tls = tls_options(self.address, settings)
        self._publisher: _Connection | None = None
        self._subscriber: _Connection | None = None
        self._lost_said = False
        self._pub = _Factory(self.address, self._pub_made, self._pub_lost)
        self._sub = _SubscriberFactory(self.address, channels, received, self._subscribed,
                                       self._sub_made, self._sub_lost,
                                       settings.max_message_bytes)
        self._stopping = False

    def start(self) -> None:
        for factory in (self._pub, self._sub):
            if self.address.path:
                self.reactor.connectUNIX(self.address.path, factory)  # type: ignore[attr-defined]
            elif self._tls is not None:
                from twisted.protocols.tls import TLSMemoryBIOFactory

                self.reactor.connectTCP(self.address.host, self.address.port,  # type: ignore[attr-defined]
                                        TLSMemoryBIOFactory(self._tls, True, factory))
            else:
                self.reactor.connectTCP(self.address.host, self.address.port,  # type: ignore[attr-defined]
                                        factory)

    @property
    def connected(self) -> bool:
        return self._publisher is not None and self._subscriber is not None

    def publish(self, channel: bytes, payload: bytes) -> bool:
        """Hand ``payload`` to the broker; False (and dropped) while it is unreachable."""
        if self._publisher is None:
            return False
        self._publisher.transport.write(command(b"PUBLISH", channel, payload))
        return True

    def stop(self) -> None:
        """Close both connections for good (what was published is already written)."""
        self._stopping = True
        for factory, connection in ((self._pub, self._publisher), (self._sub, self._subscriber)):
            factory.stopTrying()
            if connection is not None:
                connection.transport.loseConnection()

    def _pub_made(self, connection: _Connection) -> None:
        self._publisher = connection
        self._said_back()
        self._maybe_ready()

    def _subscribed(self) -> None:
        self._listening = True
        self._maybe_ready()

    def _maybe_ready(self) -> None:
        if self._publisher is not None and self._listening and not self._announced:
            self._announced = True
            self._ready()

    def _sub_made(self, connection: _Connection) -> None:
        self._subscriber = connection
        self._said_back()

    def _said_back(self) -> None:
        if self.connected and self._lost_said:
            self._lost_said = False
            _log.info("cluster broker reachable again at {broker}", event="cluster",
                      broker=self.where)

    def _pub_lost(self, connection: _Connection) -> None:
        if self._publisher is connection:
            self._publisher = None
            self._unannounce()
        self._say_lost()

    def _sub_lost(self, connection: _Connection) -> None:
        if self._subscriber is connection:
            self._subscriber = None
            self._listening = False
            self._unannounce()
        self._say_lost()

    def _unannounce(self) -> None:
        if self._announced:
            self._announced = False
            if not self._stopping:
                self._gone()

    def _say_lost(self) -> None:
        if not self._stopping and not self._lost_said:
            self._lost_said = True
            _log.warn("cluster broker lost at {broker}; reconnecting", event="cluster",
                      broker=self.where)

    @property
    def where(self) -> str:
        return self.address.path or f"{self.address.host}:{self.address.port}"
