"""Signed (and, if asked, encrypted) messages between nodes, and replay protection.

Anyone who can reach the broker can publish on its channels, so a node believes only
what is signed with the cluster's shared secret (``[cluster] secret``).  On the wire a
message is ``F1`` + HMAC-SHA256(key, channel NUL body) + body, where body is compact
JSON::

    {"n": sender, "e": epoch, "s": sequence, "t": time_ms, "r": recipient_epoch,
     "b": [item, ...]}              # or, encrypted: "x": base64(nonce + AES-GCM(items))

``e`` (epoch) names one run of the sender: the time it started, in nanoseconds; ``s``
counts its messages, on every channel, from 1.  The channel is signed too, so a
message cannot be moved to another node's channel.  ``r`` is, on a node's own channel,
the epoch of the receiver it was meant for (0 on ``fibsd:all``): what was sent to a
node's earlier run is never taken by the next one.

``Freshness`` is the receiver's memory: per sender, the newest epoch and sequence
taken.  A message is taken once, in order, within ``replay_window_ms`` of the
receiver's clock, and never from an older run of a sender whose newer run spoke within
the window.  Keys are derived from the secret (one for signatures, one for
encryption); the secret itself is never sent or logged.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import os
import struct
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from fibsd.config import NODE_NAME_MAX, node_name

MAGIC = b"F1"
MAC_SIZE = 32


class Dropped(Exception):
    """A message not taken; ``reason`` (the counters and log events of docs/cluster.md)
    is forged, malformed, replayed, earlier_run, unknown_node, too_many_nodes or
    too_large."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _key(secret: bytes, use: bytes) -> bytes:
    return hmac.new(secret, b"fibsd cluster " + use, hashlib.sha256).digest()


@dataclass(frozen=True)
class Message:
    sender: str
    epoch: int
    sequence: int
    time_ms: int
    recipient: int
    items: list[list[Any]]


class Envelope:
    """Seals this node's messages and opens (verifies) everyone's."""

    def __init__(self, secret: str, name: str, encrypt: bool, clock: Any) -> None:
        raw = secret.encode("utf-8")
        self._mac_base = hmac.new(_key(raw, b"signatures"), digestmod=hashlib.sha256)
        self._cipher = AESGCM(_key(raw, b"encryption"))
        self.encrypt = encrypt
        self.name = name
        self.clock = clock
        self.epoch = time.time_ns()
        self._sequence = 0
        self._nonce_prefix = os.urandom(4)  # with the sequence: a nonce never reused

    def seal(self, channel: bytes, recipient: int, items: list[list[Any]]) -> bytes:
        self._sequence += 1
        body: dict[str, Any] = {"n": self.name, "e": self.epoch, "s": self._sequence,
                                "t": int(self.clock.seconds() * 1000), "r": recipient}
        if self.encrypt:
            nonce = self._nonce_prefix + struct.pack(">Q", self._sequence)
            plain = json.dumps(items, separators=(",", ":")).encode()
            body["x"] = base64.b64encode(nonce + self._cipher.encrypt(nonce, plain, channel)
                                         ).decode("ascii")
        else:
            body["b"] = items
        data = json.dumps(body, separators=(",", ":")).encode()
        return MAGIC + self._mac(channel, data) + data

    def _mac(self, channel: bytes, data: bytes) -> bytes:
        mac = self._mac_base.copy()  # the keyed state, made once
        mac.update(channel + b"\0" + data)
        return mac.digest()

    def open(self, channel: bytes, payload: bytes) -> Message:
        """The verified message; raises ``Dropped`` (forged or malformed)."""
        mac = payload[len(MAGIC):len(MAGIC) + MAC_SIZE]
        data = payload[len(MAGIC) + MAC_SIZE:]
        if not payload.startswith(MAGIC) or len(mac) != MAC_SIZE \
                or not hmac.compare_digest(mac, self._mac(channel, data)):
            raise Dropped("forged")
        # Signed by a holder of the secret: what follows is checked all the same.
        try:
            body = json.loads(data)
            sender, epoch, sequence, time_ms, recipient = (
                body["n"], body["e"], body["s"], body["t"], body["r"])
            if "x" in body:
                sealed = base64.b64decode(body["x"], validate=True)
                items = json.loads(self._cipher.decrypt(sealed[:12], sealed[12:], channel))
            else:
                items = body["b"]
        except Exception as error:  # JSON, keys, base64, a wrong tag: all malformed
            raise Dropped("malformed") from error
        if not (isinstance(sender, str) and _good_name(sender)
                and all(type(v) is int for v in (epoch, sequence, time_ms, recipient))
                and isinstance(items, list) and items
                and all(isinstance(i, list) and i and isinstance(i[0], str) for i in items)):
            raise Dropped("malformed")
        return Message(sender, epoch, sequence, time_ms, recipient, items)


@functools.lru_cache(maxsize=256)
def _good_name(name: str) -> bool:
    """Whether ``name`` can be a node's (the same few names come again and again)."""
    return 0 < len(name) <= NODE_NAME_MAX and node_name(name) is None


class Freshness:
    """What a node took from each sender (epoch, sequence, its time): the rest is a
    replay.  At most ``capacity`` senders are remembered; one silent for longer than
    the window may be forgotten (nothing older than the window passes anyway)."""

    def __init__(self, window_ms: int, capacity: int) -> None:
        self.window_ms = window_ms
        self.capacity = capacity
        self._seen: OrderedDict[str, tuple[int, int, int]] = OrderedDict()

    def epoch_of(self, sender: str) -> int | None:
        seen = self._seen.get(sender)
        return seen[0] if seen is not None else None

    def take(self, message: Message, now_ms: int) -> None:
        """Remember ``message`` as taken; raises ``Dropped`` for a replay (or for a
        new sender beyond ``capacity``)."""
        if abs(now_ms - message.time_ms) > self.window_ms:
            raise Dropped("replayed")
        seen = self._seen.get(message.sender)
        if seen is not None:
            epoch, sequence, last_ms = seen
            if message.epoch == epoch and message.sequence <= sequence:
                raise Dropped("replayed")
            if message.epoch < epoch and now_ms - last_ms <= self.window_ms:
                raise Dropped("replayed")  # an earlier run, while the newer one speaks
        elif len(self._seen) >= self.capacity:
            for sender, (_, _, last_ms) in list(self._seen.items()):
                if now_ms - last_ms > self.window_ms:
                    del self._seen[sender]
            if len(self._seen) >= self.capacity:
                raise Dropped("too_many_nodes")
        self._seen[message.sender] = (message.epoch, message.sequence, message.time_ms)
        self._seen.move_to_end(message.sender)
