"""The lines of a match held for a player whose connection dropped (fibsd's own; FIBS
has none).  Catalogue: protocol/catalogue/grace.toml; prose: protocol/play.md, "Drop
grace".  Both are ``** `` lines, which every client shows as a notice, and no stock
client pattern matches them: the saved-match cookies (``The game was saved.``) come
only when the grace ends without him, as FIBS sends them at a drop."""

from __future__ import annotations


def match_waits_for(name: str, seconds: int) -> str:
    return (f"** {name} lost the connection; the match waits {seconds} seconds"
            f" for {name} to log in again.")


def is_back(name: str) -> str:
    return f"** {name} is back; the match goes on."
