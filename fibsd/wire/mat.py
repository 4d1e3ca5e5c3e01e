"""A match in GNU Backgammon's ``.mat`` format (the Jellyfish match text), and back.

``.mat`` is what gnubg, eXtreme Gammon, BGBlitz and most analysers import.  The layout
follows gnubg's own export (and its importer, which is strict about columns): a comment
header of ``; [Tag "value"]`` lines, `` <n> point match`` (0 for an unlimited match),
then per game `` Game <n>``, a score line, and numbered lines with player 1's action on
the left and player 2's on the right.  fibsd's choices (protocol/export.md):

* Player 1 (left column) is the record's player 0, the one who invited.
* Moves are written one checker step per die, in the order played, in the mover's own
  numbering (bar 25, off 0), a hit marked ``*``: ``52: 13/8 13/11*``.
* The opening roll is written as the first move, the winner's die first; opening ties
  leave no trace.
* A roll with no legal play is the dice alone: ``65:``.  Dice rolled and never played
  because the game was resigned are left out, except the opening roll of a game
  resigned before its first move (readers need it to see the game begun): gnubg reads
  dice alone that have exactly one legal play as that play (a forced move).
* In a match gnubg can import (1 to 64 points) the cube is written up to 64: gnubg 1.07
  keeps 7 match cube levels and crashes on 256 (``GNUBG_MAX_CUBE``).
* ``Doubles => <cube>``, ``Beavers => <cube>``, ``Raccoons => <cube>`` (an instant
  redouble, unlimited matches only), ``Takes``, ``Drops``.
* Every game that ended gets ``Wins <n> point(s)`` in the winner's column, ``and the
  match`` after the last.  A resignation is nothing but that line: a reader scores a
  ``Wins`` that neither a bear-off nor a drop explains as a resignation worth those
  points (normal, gammon or backgammon by the cube).  Refused resignations leave no trace.
* The Crawford game is marked `` Game <n> (Crawford)`` and the header carries
  ``[Crawford "On"]`` or ``"Off"``; readers that know only the number still read it.
* An unlimited match says ``[Jacoby "Off"]``: fibsd scores gammons with a centred cube.

Pure: no I/O, no clock; the date is given.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fibsd.rules.dice import ScriptedDice
from fibsd.rules.errors import RulesError
from fibsd.rules.events import (
    CannotMove,
    DoubleAccepted,
    Doubled,
    DoubleRejected,
    GameWon,
    Moved,
    OpeningRoll,
    Redoubled,
    Rolled,
)
from fibsd.rules.match import Match
from fibsd.rules.play import Move

_LEFT_WIDTH = 27  # gnubg's "%3d) %-27s " columns: the right column starts at 33
_NAME_WIDTH = 31  # gnubg's " %-31s%s : %d" score line
_RIGHT_WINS_INDENT = 34
_LEFT_WINS_INDENT = 6
_LEFT_WINS_END = "  "
_REDOUBLE_WORDS = ("Beavers", "Raccoons")
# gnubg 1.07 keeps its match gammon prices for 7 cube levels (1 to 64, MAXCUBELEVEL) and
# indexes them by the cube's logarithm: a match cube of 128 reads past the table, 256
# crashes it.  Matches up to its longest (MAXSCORE, 64 points) are written with the cube
# stopping at 64 (protocol/export.md 3.1); any game won at that cube ends such a match.
GNUBG_MAX_CUBE = 64
GNUBG_MAX_LENGTH = 64


class MatSyntaxError(ValueError):
    """Text that is not a ``.mat`` file as fibsd writes it; says where and why."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


# -- the parsed form ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class MatAction:
    """One column entry.  ``kind`` is ``move`` (``dice``, ``moves`` as (src, dst, hit);
    no moves: the roll could not be played), ``double`` / ``beaver`` / ``raccoon``
    (``value`` the cube offered), ``take``, ``drop`` or ``win`` (``points``; ``match``
    when it ends the match)."""

    player: int
    kind: str
    dice: tuple[int, int] = (0, 0)
    moves: tuple[tuple[int, int, bool], ...] = ()
    value: int = 0
    points: int = 0
    match: bool = False


@dataclass(frozen=True, slots=True)
class MatGame:
    number: int
    crawford: bool
    players: tuple[str, str]
    score: tuple[int, int]
    actions: tuple[MatAction, ...]


