"""``export`` over loopback, and GNU Backgammon importing what it sends.

Matches are played on a real fibsd over loopback by two scripted CLIP players and
downloaded with ``archive`` and ``export`` through fibsd's client library.  The first test
needs nothing else: the text, built off the reactor thread, replays to the result.  The
second imports the texts into gnubg (``gnubg -t``, its embedded Python) and finds no
message at all and the same games and final score; the matches hold a resigned gammon
and a resigned backgammon (one refused first), a dropped double, a Crawford game, a double
taken and whole games to the bear-off.  The ``oldmoves`` listing of a game with a cube
action and resignations imports without a message too.  It skips where gnubg is absent
(Debian package ``gnubg``; ``.ci/run`` installs it); one gnubg process imports every file,
so gnubg adds about a second.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.defer import gatherResults

from fibsd.client import events as ev
from fibsd.rules.match import Match
from fibsd.wire.mat import mat_record, mat_text, parse_mat
from tests.client.test_bot import SeededDice
from tests.client.test_loopback import start_server
from tests.client.test_loopback_match import ScriptedPlayer, online

GNUBG = shutil.which("gnubg", path=os.environ.get("PATH", "") + os.pathsep + "/usr/games")
NO_GNUBG = "gnubg is not installed (Debian: apt-get install gnubg; .ci/run installs it)"

WAIT = 90.0  # one match, scripted players, on a slow shared machine
ROW = re.compile(r"^#(?P<id>[0-9]+) ")
# What gnubg prints besides messages: the board it shows after an import.
BOARD = re.compile(r"^(?: GNU Backgammon  Position ID: .*| +Match ID +: .*| [+][-0-9+]+[+].*|[ v^]\|.*|\s*)$")


class PlannedPlayer(ScriptedPlayer):
    """A scripted player that, game by game, resigns, doubles, drops a double or refuses
    a resignation when its plan says so; otherwise it takes, accepts and plays the first
    legal play.  ``plans[n]`` lists game n's steps; each is done once, at its first chance
    (``wait`` plays one turn before any resignation)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.plans: dict[int, list[str]] = {}
        self.game = 0

    def _take(self, prefix: str) -> str | None:
        steps = self.plans.get(self.game, [])
        for step in steps:
            if step.startswith(prefix):
                steps.remove(step)
                return step
        return None

    def on_NewMatch(self, event: ev.NewMatch) -> None:
        self.game = 0

    def on_StartingNewGame(self, event: ev.StartingNewGame) -> None:
        self.game += 1

    def move(self) -> None:
        if self._take("wait"):  # this turn is played: the plan's resignations come later
            super().move()
            return
        resign = self._take("resign")
        if resign is not None:
            self.send(resign)
            return
        super().move()

    def on_RollOrDouble(self, event: ev.RollOrDouble) -> None:
        self.send("double" if self._take("double") else "roll")

    def on_Doubles(self, event: ev.Doubles) -> None:
        if event.must_answer:
            self.send("reject" if self._take("drop") else "accept")

    def on_ResignOffer(self, event: ev.ResignOffer) -> None:
        if event.must_answer:
            self.send("reject" if self._take("refuse") else "accept")


async def play_match(alice: PlannedPlayer, bob: PlannedPlayer, length: int) -> ev.MatchWon:
    ends = [player.protocol.wait_for(ev.MatchWon) for player in (alice, bob)]
    alice.send(f"invite bob {length}")
    won, _ = await gatherResults(ends).addTimeout(WAIT, reactor)
    return won


async def command_events(player: PlannedPlayer, line: str, last: type[Any] | tuple[type[Any], ...]) -> list[Any]:
    """The events a command brings, up to and with the first of kind ``last``."""
    start = len(player.events)
    waiter = player.protocol.wait_for(last)
    player.send(line)
    await waiter.addTimeout(10, reactor)
    return player.events[start:]


