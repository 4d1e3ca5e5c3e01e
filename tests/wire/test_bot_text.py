"""The bot lines (issue 24) read as nothing a stock client knows."""

from __future__ import annotations

import re

from fibsd.wire import bot_text
from tests.wire.test_user_text_patterns import reference_patterns


def test_the_whois_line_reads_as_nothing_a_stock_client_knows() -> None:
    lines = [bot_text.whois_line(None), bot_text.whois_line("gnubg world class: 2-ply")]
    for line in lines:
        assert [p.pattern for p in reference_patterns() if p.search(line)] == []
        assert re.fullmatch(r"  Bot: a program plays this account( \([^\r\n]+\))?\.", line)
