"""The node's two connections to Redis: one publishes, one listens.

A small RESP client of its own rather than txredisapi: a node publishes once per
destination per reactor turn and never needs an answer, while txredisapi makes a
Deferred and waits for a reply per command (measurably slower per game action), and
its subscriber does not say when a subscription is in place, which is when a node may
greet the others.  Both connections come back by themselves after a broker restart
(``ReconnectingClientFactory``); what was published meanwhile is lost, and the node
(fibsd.cluster.node) resynchronises with the others when it hears them again.

Redis delivers the messages one connection publishes to each subscriber in the order
they were published: that is the ordered stream between two nodes that the cluster
relies on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from twisted.internet.protocol import Protocol, ReconnectingClientFactory
from twisted.logger import Logger

_log = Logger()


@dataclass(frozen=True)
class Address:
    """Where the broker listens: ``redis://[:password@]host[:port][/db]`` or
    ``unix:///path/to/redis.sock`` (pub/sub ignores the database number)."""

    host: str = "127.0.0.1"
    port: int = 6379
    path: str = ""  # a Unix socket instead of host and port
    password: str = ""

    @classmethod
    def from_url(cls, url: str) -> Address:
        parts = urlsplit(url)
        password = unquote(parts.password or "")
        if parts.scheme == "unix":
            return cls(path=parts.path, password=password)
        return cls(host=parts.hostname or "127.0.0.1", port=parts.port or 6379,
                   password=password)


def command(*words: bytes) -> bytes:
    """One Redis command in RESP (an array of bulk strings)."""
    return b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words)


class Incomplete(Exception):
    """The buffer ends inside a reply: wait for more bytes."""


def parse(buffer: bytes, pos: int) -> tuple[object, int]:
    """One RESP value at ``pos``: (value, position after it)."""
    end = buffer.find(b"\r\n", pos)
    if end < 0:
        raise Incomplete
    kind = buffer[pos:pos + 1]
    if kind == b"*":
        count = int(buffer[pos + 1:end])
        pos = end + 2
        items = []
        for _ in range(max(count, 0)):
            item, pos = parse(buffer, pos)
            items.append(item)
        return items, pos
    if kind == b"$":
        size = int(buffer[pos + 1:end])
        if size < 0:
            return None, end + 2
        start = end + 2
        if len(buffer) < start + size + 2:
            raise Incomplete
        return buffer[start:start + size], start + size + 2
    if kind == b":":
        return int(buffer[pos + 1:end]), end + 2
    return buffer[pos:end], end + 2  # +OK or -ERR ...


class _Connection(Protocol):
    factory: _Factory

    def __init__(self) -> None:
        self._buffer = b""

    def connectionMade(self) -> None:
        self.factory.resetDelay()
        if self.factory.address.password:
            self.transport.write(command(b"AUTH", self.factory.address.password.encode()))
        self.factory.made(self)

    def connectionLost(self, reason: object = None) -> None:
        self.factory.lost(self)

    def dataReceived(self, data: bytes) -> None:
        self._buffer += data
        pos = 0
        try:
            while pos < len(self._buffer):
                value, pos = parse(self._buffer, pos)
                self.reply(value)
        except Incomplete:
            pass
        self._buffer = self._buffer[pos:]

    def reply(self, value: object) -> None:
        if isinstance(value, bytes) and value.startswith(b"-"):
            _log.error("cluster broker error: {error}", event="error",
                       error=value[1:200].decode("utf-8", "replace"))


class _Factory(ReconnectingClientFactory):
    protocol = _Connection
    maxDelay = 2.0
    initialDelay = 0.1
    noisy = False  # each reconnection is not worth a log line; a lost broker is

    def __init__(self, address: Address, made: Callable[[_Connection], None],
                 lost: Callable[[_Connection], None]) -> None:
        self.address = address
        self.made = made
        self.lost = lost


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
                self.factory.received(value[1], value[2])
            elif kind == b"subscribe":
                self._waiting -= 1
                if self._waiting == 0:
                    self.factory.subscribed()
            return
        super().reply(value)


class _SubscriberFactory(_Factory):
    protocol = Subscriber

    def __init__(self, address: Address, channels: Sequence[bytes],
                 received: Callable[[bytes, bytes], None], subscribed: Callable[[], None],
                 made: Callable[[_Connection], None], lost: Callable[[_Connection], None]) -> None:
        super().__init__(address, made, lost)
        self.channels = list(channels)
        self.received = received
        self.subscribed = subscribed


class Broker:
    """Publish to channels, receive ``channels``' messages; ``ready`` is called each
    time both connections are (again) in place, subscribed."""

    def __init__(self, reactor: object, url: str, channels: Sequence[bytes],
                 received: Callable[[bytes, bytes], None], ready: Callable[[], None]) -> None:
        self.reactor = reactor
        self._ready = ready
        self._listening = False  # the subscription is in place
        self._announced = False  # ``ready`` was called for the connections up now
        self.address = Address.from_url(url)
        self._publisher: _Connection | None = None
        self._subscriber: _Connection | None = None
        self._lost_said = False
        self._pub = _Factory(self.address, self._pub_made, self._pub_lost)
        self._sub = _SubscriberFactory(self.address, channels, received, self._subscribed,
                                       self._sub_made, self._sub_lost)
        self._stopping = False

    def start(self) -> None:
        for factory in (self._pub, self._sub):
            if self.address.path:
                self.reactor.connectUNIX(self.address.path, factory)  # type: ignore[attr-defined]
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
            self._announced = False
        self._say_lost()

    def _sub_lost(self, connection: _Connection) -> None:
        if self._subscriber is connection:
            self._subscriber = None
            self._listening = False
            self._announced = False
        self._say_lost()

    def _say_lost(self) -> None:
        if not self._stopping and not self._lost_said:
            self._lost_said = True
            _log.warn("cluster broker lost at {broker}; reconnecting", event="cluster",
                      broker=self.where)

    @property
    def where(self) -> str:
        return self.address.path or f"{self.address.host}:{self.address.port}"
