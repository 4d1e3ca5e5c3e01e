"""Abuse drills against the web port (issue 19), re-run on loopback, bounded.

    .venv/bin/python benchmarks/abuse_web.py [--connections 1100] [--hold 20] [--burst 3000]
                                             [drill ...]

A fresh database and a fibsd server in its own process with the shipped limits
(config/fibsd.toml, the web face on) and an open-file limit of 1024, as under systemd's
default.  Throughout, a logged-in player (from an address of his own) sends `who count`
every 50 ms: the game's latency p50/p99 under each drill is his.  Each drill uses
loopback addresses of its own (127.0.x.y are all this machine):

1. idle: ``--connections`` connections to the web port from 11 addresses, opened as
   fast as the kernel takes them and held ``--hold`` seconds, sending nothing.
2. slowloris: as many, each sending a request line and then a header line every 5 s.
3. bodies: 5 connections, from 5 addresses, POST with ``Content-Length: 2000000000``
   again and again for ``--hold`` seconds, each sending its body as fast as the server
   reads it until the answer comes; what the server wrote to disk meanwhile.
4. live: one address opens 210 ``/live/<player>/events`` streams and holds them.
5. burst: ``--burst`` connections to the game port from 200 addresses (127.0.5.x), all
   at once, held ``--hold`` seconds; what each got (the banner, a refusal line, or a
   close without a word), the server's most open files while it lasts (sampled every
   10 ms), and the lines it added to the log.

During each: a page (``/ratings``) from another address and a game login from another
address, and how long each took; the server's open files, CPU and RSS.  Exit status 1
when a limit did not hold.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from abuse_access import Usage, connect, login, read_until  # noqa: E402
from load import ServerProcess, create_database, free_port, percentile  # noqa: E402

SERVER_NOFILE = 1024
ADDRESSES = [f"127.0.3.{n}" for n in range(1, 12)]
BURST_ADDRESSES = [f"127.0.5.{n}" for n in range(1, 201)]


class Probe:
    """A logged-in player asking ``who count`` every 50 ms; latencies by time sent."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.samples: list[tuple[float, float]] = []
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            sent = time.monotonic()
            self.writer.write(b"who count\r\n")
            if not await read_until(self.reader, (b" logged on.",), 30):
                return
            self.samples.append((sent, time.monotonic() - sent))
            await asyncio.sleep(0.05)

    def report(self, since: float) -> str:
        values = [latency for sent, latency in self.samples if sent >= since]
        return (f"game `who count` p50 {percentile(values, 0.5) * 1000:.1f} ms, "
                f"p99 {percentile(values, 0.99) * 1000:.1f} ms ({len(values)} asked)")


async def web_get(port: int, host: str, path: str = "/ratings") -> tuple[str, float]:
    """The status line of ``path`` asked from ``host``, and the seconds it took."""
    started = time.monotonic()
    try:
        reader, writer = await connect(port, host)
    except OSError as error:
        return f"connect: {error.strerror}", time.monotonic() - started
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    data = await read_until(reader, (b"\r\n",), 30)
    writer.close()
    return data.split(b"\r\n")[0].decode() or "no answer", time.monotonic() - started


