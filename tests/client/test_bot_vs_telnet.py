"""fibsd-bot against a person on telnet: a real loopback fibsd on seeded dice, the bot on CLIP,
and a raw socket that logs in and plays the way someone at a terminal does.

The person types the name and the password at the prompts (no CLIP ``login`` line), sets
``boardstyle 2`` to see the ASCII board (new accounts get the ``board:`` line), reads that
board to know where the checkers stand, and types ``roll`` and ``move`` in FIBS notation.
fibsd has no ASCII board parser (the server only draws boards), so the small reader below
is the person's eyes; it is checked against ``render_board`` first.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import DeferredQueue
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol

from fibsd.app import FibsService
from fibsd.client import events as ev
from fibsd.client.protocol import Credentials
from fibsd.client.strategy import choose_play
from fibsd.rules.movegen import legal_plays
from fibsd.rules.notation import format_fibs_moves
from fibsd.rules.position import Position
from fibsd.store import INITIAL_RATING
from fibsd.wire.ascii_board import render_board
from fibsd.wire.board import Colour, Seat, Table, board_view, view_position
from tests.client.test_bot import RecordingBot, hang_up, online, ready, seeded_server
from tests.client.test_loopback import close, log_in

WAIT = 10.0  # seconds any one line may take on a slow machine
BOARD_LINES = 15  # header, 5 rows, middle, 5 rows, footer, empty line, BAR/OFF/cube line
TELNET = (b"\xff\xfb\x01", b"\xff\xfc\x01")  # IAC WILL/WONT ECHO around the password


# -- the person's eyes: the style 2 ASCII board ---------------------------------------------


def _column(cells: list[str]) -> tuple[str | None, int]:
    """One point's five cells, nearest the frame first: its colour and its height (a taller
    stack writes its height in the fifth cell)."""
    texts = [cell.strip() for cell in cells]
    letters = [text for text in texts if text in ("X", "O")]
    if texts[4].isdigit():
        return letters[0], int(texts[4])
    return (letters[0] if letters else None), len(letters)


def read_ascii_board(lines: list[str], own_name: str) -> tuple[Colour, Position]:
    """The reader's colour and the position from the reader's side, from a style 2 board."""
    header, rows, footer = lines[0], lines[1:12], lines[12]
    halves = ((header, rows[:5]), (footer, rows[10:5:-1]))  # rows nearest the frame first
    checkers: dict[Colour, list[int]] = {Colour.X: [0] * 26, Colour.O: [0] * 26}
    colours: dict[str, Colour] = {}
    for frame, half in halves:
        match = re.search(r"\+ ([XO]): (\w+) - score", frame)
        assert match is not None, frame
        frame_colour = Colour[match.group(1)]
        colours[match.group(2)] = frame_colour
        numbers = [int(n) for n in re.findall(r"\d+", frame[:frame.rindex("+")])]
        for index, point in enumerate(numbers):
            start = 4 + 3 * index if index < 6 else 28 + 3 * (index - 6)
            letter, height = _column([row[start:start + 3] for row in half])
            if letter is not None:
                checkers[Colour[letter]][point] = height
        _, on_bar = _column([row[23:26] for row in half])  # the bar cell by a frame is its side's
        checkers[frame_colour][frame_colour.bar] = on_bar
    mine = colours[own_name]

    def side(colour: Colour) -> tuple[int, ...]:
        # own numbering: O runs 24 -> 1 in absolute points, X 1 -> 24
        points = [checkers[colour][p if colour is Colour.O else 25 - p] for p in range(1, 25)]
        return (*points, checkers[colour][colour.bar])

    return mine, Position(side(mine), side(mine.other))


@pytest.mark.parametrize("colour", list(Colour))
def test_the_reader_sees_what_the_server_draws(colour: Colour) -> None:
    position = Position((0, 2, 3, 0, 0, 7) + (0,) * 11 + (1,) + (0,) * 6 + (1,),
                        (1, 1, 0, 0, 2, 6) + (0,) * 18 + (2,))
    me, them = Seat("You", colour, 0), Seat("bot", colour.other, 0)
    view = board_view(position, me, them, Table(match_length=1, cube=1, turn=colour))
    lines = render_board(view, 2, own_name="hum")
    assert view_position(view, colour) == position  # the line and the drawing agree ...
    assert read_ascii_board(lines, "hum") == (colour, position)  # ... and so does the reader


# -- the person's terminal -----------------------------------------------------------------


class Terminal(Protocol):
    """A telnet session: answers the login and password prompts as typed lines, hands on
    every complete line with the ``> `` prompts in front of it removed."""

    def __init__(self, name: str, password: str) -> None:
        self.answers = {b"login: ": name, b"password: ": password}
        self.pending = b""
        self.incoming: DeferredQueue[str] = DeferredQueue()
        self.transcript: list[str] = []

    def dataReceived(self, data: bytes) -> None:
        data = self.pending + data
        for sequence in TELNET:
            data = data.replace(sequence, b"")
        *complete, self.pending = data.split(b"\r\n")
        for raw in complete:
            line = raw.decode("latin-1")
            while line.startswith("> "):
                line = line[2:]
            self.transcript.append(line)
            self.incoming.put(line)
        for prompt, answer in list(self.answers.items()):
            if self.pending.endswith(prompt):
                del self.answers[prompt]
                self.type(answer)

    def type(self, text: str) -> None:
        self.transcript.append(f"<typed> {text}")
        self.transport.write(text.encode("ascii") + b"\r\n")

    async def line(self) -> str:
        return await self.incoming.get().addTimeout(WAIT, reactor)

    async def expect(self, wanted: str) -> list[str]:
        """Lines up to and including ``wanted``."""
        seen = [await self.line()]
        while seen[-1] != wanted:
            seen.append(await self.line())
        return seen


async def telnet_login(port: int, name: str) -> Terminal:
    terminal = Terminal(name, "secret")
    await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port), terminal)
    await terminal.expect(f"** User {name} authenticated.")
    terminal.type("set boardstyle 2")
    await terminal.expect("Value of 'boardstyle' set to 2.")
    terminal.type("toggle ready")
    await terminal.expect("** You're now ready to invite or join someone.")
    return terminal


async def play_to_the_end(person: Terminal, name: str) -> str:
    """Play as the person does: roll when asked, read the last board, type the play the
    bot's own heuristic likes best; returns the match's last line."""
    position: Position | None = None
    colour = Colour.X
    dice = (0, 0)
    move_on_board = False
    end = re.compile(r"(You win|\w+ wins) the 1 point match \d+-0 \.")
    while True:
        line = await person.line()
        if line.startswith("   +") and "score:" in line:
            board = [line] + [await person.line() for _ in range(BOARD_LINES - 1)]
            colour, position = read_ascii_board(board, name)
            if move_on_board:
                move_on_board = False
                move(person, position, colour, dice)
        elif line == "It's your turn to roll or double.":
            person.type("roll")
        elif match := re.fullmatch(r"You roll (\d) and (\d)\.", line):
            dice = (int(match[1]), int(match[2]))
        elif match := re.fullmatch(r"You rolled (\d), \w+ rolled (\d)", line):
            dice = (int(match[1]), int(match[2]))
        elif line == "It's your turn to move.":
            move_on_board = True  # the opening board follows
        elif re.fullmatch(r"Please move [1-4] pieces?\.", line):
            assert position is not None
            move(person, position, colour, dice)
        elif end.fullmatch(line):
            return line


def move(person: Terminal, position: Position, colour: Colour, dice: tuple[int, int]) -> None:
    play = choose_play(legal_plays(position, dice))
    assert play is not None  # the server asks for a move only when there is one
    person.type("move " + format_fibs_moves(play.moves, colour.direction))


class SendingBot(RecordingBot):
    """Keeps the commands it types, to compare with what its opponent is told."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.sent: list[str] = []

    def send(self, command: str) -> None:
        self.sent.append(command)
        super().send(command)