async def download(player: PlannedPlayer, match_id: int) -> str:
    got = await command_events(player, f"export {match_id}", (ev.ExportEnd, ev.Error))
    starts = [e for e in got if isinstance(e, ev.ExportStart)]
    assert len(starts) == 1, got
    lines = [e.text for e in got if isinstance(e, ev.MatLine)]
    assert len(lines) == starts[0].lines and got[-1] == ev.ExportEnd(match_id)
    return "\n".join(lines) + "\n"


def oldmoves_text(events: list[Any]) -> str:
    """The ``oldmoves`` listing as the server sent it, from the client's events."""
    lines = []
    for event in events:
        if isinstance(event, ev.MovesListScore):
            length = "an unlimited" if event.match_length is None else f"a {event.match_length} point"
            lines.append(f"Score is {event.player_score}-{event.opponent_score} in {length} match.")
        elif isinstance(event, ev.MovesListPlayers):
            lines.append(f"{event.x_player} is X - {event.o_player} is O.")
        elif isinstance(event, ev.MovesListEntry):
            lines.append(f"{event.colour}: {event.text}")
    return "\n".join(lines) + "\n"


def gnubg_import(files: list[tuple[str, Path]], home: Path) -> list[dict[str, Any]]:
    """Import each (kind, path) in one gnubg run: what gnubg printed while importing
    (the board it shows left out) and the match it then holds."""
    script = home / "import.py"
    script.write_text(
        "import gnubg, json, sys\n"
        "gnubg.command('set display off')\n"
        "gnubg.command('set jacoby off')\n"
        f"for kind, path in {[(kind, str(path)) for kind, path in files]!r}:\n"
        "    print('<<<import'); sys.stdout.flush()\n"
        "    gnubg.command('import %s %s' % (kind, path))\n"
        "    sys.stdout.flush(); print('>>>import'); sys.stdout.flush()\n"
        "    m = gnubg.match(analysis=0, boards=0, statistics=0)\n"
        "    print('RESULT ' + json.dumps({'info': m['match-info'],"
        " 'games': [g['info'] for g in m['games']],"
        " 'actions': [[[a.get('action'), a.get('player'), a.get('dice')] for a in g['game']]"
        " for g in m['games']]})); sys.stdout.flush()\n"
    )
    assert GNUBG is not None
    done = subprocess.run([GNUBG, "-t", "-q", "-p", str(script)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120, cwd=home,
                          env={**os.environ, "HOME": str(home)})
    out = done.stdout.splitlines()
    results = []
    for start in [i for i, line in enumerate(out) if line == "<<<import"]:
        end = out.index(">>>import", start)
        said = [line for line in out[start + 1:end] if not BOARD.match(line)]
        result = json.loads(out[end + 1].removeprefix("RESULT "))
        results.append({"said": said, **result})
    assert len(results) == len(files), done.stdout + done.stderr
    return results


def final_score(result: dict[str, Any]) -> dict[str, int]:
    info = result["info"]
    score = {info["X"]["name"]: 0, info["O"]["name"]: 0}
    for game in result["games"]:
        score[info[game["winner"]]["name"]] += game["points-won"]
    return score


async def players_online(port: int) -> tuple[PlannedPlayer, PlannedPlayer]:
    alice, bob = PlannedPlayer("alice"), PlannedPlayer("bob")
    for player in (alice, bob):
        await online(port, player)
        ready = player.protocol.wait_for(ev.ToggleChanged).addTimeout(10, reactor)
        player.send("toggle ready")
        assert await ready == ev.ToggleChanged("ready", True)
    return alice, bob


@pytest_twisted.ensureDeferred
async def test_export_over_loopback_replays_to_the_result(tmp_path: Path) -> None:
    """Without gnubg too: the real server builds the text off the reactor thread and the
    client library reads the frame; the text replays to the match's result."""
    service, port = await start_server(tmp_path)
    service.shared.lobby.dice = SeededDice(3)
    service.shared.lobby.coin = lambda: 0
    alice = bob = None
    try:
        alice, bob = await players_online(port)
        bob.plans = {1: ["wait", "resign g"]}
        won = await play_match(alice, bob, 1)
        listing = await command_events(bob, "archive alice", ev.Information)
        listing += await command_events(bob, "who", ev.WhoEnd)
        (row,) = [e.text for e in listing if isinstance(e, ev.Information) and ROW.match(e.text)]
        text = await download(bob, int(ROW.match(row)["id"]))
    finally:
        for player in (alice, bob):
            if player is not None and player.protocol is not None and player.protocol.transport is not None:
                player.protocol.transport.loseConnection()
        await service.stopService()
    replayed = Match.from_record(mat_record(parse_mat(text)))
    assert (won.player, won.winner_score, won.loser_score) == (ev.YOU, 2, 0)
    assert replayed.score == (2, 0) and replayed.winner == 0
    assert text.count(" Game ") == 1 and "Wins 2 points and the match" in text


@pytest.mark.skipif(GNUBG is None, reason=NO_GNUBG)
@pytest_twisted.ensureDeferred
async def test_gnubg_imports_exported_matches_and_oldmoves(tmp_path: Path) -> None:
    service, port = await start_server(tmp_path)
    service.shared.lobby.dice = SeededDice(5)
    service.shared.lobby.coin = lambda: 0
    alice = bob = None
    try:
        alice, bob = await players_online(port)
        # 3 points: a resigned gammon (2-0), the Crawford game resigned, a dropped double
        # after it, then a double, a refused resignation and a resigned backgammon
        bob.plans = {1: ["resign g"], 3: ["double"], 4: ["wait", "resign n", "resign b"]}
        alice.plans = {2: ["resign n"], 3: ["drop"], 4: ["double", "refuse"]}
        first = await play_match(alice, bob, 3)
        # the last game's list (FIBS's oldmoves format): resignations, one refused
        listed = await command_events(alice, "oldmoves", ev.MovesListEntry)
        listed += await command_events(alice, "who", ev.WhoEnd)  # the rest has come too
        oldmoves = oldmoves_text(listed)
        # 2 points: a double taken, the game played to the bear-off
        alice.plans, bob.plans = {1: ["double"]}, {}
        second = await play_match(alice, bob, 2)
        listing = await command_events(alice, "archive", ev.Information)
        listing += await command_events(alice, "who", ev.WhoEnd)
        rows = [e.text for e in listing
                if isinstance(e, ev.Information) and e.kind == "archive" and ROW.match(e.text)]
        ids = [int(ROW.match(row)["id"]) for row in rows]
        assert len(ids) == 2, listing
        texts = [await download(alice, match_id) for match_id in ids]  # newest first
    finally:
        for player in (alice, bob):
            if player is not None and player.protocol is not None and player.protocol.transport is not None:
                player.protocol.transport.loseConnection()
        await service.stopService()
    files = []
    for number, text in enumerate(texts):
        path = tmp_path / f"match{number}.mat"
        path.write_text(text)
        files.append(("mat", path))
    (tmp_path / "oldmoves.txt").write_text(oldmoves)
    files.append(("oldmoves", tmp_path / "oldmoves.txt"))
    *results, old = gnubg_import(files, tmp_path)
    assert "wants to resign" in oldmoves and old["said"] == [], oldmoves
    assert len(old["games"]) == 1 and old["games"][0]["resigned"] is True
    for won, text, result in zip((second, first), texts, results):
        assert result["said"] == [], text
        expected = {"alice": won.winner_score, "bob": won.loser_score}
        if won.player != ev.YOU:
            expected = {"alice": won.loser_score, "bob": won.winner_score}
        assert final_score(result) == expected, text
        assert result["info"]["match-length"] == won.match_length
        assert len(result["games"]) == text.count(" Game ")
    crawford = [game.get("crawford") for game in results[1]["games"]]
    assert crawford[1] is True and not crawford[2]
    resigned = [(g["winner"], g["points-won"], g["resigned"]) for g in results[1]["games"]]
    assert resigned[0] == ("X", 2, True) and resigned[2] == ("O", 1, False)


@pytest.mark.skipif(GNUBG is None, reason=NO_GNUBG)
def test_gnubg_imports_a_cube_256_match_and_a_resignation_after_a_roll(tmp_path: Path) -> None:
    """Two matches as fibsd exported them before (tests/wire/data), written again by
    today's export: the 10-point match whose cube reached 256 (gnubg 1.07 crashed on
    it) and a game resigned by bob after rolling 1-5 on the bar (gnubg played that roll
    as his forced move).  gnubg imports both without a message; the cube match ends at
    the same point, with its last game at the cube of 64 the text now shows, and game 3
    of the other ends with ann's 4-4 and bob's resignation, no move of bob's."""
    data = Path(__file__).parent.parent / "wire" / "data"
    files = []
    for name in ("gnubg_crash_cube256.mat", "unplayed_forced_roll.mat"):
        parsed = parse_mat((data / name).read_text())
        path = tmp_path / name
        path.write_text(mat_text(mat_record(parsed), parsed.players))
        files.append(("mat", path))
    no_crawford = tmp_path / "no_crawford.mat"
    off_match = crawford_off_match()
    no_crawford.write_text(mat_text(off_match.to_record(), ("ann", "bob")))
    files.append(("mat", no_crawford))
    cube, forced, off = gnubg_import(files, tmp_path)
    # [Crawford "Off"]: gnubg ignores the tag and calls game 2 (ann at 2 of 3) the
    # Crawford game, but imports its double and the score all the same (export.md 3.1)
    assert off["said"] == []
    assert final_score(off) == {"ann": off_match.score[0], "bob": off_match.score[1]}
    assert off["games"][1].get("crawford") is True
    assert ["double", "X", None] in off["actions"][1] or ["double", "O", None] in off["actions"][1]
    assert cube["said"] == [] and forced["said"] == []
    assert final_score(cube) == {"fay": 8, "eve": 64}
    assert cube["games"][1]["points-won"] == 64 and not cube["games"][1]["resigned"]
    assert final_score(forced) == {"ann": 3, "bob": 5}
    game3 = forced["actions"][2]
    moves = [a for a in game3 if a[0] == "move"]
    assert moves[-1][2] == [4, 4] and game3[-1][0] == "resign"
    assert forced["games"][2]["resigned"] and forced["games"][2]["points-won"] == 2


def crawford_off_match() -> Match:
    """3 points without the Crawford rule: bob resigns a gammon (2-0), then in game 2
    ann, one point from the end, doubles, bob takes, and ann plays on to the end."""
    import random

    from fibsd.rules.dice import ScriptedDice
    from fibsd.rules.events import WinKind
    from fibsd.rules.game import Phase

    rng = random.Random(3)
    match = Match(3, crawford=False)
    match.new_game(ScriptedDice([(3, 1)]))
    match.move(0, [(8, 5), (6, 5)])
    match.resign(1, WinKind.GAMMON)
    match.accept(0)
    match.new_game(ScriptedDice([(6, 2)]))
    match.move(0, [(24, 18), (13, 11)])
    doubled = False
    while match.game is not None and match.game.result is None:
        player = match.turn
        if match.phase is Phase.ROLL:
            if player == 0 and not doubled:
                match.double(0)
                match.accept(1)
                doubled = True
            die = (rng.randint(1, 6), rng.randint(1, 6))
            match.roll(player, ScriptedDice([die]))
        else:
            plays = match.legal_plays()
            match.auto_move(player, plays[rng.randrange(len(plays))])
    assert match.over and match.winner == 0
    return match