def disk_writes(server: ServerProcess) -> int:
    """Bytes the server process caused to be written to storage (temporary files too)."""
    for line in Path(f"/proc/{server.process.pid}/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


def open_files(server: ServerProcess) -> int:
    return len(os.listdir(f"/proc/{server.process.pid}/fd"))


async def open_many(port: int, count: int, addresses: list[str] = ADDRESSES
                    ) -> tuple[list[tuple[asyncio.StreamReader, asyncio.StreamWriter]], int]:
    """``count`` connections over ``addresses``; those the kernel refused are counted."""
    async def one(n: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        try:
            return await connect(port, addresses[n % len(addresses)])
        except OSError:
            return None

    made = await asyncio.gather(*(one(n) for n in range(count)))
    opened = [pair for pair in made if pair is not None]
    return opened, count - len(opened)


async def answered(reader: asyncio.StreamReader, wait: float) -> bytes | None:
    """What the server sent before closing, or None if it kept the connection open."""
    data = b""
    try:
        while True:
            chunk = await asyncio.wait_for(reader.read(4096), wait)
            if not chunk:
                return data
            data += chunk
    except asyncio.TimeoutError:
        return None
    except ConnectionError:
        return data


async def during(server: ServerProcess, label: str) -> str:
    """A page and a game login from addresses of their own, while a drill holds."""
    status, page_time = await web_get(server.web_port, "127.0.0.50")
    login_time, writer, _ = await login(server.port, "127.0.0.51", "newcomer")
    if writer is not None:
        writer.close()
    return (f"   meanwhile: /ratings from another address {status!r} in "
            f"{page_time * 1000:.0f} ms; a game login from another address "
            + (f"{login_time * 1000:.0f} ms" if login_time >= 0 else "FAILED")
            + f"; server open files {open_files(server)}"), status.endswith("200 OK") and login_time >= 0


async def drill_flood(server: ServerProcess, probe: Probe, count: int, hold: float,
                      slow: bool) -> bool:
    usage = Usage(server)
    started = time.monotonic()
    opened, kernel = await open_many(server.web_port, count)
    if slow:
        for _, writer in opened:
            writer.write(b"GET /ratings HTTP/1.1\r\n")
    states = await asyncio.gather(*(answered(reader, 2.0) for reader, _ in opened))
    held = [pair for pair, state in zip(opened, states) if state is None]
    busy = sum(1 for state in states if state is not None and state.startswith(b"HTTP/1.1 503"))
    closed = sum(1 for state in states if state == b"")
    name = "slowloris" if slow else "idle"
    print(f"{'2' if slow else '1'}. {name} flood: {count} connections from {len(ADDRESSES)} "
          f"addresses; {len(held)} held by the server, {busy} answered 503, {closed} closed "
          f"unanswered, {kernel} not taken by the kernel")
    line, ok = await during(server, name)
    print(line)
    cut: list[float] = []

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        header = 0
        while time.monotonic() - started < hold + 30:
            state = await answered(reader, 5.0)
            if state is not None:
                cut.append(time.monotonic() - started)
                return
            header += 1
            writer.write(b"X-Slow-%d: yes\r\n" % header)

    if slow:
        await asyncio.gather(*(trickle(reader, writer) for reader, writer in held))
        late = [t for t in cut if t >= 15]
        print(f"   of the {len(held)} held, sending a header line every 5 s: {len(late)} cut "
              f"{min(late, default=0):.1f}-{max(late, default=0):.1f} s after their first "
              f"byte, {len(cut) - len(late)} earlier (room made for newcomers)")
        ok = ok and len(cut) == len(held) and max(cut, default=0) < 30
    else:
        await asyncio.sleep(hold)
    print(f"   {probe.report(started)}")
    print(f"   {usage.report()}")
    for _, writer in opened:
        writer.close()
    await asyncio.sleep(1)
    return ok


async def drill_bodies(server: ServerProcess, probe: Probe, hold: float) -> bool:
    usage = Usage(server)
    started = time.monotonic()
    written = disk_writes(server)

    async def post(n: int) -> tuple[float, int, bytes]:
        reader, writer = await connect(server.web_port, ADDRESSES[n])
        sending = time.monotonic()
        writer.write(b"POST /players/alice HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 2000000000\r\n\r\n")
        sent = 0
        chunk = b"x" * 65536
        reply = asyncio.ensure_future(read_until(reader, (b"here.\n", b"later.\n"), 30))
        while not reply.done() and sent < 2_000_000_000:
            writer.write(chunk)
            sent += len(chunk)
            drain = asyncio.ensure_future(writer.drain())
            await asyncio.wait({drain, reply}, return_when=asyncio.FIRST_COMPLETED)
            if not drain.done():
                drain.cancel()
            elif drain.exception() is not None:
                break
        data = await reply
        writer.close()
        return time.monotonic() - sending, sent, data.split(b"\r\n")[0]

    async def again(n: int) -> list[tuple[float, int, bytes]]:
        done = []
        while time.monotonic() - started < hold:
            done.append(await post(n))
        return done

    results = [one for each in await asyncio.gather(*(again(n) for n in range(5)))
               for one in each]
    written = disk_writes(server) - written
    statuses: dict[bytes, int] = {}
    for _, _, status in results:
        statuses[status] = statuses.get(status, 0) + 1
    times = [seconds for seconds, _, _ in results]
    print(f"3. 2 GB POSTs, 5 at a time for {hold:.0f} s, a new connection each: "
          f"{len(results)} sent; answers "
          + ", ".join(f"{n} x {status.decode()!r}" for status, n in statuses.items())
          + f"; answered in p50 {percentile(times, 0.5) * 1000:.0f} ms, max "
          f"{max(times) * 1000:.0f} ms; body written by the clients before the answer: "
          f"{sum(sent for _, sent, _ in results) / 2**20:.0f} MB in all, at most "
          f"{max(sent for _, sent, _ in results) / 2**20:.1f} MB per POST")
    print(f"   the server wrote {written / 2**20:.1f} MB to disk meanwhile (/proc/PID/io "
          f"write_bytes: the database and the log included)")
    line, ok = await during(server, "bodies")
    print(line)
    print(f"   {probe.report(started)}")
    print(f"   {usage.report()}")
    return ok and all(status.startswith(b"HTTP/1.1 413") for _, _, status in results)


async def drill_live(server: ServerProcess, probe: Probe, hold: float) -> bool:
    usage = Usage(server)
    started = time.monotonic()
    streams = []
    codes: dict[str, int] = {}
    for _ in range(210):
        reader, writer = await connect(server.web_port, "127.0.3.40")
        writer.write(b"GET /live/regular/events HTTP/1.1\r\nHost: x\r\n\r\n")
        status = (await read_until(reader, (b"\r\n",), 10)).split(b"\r\n")[0].decode()
        codes[status] = codes.get(status, 0) + 1
        streams.append(writer)
    other, _ = await web_get(server.web_port, "127.0.3.41", "/live/regular/events")
    print(f"4. live boards: 210 streams from one address: "
          + ", ".join(f"{n} x {status!r}" for status, n in codes.items())
          + f"; one from another address: {other!r}")
    line, ok = await during(server, "live")
    print(line)
    await asyncio.sleep(hold)
    print(f"   {probe.report(started)}")
    print(f"   {usage.report()}")
    for writer in streams:
        writer.close()
    return ok and other.endswith("200 OK") and codes.get("HTTP/1.1 200 OK", 0) <= 4


async def drill_burst(server: ServerProcess, probe: Probe, count: int, hold: float) -> bool:
    usage = Usage(server)
    started = time.monotonic()
    log_lines = len(Path(server.log.name).read_text().splitlines())
    most = [open_files(server)]

    async def sample() -> None:
        while True:
            most[0] = max(most[0], open_files(server))
            await asyncio.sleep(0.01)

    sampler = asyncio.ensure_future(sample())
    opened, kernel = await open_many(server.port, count, BURST_ADDRESSES)
    states = await asyncio.gather(*(answered(reader, 2.0) for reader, _ in opened))
    sampler.cancel()
    held = sum(1 for state in states if state is None)
    lines: dict[str, int] = {}
    for state in states:
        if state is not None:
            last = state.rstrip(b"\r\n").split(b"\r\n")[-1].decode() if state else "nothing"
            lines[last] = lines.get(last, 0) + 1
    print(f"5. burst: {count} connections to the game port from {len(BURST_ADDRESSES)} "
          f"addresses at once; {held} held (banner, no close), closed after "
          + ", ".join(f"{n} x {line!r}" for line, n in sorted(lines.items()))
          + f"; {kernel} not taken by the kernel; the server's open files at most {most[0]}")
    line, ok = await during(server, "burst")
    print(line)
    await asyncio.sleep(hold)
    added = Path(server.log.name).read_text().splitlines()[log_lines:]
    print(f"   the log grew {len(added)} lines, {sum('EMFILE' in a for a in added)} of them "
          f"with EMFILE, {sum('Traceback' in a for a in added)} tracebacks")
    print(f"   {probe.report(started)}")
    print(f"   {usage.report()}")
    for _, writer in opened:
        writer.close()
    await asyncio.sleep(1)
    return ok and not any("EMFILE" in a for a in added) and most[0] < SERVER_NOFILE


async def run(options: argparse.Namespace) -> int:
    directory = Path(tempfile.mkdtemp(prefix="fibsd-abuse-web-"))
    create_database(directory / "fibsd.sqlite", ["regular", "newcomer", "alice"])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(SERVER_NOFILE, hard), hard))
    try:  # the server inherits the limit of a stock systemd service
        server = ServerProcess(directory, free_port(), 1000, nodelay=False,
                               web_port=free_port(), viewers=200, extra="")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the clients need many
    server.wait_listening()
    print(f"server: shipped limits, RLIMIT_NOFILE {SERVER_NOFILE}, RSS "
          f"{server.memory()[0] / 2**20:.1f} MB at start ({directory})")
    _, writer, reader = await login(server.port, "127.0.0.20", "regular")
    assert writer is not None and reader is not None
    probe = Probe(reader, writer)
    held = []
    try:
        started = time.monotonic()
        await asyncio.sleep(options.hold)
        print(f"0. quiet: {probe.report(started)}")
        if "idle" in options.drills:
            held.append(await drill_flood(server, probe, options.connections, options.hold,
                                          False))
        if "slowloris" in options.drills:
            held.append(await drill_flood(server, probe, options.connections, options.hold,
                                          True))
        if "bodies" in options.drills:
            held.append(await drill_bodies(server, probe, options.hold))
        if "live" in options.drills:
            held.append(await drill_live(server, probe, options.hold))
        if "burst" in options.drills:
            held.append(await drill_burst(server, probe, options.burst, options.hold))
    finally:
        probe.task.cancel()
        server.stop()
    log = (directory / "server.log").read_text()
    refusals = sum(1 for line in log.splitlines() if "web." in line)
    print(f"server log: {len(log.splitlines())} lines, {refusals} of them web refusal events; "
          f"{log.count('Traceback')} tracebacks, {log.count('EMFILE')} EMFILE")
    return 0 if all(held) and "EMFILE" not in log else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1100)
    parser.add_argument("--hold", type=float, default=20)
    parser.add_argument("--burst", type=int, default=3000)
    parser.add_argument("drills", nargs="*",
                        default=["idle", "slowloris", "bodies", "live", "burst"])
    sys.exit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
