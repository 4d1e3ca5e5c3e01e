"""A match's record as plain JSON-ready data, and back.

The record keeps what the players did and what the dice said, nothing derived: the
settings, then per game the opening rolls (ties included) and every roll, play, cube
action and resignation in order.  Replaying it (``Match.from_record``) with the recorded
dice re-derives everything else, which is also how a saved match is restored.

Entries, one JSON array each (``p`` is the player index 0 or 1):

=========================  ======================================================
``["opening", d0, d1]``    an opening roll: player 0's die, player 1's
``["roll", p, d1, d2]``    a roll, dice in the order rolled
``["move", p, pairs]``     a play, ``pairs`` = [[src, dst], ...] one per die, in the
                           mover's numbering (25 bar, 0 off); a fourth element
                           ``"auto"`` marks a play the server made
``["double", p]``          ``["redouble", p]``, ``["accept", p]``, ``["reject", p]``
``["resign", p, k]``       k = 1 normal, 2 gammon, 3 backgammon
=========================  ======================================================

``score`` in the header is derived too; it is kept so a saved match can be listed
without replaying it, and replaying checks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from fibsd.rules.errors import InvalidRecord
from fibsd.rules.events import (
    DoubleAccepted,
    Doubled,
    DoubleRejected,
    Event,
    Moved,
    OpeningRoll,
    Redoubled,
    ResignAccepted,
    ResignOffered,
    ResignRejected,
    Rolled,
    WinKind,
)

FORMAT = "fibsd-match"
VERSION = 1

_PLAYER_ONLY = ("double", "redouble", "accept", "reject")


@dataclass(frozen=True, slots=True)
class Entry:
    """One decoded record entry; fields an action does not use keep their defaults."""

    action: str
    player: int = 0
    dice: tuple[int, int] = (0, 0)
    pairs: tuple[tuple[int, int], ...] = ()
    automatic: bool = False
    kind: WinKind = WinKind.SINGLE


@dataclass(frozen=True, slots=True)
class Header:
    length: int
    crawford: bool
    redouble_limit: int | None
    autodouble: bool
    score: tuple[int, int]


def encode_game(history: Iterable[Event]) -> list[list[Any]]:
    """The entries for one game's events (derived events leave no entry)."""
    entries: list[list[Any]] = []
    for event in history:
        entry = _encode(event)
        if entry is not None:
            entries.append(entry)
    return entries


def _encode(event: Event) -> list[Any] | None:
    if isinstance(event, OpeningRoll):
        return ["opening", *event.dice]
    if isinstance(event, Rolled):
        return ["roll", event.player, *event.dice]
    if isinstance(event, Moved):
        entry: list[Any] = ["move", event.player, [[m.src, m.dst] for m in event.play.moves]]
        return entry + ["auto"] if event.automatic else entry
    if isinstance(event, Doubled):
        return ["double", event.player]
    if isinstance(event, Redoubled):
        return ["redouble", event.player]
    if isinstance(event, (DoubleAccepted, ResignAccepted)):
        return ["accept", event.player]
    if isinstance(event, (DoubleRejected, ResignRejected)):
        return ["reject", event.player]
    if isinstance(event, ResignOffered):
        return ["resign", event.player, int(event.kind)]
    return None


def encode_record(header: Header, games: Iterable[Iterable[Event]]) -> dict[str, Any]:
    return {**_header_data(header), "games": [encode_game(history) for history in games]}


def _header_data(header: Header) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "length": header.length,
        "crawford": header.crawford,
        "redouble_limit": header.redouble_limit,
        "autodouble": header.autodouble,
        "score": list(header.score),
    }


def compact(data: Any) -> str:
    """JSON text without spaces, the form records are stored in."""
    return json.dumps(data, separators=(",", ":"))


@dataclass(slots=True)
class _GameText:
    """One game's entries as JSON text, for the first ``events`` events of its history."""

    events: int = 0
    last: Event | None = None
    entries: list[str] = field(default_factory=list)
    text: str = "[]"


