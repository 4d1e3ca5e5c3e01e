"""Engine analysis (issue 22): what it costs and what it does to the game.

    .venv/bin/python benchmarks/analysis.py [--matches 6,4,2] [--length 5] [--burst 100]

Three parts, one run:

1. Matches analysed per CPU-minute at 0, 1 and 2 plies: fibsd's whole job (the record
   replayed and exported as .mat, gnubg run with fibsd's script, its answer read
   against the record) beside gnubg's own ``analyse match`` on the same .mat files
   (``gnubg -t`` fed its commands), CPU seconds of this process and its children.
   The matches are played by the rules tests' seeded random player (``--length``
   points; random play makes long games, more moves than people play).
2. Queue delay under a burst: ``--burst`` 1-point matches finish at once (stored with
   their jobs, one transaction each) on a SQLite database one worker process
   (``fibsd analyse``, 0 plies) serves; per match, the time from its result being
   stored to its analysis being kept.
3. The game's latency with the workers idle and busy, in one run: a server
   (``python -m fibsd``, two workers of its own at 2 plies) and a logged-in client that
   sends ``time`` and waits for the answer, ``--probes`` times with the queue empty,
   then as many times while both workers analyse a backlog.  Round trips, p50 and p99.

gnubg must be installed (Debian's ``gnubg``).  Figures go to benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import resource
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fibsd.analysis.engine import find_gnubg  # noqa: E402
from fibsd.analysis.model import AnalysisJob  # noqa: E402
from fibsd.analysis.worker import Worker, WorkerSettings  # noqa: E402
from fibsd.store.sqlite import SQLiteStore  # noqa: E402
from fibsd.wire.mat import mat_text  # noqa: E402
from tests.analysis.matches import finished, played  # noqa: E402


def cpu() -> float:
    """CPU seconds of this process and of its children that have ended."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def gnubg_alone(program: str, mat: Path, plies: int) -> None:
    commands = "\n".join(["set threads 1",
                          f"set analysis chequerplay evaluation plies {plies}",
                          f"set analysis cubedecision evaluation plies {plies}",
                          f'import mat "{mat}"', "analyse match", ""])
    subprocess.run([program, "-t", "-q", "-r"], input=commands, text=True, check=True,
                   capture_output=True, cwd=mat.parent, env={"HOME": str(mat.parent),
                                                             "PATH": "/usr/bin:/bin"})


def engine_cost(program: str, counts: list[int], length: int, folder: Path) -> None:
    print(f"1. matches analysed per CPU-minute ({length}-point random-play matches)")
    print("   plies  matches  moves/match  fibsd CPU s/match  gnubg alone CPU s/match"
          "  fibsd/min  gnubg/min  overhead")
    worker = Worker(None, WorkerSettings(time_limit=3600.0), program,  # type: ignore[arg-type]
                    log=lambda text: None)
    for plies, count in enumerate(counts):
        records = [played(seed, length, double=0.05, resign=0.01) for seed in range(count)]
        moves = sum(mat_text(r).count(": ") for r in records) / count
        start = cpu()
        for number, record in enumerate(records):
            outcome = worker.analyse(AnalysisJob(number, plies, record, 1, "bench"), 3600.0)
            assert not isinstance(outcome, tuple), outcome
        ours = (cpu() - start) / count
        start = cpu()
        for number, record in enumerate(records):
            mat = folder / f"m{number}.mat"
            mat.write_text(mat_text(record))
            gnubg_alone(program, mat, plies)
        theirs = (cpu() - start) / count
        print(f"   {plies:5d}  {count:7d}  {moves:11.0f}  {ours:17.2f}  {theirs:23.2f}"
              f"  {60 / ours:9.1f}  {60 / theirs:9.1f}  {100 * (ours - theirs) / theirs:+7.1f}%")


