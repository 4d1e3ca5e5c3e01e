"""A match: its games in sequence, the score, the Crawford rule and the cube's limits.

Rules the match adds to the game's:

* A match has a length (>= 1) or is unlimited (length 0).  It is won by the first player
  whose score reaches the length; the score is not capped.  Unlimited matches never end
  by score: they stop when the players leave, which is the server's business.
* Crawford rule (matches with a length, when ``crawford`` is on): the first game that
  starts with a player one point short of the length, that player having got there in
  an earlier game, is the Crawford game: nobody may double in it.  Later games are
  post-Crawford and the cube is back.  A 1-point match has no Crawford game and no cube.
* Instant redoubles (beaver, raccoon, ...) exist only in unlimited matches, at most
  ``redouble_limit`` in a row (``None``: no limit).  ``autodouble`` (the cube doubles on
  each opening tie) applies only to unlimited matches too.
* Every game starts with an opening roll; a new game starts only when the server asks
  (FIBS waits for both players to ``join``), so the finished game stays readable.

Every action names the acting player (0 or 1), returns the events it caused, and raises
the game's typed errors; when a game ends the match adds the points and, if the match is
won, a ``MatchWon`` event.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fibsd.rules.dice import DiceExhausted, DiceSource, ScriptedDice
from fibsd.rules.errors import (
    CubeUnavailable,
    GameInProgress,
    GameOver,
    InvalidRecord,
    MatchOver,
    RulesError,
)
from fibsd.rules.events import Event, GameStarted, GameWon, MatchWon, WinKind
from fibsd.rules.game import DoubleOffer, Game, Phase, Resignation
from fibsd.rules.play import Play
from fibsd.rules.position import Position
from fibsd.rules.record import Entry, Header, RecordText, decode_record, encode_record


class Match:
    def __init__(
        self,
        length: int,
        *,
        crawford: bool = True,
        redouble_limit: int | None = 0,
        autodouble: bool = False,
    ) -> None:
        if length < 0:
            raise ValueError(f"match length must be >= 0 (0 = unlimited), not {length}")
        if redouble_limit is not None and redouble_limit < 0:
            raise ValueError(f"redouble limit must be None or >= 0, not {redouble_limit}")
        self.length = length
        self.crawford = crawford and length > 0
        self.redouble_limit: int | None = redouble_limit if length == 0 else 0
        self.autodouble = autodouble and length == 0
        self._score = [0, 0]
        self._games: list[Game] = []
        self._crawford_game: int | None = None
        self._winner: int | None = None
        self._record_text = RecordText()

    def __repr__(self) -> str:
        return (
            f"<Match length={self.length} score={self.score} game={self.number}"
            f" phase={self.phase.value if self.phase else None}>"
        )

    # -- the match -----------------------------------------------------------------

    @property
    def unlimited(self) -> bool:
        return self.length == 0

    @property
    def score(self) -> tuple[int, int]:
        """Points won in finished games, by player."""
        return (self._score[0], self._score[1])

    @property
    def winner(self) -> int | None:
        return self._winner

    @property
    def over(self) -> bool:
        return self._winner is not None

    @property
    def games(self) -> tuple[Game, ...]:
        return tuple(self._games)

    @property
    def game(self) -> Game | None:
        """The game being played, or the one just finished; ``None`` before the first."""
        return self._games[-1] if self._games else None

    @property
    def number(self) -> int:
        """The current game's number, counting from 1 (0 before the first game)."""
        return len(self._games)

    @property
    def crawford_game(self) -> int | None:
        """The number of the Crawford game, once it has started."""
        return self._crawford_game

    @property
    def is_crawford_game(self) -> bool:
        return self._crawford_game is not None and self._crawford_game == self.number

    @property
    def is_post_crawford(self) -> bool:
        """The current game comes after the Crawford game."""
        return self._crawford_game is not None and self.number > self._crawford_game

    @property
    def did_crawford(self) -> bool:
        """FIBS's board flag "did Crawford": the Crawford game is over and a player is
        one point away (so, in effect, the post-Crawford flag)."""
        if self._crawford_game is None:
            return False
        played = self.number > self._crawford_game or (self.game is not None and self.game.over)
        return played and self.length - 1 in self._score

    @property
    def waiting_for_new_game(self) -> bool:
        """The last game is over and the match goes on (FIBS waits for two ``join``s)."""
        return self._winner is None and (self.game is None or self.game.over)

    # -- the current game, as the board line needs it --------------------------------

    @property
    def phase(self) -> Phase | None:
        return self.game.phase if self.game else None

    @property
    def turn(self) -> int | None:
        return self.game.turn if self.game else None

    @property
    def to_act(self) -> int | None:
        return self.game.to_act if self.game else None

    @property
    def dice(self) -> tuple[int, int] | None:
        return self.game.dice if self.game else None

    @property
    def cube(self) -> int:
        return self.game.cube if self.game else 1

    @property
    def owner(self) -> int | None:
        return self.game.owner if self.game else None

    @property
    def position(self) -> Position:
        """The board from player 0's side (the starting board before the first game)."""
        return self.game.position if self.game else Position.initial()

    def position_for(self, player: int) -> Position:
        return self.game.position_for(player) if self.game else Position.initial()

    @property
    def pending_double(self) -> DoubleOffer | None:
        return self.game.pending_double if self.game else None

    @property
    def pending_resignation(self) -> Resignation | None:
        return self.game.pending_resignation if self.game else None

    def may_double(self, player: int) -> bool:
        """FIBS's board flag "may double": it only says the cube is centred or ``player``'s
        and no double is pending (it stays on in the Crawford game and 1-point matches)."""
        if self.pending_double is not None:
            return False
        return self.owner in (None, player)

    def can_double(self, player: int) -> bool:
        """Whether ``double(player)`` would succeed now.  FIBS rolls at once for a player
        who cannot double at the start of his turn."""
        return self.game is not None and self.game.can_double(player)

    def was_doubled(self, player: int) -> bool:
        return self.game is not None and self.game.was_doubled(player)

    def playable(self, player: int) -> int:
        """Dice ``player``'s latest roll in this game let him use (board "can move")."""
        return self.game.playable(player) if self.game else 0

    def forced_die(self, player: int) -> int:
        """The die ``player``'s latest one-die-only roll in the match let him use (0
        before any): FIBS keeps board field 50 from game to game."""
        for game in reversed(self._games):
            if game.forced_die(player):
                return game.forced_die(player)
        return 0

    def legal_plays(self) -> tuple[Play, ...]:
        return self.game.legal_plays() if self.game else ()

    def only_play(self) -> Play | None:
        """The roll's one legal play when it has exactly one (see ``Game.only_play``)."""
        return self.game.only_play() if self.game else None

    # -- actions ---------------------------------------------------------------------

    def new_game(self, dice: DiceSource) -> tuple[Event, ...]:
        """Start the next game with its opening roll."""
        if self._winner is not None:
            raise MatchOver()
        if self.game is not None and not self.game.over:
            raise GameInProgress()
        number = self.number + 1
        crawford = (
            self.crawford
            and self._crawford_game is None
            and number > 1
            and self.length - 1 in self._score
        )
        if crawford:
            self._crawford_game = number
        if self.length == 1:
            no_cube: str | None = CubeUnavailable.CUBE_DEAD
        elif crawford:
            no_cube = CubeUnavailable.CRAWFORD
        else:
            no_cube = None
        game = Game(no_cube=no_cube, redouble_limit=self.redouble_limit, autodouble=self.autodouble)
        self._games.append(game)
        started = GameStarted(number, crawford, self.score)
        return (started,) + game.start(dice)

    def roll(self, player: int, dice: DiceSource) -> tuple[Event, ...]:
        return self._play().roll(player, dice)

    def move(
        self, player: int, pairs: Sequence[tuple[int, int]], *, automatic: bool = False
    ) -> tuple[Event, ...]:
        return self._scored(self._play().move(player, pairs, automatic=automatic))

    def auto_move(self, player: int, play: Play) -> tuple[Event, ...]:
        return self._scored(self._play().auto_move(player, play))

    def double(self, player: int) -> tuple[Event, ...]:
        return self._play().double(player)

    def redouble(self, player: int) -> tuple[Event, ...]:
        return self._play().redouble(player)

    def accept(self, player: int) -> tuple[Event, ...]:
        return self._scored(self._play().accept(player))

    def reject(self, player: int) -> tuple[Event, ...]:
        return self._scored(self._play().reject(player))

    def resign(self, player: int, kind: WinKind | int) -> tuple[Event, ...]:
        return self._play().resign(player, kind)

    def _play(self) -> Game:
        if self.game is None:
            raise GameOver()
        return self.game

    def _scored(self, events: tuple[Event, ...]) -> tuple[Event, ...]:
        for event in events:
            if isinstance(event, GameWon):
                self._score[event.winner] += event.points
                if self.length and self._score[event.winner] >= self.length:
                    self._winner = event.winner
                    return events + (MatchWon(event.winner, self.score),)
        return events

    # -- the record --------------------------------------------------------------------

    def to_record(self) -> dict[str, Any]:
        """Everything needed to restore or export the match, as JSON-ready data
        (format in ``fibsd.rules.record``)."""
        header = Header(
            self.length, self.crawford, self.redouble_limit, self.autodouble, self.score
        )
        return encode_record(header, (game.history for game in self._games))

    def record_text(self) -> str:
        """``to_record`` as compact JSON text (``fibsd.rules.record.compact``), encoding
        only the events since the last call (``RecordText``)."""
        header = Header(
            self.length, self.crawford, self.redouble_limit, self.autodouble, self.score
        )
        return self._record_text.text(header, [game.history for game in self._games])

    @classmethod
    def from_record(cls, data: Any) -> Match:
        """Replay a record with its own dice; the result is in the identical state, down
        to dice rolled and not played or a double or resignation awaiting an answer."""
        header, games = decode_record(data)
        match = cls(
            header.length,
            crawford=header.crawford,
            redouble_limit=header.redouble_limit,
            autodouble=header.autodouble,
        )
        if (match.crawford, match.redouble_limit, match.autodouble) != (
            header.crawford,
            header.redouble_limit,
            header.autodouble,
        ):
            raise InvalidRecord("settings do not fit the match length")
        for number, entries in enumerate(games, 1):
            match._replay_game(number, entries)
        if match.score != header.score:
            raise InvalidRecord(f"replayed score {match.score} is not the recorded {header.score}")
        return match

    def _replay_game(self, number: int, entries: list[Entry]) -> None:
        openings = 0
        while openings < len(entries) and entries[openings].action == "opening":
            openings += 1
        dice = ScriptedDice(entry.dice for entry in entries[:openings])
        where = f"game {number}"
        try:
            self.new_game(dice)
            if dice.remaining:
                raise InvalidRecord(f"{where}: opening rolls after the first non-tie")
            for index, entry in enumerate(entries[openings:], openings + 1):
                where = f"game {number}, entry {index}"
                self._replay(entry)
        except (RulesError, DiceExhausted) as exc:
            if isinstance(exc, InvalidRecord):
                raise
            raise InvalidRecord(f"{where}: {exc!r}") from exc

    def _replay(self, entry: Entry) -> None:
        player = entry.player
        if entry.action == "roll":
            self.roll(player, ScriptedDice([entry.dice]))
        elif entry.action == "move":
            self.move(player, entry.pairs, automatic=entry.automatic)
        elif entry.action == "resign":
            self.resign(player, entry.kind)
        elif entry.action == "double":
            self.double(player)
        elif entry.action == "redouble":
            self.redouble(player)
        elif entry.action == "accept":
            self.accept(player)
        elif entry.action == "reject":
            self.reject(player)
        else:
            raise InvalidRecord(f"an {entry.action!r} entry inside a game")

