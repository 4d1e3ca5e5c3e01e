"""How a finished match ended, kept in its record (``"ended"``, protocol/web.md).

``points``: a player reached the length by play (a dropped double included);
``resignation``: the last game ended by an accepted resignation; ``time``: a clock ran
out (protocol/clock.md); ``adjudication``: an abandoned match scored by the server
(protocol/fair-dice.md); ``forfeit``: a match given up without being played out (no
path of this server writes it yet; a reader must accept it).  A record written before
the field existed has no ``"ended"``: it is then ``points`` or ``resignation``, read
from the last game, which is what those servers could end a match by.
"""

from __future__ import annotations

import json
from typing import Any

ENDINGS = ("points", "resignation", "time", "forfeit", "adjudication")


def ended(record: Any) -> str:
    """The ending of a finished match's record (the live-match JSON, already parsed)."""
    if isinstance(record, dict) and record.get("ended") in ENDINGS:
        return str(record["ended"])
    try:
        last = record["match"]["games"][-1]
        resigned = len(last) >= 2 and last[-1][0] == "accept" and last[-2][0] == "resign"
    except (KeyError, IndexError, TypeError):
        return "points"
    return "resignation" if resigned else "points"


def marked(record: str, how: str) -> str:
    """``record`` (JSON text of an object) with ``"ended": how``."""
    assert how in ENDINGS
    data = json.loads(record)
    data["ended"] = how
    return json.dumps(data, separators=(",", ":"))