@dataclass(frozen=True, slots=True)
class MatMatch:
    length: int
    tags: dict[str, str] = field(default_factory=dict)
    games: tuple[MatGame, ...] = ()

    @property
    def players(self) -> tuple[str, str]:
        if self.games:
            return self.games[0].players
        return (self.tags.get("Player 1", ""), self.tags.get("Player 2", ""))


# -- writing -------------------------------------------------------------------------------

def mat_text(
    record: Mapping[str, Any] | str,
    players: Sequence[str] | None = None,
    *,
    date: datetime.date | None = None,
    site: str = "",
    match_id: int | str | None = None,
    fair_dice: bool = False,
) -> str:
    """The ``.mat`` text of a match.

    ``record`` is either the rules record (``Match.to_record()``) with ``players`` its
    two names by player index, or a match as the server stores it (the ``record`` of a
    ``FinishedMatch`` or ``SavedMatch``: JSON text, or decoded, holding ``players`` and
    the rules record as ``match``), whose own names serve unless ``players`` is given.
    ``date`` (a ``datetime`` adds the time of day) and ``site`` go in the header; so
    does ``match_id`` as ``[Match ID]``.  Raises ``InvalidRecord`` for a record the
    rules engine cannot replay (``ValueError`` for text that is not JSON).  A game
    still under way is written as far as it went.  ``fair_dice`` adds the seed of its
    dice and both players' dice texts (protocol/fair-dice.md), for a finished match
    only: while a match is saved its seed is secret.
    """
    data: Any = json.loads(record) if isinstance(record, str) else record
    dice: Any = None
    if isinstance(data, Mapping) and "match" in data and "players" in data:
        players = players or data["players"]
        dice = data.get("dice") if fair_dice else None
        data = data["match"]
    if players is None or len(players) != 2:
        raise ValueError("mat_text needs the two players' names")
    match = Match.from_record(data)
    names = (str(players[0]), str(players[1]))
    lines = _header(match, names, date, site, match_id, dice)
    lines += [f" {match.length} point match", ""]
    score = [0, 0]
    for number, game in enumerate(match.games, 1):
        crawford = " (Crawford)" if match.crawford_game == number else ""
        lines.append(f" Game {number}{crawford}")
        lines.append(_score_line(names, (score[0], score[1])))
        cap = GNUBG_MAX_CUBE if 0 < match.length <= GNUBG_MAX_LENGTH else None
        lines += _game_lines(game.history, cap)
        if match.over and number == match.number:
            lines[-1] = lines[-1].rstrip() + " and the match" + (
                _LEFT_WINS_END if game.result is not None and game.result.winner == 0 else "")
        lines.append("")
        if game.result is not None:
            score[game.result.winner] += game.result.points
    return "\n".join(lines) + "\n"


def _tag_value(text: str) -> str:
    """A value safe inside ``"..."`` on one line."""
    return re.sub(r'["\r\n]', "", text)


def _header(match: Match, names: tuple[str, str], date: datetime.date | None, site: str,
            match_id: int | str | None, dice: Any = None) -> list[str]:
    tags: list[tuple[str, str]] = []
    if site:
        tags.append(("Site", _tag_value(site)))
    if match_id is not None:
        tags.append(("Match ID", _tag_value(str(match_id))))
    tags += [("Player 1", names[0]), ("Player 2", names[1])]
    if date is not None:
        tags.append(("EventDate", f"{date.year:04d}.{date.month:02d}.{date.day:02d}"))
        if isinstance(date, datetime.datetime):
            tags.append(("EventTime", f"{date.hour:02d}.{date.minute:02d}"))
    tags.append(("Variation", "Backgammon"))
    if match.length:
        tags.append(("Crawford", "On" if match.crawford else "Off"))
    else:
        tags.append(("Jacoby", "Off"))
        tags.append(("Beaver", "Off" if match.redouble_limit == 0 else "On"))
    tags += fair_dice_tags(dice)
    return [f'; [{key} "{value}"]' for key, value in tags] + [""]


