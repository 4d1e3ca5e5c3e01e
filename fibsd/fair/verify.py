"""``fibsd-verify``: recompute every roll of a match from its revealed seed.

It reads one JSON document (a file, or standard input with ``-``): either a match
record as the server stores it (``"format": "fibsd-live-match"``, e.g. a finished
match exported from the database) or a fair dice document
(``"format": "fibsd-fair-dice"``, what :func:`fair_document` makes of a record).  It
prints the commitment check, then each roll with ``OK``, and stops at the first
mismatch; the exit status is 0 when every roll agrees, 1 on a mismatch and 2 when the
document cannot be read.

The derivation here is written from protocol/fair-dice.md alone, on purpose not with
the server's code (``fibsd.rules.dice``): a mistake in one of them shows up as a
mismatch instead of hiding in both.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

LIVE_FORMAT = "fibsd-live-match"
FAIR_FORMAT = "fibsd-fair-dice"


def commitment(server_seed: bytes) -> str:
    return hashlib.sha256(server_seed).hexdigest()


def seed_used(server_seed: bytes, first_text: str, second_text: str) -> bytes:
    """fair-dice.md 1.1: the server seed keyed over both texts and a zero byte."""
    message = first_text.encode("utf-8") + b"\0" + second_text.encode("utf-8")
    return hmac.new(server_seed, message, hashlib.sha256).digest()


def derive(seed: bytes, number: int) -> tuple[int, int]:
    """fair-dice.md 1.2: roll ``number``, from the first byte below 252 of the blocks."""
    for block in range(2**32):
        digest = hmac.new(seed, number.to_bytes(8, "big") + block.to_bytes(4, "big"),
                          hashlib.sha256).digest()
        for byte in digest:
            if byte < 252:
                return (byte % 36 // 6 + 1, byte % 36 % 6 + 1)
    raise AssertionError("unreachable: 2**32 blocks of bytes all 252 or more")


class NotVerifiable(ValueError):
    """The document is not a match with revealed dice."""


def fair_document(data: Any) -> dict[str, Any]:
    """The fair dice document of a match record (or the document itself, checked)."""
    if not isinstance(data, dict):
        raise NotVerifiable("the document is not a JSON object")
    if data.get("format") == FAIR_FORMAT:
        document = data
    elif data.get("format") == LIVE_FORMAT:
        dice = data.get("dice")
        if not isinstance(dice, dict):
            raise NotVerifiable("this match record has no seeded dice")
        # fair-dice.md 1.2: a match left or saved went on under a fresh seed; the
        # seeds before it are the record's "earlier" ones, in order.
        earlier = dice.get("earlier") or []
        if not isinstance(earlier, list) or not all(isinstance(e, dict) for e in earlier):
            raise NotVerifiable("earlier seeds must be a list of objects")
        segments = [*({"server_seed": str(e.get("server_seed", "")), "texts": e.get("texts"),
                       "first_roll": e.get("first_roll", 0)} for e in earlier),
                    {"server_seed": str(dice.get("server_seed", "")), "texts": dice.get("texts"),
                     "first_roll": dice.get("first_roll", 0)}]
        seed = segments[0]["server_seed"]
        document = {
            "format": FAIR_FORMAT,
            "players": data.get("players"),
            "server_seed": seed,
            "commitment": commitment(bytes.fromhex(seed)) if _is_hex(seed) else "",
            "texts": segments[0]["texts"],
            "unseeded": dice.get("unseeded", 0),
            "rolls": list(recorded_rolls(data.get("match"))),
        }
        if len(segments) > 1:
            document["seeds"] = segments
    else:
        raise NotVerifiable("the format is neither fibsd-live-match nor fibsd-fair-dice")
    texts = document.get("texts")
    if (not _is_hex(str(document.get("server_seed", ""))) or not isinstance(texts, list)
            or len(texts) != 2 or not all(isinstance(t, str) for t in texts)):
        raise NotVerifiable("server_seed (hex) and two texts are needed")
    for segment in document.get("seeds") or []:
        texts = segment.get("texts") if isinstance(segment, dict) else None
        if (not isinstance(segment, dict) or not _is_hex(str(segment.get("server_seed", "")))
                or not isinstance(texts, list) or len(texts) != 2
                or not all(isinstance(t, str) for t in texts)
                or type(segment.get("first_roll")) is not int):
            raise NotVerifiable("each of the seeds needs server_seed, two texts and first_roll")
    return document


def _seeds(document: dict[str, Any]) -> list[tuple[int, bytes, str]]:
    """(first roll, seed used, server seed hex) of each seed, in order."""
    segments = document.get("seeds") or [{"server_seed": document["server_seed"],
                                          "texts": document["texts"], "first_roll": 0}]
    return [(int(s["first_roll"]),
             seed_used(bytes.fromhex(s["server_seed"]), s["texts"][0], s["texts"][1]),
             s["server_seed"]) for s in segments]


def recorded_rolls(match: Any) -> Iterator[list[int]]:
    """Every roll of a rules record in the order made: opening rolls (player 0's die
    first) and turn rolls, game after game."""
    if not isinstance(match, dict) or not isinstance(match.get("games"), list):
        raise NotVerifiable("the match record has no games")
    for game in match["games"]:
        for entry in game:
            if entry and entry[0] == "opening":
                yield [entry[1], entry[2]]
            elif entry and entry[0] == "roll":
                yield [entry[2], entry[3]]


def verify(document: dict[str, Any], out: TextIO) -> bool:
    """Print the checks; True when every derived roll equals the recorded one."""
    server_seed = bytes.fromhex(document["server_seed"])
    stated = document.get("commitment") or ""
    derived_commitment = commitment(server_seed)
    if stated and stated != derived_commitment:
        out.write(f"commitment {stated} MISMATCH: SHA-256 of the seed is"
                  f" {derived_commitment}\n")
        return False
    out.write(f"commitment {derived_commitment} OK\n")
    seeds = _seeds(document)
    skip = int(document.get("unseeded") or 0)
    rolls: Sequence[Any] = document.get("rolls") or []
    current = 0
    for number, recorded in enumerate(rolls):
        shown = "".join(str(d) for d in recorded)
        if number < skip:
            out.write(f"roll {number} {shown} made before the match had a seed\n")
            continue
        while current + 1 < len(seeds) and seeds[current + 1][0] <= number:
            current += 1
            hexed = seeds[current][2]
            out.write(f"from roll {number}: server seed {hexed}, commitment"
                      f" {commitment(bytes.fromhex(hexed))}\n")
        derived = derive(seeds[current][1], number)
        if tuple(recorded) != derived:
            out.write(f"roll {number} {shown} MISMATCH: the seed gives"
                      f" {derived[0]}{derived[1]}\n")
            return False
        out.write(f"roll {number} {shown} OK\n")
    out.write(f"all {len(rolls)} rolls agree\n")
    return True


def _is_hex(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="fibsd-verify",
        description="Check every roll of a finished fibsd match against its revealed seed.")
    parser.add_argument("file", help="a match record or fair dice document (JSON); - for stdin")
    args = parser.parse_args(argv)
    try:
        if args.file == "-":
            data = json.load(sys.stdin)
        else:
            with open(args.file, encoding="utf-8") as file:
                data = json.load(file)
        document = fair_document(data)
    except (OSError, ValueError, IndexError, TypeError, KeyError) as error:
        print(f"fibsd-verify: {error}", file=sys.stderr)
        return 2
    return 0 if verify(document, sys.stdout) else 1


if __name__ == "__main__":
    raise SystemExit(main())
