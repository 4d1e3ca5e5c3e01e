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


def ended_meanwhile(length: int, opponent: str, winner: str, score: tuple[int, int]) -> str:
    """To a player back after his grace's match was won meanwhile (his resignation
    accepted, say): ``score`` is the winner's points first."""
    return (f"** Your {length}-point match with {opponent} ended while you were away:"
            f" {winner} won {score[0]}-{score[1]}.")
