"""Words a user chose, inside a server line that is not CLIP-numbered, shown so that no
client pattern can read them as a FIBS event.

Client libraries classify a line by the first pattern of their table that matches
(FIBS Cookie Monster and its ports; the patterns are quoted in the FIBS protocol
reference).  Almost every pattern is anchored at the start of the line, which a
user's words never are: every line that carries them starts with fixed words
(``bob is away: ``, ``bob says: ``, ``** You tell bob: ``).  The danger is the few
patterns that match anywhere (``ANYWHERE``): ``bob is watching you.`` or eleven
blanks and ``Goodbye.`` inside an away message are read as the event itself, and
``Goodbye.`` switches the parser to its logged-out state for the rest of the session.

``shown`` keeps every word and changes only blanks: blanks around the text go, a run
of more than ten blanks is cut to ten, and where a phrase of ``ANYWHERE`` occurs, the
blank after its first word is doubled (``bob  is watching you.``).  Every such pattern
needs a single blank there, so the phrase no longer matches; protocol/chat.md ("A
user's words outside a CLIP number") says why this was chosen.
CLIP-numbered lines (``12 bob <text>``) need none of it: a digit in column 0 selects
the numeric table, whose patterns are all anchored.
"""

from __future__ import annotations

import re

_NAME = "[a-zA-Z_<>]+"
# A name that starts a phrase is matched from the start of its word only: the same
# phrases, found in time linear in the text's length.
_FIRST_NAME = "(?<![a-zA-Z_<>])" + _NAME
# The patterns of the protocol reference that are not anchored at the line start
# (fibs-protocol game-play.md 12, between-games.md, chat-and-social.md, ratings.md),
# and those of FCM's tables and the Fibs.Net port that it names in prose.
ANYWHERE = tuple(re.compile(re.sub("^@", _FIRST_NAME, pattern).replace("@", _NAME)) for pattern in (
    r"doubles\. Type 'accept' or 'reject'\.",
    r"accepts the double\.",
    r"rejects\. The game continues\.",
    r"@ rolled [1-6].+rolled [1-6]",
    r" makes the first move\.",
    r"You're not watching anymore\.",
    r"@ starts watching @",
    r"@ stops watching @",
    r"@ is watching ",
    r"@ has left the game with @",
    r"has left the game\.",
    r"has joined you\. Your running match was loaded",
    r"start an unlimited match\.",
    r"@ are resuming their [0-9]+-point match\.",
    r" has [0-9]+ saved game",
    r" has no saved games\.",
    r" waves goodbye.$",
    r" waves goodbye again.$",
    r"The game was saved\.",
    r"is playing with",
    r"is already playing with",
    r"Why would you want to do that",
    r"is 1-Pu if underdog wins",
))
# FCM's farewell pattern: eleven blanks and ``Goodbye.`` anywhere in a line.
LONGEST_BLANKS = 10
_LONG_RUN = re.compile(" {%d,}" % (LONGEST_BLANKS + 1))
_INNER_BLANK = re.compile(r"(?<=[^ ]) (?=[^ ])")


def shown(text: str) -> str:
    """``text`` with no phrase any client pattern looks for anywhere in a line."""
    # Blanks around the text go: the line's own blank before it would lengthen a run.
    text = _LONG_RUN.sub(" " * LONGEST_BLANKS, text.strip(" "))
    # As the line shows it: after a blank (`` has 3 saved games`` starts with one).
    text = " " + text
    # Doubling a blank never makes a phrase (no pattern needs two blanks in a row), so
    # each pattern is done once, from left to right: linear in the text's length.
    for pattern in ANYWHERE:
        found = pattern.search(text)
        while found is not None:
            blank = _INNER_BLANK.search(text, found.start() + 1, found.end())
            if blank is None:  # every pattern has a blank between two of its words
                raise AssertionError(f"no blank to double in {found.group(0)!r}")
            text = text[:blank.start()] + " " + text[blank.start():]
            found = pattern.search(text, found.start())
    return text[1:]
