"""Listings of games and players: ``show games``, ``show saved``, ``show savedcount``,
``ratings`` and the counts of ``stat`` (fibs-protocol between-games.md 8, ratings.md 4).

The ``show`` topics hook into ``info.show`` with ``@show_topic``.  Saved matches and
ratings come from the store; the scores of a saved match are read from its record.
The rating list holds the accounts with at least ``Settings.rated_experience``
experience, the same threshold that lets a player invite to long matches.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred, maybeDeferred, succeed

from fibsd.server.commands import command, user_of
from fibsd.server.commands.info import show_topic
from fibsd.server.match import LiveMatch, live_match
from fibsd.wire.board import Colour
from fibsd.wire import clip
from fibsd.wire import listings_text as text

if TYPE_CHECKING:
    from fibsd.server.lobby import Lobby
    from fibsd.server.session import Session
    from fibsd.store import FinishedMatch, SavedMatch


# -- show games -------------------------------------------------------------------------

def running_games(lobby: Lobby) -> list[text.GameRow]:
    """Every live match once, in the order the matches started."""
    seen: list[LiveMatch] = []
    for match in lobby.matches.values():
        if isinstance(match, LiveMatch) and match not in seen:
            seen.append(match)
    return [text.GameRow(m.names[0], m.names[1], m.rules.length, *m.rules.score)
            for m in seen]


def all_games(session: Session) -> Deferred[list[text.GameRow]]:
    """Every live match of the server: in a cluster, this node's and then the other
    nodes' (one question to each)."""
    cluster = session.services.cluster
    if cluster is None:
        return succeed(running_games(session.lobby))
    return cluster.games().addCallback(lambda others: running_games(session.lobby) + others)


@show_topic("games")
def show_games(session: Session, rest: str) -> Deferred[None]:
    return all_games(session).addCallback(lambda rows: session.send(*text.format_games(rows)))


@command("stat")
def stat(session: Session, rest: str) -> object:
    """Counts of the server.  Only the first line starts with a digit, in the form FCM
    checks before the CLIP numbers (``^[0-9]+ registered users.``); the others start
    with a word, so no client takes them for a CLIP line."""
    online = len(session.lobby.online)

    def show(games: list[text.GameRow]) -> Deferred[None]:
        return maybeDeferred(session.db.ratings).addCallback(
            lambda accounts: session.send(*clip.format_stat(len(accounts), online, len(games))))

    return all_games(session).addCallback(show)


# -- show saved, show savedcount ----------------------------------------------------------

def saved_row(lobby: Lobby, name: str, saved: SavedMatch) -> text.SavedRow | None:
    """``name``'s view of one saved match (None if its record cannot be read)."""
    try:
        match = LiveMatch.from_record(lobby, saved.record)
        mine = match.names.index(name)
    except ValueError:
        return None
    opponent = match.names[1 - mine]
    online = lobby.find(opponent)
    marker = text.ABSENT if online is None else text.READY if online.ready else text.LOGGED_IN
    score = match.rules.score
    return text.SavedRow(opponent, marker, match.rules.length, score[mine], score[1 - mine])


def not_being_played(lobby: Lobby, name: str, saved: list[SavedMatch]) -> list[SavedMatch]:
    """``name``'s saved matches less the one he is playing now.  The store keeps a
    running match as saved after every action (so that a crash loses nothing), but for
    ``show saved`` and ``savedcount`` it is not saved: GNU Gibbon offers to resume
    every match listed, which fibsd then refuses (protocol/board.md section 7).  The
    ``playing`` mark is shared across a cluster, so this holds for a player on any node."""
    user = lobby.find(name)
    opponent = user.playing if user is not None else None
    if opponent is None:
        return saved
    pair = sorted((name, opponent))
    return [s for s in saved if [s.player_a, s.player_b] != pair]


@show_topic("saved")
def show_saved(session: Session, rest: str) -> Any:
    name = user_of(session).name

    def listing(saved: list[SavedMatch]) -> None:
        rows = [saved_row(session.lobby, name, s)
                for s in not_being_played(session.lobby, name, saved)]
        session.send(*text.format_saved([row for row in rows if row is not None]))

    return maybeDeferred(session.db.saved_matches, name).addCallback(listing)


