"""Input handling: telnet stripping, line splitting with a bound, cleaning, name rules."""

from __future__ import annotations

from fibsd.wire.input import (
    OVERLONG,
    LineSplitter,
    NameProblem,
    PasswordProblem,
    TelnetFilter,
    clean_line,
    name_problem,
    password_problem,
    split_command,
)


def test_telnet_commands_are_removed_even_when_split_across_reads() -> None:
    telnet = TelnetFilter()
    stream = b"ab\xff\xfd\x01cd\xff\xfa\x18\x01\xff\xf0ef\xff\xffg\xff\xf1h"
    assert telnet.feed(stream) == b"abcdef\xffgh"
    pieces = TelnetFilter()
    assert b"".join(pieces.feed(bytes([byte])) for byte in stream) == b"abcdef\xffgh"


def test_a_subnegotiation_may_contain_escaped_iac() -> None:
    assert TelnetFilter().feed(b"\xff\xfa\x18\xff\xff\x00\xff\xf0ok") == b"ok"


def test_lines_end_at_lf_with_or_without_cr() -> None:
    splitter = LineSplitter(100)
    assert splitter.feed(b"one\r\ntwo\nthr") == [b"one\r", b"two"]
    assert splitter.feed(b"ee\n") == [b"three"]


def test_an_overlong_line_is_dropped_as_it_arrives() -> None:
    splitter = LineSplitter(10)
    for _ in range(1000):
        assert splitter.feed(b"x" * 1000) == []
        assert splitter.pending <= 10
    assert splitter.feed(b"tail\r\nok\r\n") == [OVERLONG, b"ok\r"]
    assert splitter.feed(b"0123456789\r\n") == [b"0123456789\r"]  # exactly the limit


def test_clean_line() -> None:
    assert clean_line(b"\x00\x1b[2Jwho\x7f \r") == "[2Jwho"
    assert clean_line(b"say \xe9t\xe9\r") == "say ?t?"
    assert clean_line(b"\ttell  bob hi ") == "tell  bob hi"


def test_split_command() -> None:
    assert split_command("who") == ("who", "")
    assert split_command("tell bob  two  blanks") == ("tell", "bob  two  blanks")


def test_name_rules() -> None:
    assert name_problem("Alice_B") is None
    assert name_problem("a" * 20) is None
    assert name_problem("a" * 21) is NameProblem.TOO_LONG
    for bad in ("", "bob1", "bo b", "b\u00f6b", "<bob>", "bob-x", "bob:"):
        assert name_problem(bad) is NameProblem.BAD_CHARACTERS, bad


def test_password_rules() -> None:
    assert password_problem("abcd") is None
    assert password_problem("") is PasswordProblem.EMPTY
    assert password_problem("abc") is PasswordProblem.TOO_SHORT
    assert password_problem("ab:cd") is PasswordProblem.COLON
    assert password_problem("ab cd") is PasswordProblem.BLANK


def test_cr_nul_from_character_mode_telnet_ends_a_line() -> None:
    telnet = TelnetFilter()
    assert telnet.feed(b"who\r\x00wh") == b"who\r\nwh"
    assert telnet.feed(b"o\r") == b"o\r"
    assert telnet.feed(b"\x00") == b"\n"
    assert telnet.feed(b"a\x00b") == b"a\x00b"  # a NUL elsewhere is left to clean_line
