"""Sealing and opening cluster messages (fibsd.cluster.envelope), without a broker."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock

from fibsd.cluster.envelope import Dropped, Envelope, Freshness, Message

SECRET = "a-secret-of-sixteen-or-more"
CHANNEL = b"fibsd:node:n0"


def _envelope(name: str = "n1", encrypt: bool = False, secret: str = SECRET) -> Envelope:
    clock = Clock()
    clock.advance(1_700_000_000)
    return Envelope(secret, name, encrypt, clock)


@pytest.mark.parametrize("encrypt", [False, True])
def test_a_sealed_message_opens_as_sent(encrypt: bool) -> None:
    sender = _envelope(encrypt=encrypt)
    payload = sender.seal(CHANNEL, 42, [["d", "s", ["hello bob"], ["bob"]]])
    assert (b"hello bob" in payload) is not encrypt
    message = _envelope("n0").open(CHANNEL, payload)
    assert message == Message("n1", sender.epoch, 1, 1_700_000_000_000, 42,
                              [["d", "s", ["hello bob"], ["bob"]]])


@pytest.mark.parametrize("encrypt", [False, True])
def test_what_the_secret_did_not_sign_is_forged(encrypt: bool) -> None:
    payload = _envelope(encrypt=encrypt).seal(CHANNEL, 0, [["hb"]])
    receiver = _envelope("n0")
    for bad, channel in [(payload, b"fibsd:node:n2"),  # moved to another node's channel
                         (payload[:-1] + b" ", CHANNEL),  # changed
                         (_envelope(secret="another-secret-16ch").seal(CHANNEL, 0, [["hb"]]),
                          CHANNEL),
                         (b'{"n":"n2","b":5}', CHANNEL), (b"", CHANNEL)]:
        with pytest.raises(Dropped) as dropped:
            receiver.open(channel, bad)
        assert dropped.value.reason == "forged"


def _message(epoch: int, sequence: int, time_ms: int, sender: str = "n1") -> Message:
    return Message(sender, epoch, sequence, time_ms, 0, [["hb"]])


def _dropped(freshness: Freshness, message: Message, now_ms: int) -> str | None:
    try:
        freshness.take(message, now_ms)
    except Dropped as dropped:
        return dropped.reason
    return None


def test_each_message_is_taken_once_in_order_within_the_window() -> None:
    fresh = Freshness(window_ms=30_000, capacity=4)
    assert _dropped(fresh, _message(100, 1, 50_000), 50_000) is None
    assert _dropped(fresh, _message(100, 2, 50_010), 50_020) is None
    assert _dropped(fresh, _message(100, 2, 50_010), 50_030) == "replayed"  # again
    assert _dropped(fresh, _message(100, 1, 50_000), 50_030) == "replayed"  # older
    assert _dropped(fresh, _message(100, 3, 10_000), 50_030) == "replayed"  # too old
    assert _dropped(fresh, _message(100, 3, 90_000), 50_030) == "replayed"  # too early
    # A restart (a newer epoch) starts again from 1; the older run is done for good.
    assert _dropped(fresh, _message(200, 1, 50_040), 50_040) is None
    assert _dropped(fresh, _message(100, 4, 50_045), 50_050) == "replayed"
    assert fresh.epoch_of("n1") == 200
    # A run with an older epoch (the sender's clock was set back) once the newer one
    # has been silent for longer than the window: nothing of that one can pass anyway.
    assert _dropped(fresh, _message(150, 1, 90_000), 90_000) is None


def test_the_senders_remembered_are_bounded() -> None:
    fresh = Freshness(window_ms=1_000, capacity=2)
    assert _dropped(fresh, _message(1, 1, 0, "a"), 0) is None
    assert _dropped(fresh, _message(1, 1, 0, "b"), 0) is None
    assert _dropped(fresh, _message(1, 1, 500, "c"), 500) == "too_many_nodes"
    # Once "a" and "b" have been silent for the window, they make room.
    assert _dropped(fresh, _message(1, 1, 1_500, "c"), 1_500) is None