def fair_dice_tags(dice: Any) -> list[tuple[str, str]]:
    """A seeded match's dice (protocol/fair-dice.md), so that the exported file alone is
    enough to check every roll: the revealed seed and both players' texts, in hex like
    the ``fairdice:`` lines (``export`` sends these lines to a client, and a player's
    words could hold a phrase its patterns look for)."""
    if not isinstance(dice, Mapping) or not isinstance(dice.get("server_seed"), str):
        return []
    earlier = dice.get("earlier") or []
    seeds = [*(e for e in earlier if isinstance(e, Mapping)),
             {"server_seed": dice["server_seed"], "texts": dice.get("texts"),
              "first_roll": dice.get("first_roll", 0)}]
    tags = []
    for number, seed in enumerate(seeds):
        # a match left or saved went on under a fresh seed (fair-dice.md 1.2)
        suffix = f" From Roll {seed.get('first_roll', 0)}" if number else ""
        texts = seed.get("texts") or ["", ""]
        tags += [(f"Dice Seed{suffix}", _tag_value(str(seed.get("server_seed", "")))),
                 (f"Dice Text Hex 1{suffix}", str(texts[0]).encode().hex()),
                 (f"Dice Text Hex 2{suffix}", str(texts[1]).encode().hex())]
    return tags


def _score_line(names: tuple[str, str], score: tuple[int, int]) -> str:
    left = f"{names[0]} : {score[0]}"
    gap = " " if len(left) >= _NAME_WIDTH else ""
    return f" {left:<{_NAME_WIDTH}}{gap}{names[1]} : {score[1]}"


def _moves_text(moves: Sequence[Move]) -> str:
    return " ".join(f"{m.src}/{m.dst}{'*' if m.hit else ''}" for m in moves)


def _game_lines(history: Sequence[Any], cap: int | None = None) -> list[str]:
    """Lay out one game's entries in the two columns.  With ``cap``, the cube is
    written as if it stopped there: a double from ``cap`` that was taken is left out
    with its take, and so is every cube action after it (the cube's owner would no
    longer be the one the text shows); the game's points are what a cube of ``cap``
    gives, so a drop left out reads as a resignation."""
    lines: list[str] = []
    row: list[str] | None = None  # [left, right] of the numbered line being filled
    rows = 0
    dice: dict[int, tuple[int, int]] = {}
    cube = shown = 1  # the cube, and the cube the text shows
    offer: Doubled | None = None  # a double written only once its answer is known
    omitting = False  # a take was left out: no more cube actions in this game

    def close() -> None:
        nonlocal row
        if row is not None:
            lines.append(_numbered(rows, row[0], row[1]))
            row = None

    def put(player: int, text: str) -> None:
        nonlocal row, rows
        if player == 0 or row is None or row[1]:
            close()
            rows += 1
            row = ["", ""]
        row[player] = text

    for event in history:
        if isinstance(event, OpeningRoll) and event.winner is not None:
            w = event.winner
            dice[w] = (event.dice[w], event.dice[1 - w])
        elif isinstance(event, Rolled):
            dice[event.player] = event.dice
        elif isinstance(event, CannotMove):
            d = dice.pop(event.player, event.dice)
            put(event.player, f"{d[0]}{d[1]}:")
        elif isinstance(event, Moved):
            d = dice.pop(event.player)
            put(event.player, f"{d[0]}{d[1]}: {_moves_text(event.play.moves)}")
        elif isinstance(event, Doubled):
            if cap is None or (shown < cap and not omitting):
                put(event.player, f"Doubles => {event.value}")
            else:
                offer = event
        elif isinstance(event, Redoubled):
            word = _REDOUBLE_WORDS[min(event.count, len(_REDOUBLE_WORDS)) - 1]
            put(event.player, f"{word} => {event.value}")
        elif isinstance(event, DoubleAccepted):
            cube = event.value
            if offer is None:
                put(event.player, "Takes")
            omitting = offer is not None or omitting
            shown = cube if cap is None else min(cube, cap)
            offer = None
        elif isinstance(event, DoubleRejected):
            if offer is None or not omitting:
                if offer is not None:
                    put(offer.player, f"Doubles => {2 * shown}")
                put(event.player, "Drops")
            offer = None
        elif isinstance(event, GameWon):
            if not rows:  # resigned before the first move: gnubg needs the opening roll
                for player, d in sorted(dice.items()):
                    put(player, f"{d[0]}{d[1]}:")
            close()
            wins = f"Wins {_points(event.points // cube * shown)}"
            if event.winner == 0:  # two blanks after it, as after every left column
                lines.append(" " * _LEFT_WINS_INDENT + wins + _LEFT_WINS_END)
            else:
                lines.append(" " * _RIGHT_WINS_INDENT + wins)
    if offer is not None and not omitting:  # a game saved with the double unanswered
        put(offer.player, f"Doubles => {2 * shown}")
    close()
    return lines


