"""What the server reads: bytes from telnet programs and clients, turned into clean lines.

FIBS is a seven-bit line protocol.  Telnet programs interleave IAC negotiation with the
text, raw clients (CLIP) do not; both end lines with LF or CR LF.  Everything here is
pure so the network layer stays thin:

* ``TelnetFilter`` removes IAC sequences, even when one is split across reads.
* ``LineSplitter`` cuts the byte stream into lines and never holds more than
  ``max_length`` bytes of an unfinished line: an overlong line is discarded as it
  arrives and reported once, as ``OVERLONG``, when its end is seen.
* ``clean_line`` makes one line seven-bit text: bytes above 127 become ``?`` (FIBS is
  seven-bit only), a tab becomes a blank, other control characters disappear, and
  blanks around the line are stripped.
* ``name_problem`` and ``password_problem`` hold the registration rules.
"""

from __future__ import annotations

import enum
from typing import Final

IAC: Final = 255
SB: Final = 250
SE: Final = 240
WILL, WONT, DO, DONT = 251, 252, 253, 254
ECHO_OPTION: Final = 1

# Sent around password prompts, as FIBS does: the server takes over echoing (and echoes
# nothing), so the password is not shown; WONT ECHO gives local echo back.
WILL_ECHO: Final = bytes((IAC, WILL, ECHO_OPTION))
WONT_ECHO: Final = bytes((IAC, WONT, ECHO_OPTION))


class _Telnet(enum.Enum):
    DATA = enum.auto()
    COMMAND = enum.auto()  # after IAC
    OPTION = enum.auto()  # after IAC WILL/WONT/DO/DONT
    SUB = enum.auto()  # inside IAC SB ... IAC SE
    SUB_IAC = enum.auto()  # IAC seen inside a subnegotiation


class TelnetFilter:
    """Strips telnet commands from a byte stream; ``IAC IAC`` stands for a 0xFF byte.

    A telnet program in character mode ends lines with CR NUL; that becomes CR LF.
    """

    __slots__ = ("_state", "_after_cr")  # one per connection: no attribute dict

    def __init__(self) -> None:
        self._state = _Telnet.DATA
        self._after_cr = False

    def feed(self, data: bytes) -> bytes:
        if self._state is _Telnet.DATA and IAC not in data and 0 not in data:
            self._after_cr = data.endswith(b"\r")
            return data
        out = bytearray()
        for byte in data:
            state = self._state
            if state is _Telnet.DATA:
                if byte == IAC:
                    self._state = _Telnet.COMMAND
                elif byte == 0 and self._after_cr:
                    out.append(10)
                else:
                    out.append(byte)
                self._after_cr = byte == 13
            elif state is _Telnet.COMMAND:
                if byte == IAC:
                    out.append(byte)
                    self._state = _Telnet.DATA
                elif byte in (WILL, WONT, DO, DONT):
                    self._state = _Telnet.OPTION
                elif byte == SB:
                    self._state = _Telnet.SUB
                else:
                    self._state = _Telnet.DATA
            elif state is _Telnet.OPTION:
                self._state = _Telnet.DATA
            elif state is _Telnet.SUB:
                if byte == IAC:
                    self._state = _Telnet.SUB_IAC
            else:  # SUB_IAC
                self._state = _Telnet.DATA if byte == SE else _Telnet.SUB
        return bytes(out)


class _Overlong:
    def __repr__(self) -> str:
        return "OVERLONG"


OVERLONG: Final = _Overlong()
"""Stands in the output of ``LineSplitter.feed`` for a line that was too long."""


