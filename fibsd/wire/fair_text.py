"""The lines of fair play: fair dice, dicetest, abandonment, adjudication and claims.

None of these exist on FIBS.  Each is worded so that no stock client's classifier
(the FCM tables in the FIBS protocol reference) takes it for a FIBS line: the fair
dice lines start with ``fairdice:``, the rest are ``** `` messages or whois's
two-blank indentation, and no line starts with a digit.  The players' dice texts are
shown in hex, their words only on request and through ``user_text.shown``.
protocol/fair-dice.md and protocol/catalogue/fair.toml list them.
"""

from __future__ import annotations

from collections.abc import Sequence

from fibsd.fair.stats import chi_square
from fibsd.wire.user_text import shown

PREFIX = "fairdice:"
ROLLS_PER_LINE = 20

TEXT_REFUSED = ("** Your dice text may have at most {limit} characters: letters, digits,"
                " blanks and punctuation other than quotes and backslashes.")
NOTHING_TO_SHOW = "** You have no match, invitation or finished match with fair dice."
NOT_SEEDED = "** This match's dice are not seeded."
CLAIMS_OFF = "** Claims are switched off on this server."
CLAIM_YOUR_TURN = "** It's your turn: there is nothing to claim."
CLAIM_NOBODY = "** Nobody has to act now: there is nothing to claim."


NO_DICE_TEXT = f"{PREFIX} you have no dice text."


def hex_text(text: str) -> str:
    """A dice text as the line shows it: its UTF-8 bytes (the bytes mixed into the seed)
    in lower-case hex, ``-`` for none.  A player's own words could hold any phrase a
    client pattern looks for (eleven blanks and ``Goodbye.``); hex holds none."""
    return text.encode().hex() if text else "-"


def dice_text_set(text: str) -> str:
    return f"{PREFIX} your dice text in hex is now {hex_text(text)}."


def dice_text_is(text: str) -> str:
    return f"{PREFIX} your dice text in hex is {hex_text(text)}." if text else NO_DICE_TEXT


def plain_text(name: str, text: str) -> str:
    """``fairdice texts``: a player's dice text as words, for whoever asks; ``shown``
    doubles a blank inside any phrase a client looks for, so the hex lines are the
    exact ones."""
    if not text:
        return f"{PREFIX} {name} has no dice text."
    return f"{PREFIX} text of {name}: {shown(text)}"


def no_finished_match(match_id: str) -> str:
    return f"** There is no finished match {match_id}."


def match_commitment(names: Sequence[str], commitment: str) -> str:
    return f"{PREFIX} match {names[0]} {names[1]} commitment {commitment}"


def invitation_commitment(inviter: str, invitee: str, commitment: str) -> str:
    return f"{PREFIX} invitation {inviter} {invitee} commitment {commitment}"


def texts(names: Sequence[str], player_texts: Sequence[str]) -> str:
    return (f"{PREFIX} texts {names[0]} {hex_text(player_texts[0])} {names[1]} "
            f"{hex_text(player_texts[1])}")


def rolls_so_far(count: int) -> str:
    return f"{PREFIX} {count} rolls so far"


def seed_revealed(server_seed: bytes) -> str:
    return f"{PREFIX} server seed {server_seed.hex()}"


def earlier_seed(first: int, last: int, server_seed: bytes) -> str:
    """A seed revealed when the match was left or saved, and the rolls it made."""
    return f"{PREFIX} earlier seed {server_seed.hex()} rolls {first}-{last}"


def saved_seed_revealed(names: Sequence[str], server_seed: bytes) -> str:
    """The seed of a saved match that a new match between the pair replaced."""
    return f"{PREFIX} saved match {names[0]} {names[1]} server seed {server_seed.hex()}"


def finished_entry(match_id: int, winner: str, loser: str, points: tuple[int, int],
                   commitment: str) -> str:
    return (f"{PREFIX} finished {match_id} {winner} {loser} {points[0]}-{points[1]} "
            f"commitment {commitment}")


def finished_header(match_id: int, names: Sequence[str], commitment: str) -> str:
    return f"{PREFIX} finished {match_id} {names[0]} {names[1]} commitment {commitment}"


def roll_lines(rolls: Sequence[tuple[int, int]], first: int = 0) -> list[str]:
    """The rolls, ``ROLLS_PER_LINE`` a line, each line saying which roll numbers it holds."""
    lines = []
    for start in range(0, len(rolls), ROLLS_PER_LINE):
        chunk = rolls[start:start + ROLLS_PER_LINE]
        words = " ".join(f"{a}{b}" for a, b in chunk)
        low = first + start
        lines.append(f"{PREFIX} rolls {low}-{low + len(chunk) - 1} {words}")
    return lines


# -- dicetest ---------------------------------------------------------------------------

def dicetest(counts: Sequence[int]) -> list[str]:
    """FIBS's dicetest shape (``n:``, a line per face, a row per first die), then two
    lines of our own: the chi-square of the faces and of the 36 rolls.

    ``counts[6 * (d1 - 1) + d2 - 1]`` is how often the roll d1-d2 came."""
    total = sum(counts)
    faces = [0] * 6
    for index, count in enumerate(counts):
        faces[index // 6] += count
        faces[index % 6] += count
    lines = [f"n: {total}"]
    lines += [f"{face + 1}: {faces[face]}" for face in range(6)]
    for first in range(6):
        row = "  ".join(f"{first + 1}-{second + 1} {counts[6 * first + second]}"
                        for second in range(6))
        lines.append(row)
    lines.append(chi_square_line("faces", faces))
    lines.append(chi_square_line("36 rolls", counts))
    return lines


def chi_square_line(what: str, counts: Sequence[int]) -> str:
    if sum(counts) == 0:
        return f"Chi-square of the {what}: no rolls yet."
    value, p = chi_square(counts)
    return (f"Chi-square of the {what}: {value:.2f} with {len(counts) - 1} degrees of"
            f" freedom, p = {p:.2f}")


# -- droppers and stallers ----------------------------------------------------------------

def reliability(abandoned: int, matches: int) -> str:
    """The whois line after FIBS's: matches counts those completed and those abandoned."""
    percent = 100.0 if matches == 0 else 100.0 * (matches - abandoned) / matches
    return f"  Abandoned matches: {abandoned} of {matches} (reliability {percent:.0f}%)."


def claim_warning(opponent: str) -> str:
    return f"** Please act: in one minute {opponent} may claim this match."


def claimable(silent: str) -> str:
    return f"** {silent} has not acted for a while: you may type 'claim'."


def claim_too_early(silent: str, seconds: int) -> str:
    return f"** {silent} may still act: you may claim in {seconds} seconds."


def you_claimed(silent: str) -> str:
    return f"** You claimed the match: it was saved as abandoned by {silent}."


def claimed_from_you(claimant: str) -> str:
    return f"** {claimant} claimed the match because you did not act. The game was saved."


def adjudicated(opponent: str, winner: str, score: tuple[int, int], length: int) -> str:
    """Told at the next login; ``score`` is the told player's points first."""
    outcome = "you win" if winner != opponent else f"{opponent} wins"
    return (f"** Your {length}-point match with {opponent} was adjudicated at"
            f" {score[0]}-{score[1]}: {outcome}.")