def _numbered(number: int, left: str, right: str) -> str:
    """gnubg splits a line without two ':' at its first double blank after column 15,
    and where it finds none it reads the right column of the line before again (gnubg
    1.07 keeps that pointer): so two blanks always follow the left column, even when
    the right one is empty."""
    # a line never starts with a digit (clients read those as CLIP lines): " 100) "
    prefix = f"{number:3d}) " if number < 100 else f" {number}) "
    gap = "  " if len(left) >= _LEFT_WIDTH or not right else " "
    return f"{prefix}{left:<{_LEFT_WIDTH}}{gap}{right}"


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


# -- reading ---------------------------------------------------------------------------------

_TAG = re.compile(r'^;\s*\[(?P<key>[^"\]]+?) "(?P<value>[^"]*)"\]\s*$')
_LENGTH = re.compile(r"^\s*(?P<length>\d+) point match\s*$")
_GAME = re.compile(r"^\s*Game (?P<number>\d+)(?P<crawford> \(Crawford\))?\s*$")
_SCORE = re.compile(r"^\s*(?P<n0>\S+) : (?P<s0>\d+)\s+(?P<n1>\S+) : (?P<s1>\d+)\s*$")
_NUMBERED = re.compile(r"^\s*\d+\) ?(?P<body>.*)$")
_ROLL = re.compile(r"^(?P<d1>[1-6])(?P<d2>[1-6]):(?: (?P<moves>.+))?$")
_STEP = re.compile(r"^(?P<src>\d{1,2})/(?P<dst>\d{1,2})(?P<hit>\*?)$")
_CUBE = re.compile(r"^(?P<word>Doubles|Beavers|Raccoons) => (?P<value>\d+)$")
_WINS = re.compile(r"^Wins (?P<points>\d+) points?(?P<match> and the match)?$")
# the opening roll of a game resigned before its first move (the .mat does not say)
_NO_OPENING_MOVE = (2, 1)
_CUBE_KINDS = {"Doubles": "double", "Beavers": "beaver", "Raccoons": "raccoon"}


def parse_mat(text: str) -> MatMatch:
    """Read a ``.mat`` text as ``mat_text`` writes it; raises ``MatSyntaxError``."""
    tags: dict[str, str] = {}
    length: int | None = None
    games: list[MatGame] = []
    current: dict[str, Any] | None = None
    expect_score = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        if length is None:
            if tag := _TAG.match(line):
                tags[tag["key"]] = tag["value"]
            elif found := _LENGTH.match(line):
                length = int(found["length"])
            elif not line.startswith(";"):
                raise MatSyntaxError(number, "expected a comment or '<n> point match'")
            continue
        if game := _GAME.match(line):
            if current is not None:
                games.append(_finish_game(current))
            current = {"number": int(game["number"]), "crawford": bool(game["crawford"]),
                       "actions": []}
            expect_score = True
            continue
        if current is None:
            raise MatSyntaxError(number, "expected 'Game <n>'")
        if expect_score:
            score = _SCORE.match(line)
            if score is None:
                raise MatSyntaxError(number, "expected '<name> : <score>  <name> : <score>'")
            current["players"] = (score["n0"], score["n1"])
            current["score"] = (int(score["s0"]), int(score["s1"]))
            expect_score = False
            continue
        current["actions"] += _parse_line(line, number)
    if length is None:
        raise MatSyntaxError(0, "no '<n> point match' line")
    if current is not None:
        games.append(_finish_game(current))
    return MatMatch(length, tags, tuple(games))


def _finish_game(current: dict[str, Any]) -> MatGame:
    return MatGame(current["number"], current["crawford"], current["players"],
                   current["score"], tuple(current["actions"]))


