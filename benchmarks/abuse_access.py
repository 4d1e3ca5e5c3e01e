"""Abuse drills against the limits of fibsd.server.access, re-run on loopback, bounded.

    .venv/bin/python benchmarks/abuse_access.py [--guess-seconds 120] [--idle 1011]
                                                [--register-seconds 60]

A fresh database (accounts ``victim``, ``regular`` and ``newcomer``, password ``secret`` at
the configured argon2 cost) and a fibsd server in its own process with the shipped limits (config/fibsd.toml)
and an open-file limit of 1024, as on a stock system.  Clients use several loopback
addresses (127.0.0.x and 127.0.1.x are all this machine) to play different hosts.

1. Password guessing: 40 connections from one address guess ``victim``'s password as
   fast as the server answers, reconnecting whenever closed, for ``--guess-seconds``;
   guesses answered per minute.  Meanwhile, 30 s in, the owner logs in from another
   address: his login time.
2. Idle connections: 40 from one address, then ``--idle`` from 20 per address (under the
   per-address cap), none logging in; accepted and refused.  A user logged in before
   them asks ``who count`` meanwhile, a new user tries to log in; one of the idle
   connections (opened first, from an address of its own) sends an empty line every
   10 s; the time until the idle ones are closed.
3. Registration: one address registers accounts as fast as it can for
   ``--register-seconds``; accounts made.  Then the name ``You`` is tried.

For each drill: the server's CPU time and RSS (from /proc, see load.py).  Exit status 1
when a limit did not hold.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import ServerProcess, create_database, free_port  # noqa: E402

ANSWERS = (b"\r\nlogin: ", b"Too many failed logins")
SERVER_NOFILE = 1024


class Usage:
    """The server's CPU and RSS across one drill."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.cpu = server.cpu()
        self.rss = server.memory()[0]
        self.started = time.monotonic()

    def report(self) -> str:
        seconds = time.monotonic() - self.started
        cpu = self.server.cpu() - self.cpu
        rss = self.server.memory()[0]
        return (f"server CPU {cpu:.1f} s in {seconds:.0f} s ({cpu / seconds:.0%} of a core), "
                f"RSS {self.rss / 2**20:.1f} -> {rss / 2**20:.1f} MB")


async def connect(port: int, host: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(host, 0))


async def read_until(reader: asyncio.StreamReader, tokens: tuple[bytes, ...],
                     timeout: float) -> bytes:
    """What arrives until one of ``tokens`` (b"" when the time is up or the socket closed)."""
    data = b""
    deadline = time.monotonic() + timeout
    while not any(token in data for token in tokens):
        left = deadline - time.monotonic()
        if left <= 0:
            return b""
        try:
            chunk = await asyncio.wait_for(reader.read(4096), left)
        except (asyncio.TimeoutError, ConnectionError):
            return b""
        if not chunk:
            return data if any(token in data for token in tokens) else b""
        data += chunk
    return data


async def first_reply(port: int, host: str) -> tuple[bytes, asyncio.StreamReader,
                                                      asyncio.StreamWriter]:
    """Connect; the banner up to ``login: `` or the refusal line."""
    reader, writer = await connect(port, host)
    data = await read_until(reader, (b"login: ", b"\r\n"), 10)
    if b"login: " not in data:
        data += await read_until(reader, (b"login: ",), 0.5)
    return data, reader, writer


async def guesser(port: int, host: str, until: float, answered: list[float],
                  refused: list[float]) -> None:
    while time.monotonic() < until:
        try:
            banner, reader, writer = await first_reply(port, host)
        except OSError:
            await asyncio.sleep(0.5)
            continue
        if not banner.endswith(b"login: "):
            refused.append(time.monotonic())
            writer.close()
            await asyncio.sleep(1)
            continue
        while time.monotonic() < until:
            writer.write(b"login bench 1008 victim wrong\r\n")
            data = await read_until(reader, ANSWERS, until - time.monotonic())
            if not data:
                break
            answered.append(time.monotonic())
            if b"Too many failed logins" in data:
                break
        writer.close()


async def login(port: int, host: str, name: str) -> tuple[float, asyncio.StreamWriter | None,
                                               asyncio.StreamReader | None]:
    """Seconds from connecting to the CLIP welcome line, or -1 if refused."""
    started = time.monotonic()
    banner, reader, writer = await first_reply(port, host)
    if not banner.endswith(b"login: "):
        writer.close()
        return -1, None, None
    writer.write(f"login bench 1008 {name} secret\r\n".encode())
    if not await read_until(reader, (f"\r\n1 {name} ".encode(),), 60):
        return -1, None, None
    return time.monotonic() - started, writer, reader


