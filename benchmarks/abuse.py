"""Abuse drills (issue 9), each small and bounded, against a fibsd server in its own
process on loopback; each prints the limit in force, what the drill achieved, and the
server's RSS and CPU time under it.

    .venv/bin/python benchmarks/abuse.py tell [--tells 20000] [--churn N]
    .venv/bin/python benchmarks/abuse.py invite
    .venv/bin/python benchmarks/abuse.py message [--senders 30] [--each 3]
    .venv/bin/python benchmarks/abuse.py typeahead [--lines 300]
    .venv/bin/python benchmarks/abuse.py help [--lines 1200]
    .venv/bin/python benchmarks/abuse.py gag [--invites 100]
    .venv/bin/python benchmarks/abuse.py all

Every drill starts a fresh server (fresh database in a temporary directory, the
shipped configuration but for the port, paths and any ``--limit KEY VALUE`` given, such
as ``--limit tells_per_minute 100000000`` to reach the output cap) and stops it
with SIGTERM.  The clients are plain blocking sockets: the drills are about what the
server does with what it is sent, not about client speed.
"""

from __future__ import annotations

import argparse
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import REPO, ServerProcess, account, create_database, free_port  # noqa: E402

TIMEOUT = 60.0  # seconds any expected line may take


class Server(ServerProcess):
    """``python -m fibsd`` with the shipped limits (ServerProcess's /proc figures)."""

    def __init__(self, directory: Path, names: Sequence[str], limits: dict[str, int],
                 **top: Any) -> None:
        create_database(directory / "fibsd.sqlite", names)
        self.port = free_port()
        self.database = directory / "fibsd.sqlite"
        config = directory / "fibsd.toml"
        settings = {"interface": '"127.0.0.1"', "port": self.port, "web_port": 0,
                    "database": f'"{self.database}"',
                    "motd": f'"{REPO / "config" / "motd.txt"}"',
                    "help_dir": f'"{REPO / "config" / "help"}"', **top}
        config.write_text("".join(f"{key} = {value}\n" for key, value in settings.items())
                          + "[bots]\nenabled = false\n[limits]\n"
                          + "".join(f"{key} = {value}\n" for key, value in limits.items()))
        self.log_path = directory / "server.log"
        self.log = open(self.log_path, "w")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fibsd", "--config", str(config)],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=REPO)
        self.wait_listening()

    def figures(self, cpu_before: float) -> str:
        rss, peak = self.memory()
        return (f"server RSS {rss / 2**20:.1f} MiB (peak {peak / 2**20:.1f} MiB), "
                f"CPU {self.cpu() - cpu_before:.2f} s")