def _parse_line(line: str, number: int) -> list[MatAction]:
    numbered = _NUMBERED.match(line)
    if numbered is None:  # a "Wins" line: the column is told by its indentation
        indent = len(line) - len(line.lstrip())
        player = 0 if indent < _LEFT_WIDTH else 1
        return [_parse_entry(line.strip(), player, number)]
    body = numbered["body"]
    if body.startswith("  "):
        left, right = "", body.strip()
    else:
        parts = re.split(r" {2,}", body.strip(), maxsplit=1)
        left, right = parts[0], parts[1] if len(parts) > 1 else ""
    actions = []
    for player, entry in ((0, left), (1, right)):
        if entry:
            actions.append(_parse_entry(entry, player, number))
    return actions


def _parse_entry(entry: str, player: int, number: int) -> MatAction:
    if roll := _ROLL.match(entry):
        dice = (int(roll["d1"]), int(roll["d2"]))
        steps = []
        for word in (roll["moves"] or "").split():
            step = _STEP.match(word)
            if step is None:
                raise MatSyntaxError(number, f"cannot read the move {word!r}")
            steps.append((int(step["src"]), int(step["dst"]), bool(step["hit"])))
        return MatAction(player, "move", dice=dice, moves=tuple(steps))
    if cube := _CUBE.match(entry):
        return MatAction(player, _CUBE_KINDS[cube["word"]], value=int(cube["value"]))
    if entry == "Takes":
        return MatAction(player, "take")
    if entry == "Drops":
        return MatAction(player, "drop")
    if wins := _WINS.match(entry):
        return MatAction(player, "win", points=int(wins["points"]), match=bool(wins["match"]))
    raise MatSyntaxError(number, f"cannot read {entry!r}")


# -- back to a record ---------------------------------------------------------------------------

def mat_record(parsed: MatMatch) -> dict[str, Any]:
    """A rules record that replays to the match ``parsed`` describes, checked move by
    move by the rules engine (``InvalidRecord``-style ``ValueError`` on any illegal
    step).  What ``.mat`` does not keep is filled in plainly: the opening roll is the
    first move's dice, a resignation is offered by the loser at the points written and
    accepted at once, and instant redoubles are allowed without limit unless ``[Beaver "Off"]``.
    Autodoubles (opening ties) cannot be told from a ``.mat``: such a match fails."""
    unlimited = parsed.length == 0
    match = Match(
        parsed.length,
        crawford=parsed.tags.get("Crawford", "On") != "Off",
        redouble_limit=None if unlimited and parsed.tags.get("Beaver") != "Off" else 0,
    )
    for game in parsed.games:
        try:
            _replay_game(match, game)
        except (RulesError, LookupError) as exc:
            raise ValueError(f"game {game.number}: {exc!r}") from exc
        if game.score != tuple(_score_before(match)):
            raise ValueError(f"game {game.number}: score {game.score} does not follow")
    return match.to_record()


def _score_before(match: Match) -> list[int]:
    score = list(match.score)
    game = match.game
    if game is not None and game.result is not None:
        score[game.result.winner] -= game.result.points
    return score


def _replay_game(match: Match, game: MatGame) -> None:
    actions = list(game.actions)
    opening = _NO_OPENING_MOVE
    if actions and actions[0].kind == "move":
        first = actions[0]
        opening = first.dice if first.player == 0 else (first.dice[1], first.dice[0])
    match.new_game(ScriptedDice([opening]))
    for index, action in enumerate(actions):
        player = action.player
        current = match.game
        assert current is not None
        if action.kind == "move":  # no moves: the roll could not be played, or the
            if index:                # game was resigned before it was
                match.roll(player, ScriptedDice([action.dice]))
            if action.moves:
                match.move(player, [(src, dst) for src, dst, _ in action.moves])
        elif action.kind == "double":
            match.double(player)
        elif action.kind in ("beaver", "raccoon"):
            match.redouble(player)
        elif action.kind == "take":
            match.accept(player)
        elif action.kind == "drop":
            match.reject(player)
        elif action.kind == "win":
            if current.result is None:  # a resignation
                kind, rest = divmod(action.points, match.cube)
                if rest or not 1 <= kind <= 3:
                    raise ValueError(f"game {game.number}: {action.points} points with the"
                                     f" cube at {match.cube}")
                match.resign(1 - player, kind)
                match.accept(player)
            result = current.result
            if result is None or (result.winner, result.points) != (player, action.points):
                raise ValueError(f"game {game.number}: 'Wins {action.points}' does not follow")