def queue_delay(burst: int, folder: Path) -> None:
    database = folder / "burst.sqlite"
    store = SQLiteStore(database)
    store.queue_analyses("all", 0)
    (folder / "burst.toml").write_text("[analysis]\npoll_ms = 100\n")
    worker = subprocess.Popen(
        [sys.executable, "-m", "fibsd", "--config", str(folder / "burst.toml"), "analyse",
         "--database", str(database), "--name", "burst"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder)
    records = [played(seed, 1, double=0.2, resign=0.02) for seed in range(burst)]
    began = time.time()
    for number, record in enumerate(records):
        store.record_finished_match(finished(record, int(time.time())))
    stored = time.time()
    while store.analysis_counts().get("done", 0) < burst:
        time.sleep(0.2)
    drained = time.time()
    worker.terminate()
    worker.wait()
    with sqlite3.connect(database) as conn:
        # the job's queued time is the match's finish (whole seconds): the burst's
        # own start is the fairer zero for all of them
        delays = sorted(at - began for (at,) in conn.execute("SELECT analysed_at FROM analyses"))
    store.close()
    print(f"\n2. queue delay: {burst} 1-point matches stored in {stored - began:.2f} s,"
          " one worker at 0 plies")
    print(f"   from the burst's start to each analysis kept: p50 {_pct(delays, 50):.1f} s,"
          f" p90 {_pct(delays, 90):.1f} s, max {delays[-1]:.1f} s;"
          f" drained in {drained - began:.1f} s ({burst / (drained - began) * 60:.0f} a minute)")


def _pct(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(len(values) * p / 100))]


class Probe:
    """A logged-in telnet user timing ``time`` round trips."""

    def __init__(self, port: int, name: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buffer = b""
        self.read_until(b"login:")
        self.sock.sendall(f"login bench 1008 {name} secret\r\n".encode())
        self.read_until(b"\r\n6\r\n")  # CLIP's end of the login's output

    def read_until(self, marker: bytes) -> None:
        while marker not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("the server closed the probe's connection")
            self.buffer += chunk
        self.buffer = self.buffer[self.buffer.index(marker) + len(marker):]

    def round_trips(self, count: int) -> list[float]:
        times = []
        for _ in range(count):
            start = time.perf_counter()
            self.sock.sendall(b"time\r\n")
            self.read_until(b"UTC")  # "date and time" line
            times.append((time.perf_counter() - start) * 1000)
            time.sleep(0.01)
        return sorted(times)


def game_latency(probes: int, folder: Path) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from load import create_database, free_port  # noqa: PLC0415

    database = folder / "game.sqlite"
    create_database(database, ["prober"])
    port = free_port()
    (folder / "game.toml").write_text(
        f'interface = "127.0.0.1"\nport = {port}\nweb_port = 0\nidle_timeout = 0\n'
        "[analysis]\nworkers = 2\nplies = 2\npoll_ms = 200\n")
    server = subprocess.Popen(
        [sys.executable, "-m", "fibsd", "--config", str(folder / "game.toml"),
         "--database", str(database)],
        stdout=(folder / "game.log").open("w"), stderr=subprocess.STDOUT, cwd=folder)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                probe = Probe(port, "prober")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        idle = probe.round_trips(probes)
        store = SQLiteStore(database)
        store.queue_analyses("all", 2)
        for seed in range(40):
            store.record_finished_match(finished(played(seed, 3, double=0.05, resign=0.01)))
        while store.analysis_counts().get("running", 0) < 2:
            time.sleep(0.2)
        busy = probe.round_trips(probes)
        running = store.analysis_counts()
        store.close()
    finally:
        server.terminate()
        server.wait(120)
    print(f"\n3. the game's round trip (`time`), ms, {probes} probes each, two workers"
          " at 2 plies")
    print(f"   workers idle: p50 {_pct(idle, 50):.2f}, p99 {_pct(idle, 99):.2f},"
          f" max {idle[-1]:.2f}")
    print(f"   workers busy: p50 {_pct(busy, 50):.2f}, p99 {_pct(busy, 99):.2f},"
          f" max {busy[-1]:.2f}   (jobs then: {running})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", default="6,4,2",
                        help="matches analysed at 0, 1 and 2 plies")
    parser.add_argument("--length", type=int, default=5)
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--probes", type=int, default=500)
    args = parser.parse_args()
    program = find_gnubg()
    if program is None:
        raise SystemExit("gnubg is not installed (apt-get install gnubg)")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        engine_cost(program, [int(n) for n in args.matches.split(",")], args.length, folder)
        queue_delay(args.burst, folder)
        game_latency(args.probes, folder)


if __name__ == "__main__":
    main()
