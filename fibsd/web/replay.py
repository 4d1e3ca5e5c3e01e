"""A finished match replayed step by step, from its stored record.

The store keeps a finished match as the server's match record (JSON: players, who
played O in game one, and the rules' record of every roll, play, cube action and
resignation).  Replaying it through the rules engine gives, after each recorded entry,
the board (``Picture``) and a caption in the words a watcher read on the server
(``fibsd.wire.game_text``).  The same pass yields the whole match as plain data for
``/matches/<id>.json``.

Pure: no I/O, no Twisted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fibsd.rules.dice import ScriptedDice
from fibsd.rules.errors import InvalidRecord
from fibsd.rules.events import (
    CannotMove,
    CubeAutoDoubled,
    DoubleAccepted,
    Doubled,
    DoubleRejected,
    Event,
    GameWon,
    Moved,
    OpeningRoll,
    Redoubled,
    ResignAccepted,
    ResignOffered,
    ResignRejected,
    Rolled,
)
from fibsd.rules.match import Match
from fibsd.rules.notation import format_fibs_moves
from fibsd.rules.record import Entry, decode_record
from fibsd.wire import game_text as text
from fibsd.wire.board import Colour, absolute_board
from fibsd.web.board_svg import Picture

LIVE_RECORD = "fibsd-live-match"  # the server's match record (fibsd.server.match)


class UnreadableRecord(ValueError):
    """The stored record cannot be replayed (damaged, or of an unknown format)."""


@dataclass(frozen=True)
class Step:
    game: int  # 1-based; 0 for the empty board before the first game
    caption: tuple[str, ...]
    picture: Picture
    score: tuple[int, int]  # before this step's game, by player
    # The indices of this step's actions in its game's "actions" (first, past the last):
    # where an analysis mark of (game, action) is shown.
    actions: tuple[int, int] = (0, 0)


@dataclass
class Replay:
    players: tuple[str, str]
    length: int
    steps: list[Step] = field(default_factory=list)
    games: list[dict[str, Any]] = field(default_factory=list)  # the JSON export's games
    score: tuple[int, int] = (0, 0)
    crawford_game: int | None = None

    def game_starts(self) -> list[int]:
        """The index of each game's first step."""
        starts: list[int] = []
        for index, step in enumerate(self.steps):
            if len(starts) < step.game:
                starts.append(index)
        return starts


def replay(record: str) -> Replay:
    """Every step of the match in ``record`` (raises ``UnreadableRecord``)."""
    try:
        data = json.loads(record)
        if not isinstance(data, dict) or data.get("format") != LIVE_RECORD:
            raise UnreadableRecord("not a fibsd match record")
        players = (str(data["players"][0]), str(data["players"][1]))
        o_first = int(data["o_first"])
        header, games = decode_record(data["match"])
        return _Replayer(players, o_first, header.length, header.crawford,
                         header.redouble_limit, header.autodouble).run(games)
    except UnreadableRecord:
        raise
    except (ValueError, KeyError, IndexError, TypeError, InvalidRecord) as error:
        raise UnreadableRecord(f"cannot replay: {error}") from error


