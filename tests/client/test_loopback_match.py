"""Two scripted CLIP clients play a whole match on a real fibsd over loopback, a third watches.

The players take the first legal play the rules engine lists (the point is the
protocol, not the play), double once, take, resign once and accept, and join
every next game.  Every line all three receive must classify; every board must
be a consistent position; the match must end for all three.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import gatherResults

from fibsd.client import events as ev
from fibsd.client.protocol import ClipClientProtocol, Credentials, connect
from fibsd.rules.movegen import legal_plays
from tests.client.test_loopback import start_server
from tests.fair_verifier import check_record

WAIT = 60.0  # a whole match, random dice, on a slow machine


class ScriptedPlayer:
    """Answers the server as a minimal player would; records what it saw."""

    def __init__(self, name: str, *, doubles_once: bool = False, resigns_once: bool = False) -> None:
        self.name = name
        self.protocol: ClipClientProtocol | None = None
        self.events: list[ev.Event] = []
        self.board: ev.Board | None = None
        self.move_on_next_board = False
        self.doubles_once = doubles_once
        self.resigns_once = resigns_once

    def send(self, command: str) -> None:
        assert self.protocol is not None
        self.protocol.send(command)

    def on_event(self, event: ev.Event) -> None:
        self.events.append(event)
        if isinstance(event, ev.Board):
            self.board = event
            if self.move_on_next_board:
                self.move_on_next_board = False
                self.move()

    def __call__(self, event: ev.Event) -> None:
        self.on_event(event)
        handle = getattr(self, "on_" + type(event).__name__, None)
        if handle is not None:
            handle(event)

    def move(self) -> None:
        assert self.board is not None and self.board.is_players_turn
        plays = legal_plays(self.board.position(), self.board.player_dice)
        if self.resigns_once and self.board.player_score == 0:
            self.resigns_once = False
            self.send("resign n")
            return
        self.send(self.board.move_command(plays[0].moves))

    def on_YourTurnToMove(self, event: ev.YourTurnToMove) -> None:
        self.move_on_next_board = True  # the opening board follows this line

    def on_PleaseMove(self, event: ev.PleaseMove) -> None:
        self.move()  # the roll board came before this line

    def on_RollOrDouble(self, event: ev.RollOrDouble) -> None:
        if self.doubles_once:
            self.doubles_once = False
            self.send("double")
        else:
            self.send("roll")

    def on_Doubles(self, event: ev.Doubles) -> None:
        if event.must_answer:
            self.send("accept")

    def on_ResignOffer(self, event: ev.ResignOffer) -> None:
        if event.must_answer:
            self.send("accept")

    def on_RejectsResignation(self, event: ev.RejectsResignation) -> None:
        if event.player != ev.YOU and self.board is not None and self.board.is_players_turn:
            self.move()  # our resignation was refused: the turn goes on

    def on_JoinNextGame(self, event: ev.JoinNextGame) -> None:
        self.send("join")

    def on_Invitation(self, event: ev.Invitation) -> None:
        self.send(f"join {event.inviter}")


async def online(port: int, player: ScriptedPlayer) -> ClipClientProtocol:
    factory, ready = connect(reactor, "127.0.0.1", port, Credentials(player.name, "secret", "scripted"),
                             player, register=True)
    protocol: ClipClientProtocol = await ready.addTimeout(10, reactor)
    player.protocol = protocol
    return protocol


def kinds(events: list[ev.Event]) -> set[type[Any]]:
    return {type(event) for event in events}


@pytest_twisted.ensureDeferred
async def test_a_whole_match_classifies_line_by_line(tmp_path: Path) -> None:
    service, port = await start_server(tmp_path)
    alice = ScriptedPlayer("alice", doubles_once=True)
    bob = ScriptedPlayer("bob", resigns_once=True)
    carol = ScriptedPlayer("carol")
    try:
        protocols = [await online(port, player) for player in (alice, bob, carol)]
        for player in (alice, bob):
            ready = player.protocol.wait_for(ev.ToggleChanged).addTimeout(10, reactor)
            player.send("toggle ready")
            assert await ready == ev.ToggleChanged("ready", True)
        answer = carol.protocol.wait_for((ev.YouWatch, ev.UnknownCommand)).addTimeout(10, reactor)
        carol.send("watch alice")
        watched = isinstance(await answer, ev.YouWatch)  # until fibsd has 'watch', carol only looks on
        players = (alice, bob, carol) if watched else (alice, bob)
        ends = [player.protocol.wait_for(ev.MatchWon) for player in players]
        alice.send("invite bob 3")
        results = await gatherResults(ends).addTimeout(WAIT, reactor)

        winner = "alice" if results[0].player == ev.YOU else "bob"
        assert (results[0].player, results[1].player) in {(ev.YOU, "alice"), ("bob", ev.YOU)}
        assert {r.match_length for r in results} == {3} and results[0].winner_score >= 3
        for protocol in protocols:
            assert protocol.unknown_lines == []
        for player in (alice, bob, carol):
            for board in (e for e in player.events if isinstance(e, ev.Board)):
                position = board.position()
                assert 15 - sum(position.player) == board.player_home
                assert 15 - sum(position.opponent) == board.opponent_home
        seen = kinds(alice.events) | kinds(bob.events)
        assert {ev.NewMatch, ev.StartingNewGame, ev.OpeningRoll, ev.Rolls, ev.Moves, ev.Board, ev.YouDouble,
                ev.Doubles, ev.AcceptsDouble, ev.ResignOffer, ev.AcceptsResignation, ev.MatchWon} <= seen
        if watched:
            assert results[2].player == winner  # the watcher is told who won
            assert {ev.StartingNewGame, ev.OpeningRoll, ev.Rolls, ev.Moves, ev.Board} <= kinds(carol.events)
            assert all(b.player == "alice" for b in carol.events if isinstance(b, ev.Board))
        (finished,) = await service.db.finished_matches("alice")
        assert check_record(finished.record) > 0  # fair dice, checked from fair-dice.md alone
    finally:
        for player in (alice, bob, carol):
            if player.protocol is not None and player.protocol.transport is not None:
                player.protocol.transport.loseConnection()
        await service.stopService()
