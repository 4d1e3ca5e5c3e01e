"""Where the web client puts each line the server can send (fibsd/web/static/play/
lines.js, run under Node): every example of protocol/catalogue, read while playing.
Lines of your match go under the board ("game"); a `** ` line that refuses a command is
an "error"; everything else, `** ` lines that only inform included, is a "notice"."""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CATALOGUE = HERE.parent.parent / "protocol" / "catalogue"
NODE = shutil.which("node")

# The lines of your own match: all of play.toml's but the listings of `pip` and `moves`.
GAME = {
    ("between", name) for name in ("now-playing", "has-joined", "now-playing-resumed",
                                   "has-joined-resumed", "you-terminated", "player-left")
} | {
    ("durability", "you-terminated-unsaved"), ("durability", "player-left-unsaved"),
    ("durability", "game-unsaved"), ("watching", "now-watching"),
    ("fair", "claim-warning"), ("fair", "claimable"), ("fair", "you-claimed"),
    ("fair", "claimed-from-you"), ("grace", "grace-waits"), ("grace", "grace-back"),
    ("clock", "clock-warning"), ("clock", "clock-you-lost"), ("clock", "clock-lost"),
}
NOT_GAME = {("play", name) for name in ("pip", "moves-score", "moves-players", "moves-entry")}

# `** ` lines that inform: notices, not errors.
NOTICES = {
    ("between", "you-invited"), ("between", "invitation-changed"),
    ("chat", "no-messages"), ("chat", "heard-you"), ("chat", "gag-list"), ("chat", "gag-none"),
    ("chat", "blind-list"), ("chat", "blind-none"), ("chat", "waitfor-ok"),
    ("chat", "waitfor-online"), ("chat", "waitfor-list"), ("chat", "waitfor-finally"),
    ("durability", "game-not-saved"), ("session", "shutdown"), ("watching", "you-stop-watching"),
    ("login", "already-logged-in"), ("login", "telnet-authenticated"),
    ("login", "telnet-last-login"), ("play", "wait-join"), ("fair", "adjudicated"),
    ("grace", "grace-ended-meanwhile"),
    ("admin", "telnet-alert"), ("admin", "kick-done"), ("admin", "ban-done"),
    ("admin", "unban-done"), ("admin", "bans-none"), ("admin", "bans-head"),
    ("admin", "bans-line"), ("admin", "admin-password-done"), ("admin", "rename-done"),
    ("admin", "delete-done"), ("admin", "reload-done"), ("admin", "shutdown-countdown"),
    ("admin", "shutdown-cancelled"), ("admin", "admin-log-empty"), ("admin", "admin-log-head"),
    ("admin", "admin-log-line"), ("clock", "invitation-clock"), ("clock", "clock-none"),
} | {("chat", f"telnet-you-{verb}") for verb in ("tell", "say", "shout", "whisper", "kibitz")} \
  | {("chat", f"{what}-{on}") for what in ("gag", "blind") for on in ("on", "off")} \
  | {("settings", name) for name in (
      f"toggle-{toggle}-{value}" for toggle in (
          "allowpip", "autoboard", "autodouble", "automove", "bell", "crawford", "double",
          "greedy", "moreboards", "moves", "notify", "ratings", "ready", "report", "silent",
          "telnet", "wrap") for value in ("yes", "no"))}


def expected(source: str, name: str, example: str) -> str:
    key = (source, name)
    if key in GAME or (source == "play" and key not in NOT_GAME and not example.startswith("** ")):
        return "game"
    if example.startswith("** ") and key not in NOTICES:
        return "error"
    return "notice"


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (Debian: apt-get install nodejs)")
def test_every_catalogued_line_goes_where_it_belongs() -> None:
    rows = [(path.stem, line["id"], line["example"])
            for path in sorted(CATALOGUE.glob("*.toml"))
            for line in tomllib.loads(path.read_text()).get("line", []) if "example" in line]
    assert len(rows) > 300
    assert NODE is not None
    run = subprocess.run([NODE, str(HERE / "js" / "lines_check.mjs")],
                         input="\n".join(json.dumps([example, "playing"]) for *_, example in rows),
                         capture_output=True, text=True, timeout=60, check=True)
    got = run.stdout.split()
    wrong = [(source, name, example, kind) for (source, name, example), kind in zip(rows, got)
             if kind != expected(source, name, example)]
    assert len(got) == len(rows)
    assert not wrong, wrong


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (Debian: apt-get install nodejs)")
def test_in_the_lobby_only_the_start_of_your_match_is_a_game_line() -> None:
    cases = {
        "You're now watching alice.": "game",
        "** You are now playing a 5 point match with alice": "game",
        "bob has joined you. Your running match was loaded.": "game",
        "bob moves 8-3 6-3 .": "notice",  # a match you no longer play or watch
        "alice and bob start a 5 point match.": "notice",
        "** You invited bob to a 5 point match.": "notice",
        "** bob is refusing games.": "error",
    }
    assert NODE is not None
    run = subprocess.run([NODE, str(HERE / "js" / "lines_check.mjs")],
                         input="\n".join(json.dumps([line, "lobby"]) for line in cases),
                         capture_output=True, text=True, timeout=60, check=True)
    assert dict(zip(cases, run.stdout.split())) == cases
