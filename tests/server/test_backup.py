"""``fibsd backup``: an online copy of a running server's database, taken mid-match,
restored into a new server that resumes the match; and the copy's safety rules."""

from __future__ import annotations

import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_twisted
from passlib.hash import argon2
from twisted.internet import threads

from fibsd.app import FibsService
from fibsd.store.backup import BackupError, backup
from fibsd.store.sqlite import SQLiteStore
from fibsd.wire.board import Colour, parse_board, view_position
from tests.server.test_match_restart import connect, start

def accounts(database: Path) -> None:
    store = SQLiteStore(database)
    for name in ("alice", "bob"):
        store.create_user(name, argon2.using(type="ID", memory_cost=64, time_cost=1)
                          .hash("secret"), 1_700_000_000)
    store.close()


@pytest_twisted.ensureDeferred
async def test_a_backup_taken_mid_match_restores_into_a_server_that_resumes_it(
        tmp_path: Path) -> None:
    database = tmp_path / "live" / "fibsd.sqlite"
    database.parent.mkdir()
    accounts(database)
    services: list[FibsService] = []
    try:
        service, port = await start(database, 1)
        services.append(service)
        alice, bob = await connect(port, "alice"), await connect(port, "bob")
        for bot in (alice, bob):
            bot.send("toggle ready")
            await bot.wait_line(lambda line: line.startswith("** You're now ready"), "ready")
            bot.active = True
            bot.moves_left = 3
        alice.send("invite bob 2")
        await bob.wait_line(lambda line: line == "Type 'join alice' to accept.", "invitation")
        bob.send("join alice")
        await bob.wait(lambda: sum(line.startswith("Please move") for line in bob.lines) == 3,
                       "bob's fourth roll")
        match = service.shared.lobby.matches["alice"]
        position, score, dice = match.rules.position, match.rules.score, match.rules.dice
        # The match is stored when a player's connection drops; alice stays, the
        # server keeps running and writing (its WAL is not checkpointed) while the
        # backup copies the database from another process.
        assert bob.transport is not None
        bob.transport.loseConnection()
        await alice.wait_line(lambda line: line == "bob drops connection. The game was saved.",
                              "the saved notice")
        await service.db.get_user("alice")  # the save has been written: the queue is in order
        target = tmp_path / "backups" / "fibsd-backup.sqlite"
        target.parent.mkdir()
        result = await threads.deferToThread(
            subprocess.run,
            [sys.executable, "-m", "fibsd", "--database", str(database), "backup", str(target)],
            capture_output=True, text=True, timeout=60)
        assert (result.returncode, result.stderr) == (0, "")
        *progress, done = result.stdout.splitlines()
        assert done.startswith(f"fibsd: backed up {database} to {target} (")
        assert progress and progress[-1].startswith("fibsd: backup 100% (")
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        alice.send("who")  # the first server still serves
        await alice.wait_line(lambda line: line == "6", "who after the backup")
        await service.stopService()

        # Restore: copy the backup into the new server's data directory, then start it.
        restored = tmp_path / "restored" / "fibsd.sqlite"
        restored.parent.mkdir()
        shutil.copyfile(target, restored)
        service, port = await start(restored, 2)
        services.append(service)
        alice, bob = await connect(port, "alice"), await connect(port, "bob")
        bob.send("invite alice")
        await alice.wait_line(lambda line: line == "Type 'join bob' to accept.", "resume")
        alice.send("join bob")
        await alice.wait_line(lambda line: line.startswith("board:"), "the resumed board")
        begin = alice.lines.index("You are now playing with bob. Your running match was loaded.")
        resumed = alice.lines[begin:begin + 7]
        assert resumed[2:6] == ["turn: bob.", "match length: 2", "points for alice: 0",
                                "points for bob: 0"]
        view = parse_board(resumed[6])
        assert view_position(view, Colour(view.colour)) == position
        assert (view.opponent_dice, view.player_score, view.opponent_score) == (dice, *score)
    finally:
        for each in services:
            if each.running:
                await each.stopService()


def test_backup_refuses_an_existing_target_and_a_missing_database(tmp_path: Path) -> None:
    database = tmp_path / "fibsd.sqlite"
    accounts(database)
    target = tmp_path / "copy.sqlite"
    target.write_text("precious")
    with pytest.raises(BackupError, match="cannot create"):
        backup(database, target)
    assert target.read_text() == "precious"
    with pytest.raises(BackupError, match="no database at"):
        backup(tmp_path / "none.sqlite", tmp_path / "other.sqlite")
    assert not (tmp_path / "other.sqlite").exists()


def test_a_copy_holds_what_the_wal_holds(tmp_path: Path) -> None:
    """The trap ``cp`` falls into: committed rows still only in the -wal file."""
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)  # stays open: nothing is checkpointed
    store.create_user("alice", "h", 1)
    assert backup(database, tmp_path / "copy.sqlite") > 0
    copy = SQLiteStore(tmp_path / "copy.sqlite")
    assert copy.get_user("alice") is not None
    copy.close()
    store.close()


def test_a_backup_ends_while_a_writer_commits_between_all_its_steps(tmp_path: Path) -> None:
    """A large site under load: a commit after every step of the copy used to restart
    it from the first page, for as long as the writes went on.  Now it copies the
    snapshot of its first step in exactly its number of steps (the test stops a copy
    that takes more)."""
    database = tmp_path / "fibsd.sqlite"
    store = SQLiteStore(database)  # the server, WAL and all
    for number in range(400):
        store.create_user(f"user{number:04}", "h" * 2000, number)
    store.close()
    writer = sqlite3.connect(database, isolation_level=None)
    (pages,) = writer.execute("PRAGMA page_count").fetchone()
    steps = -(-pages // 8)
    assert steps >= 20
    reports: list[tuple[int, int]] = []

    def commit_meanwhile(copied: int, total: int) -> None:
        reports.append((copied, total))
        if len(reports) > 2 * steps:
            raise AssertionError("the copy started again")
        writer.execute("UPDATE users SET experience = experience + 1 WHERE name = 'user0000'")
        writer.execute("INSERT INTO admin_log (at, admin, action, target, detail)"
                       " VALUES (1, 'x', 'y', 'z', ?)", ("w" * 3000,))

    assert backup(database, tmp_path / "copy.sqlite", commit_meanwhile,
                  pages_per_step=8) == pages
    assert reports == [(min(pages, 8 * n), pages) for n in range(1, steps + 1)]
    copy = sqlite3.connect(tmp_path / "copy.sqlite")
    assert copy.execute("SELECT count(*), sum(experience) FROM users").fetchone() == (400, 0)
    assert copy.execute("SELECT count(*) FROM admin_log").fetchone() == (0,)
    copy.close()
    assert writer.execute("SELECT count(*) FROM admin_log").fetchone() == (steps,)
    writer.close()