def bot_moves(bot: SendingBot) -> list[str]:
    """The bot's moves as its opponent is told them."""
    return [f"bot moves {command.removeprefix('move ')} ." for command in bot.sent
            if command.startswith("move ")]


async def register(port: int, name: str) -> None:
    await close(await log_in(port, Credentials(name, "secret", "fibsd_test"), register=True))


async def check_database(service: FibsService, winner: str, loser: str, points: int = 1) -> None:
    finished = await service.db.finished_matches("hum")
    assert [(m.winner, m.loser, m.length, m.winner_points, m.loser_points) for m in finished] == \
        [(winner, loser, 1, points, 0)]
    assert finished[0].winner_rating_change > 0 > finished[0].loser_rating_change
    for name, higher in ((winner, True), (loser, False)):
        user = await service.db.get_user(name)
        assert user.experience == 1 and (user.rating > INITIAL_RATING) is higher


def the_game(person: Terminal) -> list[str]:
    """What the person read and typed once ready, boards and empty lines left out."""
    ready_at = person.transcript.index("** You're now ready to invite or join someone.")
    return [line for line in person.transcript[ready_at + 1:]
            if line and not line.startswith(("   ", "  v|"))]


def check_play(person: Terminal, bot: SendingBot) -> list[str]:
    """Each side saw every move of the other, the bot read every line, and the person
    never got an error; returns what the person saw."""
    seen = the_game(person)
    assert [line for line in seen if line.startswith("bot moves ")] == bot_moves(bot)
    assert bot_moves(bot)
    typed = [line.removeprefix("<typed> move ").split() for line in seen
             if line.startswith("<typed> move ")]
    told = [[f"{a}-{b}" for a, b in event.moves] for event in bot.events
            if isinstance(event, ev.Moves) and event.player == "hum"]
    assert typed and told == typed
    assert [p.unknown_lines for p in bot.protocols] == [[] for _ in bot.protocols]
    return seen


