"""Fair play commands: ``diceseed``, ``fairdice``, ``dicetest`` and ``claim``
(protocol/fair-dice.md).

``diceseed`` sets the text mixed into the seed of the user's next match; ``fairdice``
shows the commitment of the current match, of the user's invitations, or everything
about a finished match (the texts in hex; ``fairdice texts`` shows them as words);
``dicetest`` is FIBS's roll statistics with a chi-square figure below; ``claim``
saves a match whose player to act stays silent.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import gatherResults, maybeDeferred

from fibsd.fair.verify import NotVerifiable, fair_document
from fibsd.rules.dice import commitment
from fibsd.server.commands import command, user_of
from fibsd.server.commands.play import Invitation
from fibsd.server.match import live_match
from fibsd.server.ratelimit import allow
from fibsd.wire import chat, fair_text
from fibsd.wire import game_text as text

if TYPE_CHECKING:
    from fibsd.server.match import LiveMatch
    from fibsd.server.session import Session
    from fibsd.store import FinishedMatch, SavedMatch

RECENT_FINISHED = 5  # finished matches ``fairdice`` lists when there is nothing current


def valid_dice_text(words: str, limit: int) -> bool:
    """Printable ASCII without quotes or backslashes, so the text reads back unambiguously
    inside the quotes of the ``fairdice:`` lines and of a .mat header."""
    return len(words) <= limit and all(" " <= c <= "~" and c not in "'\"\\" for c in words)


@command("diceseed")
def diceseed(session: Session, rest: str) -> None:
    user = user_of(session)
    words = rest.strip()
    if not words:
        session.send(fair_text.dice_text_is(user.dice_text))
        return
    limit = session.settings.fair.max_dice_text
    if not valid_dice_text(words, limit):
        session.send(fair_text.TEXT_REFUSED.format(limit=limit))
        return
    user.dice_text = words
    session.send(fair_text.dice_text_set(words))


@command("fairdice")
def fairdice(session: Session, rest: str) -> Any:
    words = rest.split()
    if words == ["texts"]:
        return _plain_texts(session)
    if words:
        return _finished(session, words[0])
    match = _current(session)
    if match is not None:
        if match.fair is None:
            session.send(fair_text.NOT_SEEDED)
        else:
            earlier = []
            for segment in match.fair.earlier:  # revealed when the match was left or saved
                earlier += [fair_text.earlier_seed(segment["first_roll"], segment["next_roll"] - 1,
                                                   bytes.fromhex(segment["server_seed"])),
                            fair_text.texts(match.names, segment["texts"])]
            session.send(fair_text.match_commitment(match.names, match.fair.commitment),
                         fair_text.texts(match.names, match.fair.texts),
                         fair_text.rolls_so_far(match.fair.next_roll), *earlier)
        return None
    return _invitations(session)


def _current(session: Session) -> LiveMatch | None:
    """The match the user plays, else the one he watches."""
    user = user_of(session)
    match = live_match(session.lobby, user.name)
    if match is None and user.watching is not None:
        match = live_match(session.lobby, user.watching)
    return match


def _plain_texts(session: Session) -> None:
    """``fairdice texts``: the dice texts as words (the other lines show them in hex) of
    the match the user plays or watches, else his own."""
    match = _current(session)
    if match is not None and match.fair is not None:
        session.send(*(fair_text.plain_text(name, player_text)
                       for name, player_text in zip(match.names, match.fair.texts, strict=True)))
        return
    user = user_of(session)
    session.send(fair_text.plain_text(user.name, user.dice_text))


def _invitations(session: Session) -> Any:
    """The commitments of the invitations the user sent or got, else his recent
    finished matches."""
    user = user_of(session)
    lobby = session.lobby
    invitations = [i for i in lobby.invitations.values()
                   if isinstance(i, Invitation) and user.name in (i.inviter, i.invitee)]
    lines = [fair_text.invitation_commitment(i.inviter, i.invitee, commitment(i.server_seed))
             for i in invitations if i.server_seed is not None]
    resumes = [i for i in invitations if i.length is None]

    def saved(records: list[SavedMatch | None]) -> Any:
        for invitation, record in zip(resumes, records, strict=True):
            fair = _saved_fair(record)
            if fair is not None:
                lines.append(fair_text.invitation_commitment(
                    invitation.inviter, invitation.invitee, fair))
        if lines:
            session.send(*lines)
            return None
        return maybeDeferred(session.db.recent_finished_matches, user.name,
                             RECENT_FINISHED).addCallback(recent)

    def recent(found: list[FinishedMatch]) -> None:
        listed = []
        for finished in found:
            document = _document(finished)
            if document is not None and finished.id is not None:
                listed.append(fair_text.finished_entry(
                    finished.id, finished.winner, finished.loser,
                    (finished.winner_points, finished.loser_points), document["commitment"]))
        if listed:
            session.send(*listed)
        else:
            session.send(fair_text.NOTHING_TO_SHOW)

    loads = [maybeDeferred(session.db.load_match, i.inviter, i.invitee) for i in resumes]
    if not loads:
        return saved([])
    return gatherResults(loads).addCallback(saved)


def _saved_fair(record: SavedMatch | None) -> str | None:
    if record is None:
        return None
    try:
        dice = json.loads(record.record).get("dice")
        return commitment(bytes.fromhex(dice["server_seed"]))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _document(finished: FinishedMatch) -> dict[str, Any] | None:
    try:
        return fair_document(json.loads(finished.record))
    except (NotVerifiable, ValueError, TypeError, IndexError):
        return None


def _finished(session: Session, word: str) -> Any:
    if not (word.isascii() and word.isdigit()) or len(word) > 18:
        session.send(fair_text.no_finished_match(word))
        return None
    if not allow(session, "fairdice_per_minute"):
        session.send(chat.command_flood("fairdice"))
        return None

    def show(finished: FinishedMatch | None) -> None:
        if finished is None:
            session.send(fair_text.no_finished_match(word))
            return
        document = _document(finished)
        if document is None:
            session.send(fair_text.NOT_SEEDED)
            return
        names = document["players"]
        rolls = [(r[0], r[1]) for r in document["rolls"]]
        seeds = document.get("seeds") or [{"server_seed": document["server_seed"],
                                           "texts": document["texts"], "first_roll": 0}]
        lines = [fair_text.finished_header(int(word), names, document["commitment"])]
        for number, seed in enumerate(seeds):  # one seed, or one per part (fair-dice.md 1.2)
            first = seed["first_roll"]
            end = seeds[number + 1]["first_roll"] if number + 1 < len(seeds) else len(rolls)
            lines += [fair_text.seed_revealed(bytes.fromhex(seed["server_seed"])),
                      fair_text.texts(names, seed["texts"]),
                      *fair_text.roll_lines(rolls[first:end], first)]
        session.send(*lines)

    return maybeDeferred(session.db.finished_match, int(word)).addCallback(show)


@command("dicetest", aliases=("di", "dic", "dice"))
def dicetest(session: Session, rest: str) -> None:
    session.send(*fair_text.dicetest(user_of(session).rolls_seen))


@command("claim")
def claim(session: Session, rest: str) -> Any:
    user = user_of(session)
    match = live_match(session.lobby, user.name)
    if match is None:
        session.send(text.NOT_PLAYING)
        return None
    if match.paused:  # waiting for the database: nobody is silent
        session.send(text.MATCH_WAITS)
        return None
    after = session.settings.fair.claim_after
    if not after:
        session.send(fair_text.CLAIMS_OFF)
        return None
    silent = match.silent_player()
    if silent is None:
        session.send(fair_text.CLAIM_NOBODY)
        return None
    if match.names[silent] == user.name:
        session.send(fair_text.CLAIM_YOUR_TURN)
        return None
    waited = session.lobby.now() - match.silent_since
    if waited < after:
        session.send(fair_text.claim_too_early(match.names[silent],
                                               math.ceil(after - waited)))
        return None
    return match.claim(user)