class RecordText:
    """A match's record as compact JSON text, equal to ``compact(encode_record(...))``,
    encoding only the events added since the last call.

    Why: the server stores the whole record at every game action (``fibsd.server.match``);
    encoding every event of every game each time made the cost of an action grow with
    the match.  A game's history only grows, so each game keeps its entries' text and
    encodes only what came after; a history that did not grow from the last one seen
    (another match's, say) is encoded again from the start."""

    def __init__(self) -> None:
        self._games: list[_GameText] = []
        self._header: tuple[Header, str] | None = None  # the last header and its text

    def text(self, header: Header, games: Sequence[Sequence[Event]]) -> str:
        del self._games[len(games):]
        while len(self._games) < len(games):
            self._games.append(_GameText())
        texts = [self._game_text(cached, history)
                 for cached, history in zip(self._games, games)]
        if self._header is None or self._header[0] != header:  # once a game, at most
            self._header = (header, compact(_header_data(header))[:-1])
        return f'{self._header[1]},"games":[{",".join(texts)}]}}'

    @staticmethod
    def _game_text(cached: _GameText, history: Sequence[Event]) -> str:
        count = len(history)
        if count == cached.events and (count == 0 or history[-1] is cached.last):
            return cached.text
        if count < cached.events or (cached.events
                                     and history[cached.events - 1] is not cached.last):
            cached.events, cached.entries = 0, []
        for event in history[cached.events:]:
            entry = _encode(event)
            if entry is not None:
                cached.entries.append(compact(entry))
        cached.events, cached.last = count, history[-1] if count else None
        cached.text = f'[{",".join(cached.entries)}]'
        return cached.text


def decode_record(data: Any) -> tuple[Header, list[list[Entry]]]:
    """Check and read a record; raises ``InvalidRecord`` saying what is wrong."""
    if not isinstance(data, dict):
        raise InvalidRecord("a record is a JSON object")
    if data.get("format") != FORMAT:
        raise InvalidRecord(f"format is not {FORMAT!r}")
    if data.get("version") != VERSION:
        raise InvalidRecord(f"unsupported version {data.get('version')!r}")
    length = data.get("length")
    limit = data.get("redouble_limit")
    score = data.get("score")
    if not _is_int(length) or length < 0:
        raise InvalidRecord("length must be an integer >= 0")
    if limit is not None and (not _is_int(limit) or limit < 0):
        raise InvalidRecord("redouble_limit must be null or an integer >= 0")
    if not isinstance(data.get("crawford"), bool) or not isinstance(data.get("autodouble"), bool):
        raise InvalidRecord("crawford and autodouble must be booleans")
    if not isinstance(score, list) or len(score) != 2 or not all(_is_int(s) for s in score):
        raise InvalidRecord("score must be two integers")
    games = data.get("games")
    if not isinstance(games, list) or not all(isinstance(game, list) for game in games):
        raise InvalidRecord("games must be a list of lists")
    header = Header(length, data["crawford"], limit, data["autodouble"], (score[0], score[1]))
    decoded = []
    for number, game in enumerate(games, 1):
        entries = []
        for index, raw in enumerate(game, 1):
            try:
                entries.append(_decode(raw))
            except (TypeError, ValueError, IndexError):
                raise InvalidRecord(f"game {number}, entry {index}: cannot read {raw!r}") from None
        decoded.append(entries)
    return header, decoded


def _decode(raw: Any) -> Entry:
    if not isinstance(raw, list) or not raw:
        raise ValueError("not an entry")
    action = raw[0]
    if action == "opening" and len(raw) == 3:
        return Entry(action, dice=(_die(raw[1]), _die(raw[2])))
    player = _player(raw[1])
    if action == "roll" and len(raw) == 4:
        return Entry(action, player, dice=(_die(raw[2]), _die(raw[3])))
    if action == "move" and len(raw) in (3, 4):
        if len(raw) == 4 and raw[3] != "auto":
            raise ValueError("bad move flag")
        pairs = tuple((_point(src), _point(dst)) for src, dst in raw[2])
        return Entry(action, player, pairs=pairs, automatic=len(raw) == 4)
    if action == "resign" and len(raw) == 3:
        return Entry(action, player, kind=WinKind(raw[2]))
    if action in _PLAYER_ONLY and len(raw) == 2:
        return Entry(action, player)
    raise ValueError("unknown entry")


def _is_int(value: object) -> TypeGuard[int]:
    """An integer that JSON wrote as one (``true`` is not 1 here)."""
    return type(value) is int


def _die(value: Any) -> int:
    if not _is_int(value) or not 1 <= value <= 6:
        raise ValueError("bad die")
    return int(value)


def _player(value: Any) -> int:
    if value not in (0, 1) or not _is_int(value):
        raise ValueError("bad player")
    return int(value)


def _point(value: Any) -> int:
    if not _is_int(value) or not 0 <= value <= 25:
        raise ValueError("bad point")
    return int(value)
