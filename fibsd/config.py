"""Site settings: a TOML file over built-in defaults, then command-line overrides.

Rules:

* Every key has a default here, and ``config/fibsd.toml`` lists each one with the
  same value and a comment (a test keeps the two equal).
* A relative path in a config file is relative to that file's directory; a relative
  path in the defaults or in an override is relative to the current directory.
  ``Settings`` always holds absolute paths.
* An unknown key, a value of the wrong type or out of range raises
  ``ConfigError(key, problem)``; nothing is silently ignored or clamped.
"""

from __future__ import annotations

import os
import tomllib
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, get_type_hints

class ConfigError(Exception):
    """A configuration key that cannot be used, and why."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


Check = Callable[[Any], str | None]  # returns the problem, or None if the value is fine


def between(low: int, high: int | None = None) -> Check:
    def check(value: int) -> str | None:
        if value < low or (high is not None and value > high):
            upper = "" if high is None else f" and at most {high}"
            return f"must be at least {low}{upper}, not {value}"
        return None

    return check


def one_of(*choices: str) -> Check:
    def check(value: str) -> str | None:
        if value not in choices:
            return f"must be one of {', '.join(map(repr, choices))}, not {value!r}"
        return None

    return check


def redoubles(value: str) -> str | None:
    if value in ("none", "unlimited") or (value.isdigit() and 1 <= int(value) <= 99):
        return None
    return f"must be 'none', 'unlimited' or a number from 1 to 99 (as text), not {value!r}"


def time_zone(value: str) -> str | None:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {value!r}"
    return None


def user_names(value: tuple[str, ...]) -> str | None:
    for name in value:
        if not name or not all(c.isascii() and (c.isalpha() or c == "_") for c in name):
            return f"{name!r} is not a user name (letters and _ only)"
    return None


def checked(default: Any, check: Check) -> Any:
    return field(default=default, metadata={"check": check})


@dataclass(frozen=True)
class Limits:
    """Protection against floods and overload; each applies per server."""

    max_line_length: int = checked(1024, between(80))
    max_users: int = checked(1000, between(1))
    login_attempts: int = checked(5, between(1))
    max_messages: int = checked(50, between(1))
    shouts_per_minute: int = checked(6, between(1))
    listen_backlog: int = checked(1024, between(1))
    websocket_max_message: int = checked(16384, between(256))


@dataclass(frozen=True)
class AccountDefaults:
    """The ``set`` variables a new account starts with (settings.md, section 2)."""

    boardstyle: int = checked(3, between(1, 3))
    linelength: int = checked(0, between(0, 999))
    pagelength: int = checked(0, between(0, 999))
    redoubles: str = checked("none", redoubles)
    sortwho: str = checked("login", one_of("login", "name", "rating", "rrating"))
    timezone: str = checked("UTC", time_zone)


@dataclass(frozen=True)
class PasswordCost:
    """argon2id cost; the defaults are one of OWASP's minimums (7 MiB, 5 passes)."""

    time_cost: int = checked(5, between(1))
    memory_kib: int = checked(7168, between(8))
    parallelism: int = checked(1, between(1))


@dataclass(frozen=True)
class Settings:
    interface: str = "0.0.0.0"
    port: int = checked(4321, between(0, 65535))
    database: Path = Path("data/fibsd.sqlite")
    idle_timeout: int = checked(3600, between(0))
    motd: Path = Path("config/motd.txt")
    help_dir: Path = Path("config/help")
    registration: bool = True
    admins: tuple[str, ...] = checked((), user_names)
    rated_experience: int = checked(50, between(0))
    presence_delay_ms: int = checked(100, between(0, 10000))
    gc_interval: int = checked(300, between(0))
    web_port: int = checked(8080, between(0, 65535))
    web_live_viewers: int = checked(200, between(1))
    web_page_size: int = checked(50, between(1, 1000))
    limits: Limits = field(default_factory=Limits)
    new_accounts: AccountDefaults = field(default_factory=AccountDefaults)
    passwords: PasswordCost = field(default_factory=PasswordCost)


def load_settings(path: Path | None, overrides: Mapping[str, Any]) -> Settings:
    """Read ``path`` (if given) over the defaults, then apply ``overrides``.

    ``overrides`` uses the file's key names, dotted for sections
    (``{"port": 4322, "limits.max_users": 10}``).
    """
    settings = _resolve(Settings(), Path.cwd())
    if path is not None:
        settings = _merge(settings, _read(path), path.parent.absolute(), "")
    nested: dict[str, Any] = {}
    for dotted, value in overrides.items():
        *sections, key = dotted.split(".")
        table = nested
        for section in sections:
            table = table.setdefault(section, {})
        table[key] = value
    return _merge(settings, nested, Path.cwd(), "")


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except OSError as error:
        raise ConfigError(str(path), f"cannot read: {error.strerror}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(str(path), f"not valid TOML: {error}") from error


def _resolve(value: Any, base: Path) -> Any:
    """The dataclass with every relative path made absolute against ``base``."""
    changes = {}
    for item in fields(value):
        current = getattr(value, item.name)
        if isinstance(current, Path):
            changes[item.name] = _absolute(base, current)
        elif is_dataclass(current):
            changes[item.name] = _resolve(current, base)
    return replace(value, **changes)


def _absolute(base: Path, path: Path) -> Path:
    return Path(os.path.normpath(base / path.expanduser()))


def _merge(current: Any, table: Mapping[str, Any], base: Path, prefix: str) -> Any:
    types = get_type_hints(type(current))
    known = {item.name: item for item in fields(current)}
    changes = {}
    for key, raw in table.items():
        name = prefix + key
        if key not in known:
            raise ConfigError(name, "unknown key")
        wanted = types[key]
        existing = getattr(current, key)
        if is_dataclass(existing):
            if not isinstance(raw, Mapping):
                raise ConfigError(name, f"must be a table ([{name}]), not {raw!r}")
            changes[key] = _merge(existing, raw, base, name + ".")
            continue
        value = _convert(name, wanted, raw, base)
        check = known[key].metadata.get("check")
        problem = check(value) if check is not None else None
        if problem is not None:
            raise ConfigError(name, problem)
        changes[key] = value
    return replace(current, **changes)


def _convert(name: str, wanted: Any, raw: Any, base: Path) -> Any:
    if wanted is bool:
        if isinstance(raw, bool):
            return raw
        raise ConfigError(name, f"must be true or false, not {raw!r}")
    if wanted is int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        raise ConfigError(name, f"must be a whole number, not {raw!r}")
    if wanted is str:
        if isinstance(raw, str):
            return raw
        raise ConfigError(name, f"must be a string, not {raw!r}")
    if wanted is Path:
        if isinstance(raw, (str, Path)) and str(raw):
            return _absolute(base, Path(raw))
        raise ConfigError(name, f"must be a path (a non-empty string), not {raw!r}")
    if wanted == tuple[str, ...]:
        if isinstance(raw, (list, tuple)) and all(isinstance(item, str) for item in raw):
            return tuple(raw)
        raise ConfigError(name, f"must be a list of strings, not {raw!r}")
    raise AssertionError(f"no conversion for {name}: {wanted}")
