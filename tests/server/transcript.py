"""Golden transcripts (protocol/transcripts/*.txt): parsing, output tokens, replay.

The format is described in protocol/transcripts/README.md.  ``replay`` drives any
``Driver`` (in-memory transports or real sockets) through a transcript and checks, for
every client, every token it receives against the expected ones, in order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from twisted.internet.defer import Deferred

from fibsd.rules.dice import Dice, DiceExhausted
from fibsd.wire import clip
from tests.helpers import strip_echo

TRANSCRIPTS = Path(__file__).resolve().parent.parent.parent / "protocol" / "transcripts"

# Every prompt the server sends without a line end, longest first.
PROMPTS = tuple(sorted((
    "> ", "login: ", "password: ", "Please give your password: ",
    "Please retype your password: ",
    "** The two passwords were not identical. Please give them again. Password: ",
), key=len, reverse=True))

PLACEHOLDERS = {
    "int": r"[0-9]+",
    "rating": r"[0-9]+\.[0-9]{2}",
    "host": r"[^ ]+",
    "date": r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4} UTC",
    "hh:mm": r"[0-9]{2}:[0-9]{2}",
    "idle": r"[0-9]+:[0-9]{2}",
    "any": r".*",
}
_PLACEHOLDER = re.compile(r"\{(" + "|".join(re.escape(k) for k in PLACEHOLDERS) + r")\}")
_BANNER_DATE = re.compile(r"[A-Z][a-z]+, [A-Z][a-z]+ [0-9]{2} [0-9:]{8} UTC   \( "
                          + PLACEHOLDERS["date"] + r" \)")


@dataclass(frozen=True)
class Token:
    kind: str  # "line" or "prompt"
    text: str

    def __str__(self) -> str:
        return f"< {self.text}" if self.kind == "line" else f"? {self.text.rstrip(' ')}"


@dataclass(frozen=True)
class Expect:
    kind: str
    pattern: re.Pattern[str]
    source: str  # the transcript line, for messages

    def matches(self, token: Token) -> bool:
        return token.kind == self.kind and self.pattern.fullmatch(token.text) is not None


class DiceQueue:
    """The server's dice in a transcript: rolls queued by ``dice`` statements, handed out
    in order.  One queue serves the whole transcript (restarts included), so a
    statement may queue rolls for several games at once."""

    def __init__(self) -> None:
        self._rolls: list[Dice] = []
        self.used = 0
        self._seeds: list[bytes] = []
        self.seeded = False  # a ``seed`` statement switched the server to fair dice

    def add_seed(self, seed: bytes) -> None:
        self._seeds.append(seed)
        self.seeded = True

    def draw_seed(self) -> bytes:
        """The next queued server seed (a transcript without one never draws)."""
        if not self._seeds:
            raise DiceExhausted(self.used)
        return self._seeds.pop(0)

    def install(self, lobby: Any) -> None:
        """Make ``lobby`` roll from this queue, or, after a ``seed`` statement, roll
        fair dice from the queued server seeds."""
        lobby.dice = None if self.seeded else self
        lobby.draw_seed = self.draw_seed

    def add(self, rolls: Iterable[Dice]) -> None:
        self._rolls += rolls

    def roll(self) -> Dice:
        if not self._rolls:
            raise DiceExhausted(self.used)
        self.used += 1
        return self._rolls.pop(0)

    @property
    def remaining(self) -> int:
        return len(self._rolls) + len(self._seeds)


_ROLL = re.compile(r"[1-6][1-6]")


def parse_rolls(text: str) -> list[Dice]:
    """``31 66 52``: each word one roll, its first digit the first die."""
    words = text.split()
    if not words or not all(_ROLL.fullmatch(word) for word in words):
        raise ValueError(f"not a list of rolls like '31 66': {text!r}")
    return [(int(word[0]), int(word[1])) for word in words]


@dataclass(frozen=True)
class Step:
    action: str  # connect, send, close, closed, restart, wait, expect, dice, seed, coin
    client: str = ""
    text: str = ""
    expect: Expect | None = None
    rolls: tuple[Dice, ...] = ()
    line_number: int = 0


@dataclass
class Transcript:
    name: str
    accounts: list[tuple[str, str]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)


def expectation(kind: str, text: str, source: str) -> Expect:
    parts = []
    position = 0
    for match in _PLACEHOLDER.finditer(text):
        parts.append(re.escape(text[position:match.start()]))
        parts.append(PLACEHOLDERS[match.group(1)])
        position = match.end()
    parts.append(re.escape(text[position:]))
    return Expect(kind, re.compile("".join(parts)), source)


def banner_expectations(client: str) -> list[Step]:
    expects = [expectation("line", line, "(banner)") for line in clip.BANNER]
    expects.append(Expect("line", _BANNER_DATE, "(banner date)"))
    expects.append(expectation("prompt", "login: ", "(banner prompt)"))
    return [Step("expect", client, expect=e) for e in expects]


_STEP = re.compile(r"(?P<client>[A-Za-z_]+) (?P<op>[<>?]|connects$|closes$|is closed$)"
                   r"(?: (?P<text>.*))?$")


def parse(path: Path) -> Transcript:
    transcript = Transcript(path.stem)
    for number, raw in enumerate(path.read_text(encoding="ascii").splitlines(), 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        where = f"{path.name}:{number}: {line}"
        if line.startswith("account "):
            _, name, password = line.split()
            transcript.accounts.append((name, password))
            continue
        if line == "restart":
            transcript.steps.append(Step("restart", line_number=number))
            continue
        if line.startswith("dice "):
            try:
                rolls = tuple(parse_rolls(line[5:]))
            except ValueError as error:
                raise ValueError(f"cannot read {where}: {error}") from error
            transcript.steps.append(Step("dice", rolls=rolls, line_number=number))
            continue
        if line.startswith("seed "):
            try:
                seed = bytes.fromhex(line[5:])
                if len(seed) != 32:
                    raise ValueError("a seed is 32 bytes")
            except ValueError as error:
                raise ValueError(f"cannot read {where}: {error}") from error
            transcript.steps.append(Step("seed", text=line[5:], line_number=number))
            continue
        if line.startswith("wait "):
            try:
                seconds = float(line[5:])
            except ValueError as error:
                raise ValueError(f"cannot read {where}: {error}") from error
            if not 0 < seconds <= 5:
                raise ValueError(f"cannot read {where}: wait 0 to 5 seconds")
            transcript.steps.append(Step("wait", text=line[5:], line_number=number))
            continue
        if line.startswith("coin "):
            if line[5:] not in ("0", "1"):
                raise ValueError(f"cannot read {where}: the coin is 0 or 1")
            transcript.steps.append(Step("coin", text=line[5:], line_number=number))
            continue
        match = _STEP.match(line)
        if match is None:
            raise ValueError(f"cannot read {where}")
        client, op, text = match["client"], match["op"], match["text"] or ""
        if op == "connects":
            transcript.steps.append(Step("connect", client, line_number=number))
            transcript.steps += banner_expectations(client)
        elif op == "closes":
            transcript.steps.append(Step("close", client, line_number=number))
        elif op == "is closed":
            transcript.steps.append(Step("closed", client, line_number=number))
        elif op == ">":
            transcript.steps.append(Step("send", client, text, line_number=number))
        elif op == "<":
            transcript.steps.append(
                Step("expect", client, expect=expectation("line", text, where)))
        else:
            transcript.steps.append(
                Step("expect", client, expect=expectation("prompt", text + " ", where)))
    return transcript


def transcripts() -> list[Path]:
    return sorted(TRANSCRIPTS.glob("*.txt"))


class Tokenizer:
    """Cuts one client's received bytes into lines and prompts, whatever the chunking.

    A known prompt at the start of a line is a token of its own; the rest of that
    line (empty, if a CR LF follows at once) is a line token.  Telnet echo
    switches are dropped (unit tests check where they go).
    """

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, data: bytes) -> list[Token]:
        self._buffer += strip_echo(data).decode("ascii")
        tokens = []
        while self._buffer:
            prompt = next((p for p in PROMPTS if self._buffer.startswith(p)), None)
            if prompt is not None:
                tokens.append(Token("prompt", prompt))
                self._buffer = self._buffer[len(prompt):]
                continue
            end = self._buffer.find("\r\n")
            if end < 0:
                break
            tokens.append(Token("line", self._buffer[:end]))
            self._buffer = self._buffer[end + 2:]
        return tokens

    @property
    def leftover(self) -> str:
        return self._buffer


class Driver(Protocol):
    """One way to run a server and its clients (in memory, or over loopback)."""

    tokens: dict[str, list[Token]]
    closed: set[str]
    dice: DiceQueue  # the lobby's dice, on every server the driver starts
    coin: int  # what the lobby's coin returns (0: the inviter plays O in game one)

    def create_account(self, name: str, password: str) -> None: ...
    def connect(self, client: str) -> Deferred[None] | None: ...
    def send(self, client: str, line: str) -> None: ...
    def close(self, client: str) -> None: ...
    def restart(self) -> Deferred[None]: ...
    def reinstall(self) -> None: ...  # the dice queue installed again on the running server
    def wait(self, seconds: float) -> Deferred[None]: ...
    def wait_until(self, done: Callable[[], bool], what: str) -> Deferred[None]: ...


class TranscriptMismatch(AssertionError):
    pass


async def replay(transcript: Transcript, driver: Driver) -> None:
    for name, password in transcript.accounts:
        driver.create_account(name, password)
    expected: dict[str, list[Expect]] = {}
    must_close: set[str] = set()

    def check() -> bool:
        """True when every expectation so far is met; raises on a wrong token."""
        complete = True
        for client, expects in expected.items():
            received = driver.tokens.get(client, [])
            for expect, token in zip(expects, received):
                if not expect.matches(token):
                    raise TranscriptMismatch(
                        f"{transcript.name}: {client} received {token}\n"
                        f"  expected {expect.source}\n  its output so far:\n    "
                        + "\n    ".join(str(t) for t in received))
            if len(received) > len(expects):
                extra = received[len(expects)]
                raise TranscriptMismatch(
                    f"{transcript.name}: {client} received an unexpected {extra} after "
                    f"{expects[-1].source if expects else 'nothing'}")
            if len(received) < len(expects):
                complete = False
        return complete and must_close <= driver.closed

    async def settle(what: str) -> None:
        await driver.wait_until(check, what)

    for step in transcript.steps:
        if step.action == "expect":
            assert step.expect is not None
            expected.setdefault(step.client, []).append(step.expect)
            continue
        if step.action == "closed":
            must_close.add(step.client)
            continue
        if step.action == "dice":
            driver.dice.add(step.rolls)
            continue
        if step.action == "coin":
            driver.coin = int(step.text)
            continue
        if step.action == "seed":
            driver.dice.add_seed(bytes.fromhex(step.text))
            driver.reinstall()
            continue
        await settle(f"line {step.line_number}")
        if step.action == "connect":
            expected[step.client] = []
            must_close.discard(step.client)
            connecting = driver.connect(step.client)
            if connecting is not None:
                await connecting
        elif step.action == "send":
            driver.send(step.client, step.text)
        elif step.action == "close":
            driver.close(step.client)
        elif step.action == "wait":
            await driver.wait(float(step.text))
        elif step.action == "restart":
            await driver.restart()
            expected.clear()
            must_close.clear()
    await settle("the end")
    if driver.dice.remaining:
        raise TranscriptMismatch(
            f"{transcript.name}: {driver.dice.remaining} scripted rolls or seeds were never used")


def all_received(tokens: Iterable[list[Token]]) -> list[Token]:
    return [token for stream in tokens for token in stream]