class Client:
    """A CLIP user on a blocking socket; ``reading`` False stops reading after login
    (a client that never reads what it is sent)."""

    def __init__(self, port: int, name: str, *, reading: bool = True,
                 receive_buffer: int = 0) -> None:
        self.name = name
        self.sock = socket.socket()
        if receive_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.connect(("127.0.0.1", port))
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self._rest = b""
        self.sock.sendall(f"login abuse 1008 {name} secret\r\n".encode())
        while "6" not in self._read_some():
            pass
        self.lines.clear()
        if reading:
            threading.Thread(target=self._read_all, daemon=True).start()

    def _read_some(self) -> list[str]:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError(f"{self.name}: connection closed")
        *complete, self._rest = (self._rest + data).split(b"\r\n")
        lines = [line.decode("ascii", "replace") for line in complete]
        with self.changed:
            self.lines += lines
            self.changed.notify_all()
        return lines

    def _read_all(self) -> None:
        try:
            while True:
                self._read_some()
        except OSError:
            with self.changed:
                self.lines.append("<closed>")
                self.changed.notify_all()

    def send(self, *lines: str) -> None:
        self.sock.sendall("".join(f"{line}\r\n" for line in lines).encode())

    def wait(self, done: Callable[[list[str]], bool], timeout: float = TIMEOUT) -> list[str]:
        """Wait until ``done(lines so far)``; the lines."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not done(self.lines):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SystemExit(f"{self.name}: timed out; last lines {self.lines[-3:]}")
                self.changed.wait(left)
            return list(self.lines)

    def count(self, prefix: str) -> int:
        with self.changed:
            return sum(line.startswith(prefix) for line in self.lines)

    def close(self) -> None:
        self.sock.close()


def drill(names: Sequence[str], limits: dict[str, int] | None = None, **top: Any) -> Any:
    """Run the decorated drill against a fresh server holding ``names``."""

    def wrap(body: Callable[..., None]) -> Callable[[argparse.Namespace], None]:
        def run(options: argparse.Namespace) -> None:
            with tempfile.TemporaryDirectory() as directory:
                server = Server(Path(directory), names, {**(limits or {}),
                                                         **dict(options.limit or [])}, **top)
                try:
                    body(server, options)
                finally:
                    server.stop()
        return run

    return wrap


# -- the drills ------------------------------------------------------------------


@drill(["alice", "bob"])
def tell(server: Server, options: argparse.Namespace) -> None:
    """Many tells to a user whose client never reads (issue: 400,000 tells, +412 MB)."""
    bob = Client(server.port, "bob", reading=False, receive_buffer=4096)
    alice = Client(server.port, "alice")
    cpu, (rss, _) = server.cpu(), server.memory()
    text = "x" * 200
    started = time.monotonic()
    for start in range(0, options.tells, 500):
        alice.send(*(f"tell bob {text}" for _ in range(min(500, options.tells - start))))
    lines = alice.wait(lambda got: sum(line.startswith(("16 bob", "** ")) for line in got)
                       >= options.tells)
    seconds = time.monotonic() - started
    delivered = sum(line.startswith("16 bob") for line in lines)
    flood = sum(line.startswith("** Please don't tell") for line in lines)
    unread = sum(line.startswith("** bob is not reading") for line in lines)
    print(f"tell: {options.tells} tells of 200 letters to a client that never reads, "
          f"in {seconds:.1f} s")
    print(f"  delivered {delivered}, refused by the rate {flood}, refused as not reading "
          f"{unread}")
    print(f"  RSS before {rss / 2**20:.1f} MiB; after: {server.figures(cpu)}")
    if options.churn:
        # Who-info updates go to every CLIP user, reading or not: they fill bob's output.
        alice.send(*("toggle ready" for _ in range(options.churn)))
        alice.wait(lambda got: sum(line.startswith("** You") for line in got) >= options.churn)
        time.sleep(1)
        cut = "passed" in server.log_path.read_text()
        print(f"  then {options.churn} 'toggle ready' (a who-info line to bob each): bob's "
              f"connection {'closed by limits.max_output' if cut else 'still open'}; "
              f"{server.figures(cpu)}")
    bob.close()
    alice.close()


@drill(["alice", "bob"], rated_experience=0)
def invite(server: Server, options: argparse.Namespace) -> None:
    """A 5,000,000-point invitation between fresh accounts, and a match between the
    drill's extreme ratings, ended by resignation."""
    with sqlite3.connect(server.database) as conn:
        conn.execute("UPDATE users SET rating = 41255.72 WHERE name = 'alice'")
    alice, bob = Client(server.port, "alice"), Client(server.port, "bob")
    cpu = server.cpu()
    alice.send("toggle ready")
    bob.send("toggle ready")
    alice.send("invite bob 5000000")
    refusal = alice.wait(lambda got: any(line.startswith("** The second") for line in got))[-1]
    print(f"invite: 'invite bob 5000000' -> {refusal}")
    alice.send("invite bob 1")
    bob.wait(lambda got: any("wants to play" in line for line in got))
    bob.send("join alice")
    alice.wait(lambda got: any(line.startswith("board:") for line in got))
    alice.send("resign b")
    bob.wait(lambda got: any("wants to resign" in line for line in got))
    bob.send("accept")
    alice.wait(lambda got: any(" point match" in line and "win" in line for line in got))
    time.sleep(0.5)  # the rating write is unattended: give the database thread a moment
    with sqlite3.connect(server.database) as conn:
        rows = conn.execute("SELECT name, rating, experience FROM users ORDER BY name").fetchall()
        finished = conn.execute("SELECT count(*) FROM finished_matches").fetchone()[0]
    print(f"  1-point match 41255.72 vs 1500, the favourite resigns: finished matches "
          f"{finished}, ratings {rows}")
    print(f"  {server.figures(cpu)}")


