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
    first seed fits ``commitment`` when given); returns how many rolls were checked.
    A match that was left or saved went on under a fresh seed (fair-dice.md 1.2): the
    record's ``earlier`` seeds each made the rolls from their ``first_roll`` on."""
    record = json.loads(text)
    dice = record["dice"]
    seeds = [*dice.get("earlier", []),
             {"server_seed": dice["server_seed"], "texts": dice["texts"],
              "first_roll": dice.get("first_roll", 0)}]
    if commitment is not None:
        first = bytes.fromhex(seeds[0]["server_seed"])
        assert hashlib.sha256(first).hexdigest() == commitment
    recorded = record_rolls(record)
    skip = dice.get("unseeded", 0)
    for number, seed in enumerate(seeds):
        start = max(seed["first_roll"], skip)
        end = seeds[number + 1]["first_roll"] if number + 1 < len(seeds) else len(recorded)
        derived = derive(bytes.fromhex(seed["server_seed"]), seed["texts"][0],
                         seed["texts"][1], end)
        assert recorded[start:end] == derived[start:end], \
            f"a roll from {start} to {end} differs from the one its seed gives"
    assert dice["next_roll"] == len(recorded)
    return len(recorded)
