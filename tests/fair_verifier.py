"""A verifier written from protocol/fair-dice.md alone: no fibsd code, only hashlib.

The tests use it to check every match they play with fair dice, so the server, the
document and ``fibsd-verify`` cannot drift apart unnoticed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any


def derive(server_seed: bytes, first_text: str, second_text: str, count: int) -> list[str]:
    """Rolls 0..count-1 as 'd1d2' words, per fair-dice.md 1.1 and 1.2."""
    seed = hmac.new(server_seed, first_text.encode() + b"\0" + second_text.encode(),
                    hashlib.sha256).digest()
    rolls = []
    for n in range(count):
        k = 0
        chosen = None
        while chosen is None:
            block = hmac.new(seed, n.to_bytes(8, "big") + k.to_bytes(4, "big"),
                             hashlib.sha256).digest()
            chosen = next((b for b in block if b < 252), None)
            k += 1
        v = chosen % 36
        rolls.append(f"{v // 6 + 1}{v % 6 + 1}")
    return rolls


def record_rolls(record: dict[str, Any]) -> list[str]:
    """The rolls a match record holds, in the order made (fair-dice.md 1.2)."""
    rolls = []
    for game in record["match"]["games"]:
        for entry in game:
            if entry[0] == "opening":
                rolls.append(f"{entry[1]}{entry[2]}")
            elif entry[0] == "roll":
                rolls.append(f"{entry[2]}{entry[3]}")
    return rolls


def check_record(text: str, commitment: str | None = None) -> int:
    """Assert that every roll of a stored match record is the derived one (and that the
    seed fits ``commitment`` when given); returns how many rolls were checked."""
    record = json.loads(text)
    dice = record["dice"]
    server_seed = bytes.fromhex(dice["server_seed"])
    if commitment is not None:
        assert hashlib.sha256(server_seed).hexdigest() == commitment
    recorded = record_rolls(record)
    skip = dice.get("unseeded", 0)
    derived = derive(server_seed, dice["texts"][0], dice["texts"][1], len(recorded))
    assert recorded[skip:] == derived[skip:], "a roll differs from the one the seed gives"
    assert dice["next_roll"] == len(recorded)
    return len(recorded)