@pytest_twisted.ensureDeferred
async def test_a_person_on_telnet_invites_the_bot_and_plays_a_whole_match(tmp_path: Path) -> None:
    service, port = await seeded_server(tmp_path, seed=3)
    bot = SendingBot("bot", matches=1, clock=reactor)
    person: Terminal | None = None
    try:
        await register(port, "hum")
        await online(port, bot)
        await ready(bot)
        person = await telnet_login(port, "hum")
        person.type("invite bot 1")
        await play_to_the_end(person, "hum")
        await bot.finished.wait().addTimeout(WAIT, reactor)

        seen = check_play(person, bot)
        assert seen[:6] == [
            "<typed> invite bot 1",
            "** You invited bot to a 1 point match.",
            "** Player bot has joined you for a 1 point match.",
            "Starting a new game with bot.",
            "You rolled 2, bot rolled 5",
            "bot makes the first move.",
        ]
        assert [line for line in seen if line.startswith("** ")] == seen[1:3]  # no error
        assert seen[-2:] == ["bot wins the game and gets 1 point. Sorry.",
                             "bot wins the 1 point match 1-0 ."]
        await check_database(service, "bot", "hum")
    finally:
        hang_up(bot)
        if person is not None:
            person.transport.loseConnection()
        await service.stopService()


@pytest_twisted.ensureDeferred
async def test_the_bot_invites_a_person_on_telnet_and_they_play_a_whole_match(tmp_path: Path) -> None:
    service, port = await seeded_server(tmp_path, seed=1)
    bot = SendingBot("bot", invite="hum", length=1, matches=1, clock=reactor)
    person: Terminal | None = None
    try:
        await register(port, "hum")
        person = await telnet_login(port, "hum")
        await online(port, bot)
        await person.expect("Type 'join bot' to accept.")
        person.type("join bot")
        await play_to_the_end(person, "hum")
        await bot.finished.wait().addTimeout(WAIT, reactor)

        seen = check_play(person, bot)
        assert seen[:11] == [
            "bot just registered and logs in.",  # the guest dialogue's connection
            "bot drops connection.",
            "bot logs in.",
            "bot wants to play a 1 point match with you.",
            "Type 'join bot' to accept.",
            "<typed> join bot",
            "** You are now playing a 1 point match with bot",
            "Starting a new game with bot.",
            "You rolled 5, bot rolled 2",
            "It's your turn to move.",
            "<typed> move 12-17 17-19",
        ]
        assert [line for line in seen if line.startswith("** ")] == seen[6:7]  # no error
        assert seen[-2:] == ["bot wins the game and gets 2 points. Sorry.",
                             "bot wins the 1 point match 2-0 ."]
        await check_database(service, "bot", "hum", points=2)
    finally:
        hang_up(bot)
        if person is not None:
            person.transport.loseConnection()
        await service.stopService()