class LineSplitter:
    """Cuts bytes into lines at LF, holding at most ``max_length`` bytes meanwhile.

    >>> splitter = LineSplitter(max_length=5)
    >>> splitter.feed(b"who\\r\\nbye")
    [b'who\\r']
    >>> splitter.feed(b"\\n" + b"x" * 9 + b"\\nok\\n")
    [b'bye', OVERLONG, b'ok']
    """

    __slots__ = ("max_length", "_buffer", "_discarding")  # one per connection

    def __init__(self, max_length: int) -> None:
        self.max_length = max_length
        self._buffer = b""
        self._discarding = False

    def feed(self, data: bytes) -> list[bytes | _Overlong]:
        lines: list[bytes | _Overlong] = []
        *complete, rest = (self._buffer + data).split(b"\n")
        for line in complete:
            if self._discarding or len(line.rstrip(b"\r")) > self.max_length:
                lines.append(OVERLONG)
                self._discarding = False
            else:
                lines.append(line)
        if self._discarding or len(rest) > self.max_length:
            self._discarding = True
            rest = b""
        self._buffer = rest
        return lines

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line held (bounded by ``max_length``)."""
        return len(self._buffer)


def clean_line(raw: bytes) -> str:
    """Seven-bit text of one received line.

    >>> clean_line(b"  tell bob h\\xc3\\xa9llo\\tthere\\x07\\r")
    'tell bob h??llo there'
    """
    chars = []
    for byte in raw:
        if byte >= 128:
            chars.append("?")
        elif byte == 9:
            chars.append(" ")
        elif byte >= 32 and byte != 127:
            chars.append(chr(byte))
    return "".join(chars).strip(" ")


def split_command(line: str) -> tuple[str, str]:
    """The first word and the rest of the line (rest stripped of the blanks before it).

    >>> split_command("tell  bob   hi there ")
    ('tell', 'bob   hi there ')
    """
    word, _, rest = line.partition(" ")
    return word, rest.lstrip(" ")


# --- registration rules ---------------------------------------------------------------

NAME_MAX: Final = 20
PASSWORD_MIN: Final = 4


class NameProblem(enum.Enum):
    BAD_CHARACTERS = enum.auto()  # also an empty name
    TOO_LONG = enum.auto()


def name_problem(name: str) -> NameProblem | None:
    """Why ``name`` cannot be a new account's name, or None.

    Letters and the underscore only: client libraries (FIBS Cookie Monster) match names
    with ``[a-zA-Z_<>]+``, so a digit would make every line naming the user unreadable.

    >>> name_problem("Jon_Doe") is None, name_problem("r2d2"), name_problem("a" * 21)
    (True, <NameProblem.BAD_CHARACTERS: 1>, <NameProblem.TOO_LONG: 2>)
    """
    if not name or not all(c == "_" or ("a" <= c.lower() <= "z") for c in name):
        return NameProblem.BAD_CHARACTERS
    if len(name) > NAME_MAX:
        return NameProblem.TOO_LONG
    return None


# Words no new account may be named (any case), besides every command word (the server
# adds those): each stands for something else in lines clients and readers parse.  A
# player named `You` would read `board:You:You:...` and `You rolled ...` on his
# opponent's screen.  The list and its reasons: protocol/access.md.
RESERVED_NAMES = frozenset({
    "you",        # board lines name the recipient `You`; game lines say `You rolled`, `You win`
    "guest",      # the login that registers
    "login",      # the CLIP login line starts `login <client> ...`
    "board",      # the CLIP board line starts `board:`
    "unlimited",  # the match length word of invitations and the `redoubles` variable
    "beginner",   # a `help` topic that is no command
    "formula",    # the same
})


def reserved_name(name: str) -> bool:
    """Whether ``name`` is one of ``RESERVED_NAMES``, in any case.

    >>> reserved_name("YOU"), reserved_name("Youth")
    (True, False)
    """
    return name.lower() in RESERVED_NAMES


class PasswordProblem(enum.Enum):
    EMPTY = enum.auto()
    TOO_SHORT = enum.auto()
    COLON = enum.auto()  # the colon separates the parts of the `password` command
    BLANK = enum.auto()  # a blank cannot survive the blank-separated CLIP login line


def password_problem(password: str) -> PasswordProblem | None:
    if not password:
        return PasswordProblem.EMPTY
    if ":" in password:
        return PasswordProblem.COLON
    if " " in password:
        return PasswordProblem.BLANK
    if len(password) < PASSWORD_MIN:
        return PasswordProblem.TOO_SHORT
    return None