async def drill_guessing(server: ServerProcess, seconds: float) -> bool:
    usage = Usage(server)
    started = time.monotonic()
    answered: list[float] = []
    refused: list[float] = []
    guessers = [asyncio.ensure_future(guesser(server.port, "127.0.0.10", started + seconds,
                                              answered, refused)) for _ in range(40)]
    await asyncio.sleep(30)
    owner_time, owner, _ = await login(server.port, "127.0.0.11", "victim")
    await asyncio.gather(*guessers)
    minutes = [sum(1 for t in answered if m * 60 <= t - started < (m + 1) * 60)
               for m in range(int(seconds // 60))]
    print(f"1. guessing, 40 connections from one address, {seconds:.0f} s: guesses answered "
          f"per minute {minutes}; {len(refused)} connections refused at once; "
          f"the owner from another address logged in in {owner_time:.1f} s")
    print(f"   {usage.report()}")
    if owner is not None:
        owner.close()
    return max(minutes, default=0) < 20 and 0 <= owner_time < 15


async def drill_idle(server: ServerProcess, count: int) -> bool:
    usage = Usage(server)
    user_time, user, user_reader = await login(server.port, "127.0.0.20", "regular")
    assert user is not None and user_reader is not None
    _, typer_reader, typer = await first_reply(server.port, "127.0.0.23")
    refusals: dict[bytes, int] = {}
    idle: list[asyncio.StreamWriter] = []
    readers: list[asyncio.StreamReader] = []
    started = time.monotonic()
    hosts = ["127.0.0.21"] * 40 + [f"127.0.1.{1 + n // 20}" for n in range(count)]
    for host in hosts:
        try:
            banner, reader, writer = await first_reply(server.port, host)
        except OSError as error:
            refusals[f"connect: {error.strerror}".encode()] = refusals.get(
                f"connect: {error.strerror}".encode(), 0) + 1
            continue
        if banner.endswith(b"login: "):
            idle.append(writer)
            readers.append(reader)
        else:
            line = banner.strip()
            refusals[line] = refusals.get(line, 0) + 1
            writer.close()
    opened = time.monotonic() - started
    asked = time.monotonic()
    user.write(b"who count\r\n")
    answer = await read_until(user_reader, (b" logged on.",), 10)
    who_time = time.monotonic() - asked
    newcomer_time, newcomer, _ = await login(server.port, "127.0.0.22", "newcomer")
    print(f"2. idle connections: {len(hosts)} opened in {opened:.1f} s, {len(idle)} accepted; "
          f"refused: " + "; ".join(f"{n} x {line.decode()}" for line, n in refusals.items()))
    print(f"   a logged-in user's `who count` answered in {who_time * 1000:.0f} ms"
          f" ({'yes' if answer else 'NO'}); a new login from another address: "
          + (f"{newcomer_time:.1f} s" if newcomer_time >= 0 else "refused (server full)"))
    print(f"   {usage.report()} (with {len(idle)} idle connections)")

    async def closed(reader: asyncio.StreamReader) -> float:
        await read_until(reader, (b"Connection timed out.",), 120)
        return time.monotonic() - started

    async def keep_typing(writer: asyncio.StreamWriter) -> None:
        for _ in range(12):
            await asyncio.sleep(10)
            if writer.is_closing():
                return
            writer.write(b"\r\n")

    typing = asyncio.ensure_future(keep_typing(typer))
    typer_time, *times = await asyncio.gather(closed(typer_reader),
                                              *(closed(reader) for reader in readers))
    typing.cancel()
    typer.close()
    for writer in idle:
        writer.close()
    newcomer_after, newcomer, _ = await login(server.port, "127.0.0.22", "newcomer")
    given_way = sum(1 for t in times if t < 55)
    print(f"   {given_way} idle connections gave way to newcomers; the others were closed "
          f"after {min(t for t in times if t >= 55):.0f}-{max(times):.0f} s, one typing an "
          f"empty line every 10 s after {typer_time:.0f} s; then a new login took "
          f"{newcomer_after:.1f} s")
    user.close()
    if newcomer is not None:
        newcomer.close()
    return bool(answer) and max(times) < 75 and typer_time < 65 and newcomer_after >= 0


async def drill_registration(server: ServerProcess, seconds: float) -> bool:
    usage = Usage(server)
    started = time.monotonic()
    made = refused = 0
    number = 0
    while time.monotonic() - started < seconds:
        number += 1
        name = "bench" + "".join(chr(ord("a") + int(d)) for d in str(number))
        banner, reader, writer = await first_reply(server.port, "127.0.0.30")
        writer.write(f"guest\r\nname {name}\r\n".encode())
        data = await read_until(reader, (b"Please give your password: ", b"minutes."), 10)
        if b"minutes." in data:
            refused += 1
        else:
            writer.write(b"secret\r\nsecret\r\n")
            if await read_until(reader, (b"You are registered.",), 10):
                made += 1
        writer.close()
    banner, reader, writer = await first_reply(server.port, "127.0.0.31")
    writer.write(b"guest\r\nname You\r\n")
    data = await read_until(reader, (b"someone else.",), 10)
    text = data.decode("ascii", "replace")
    you = text[text.find("** "):].splitlines()[0] if "** " in text else ""  # after "> "
    writer.close()
    print(f"3. registration from one address for {seconds:.0f} s: {made} accounts made, "
          f"{refused} refused; `name You`: {you!r}")
    print(f"   {usage.report()}")
    return made <= 5 and "already used" in you


async def run(options: argparse.Namespace) -> int:
    directory = Path(tempfile.mkdtemp(prefix="fibsd-abuse-"))
    create_database(directory / "fibsd.sqlite", ["victim", "regular", "newcomer"])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(SERVER_NOFILE, hard), hard))
    try:  # the server inherits the limit of a stock system
        server = ServerProcess(directory, free_port(), 1000, nodelay=False, extra="")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    server.wait_listening()
    print(f"server: shipped limits, RLIMIT_NOFILE {SERVER_NOFILE}, RSS "
          f"{server.memory()[0] / 2**20:.1f} MB at start ({directory})")
    held = []
    try:
        held.append(await drill_guessing(server, options.guess_seconds))
        held.append(await drill_idle(server, options.idle))
        held.append(await drill_registration(server, options.register_seconds))
    finally:
        server.stop()
    logged = sum(1 for line in (directory / "server.log").read_text().splitlines()
                 if "failed login for victim from 127.0.0.10" in line)
    print(f"server log: {logged} failed logins of victim from 127.0.0.10 logged")
    return 0 if all(held) and logged > 0 else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guess-seconds", type=float, default=120)
    parser.add_argument("--idle", type=int, default=1011)
    parser.add_argument("--register-seconds", type=float, default=60)
    sys.exit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
