"""Loading settings: defaults, the shipped file, overrides, paths and errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fibsd.config import (
    AccountDefaults,
    ConfigError,
    Limits,
    PasswordCost,
    Settings,
    Tls,
    defaults_dir,
    load_settings,
)

REPO = Path(__file__).resolve().parent.parent


def write(directory: Path, text: str) -> Path:
    path = directory / "site.toml"
    path.write_text(text)
    return path


def test_defaults_use_the_shipped_texts_and_the_per_user_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the current directory plays no part
    data = Path.home() / ".local" / "share" / "fibsd"
    assert load_settings(None, {}) == Settings(
        data_dir=data,
        database=data / "fibsd.sqlite",
        motd=defaults_dir() / "motd.txt",
        help_dir=defaults_dir() / "help",
        tls=Tls(certificate=data / "tls" / "fibsd.crt", key=data / "tls" / "fibsd.key"),
    )
    assert (defaults_dir() / "help" / "beginner.txt").is_file()


def test_a_data_dir_moves_a_relative_database(tmp_path: Path) -> None:
    path = write(tmp_path, 'data_dir = "state"\n')
    assert load_settings(path, {}).database == tmp_path / "state" / "fibsd.sqlite"
    assert load_settings(path, {"data_dir": "/var/lib/fibsd"}).database == Path(
        "/var/lib/fibsd/fibsd.sqlite")


def test_an_etc_config_of_a_few_lines_keeps_data_out_of_etc(tmp_path: Path) -> None:
    """The /etc layout: only the changed keys; data in data_dir, shipped texts kept."""
    etc = tmp_path / "etc" / "fibsd"
    etc.mkdir(parents=True)
    path = write(etc, 'data_dir = "/var/lib/fibsd"\nport = 4322\nadmins = ["root"]\n')
    settings = load_settings(path, {})
    assert settings.database == Path("/var/lib/fibsd/fibsd.sqlite")
    assert settings.motd == defaults_dir() / "motd.txt"
    assert settings.help_dir == defaults_dir() / "help"


def test_tls_files_are_the_sites_never_the_packages(tmp_path: Path) -> None:
    """The defaults name files in data_dir; a relative path in a config file is
    relative to that file, as every other path there."""
    etc = tmp_path / "etc"
    etc.mkdir()
    settings = load_settings(write(etc, 'data_dir = "/var/lib/fibsd"\n'), {})
    assert (settings.tls.certificate, settings.tls.key) == (
        Path("/var/lib/fibsd/tls/fibsd.crt"), Path("/var/lib/fibsd/tls/fibsd.key"))
    settings = load_settings(write(etc, '[tls]\ncertificate = "site.crt"\nkey = "keys/site.key"\n'),
                             {"data_dir": str(tmp_path / "data")})
    assert (settings.tls.certificate, settings.tls.key) == (etc / "site.crt",
                                                           etc / "keys" / "site.key")
    assert load_settings(None, {"data_dir": "/srv/fibsd"}).tls.key == Path(
        "/srv/fibsd/tls/fibsd.key")


def test_default_values() -> None:
    settings = load_settings(None, {})
    assert (settings.interface, settings.port, settings.idle_timeout) == ("0.0.0.0", 4321, 3600)
    assert settings.limits == Limits(1024, 1000, 5, 50, 6)
    assert settings.new_accounts == AccountDefaults(3, 0, 0, "none", "login", "UTC")
    assert settings.passwords == PasswordCost(5, 7168, 1)


def test_the_shipped_file_states_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    assert load_settings(defaults_dir() / "fibsd.toml", {}) == load_settings(None, {})
    assert (defaults_dir() / "fibsd.toml").read_bytes() == (
        REPO / "config" / "fibsd.toml").read_bytes()


def test_shipped_motd_fits_the_frame() -> None:
    lines = (REPO / "config" / "motd.txt").read_text(encoding="ascii").splitlines()
    assert lines and max(len(line) for line in lines) <= 64


def test_file_values_and_paths_relative_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    site = tmp_path / "etc"
    site.mkdir()
    path = write(
        site,
        'port = 4322\ndatabase = "db/site.sqlite"\nmotd = "/srv/motd.txt"\n'
        'admins = ["alice"]\n[limits]\nmax_users = 20\n[new_accounts]\nredoubles = "12"\n',
    )
    settings = load_settings(path, {})
    assert settings.port == 4322
    assert settings.database == settings.data_dir / "db" / "site.sqlite"  # data_dir's
    assert settings.motd == Path("/srv/motd.txt")
    assert settings.help_dir == defaults_dir() / "help"  # not in the file: the default
    assert settings.admins == ("alice",)
    assert settings.limits == Limits(max_users=20)
    assert settings.new_accounts.redoubles == "12"


def test_overrides_win_and_resolve_against_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, 'port = 4322\ndatabase = "file.sqlite"\n')
    settings = load_settings(
        path, {"port": 5000, "database": "../cli.sqlite", "limits.max_messages": 7}
    )
    assert settings.port == 5000
    assert settings.database == tmp_path.parent / "cli.sqlite"
    assert settings.limits.max_messages == 7


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        ("prot = 4321", "prot", "unknown key"),
        ("[limits]\nmax_user = 3", "limits.max_user", "unknown key"),
        ('port = "4321"', "port", "must be a whole number, not '4321'"),
        ("port = 70000", "port", "must be at least 0 and at most 65535, not 70000"),
        ("idle_timeout = -1", "idle_timeout", "must be at least 0, not -1"),
        ("registration = 1", "registration", "must be true or false, not 1"),
        ("limits = 3", "limits", "must be a table ([limits]), not 3"),
        ("database = 3", "database", "must be a path (a non-empty string), not 3"),
        ('admins = "alice"', "admins", "must be a list of strings, not 'alice'"),
        ('admins = ["bot7"]', "admins", "'bot7' is not a user name (letters and _ only)"),
        ("[limits]\nmax_users = 0", "limits.max_users", "must be at least 1, not 0"),
        ("[new_accounts]\nboardstyle = 4", "new_accounts.boardstyle",
         "must be at least 1 and at most 3, not 4"),
        ("[new_accounts]\nredoubles = 5", "new_accounts.redoubles", "must be a string, not 5"),
        ('[new_accounts]\nredoubles = "100"', "new_accounts.redoubles",
         "must be 'none', 'unlimited' or a number from 1 to 99 (as text), not '100'"),
        ('[new_accounts]\nsortwho = "age"', "new_accounts.sortwho",
         "must be one of 'login', 'name', 'rating', 'rrating', not 'age'"),
        ('[new_accounts]\ntimezone = "Mars/Olympus"', "new_accounts.timezone",
         "unknown time zone 'Mars/Olympus'"),
        ("[passwords]\nmemory_kib = 4", "passwords.memory_kib", "must be at least 8, not 4"),
        ('[cluster]\nurl = "nats://127.0.0.1:4222"', "cluster.url",
         "must be empty (no cluster) or a redis://, rediss:// or unix:// URL, "
         "not 'nats://127.0.0.1:4222'"),
        ('[cluster]\nurl = "redis://127.0.0.1:6379/0"', "cluster.secret",
         "a cluster needs a shared secret: set [cluster] secret or secret_file, the same "
         "on every node (docs/cluster.md)"),
        ('[cluster]\nsecret = "short"', "cluster.secret",
         "must be at least 16 characters (openssl rand -hex 32 makes one)"),
        ('[cluster]\nsecret_file = "secret.txt"', "cluster.secret_file",
         "must be an absolute path (or empty), not 'secret.txt'"),
        ('[cluster]\nnode = "n 1"', "cluster.node",
         "must be at most 64 letters, digits and . _ : - (it names a Redis channel), "
         "not 'n 1'"),
        ("[cluster]\nheartbeat_ms = 50", "cluster.heartbeat_ms",
         "must be at least 100 and at most 60000, not 50"),
        # neither the secret nor a broker password is ever shown
        ("[cluster]\nsecret = 123456789012345678", "cluster.secret",
         "has the wrong type (its value is not shown)"),
        ("[cluster]\nurl = 'redis+tls://:hunter22@host/0'", "cluster.url",
         "must be empty (no cluster) or a redis://, rediss:// or unix:// URL, "
         "not 'redis+tls://:***@host/0'"),
    ],
)
def test_bad_keys_and_values(tmp_path: Path, text: str, key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, text), {})
    assert (caught.value.key, caught.value.problem) == (key, problem)
    assert str(caught.value) == f"{key}: {problem}"


@pytest.mark.parametrize(
    ("overrides", "key"),
    [({"bogus": 1}, "bogus"), ({"limits.max_users": "many"}, "limits.max_users")],
)
def test_bad_overrides(overrides: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, overrides)
    assert caught.value.key == key


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    with pytest.raises(ConfigError) as caught:
        load_settings(missing, {})
    assert caught.value.key == str(missing)
    assert caught.value.problem.startswith("cannot read: ")
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, "port = "), {})
    assert caught.value.problem.startswith("not valid TOML: ")


def test_settings_are_frozen() -> None:
    settings = load_settings(None, {})
    with pytest.raises(AttributeError):
        settings.port = 1  # type: ignore[misc]


def test_the_cluster_option_sets_the_broker_url(tmp_path: Path) -> None:
    from fibsd.__main__ import Options

    options = Options()
    options.parseOptions(["--cluster", "redis://127.0.0.1:6379/0", "--config",
                          str(write(tmp_path, '[cluster]\nsecret = "0123456789abcdef"'))])
    assert options.settings().cluster.url == "redis://127.0.0.1:6379/0"
    assert load_settings(None, {}).cluster.url == ""  # no option, no cluster


@pytest.mark.parametrize("words", [["--version"], ["admin", "--version"],
                                   ["backup", "--version"], ["migrate", "--version"]])
def test_every_version_option_names_fibsd(words: list[str],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Twisted gives each subcommand a --version of its own, naming Twisted."""
    from importlib.metadata import version

    from fibsd.__main__ import Options

    with pytest.raises(SystemExit) as exited:
        Options().parseOptions(words)
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"fibsd {version('fibsd')}\n"