class _Replayer:
    def __init__(self, players: tuple[str, str], o_first: int, length: int, crawford: bool,
                 redouble_limit: int | None, autodouble: bool) -> None:
        self.players = players
        self.o_first = o_first
        self.match = Match(length, crawford=crawford, redouble_limit=redouble_limit,
                           autodouble=autodouble)
        self.result = Replay(players, length)
        self.actions: list[dict[str, Any]] = []

    def o_player(self) -> int:
        return self.o_first if max(self.match.number, 1) % 2 else 1 - self.o_first

    def run(self, games: list[list[Entry]]) -> Replay:
        self.result.steps.append(Step(0, ("The match is about to start.",), self.picture(),
                                      (0, 0)))
        for entries in games:
            self.game(entries)
        self.result.score = self.match.score
        self.result.crawford_game = self.match.crawford_game
        return self.result

    def game(self, entries: list[Entry]) -> None:
        openings = [e for e in entries if e.action == "opening"]
        before = self.match.score
        events = self.match.new_game(ScriptedDice(e.dice for e in openings))
        o = self.o_player()
        self.actions = []
        self.result.games.append({
            "number": self.match.number,
            "score": list(before),
            "crawford": self.match.is_crawford_game,
            "O": self.players[o], "X": self.players[1 - o],
            "actions": self.actions,
        })
        self.step(events, before)
        for entry in entries[len(openings):]:
            self.step(self.apply(entry), before)
        game = self.match.game
        if game is not None and game.result is not None:
            self.result.games[-1]["winner"] = self.players[game.result.winner]
            self.result.games[-1]["points"] = game.result.points

    def apply(self, entry: Entry) -> tuple[Event, ...]:
        m, p = self.match, entry.player
        if entry.action == "roll":
            return m.roll(p, ScriptedDice([entry.dice]))
        if entry.action == "move":
            return m.move(p, entry.pairs, automatic=entry.automatic)
        if entry.action == "resign":
            return m.resign(p, entry.kind)
        if entry.action in ("double", "redouble", "accept", "reject"):
            action: Any = getattr(m, entry.action)
            result: tuple[Event, ...] = action(p)
            return result
        raise InvalidRecord(f"an {entry.action!r} entry inside a game")

    def step(self, events: tuple[Event, ...], before: tuple[int, int]) -> None:
        first = len(self.actions)
        lines = [line for event in events for line in self.describe(event)]
        self.result.steps.append(Step(self.match.number, tuple(lines), self.picture(), before,
                                      (first, len(self.actions))))

    def describe(self, event: Event) -> list[str]:
        """The watcher's line for ``event``, and the event in the JSON export."""
        names = self.players
        o = self.o_player()
        direction = {o: Colour.O.direction, 1 - o: Colour.X.direction}
        add = self.actions.append
        if isinstance(event, OpeningRoll):
            add({"action": "opening", "dice": {names[0]: event.dice[0],
                                               names[1]: event.dice[1]}})
            line = text.opening_roll(names[0], event.dice[0], names[1], event.dice[1])
            return [line + (" (a tie: both roll again)" if event.tie else "")]
        if isinstance(event, CubeAutoDoubled):
            add({"action": "autodouble", "cube": event.value})
            return [text.cube_now(event.value)]
        if isinstance(event, Rolled):
            add({"action": "roll", "player": names[event.player], "dice": list(event.dice)})
            return [text.player_rolls(names[event.player], event.dice)]
        if isinstance(event, CannotMove):
            add({"action": "cannot_move", "player": names[event.player],
                 "dice": list(event.dice)})
            return [text.cant_move(names[event.player])]
        if isinstance(event, Moved):
            moves = format_fibs_moves(event.play.moves, direction[event.player])
            add({"action": "move", "player": names[event.player], "moves": moves,
                 "automatic": event.automatic})
            return [text.player_moves(names[event.player], moves)]
        if isinstance(event, (Doubled, Redoubled)):
            add({"action": "double", "player": names[event.player], "cube": event.value})
            return [f"{names[event.player]} doubles to {event.value}."]
        if isinstance(event, DoubleAccepted):
            add({"action": "take", "player": names[event.player], "cube": event.value})
            return [text.accepts_double_cube(names[event.player], event.value)]
        if isinstance(event, DoubleRejected):
            add({"action": "drop", "player": names[event.player]})
            return [f"{names[event.player]} rejects the double."]
        if isinstance(event, ResignOffered):
            add({"action": "resign", "player": names[event.player], "points": event.points})
            return [text.resigns(names[event.player], names[1 - event.player], event.points)]
        if isinstance(event, ResignAccepted):
            add({"action": "accept_resignation", "player": names[event.player],
                 "points": event.points})
            return [text.accepts_and_wins(names[event.player], event.points)]
        if isinstance(event, ResignRejected):
            add({"action": "reject_resignation", "player": names[event.player]})
            return [text.rejects(names[event.player])]
        if isinstance(event, GameWon):
            add({"action": "win", "player": names[event.winner], "points": event.points,
                 "kind": event.kind.name.lower()})
            return [text.wins_game(names[event.winner], event.points, sorry=False)]
        return []

    def picture(self) -> Picture:
        m = self.match
        o = self.o_player()
        position = m.position_for(o)
        game = m.game
        dice: tuple[int, int] | None = None
        dice_colour = 0
        if game is not None and not game.over and game.dice is not None \
                and game.turn is not None:
            dice = game.dice
            dice_colour = 1 if game.turn == o else -1
        owner = 0 if m.owner is None else (1 if m.owner == o else -1)
        return Picture(
            slots=absolute_board(position, Colour.O),
            o_name=self.players[o], x_name=self.players[1 - o],
            o_off=position.player_off, x_off=position.opponent_off,
            cube=m.cube, cube_owner=owner, dice=dice, dice_colour=dice_colour,
            o_score=m.score[o], x_score=m.score[1 - o], length=m.length,
        )
