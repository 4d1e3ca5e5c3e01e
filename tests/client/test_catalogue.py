"""Every line fibsd's own catalogue (protocol/catalogue/*.toml) says the server sends is classified.

This is the client's side of the promise that fibsd never sends a line a CLIP
client cannot classify: a catalogue entry whose example falls to ``Unknown``
fails here.  Free-text lines are classified in the context where they occur.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from fibsd.client import events as ev
from fibsd.client.parse import LineReader, Phase, classify

CATALOGUE = Path(__file__).resolve().parents[2] / "protocol" / "catalogue"

# Free text has no shape; it is recognised by where it comes (LineReader's phase).
IN_CONTEXT = {
    "banner-text": (Phase.LOGIN, ev.Banner),
    "banner-date": (Phase.LOGIN, ev.Banner),
    "registered-walkthrough": (Phase.LOGIN, ev.Banner),  # the guest dialogue, before login
    "motd-rule": (Phase.MOTD, ev.MotdLine),
    "motd-body": (Phase.MOTD, ev.MotdLine),
    "farewell": (Phase.GONE, ev.Farewell),
    "export-mat-line": (Phase.EXPORT, ev.MatLine),
}
# Help topics are free text after a command, with no end marker: nothing can know them.
# Unknown to fibsd's client on purpose: help texts; the web session token, which only a
# WebSocket client that asks for it gets (protocol/web.md, "Reconnecting").
FREE_TEXT = {"help-text", "session-token"}

EXPECTED = {
    "you-invited": ev.YouInvited, "invitation": ev.Invitation, "type-join": ev.TypeJoin,
    "now-playing": ev.NewMatch, "has-joined": ev.NewMatch, "now-playing-resumed": ev.MatchResumed,
    "has-joined-resumed": ev.MatchResumed, "report-start": ev.MatchStartReport,
    "report-resume": ev.MatchResumeReport, "report-result": ev.MatchResult, "you-terminated": ev.YouTerminated,
    "player-left": ev.OpponentLeft, "report-left": ev.LeftGameReport, "game-saved": ev.GameSaved,
    "board": ev.Board, "starting-new-game": ev.StartingNewGame, "opening-roll": ev.OpeningRoll,
    "your-turn-to-move": ev.YourTurnToMove, "makes-first-move": ev.MakesFirstMove, "cube-now": ev.DoublingCubeNow,
    "roll-or-double": ev.RollOrDouble, "you-roll": ev.Rolls, "player-rolls": ev.Rolls, "please-move": ev.PleaseMove,
    "cant-move": ev.CantMove, "only-possible-move": ev.OnlyPossibleMove, "bearing-off": ev.BearingOff,
    "player-moves": ev.Moves, "done": ev.Done, "you-double": ev.YouDouble, "doubles-to-you": ev.Doubles,
    "doubles": ev.Doubles,
    "you-accept-double": ev.AcceptsDouble, "accepts-double": ev.AcceptsDouble, "you-give-up": ev.GivesUp,
    "gives-up": ev.GivesUp, "you-resign": ev.ResignOffer, "resigns-to-you": ev.ResignOffer,
    "resigns": ev.ResignOffer, "you-accept-and-win": ev.AcceptsResignation, "accepts-and-wins": ev.AcceptsResignation,
    "you-reject": ev.RejectsResignation, "rejects": ev.RejectsResignation, "you-win-game": ev.GameWon,
    "wins-game": ev.GameWon, "score": ev.Score, "join-next-game": ev.JoinNextGame, "wait-join": ev.WaitForJoin,
    "you-win-match": ev.MatchWon, "wins-match": ev.MatchWon, "turn": ev.ResumeTurn,
    "match-length": ev.ResumeMatchLength, "points-for": ev.ResumePoints, "pip": ev.PipCounts,
    "clip-1-welcome": ev.Welcome, "clip-2-own-info": ev.OwnInfo, "clip-5-who-info": ev.WhoInfo,
    "clip-6-who-end": ev.WhoEnd, "clip-7-login": ev.LoginNotice, "clip-8-logout": ev.LogoutNotice,
    "prompt-login": ev.Prompt, "guest-welcome": ev.GuestWelcome, "guest-one-username": ev.OneUsername,
    "name-taken": ev.NameTaken, "name-accepted": ev.NameAccepted, "registered": ev.Registered,
    "prompt-new-password": ev.Prompt, "prompt-retype-password": ev.Prompt,
    "archive-header": ev.Information, "archive-row": ev.Information, "archive-more": ev.Information,
    "export-start": ev.ExportStart, "export-end": ev.ExportEnd,
}


def catalogue() -> list[tuple[str, str]]:
    entries = []
    for path in sorted(CATALOGUE.glob("*.toml")):
        for line in tomllib.loads(path.read_text()).get("line", []):
            entries.append((line["id"], line["example"]))
    return entries


ENTRIES = catalogue()


def test_the_catalogue_is_there() -> None:
    assert len(ENTRIES) > 300


@pytest.mark.parametrize(("entry_id", "example"), ENTRIES, ids=[entry_id for entry_id, _ in ENTRIES])
def test_catalogue_example_is_classified(entry_id: str, example: str) -> None:
    if entry_id in FREE_TEXT:
        assert classify(example) == ev.Unknown(example)
        return
    if entry_id in IN_CONTEXT:
        phase, kind = IN_CONTEXT[entry_id]
        assert isinstance(LineReader(phase).feed(example), kind)
        return
    event = classify(example)
    assert not isinstance(event, ev.Unknown)
    if entry_id in EXPECTED:
        assert isinstance(event, EXPECTED[entry_id])
    if entry_id.startswith("error-"):
        assert isinstance(event, ev.Error)
