"""Resident bots (issue 24): CPU per game action of the server and of a resident bot at
each strength, and how many resident-bot matches one core carries.

    .venv/bin/python benchmarks/bots.py [--strengths heuristic,beginner,expert,worldclass]
                                        [--seconds 60] [--pace 4]

For each strength: a fresh ``fibsd`` process (its own database and data directory, the
web face on loopback for ``/metrics``) whose ``[bots]`` list one resident bot at that
strength, and an opponent ``fibsd-bot`` (heuristic, registered on the spot) that
invites it to 1-point matches, one after another, as fast as both play.  After the
first match has begun, the CPU time of the server, of the resident ``fibsd-bot`` and
of its ``gnubg`` (from /proc) and the server's ``fibsd_game_actions`` counter are read,
and again ``--seconds`` later.  A game action is a command of the game (roll, move,
double, accept, reject, join ...) from either player; the resident bot makes about half.

The capacity figure assumes the bot's opponent is a person who acts every ``--pace``
seconds (the bot answers at once): one match then costs the server and the bot
(cpu per action) x (2 actions per pace seconds), and one core carries 1 / that.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import free_port  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
START_TIMEOUT = 90.0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                found.append(int(entry.name))
    return found


def command_line(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def game_actions(web_port: int) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{web_port}/metrics", timeout=10).read()
    return sum(float(value) for value in re.findall(
        r"^fibsd_game_actions_total(?:\{[^}]*\})? ([0-9.e+]+)$", text.decode(), re.M))


def wait_for(path: Path, pattern: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not re.search(pattern, path.read_text(errors="replace")):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"never saw {pattern!r} in {path}:\n{path.read_text()[-3000:]}")
        time.sleep(0.2)


def measure(strength: str, seconds: float, pace: float) -> dict[str, float]:
    name = f"Bench_{strength}"
    brain = "heuristic" if strength == "heuristic" else "gnubg"
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        port, web_port = free_port(), free_port()
        (directory / "fibsd.toml").write_text(
            f'interface = "127.0.0.1"\nport = {port}\nweb_port = {web_port}\n'
            f'data_dir = "{directory}"\n[passwords]\nmemory_kib = 1024\ntime_cost = 1\n'
            f'[bots]\n[[bots.resident]]\nname = "{name}"\nbrain = "{brain}"\n'
            f'strength = "{strength}"\nlengths = [1]\n')
        env = {key: value for key, value in os.environ.items() if key != "FIBSD_BOTS"}
        log = directory / "server.log"
        with open(log, "w") as out:
            server = subprocess.Popen([sys.executable, "-m", "fibsd", "--config",
                                       str(directory / "fibsd.toml")], stdout=out,
                                      stderr=subprocess.STDOUT, env=env)
        opponent = None
        try:
            wait_for(log, rf"{name} logs in", server)
            (directory / "opponent.password").write_text("benchmark\n")
            with open(directory / "opponent.log", "w") as out:
                opponent = subprocess.Popen(
                    [sys.executable, "-m", "fibsd.client.bot", "--port", str(port),
                     "--name", "opponent", "--password-file",
                     str(directory / "opponent.password"), "--register", "--invite", name,
                     "--length", "1"], stdout=out, stderr=subprocess.STDOUT, env=env)
            wait_for(log, r"match_start|starts? a .*match|opponent logs in", server)
            time.sleep(2.0)  # past the first match's start
            processes = {"server": [server.pid], "bot": [], "gnubg": []}
            for child in children(server.pid):
                line = command_line(child)
                if "fibsd.client.bot" in line:
                    processes["bot"].append(child)
                elif "gnubg" in line:
                    processes["gnubg"].append(child)
            before = {k: sum(map(cpu_seconds, pids)) for k, pids in processes.items()}
            actions_before, started = game_actions(web_port), time.monotonic()
            time.sleep(seconds)
            after = {k: sum(map(cpu_seconds, pids)) for k, pids in processes.items()}
            actions = game_actions(web_port) - actions_before
            elapsed = time.monotonic() - started
        finally:
            for process in (opponent, server):
                if process is not None:
                    process.terminate()
                    process.wait(timeout=60)
    spent = {k: after[k] - before[k] for k in after}
    per_action = {k: 1000 * v / max(actions, 1) for k, v in spent.items()}
    resident = per_action["server"] + per_action["bot"] + per_action["gnubg"]
    matches = 1000 / (resident * 2 / pace) if resident else float("inf")
    return {"actions": actions, "rate": actions / elapsed, **{f"{k}_ms": v for k, v in
            per_action.items()}, "matches_per_core": matches}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strengths", default="heuristic,beginner,expert,worldclass")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--pace", type=float, default=4.0,
                        help="seconds between a person's actions, for the capacity figure")
    options = parser.parse_args()
    print(f"{'strength':<12} {'actions':>8} {'per s':>7} {'server ms':>10} {'bot ms':>8} "
          f"{'gnubg ms':>9} {'matches/core':>13}")
    for strength in options.strengths.split(","):
        row = measure(strength, options.seconds, options.pace)
        print(f"{strength:<12} {row['actions']:>8.0f} {row['rate']:>7.1f} "
              f"{row['server_ms']:>10.2f} {row['bot_ms']:>8.2f} {row['gnubg_ms']:>9.2f} "
              f"{row['matches_per_core']:>13.0f}", flush=True)


if __name__ == "__main__":
    main()