@show_topic("savedcount")
def show_savedcount(session: Session, rest: str) -> Any:
    words = rest.split()
    if not words:
        return _count_saved(session, user_of(session).name)
    online = session.lobby.complete(words[0])
    if online is not None:
        return _count_saved(session, online.name)

    def found(record: Any) -> Any:
        if record is None:
            session.send(text.no_user_called(words[0]))
            return None
        return _count_saved(session, record.name)

    return maybeDeferred(session.db.get_user, words[0]).addCallback(found)


def _count_saved(session: Session, name: str) -> Any:
    return maybeDeferred(session.db.saved_matches, name).addCallback(
        lambda saved: session.send(
            text.saved_count(name, len(not_being_played(session.lobby, name, saved)))))


# -- ratings ------------------------------------------------------------------------------

@command("ratings")
def ratings(session: Session, rest: str) -> Any:
    try:
        request = text.parse_ratings(rest.split())
    except ValueError as error:
        session.send(str(error))
        return None
    me = user_of(session)
    threshold = session.settings.rated_experience

    def listing(accounts: list[tuple[str, float, int]]) -> None:
        ranked = text.rank_players(accounts, threshold)

        def row_of(name: str) -> text.RatingRow | None:
            wanted = name.lower()
            for row in ranked:
                if row.name.lower() == wanted:
                    return row
            for row in text.unranked_rows(accounts, threshold):
                if row.name.lower() == wanted:
                    return row
            return None

        named = row_of(request.name) if request.name is not None else None
        if request.name is not None and named is None:
            session.send(text.no_user_called(request.name))
            return
        rows = text.select_ratings(ranked, request, named)
        own = row_of(me.name)
        if own is not None:
            rows = text.with_own_row(rows, own)
        session.send(*text.format_ratings(rows, me.name))

    return maybeDeferred(session.db.ratings).addCallback(listing)


# -- oldboard ---------------------------------------------------------------------------

def last_finished_game(match: LiveMatch) -> LiveMatch | None:
    """``match`` as it stood when its last finished game ended (a replayed copy when a
    later game is under way), or None before any game ended."""
    rules = match.rules
    if rules.game is None:
        return None
    if rules.game.over:
        return match
    if len(rules.games) < 2:
        return None
    data = json.loads(match.to_record())
    data["match"]["games"] = data["match"]["games"][:-1]
    return LiveMatch.from_record(match.lobby, json.dumps(data))


def _player_named(match: LiveMatch, name: str) -> str:
    """The player's name as the match spells it; ValueError if he did not play it."""
    for player in match.names:
        if player.lower() == name.lower():
            return player
    raise ValueError(name)


def _old_game(session: Session, rest: str,
              show: Callable[[LiveMatch, str], None]) -> Any:
    """Find the last game the named player (default: the user) finished and call
    ``show(match as it ended, the player's name)``; tell the user if there is none."""
    me = user_of(session)
    words = rest.split()
    online = session.lobby.complete(words[0]) if words else me
    name = online.name if online is not None else words[0]
    running = live_match(session.lobby, name)
    if running is not None:
        last = last_finished_game(running)
        if last is not None:
            show(last, name)
            return None

    def stored(finished: list[FinishedMatch]) -> None:
        for result in reversed(finished):
            try:
                last = LiveMatch.from_record(session.lobby, result.record)
                player = _player_named(last, name)
            except ValueError:
                continue
            show(last, player)
            return
        session.send(text.no_old_board(name))

    return maybeDeferred(session.db.finished_matches, name).addCallback(stored)


@command("oldboard")
def oldboard(session: Session, rest: str) -> Any:
    me = user_of(session)
    return _old_game(session, rest, lambda last, player: session.send(
        *last.board_lines(me, seen_as=player)))


@command("oldmoves")
def oldmoves(session: Session, rest: str) -> Any:
    def show(last: LiveMatch, player: str) -> None:
        rules = last.rules
        game = rules.game
        assert game is not None
        score = list(rules.score)  # before the game: take its points back
        if game.result is not None:
            score[game.result.winner] -= game.result.points
        x_player = 0 if last.colour(0) is Colour.X else 1
        session.send(*text.format_moves_list(game.history, last.names, x_player,
                                             (score[0], score[1]), rules.length))

    return _old_game(session, rest, show)
