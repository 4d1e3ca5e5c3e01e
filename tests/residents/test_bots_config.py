"""The [bots] configuration (issue 24): the default's two bots, the pure-FIBS profile
without them, and a clear error for every bad entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from fibsd.config import ConfigError, ResidentBot, defaults_dir, load_settings
from fibsd.residents.levels import LEVELS, describe, gnubg_commands


def test_the_default_runs_a_gnubg_bot_and_the_heuristic_one() -> None:
    bots = load_settings(None, {}).bots
    assert bots.enabled
    assert [(b.name, b.brain, b.strength) for b in bots.resident] == [
        ("GnubgExpert", "gnubg", "expert"), ("HeuristicBot", "heuristic", "heuristic")]


def test_the_pure_fibs_profile_has_no_bots() -> None:
    settings = load_settings(defaults_dir() / "pure-fibs.toml", {})
    assert not settings.bots.enabled
    assert not settings.fair.announce_seed


def test_at_once_gives_accounts_with_letters() -> None:
    assert ResidentBot("Gnu", at_once=3).accounts() == ("Gnu", "Gnu_b", "Gnu_c")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("entry", "key", "problem"), [
    ('name = "Gnu"\nbrain = "neural"', "bots.resident[1].brain",
     "must be 'heuristic' or 'gnubg', not 'neural'"),
    ('name = "Gnu"\nbrain = "gnubg"\nstrength = "godlike"', "bots.resident[1].strength",
     "the gnubg brain plays at 'beginner', 'casual', 'intermediate', 'advanced', 'expert', "
     "'worldclass', 'supremo', 'grandmaster', not 'godlike'"),
    ('name = "Gnu"\nstrength = "expert"', "bots.resident[1].strength",
     "the heuristic brain plays at 'heuristic', not 'expert'"),
    ('name = "Gnu2"', "bots.resident[1].name", "'Gnu2' is not a user name (letters and _ only)"),
    ('brain = "gnubg"', "bots.resident[1].name", "every bot needs a name"),
    ('name = "You"', "bots.resident[1].name",
     "'You' is a name no account may have (protocol/access.md)"),
    ('name = "Gnu"\nlengths = [0, 3]', "bots.resident[1].lengths",
     "must be a non-empty list of match lengths from 1 to 99, not [0, 3]"),
    ('name = "Gnu"\nlengths = []', "bots.resident[1].lengths",
     "must be a non-empty list of match lengths from 1 to 99, not []"),
    ('name = "Gnu"\nat_once = 0', "bots.resident[1].at_once",
     "must be a whole number from 1 to 26, not 0"),
    ('name = "Gnu"\npassword = "x"', "bots.resident[1].password", "unknown key"),
    ('name = "Gnu"\n[[bots.resident]]\nname = "gnu"', "bots.resident[2].name",
     "a second bot plays as 'gnu'"),
])
def test_bad_bot_entries(tmp_path: Path, entry: str, key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, f"[[bots.resident]]\n{entry}\n"), {})
    assert (caught.value.key, caught.value.problem) == (key, problem)


def test_bad_bots_table(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, "[bots]\nresident = 3\n"), {})
    assert caught.value.key == "bots.resident"
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, "[bots]\nrestart_min_seconds = 10\n"
                                      "restart_max_seconds = 5\n"), {})
    assert caught.value.key == "bots.restart_max_seconds"


def test_every_gnubg_level_is_described_and_set() -> None:
    assert describe(ResidentBot("W", brain="gnubg", strength="worldclass")) == \
        "gnubg world class: 2-ply, no noise"
    assert describe(ResidentBot("B", brain="gnubg", strength="beginner")) == \
        "gnubg beginner: 0-ply, noise 0.060"
    assert gnubg_commands("grandmaster")[0] == "set evaluation chequerplay evaluation plies 3"
    assert set(LEVELS) == {"beginner", "casual", "intermediate", "advanced", "expert",
                           "worldclass", "supremo", "grandmaster"}