@drill(["carol"] + [account("sender", n) for n in range(30)])
def message(server: Server, options: argparse.Namespace) -> None:
    """Senders at once store messages for one offline user (issue: 75 against a cap of 50)."""
    senders = [Client(server.port, account("sender", n)) for n in range(options.senders)]
    cpu = server.cpu()
    start = threading.Barrier(len(senders))

    def send(client: Client) -> None:
        start.wait()
        client.send(*(f"message carol note {n}" for n in range(options.each)))
        client.wait(lambda got: sum(line.startswith(("11 carol", "** Too many", "** Please"))
                                    for line in got) >= options.each)

    threads = [threading.Thread(target=send, args=(c,)) for c in senders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    saved = sum(c.count("11 carol") for c in senders)
    full = sum(c.count("** Too many messages") for c in senders)
    flood = sum(c.count("** Please") for c in senders)
    with sqlite3.connect(server.database) as conn:
        stored = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    print(f"message: {options.senders} senders x {options.each} messages to offline carol "
          f"(limits.max_messages 50): stored {stored}, told saved {saved}, told full {full}, "
          f"refused by the rate {flood}")
    print(f"  {server.figures(cpu)}")


@drill(["alice"])
def typeahead(server: Server, options: argparse.Namespace) -> None:
    """Lines typed ahead while a command waits for the database (issue: 101 of 300)."""
    alice = Client(server.port, "alice")
    cpu = server.cpu()
    alice.send("message", *(f"tell nobody {n}" for n in range(options.lines)))
    lines = alice.wait(lambda got: sum(line.startswith("** There is no one") for line in got)
                       >= options.lines or "<closed>" in got)
    answered = sum(line.startswith("** There is no one") for line in lines)
    print(f"typeahead: {options.lines} lines behind a 'message' that reads the database: "
          f"{answered} answered")
    print(f"  {server.figures(cpu)}")


@drill(["alice"])
def help(server: Server, options: argparse.Namespace) -> None:  # noqa: A001
    """`help` with 252-letter topics (issue: OSError tracebacks, the log grew 1.2 MB)."""
    alice = Client(server.port, "alice")
    cpu = server.cpu()
    before = server.log_path.stat().st_size
    topic = "a" * 252
    alice.send(*(f"help {topic}" for _ in range(options.lines)))
    lines = alice.wait(lambda got: len(got) >= options.lines)
    answered = sum(line == f"** No help available on '{topic}'." for line in lines)
    time.sleep(0.5)
    grown = server.log_path.stat().st_size - before
    sent = options.lines * (len(topic) + 7)
    print(f"help: {options.lines} lines 'help <252 letters>' ({sent / 1000:.0f} kB): "
          f"{answered} answered 'No help available', log grew {grown} bytes")
    print(f"  {server.figures(cpu)}")


@drill(["alice", "bob"])
def gag(server: Server, options: argparse.Namespace) -> None:
    """bob gags alice, alice invites bob again and again (issue: all 100 delivered)."""
    alice, bob = Client(server.port, "alice"), Client(server.port, "bob")
    cpu = server.cpu()
    alice.send("toggle ready")
    bob.send("toggle ready", "gag alice")
    bob.wait(lambda got: "** You gag alice." in got)
    alice.send(*("invite bob 1" for _ in range(options.invites)))
    lines = alice.wait(lambda got: sum(line.startswith("** ") for line in got)
                       >= options.invites)
    refused = sum(line == "** bob won't listen to you." for line in lines)
    time.sleep(0.5)
    delivered = bob.count("alice wants to play")
    print(f"gag: {options.invites} invitations from a gagged user: delivered {delivered}, "
          f"refused '** bob won't listen to you.' {refused}")
    print(f"  {server.figures(cpu)}")


DRILLS = {"tell": tell, "invite": invite, "message": message, "typeahead": typeahead,
          "help": help, "gag": gag}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("drill", choices=[*DRILLS, "all"])
    parser.add_argument("--tells", type=int, default=20_000)
    parser.add_argument("--churn", type=int, default=0,
                        help="tell: then this many 'toggle ready' by alice")
    parser.add_argument("--senders", type=int, default=30)
    parser.add_argument("--each", type=int, default=3)
    parser.add_argument("--lines", type=int, default=0,
                        help="typeahead: lines typed ahead (300); help: help lines (1200)")
    parser.add_argument("--invites", type=int, default=100)
    parser.add_argument("--limit", nargs=2, action="append", metavar=("KEY", "VALUE"),
                        type=str, help="a [limits] key for the server, e.g. "
                        "--limit tells_per_minute 1000000")
    options = parser.parse_args(argv)
    options.limit = [(key, int(value)) for key, value in options.limit or []]
    given = options.lines
    for name in DRILLS if options.drill == "all" else [options.drill]:
        options.lines = given or {"typeahead": 300, "help": 1200}.get(name, 0)
        DRILLS[name](options)


if __name__ == "__main__":
    main()
