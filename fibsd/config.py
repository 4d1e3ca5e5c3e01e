"""Site settings: a TOML file over built-in defaults, then command-line overrides.

Rules:

* Every key has a default here, and ``config/fibsd.toml`` lists each one with the
  same value and a comment (a test keeps the two equal).  That directory is shipped
  inside the package as ``fibsd.defaults`` (``defaults_dir()``).
* A relative ``database`` (wherever it is written) is relative to ``data_dir``, so a
  config file in ``/etc/fibsd/`` keeps its data where data belongs.  Any other relative
  path is relative to the file it appears in: the defaults' to the shipped
  ``fibsd.defaults`` directory, a config file's to that file's directory, and a
  command-line override's to the current directory.  ``Settings`` always holds
  absolute paths.
* ``database`` may instead be a PostgreSQL URL (``postgresql://user@host/db``); it is
  kept as the string given (``fibsd.store.opening``).
* An unknown key, a value of the wrong type or out of range raises
  ``ConfigError(key, problem)``; nothing is silently ignored or clamped.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any, get_type_hints

from fibsd.rules.clock import ClockSpec, InvalidClock
from fibsd.store.opening import is_postgres_url, shown
from fibsd.wire.input import reserved_name

# Paths that, when relative, are relative to ``data_dir`` rather than to their file.
DATA_PATHS = frozenset({"database"})
# Paths whose default (not a value written in a file) is relative to ``data_dir``: files
# of the site that the package cannot ship.
DATA_DEFAULTS = frozenset({"tls.certificate", "tls.key"})


def defaults_dir() -> Path:
    """The shipped ``config/`` directory (the package ``fibsd.defaults``): default
    configuration, MOTD and help texts.  A wheel installs it as plain files.  When
    ``fibsd`` is imported from a source checkout itself (``python -m pytest`` puts the
    checkout first on ``sys.path``; ``pip install -e`` in lenient mode maps only
    ``fibsd``), the mapped package is not there and ``config/`` beside it is used."""
    try:
        return Path(str(resources.files("fibsd.defaults")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "config"


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


def networks(value: tuple[str, ...]) -> str | None:
    for item in value:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            return f"{item!r} is not an IP address or network (203.0.113.0/24, ::1)"
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
    # Output and commands (protocol/limits.md).
    max_output: int = checked(1048576, between(65536))
    tells_per_minute: int = checked(60, between(1))
    says_per_minute: int = checked(60, between(1))
    kibitzes_per_minute: int = checked(60, between(1))
    whispers_per_minute: int = checked(60, between(1))
    messages_per_minute: int = checked(30, between(1))
    invites_per_minute: int = checked(30, between(1))
    aways_per_minute: int = checked(20, between(1))
    toggles_per_minute: int = checked(60, between(1))
    sets_per_minute: int = checked(60, between(1))
    fairdice_per_minute: int = checked(30, between(1))
    max_match_length: int = checked(99, between(1, 9998))


@dataclass(frozen=True)
class Access:
    """Who may connect, guess passwords and register, and how fast (fibsd.server.access)."""

    login_timeout: int = checked(60, between(1))
    unauthenticated_per_address: int = checked(20, between(1))
    max_connections: int = checked(0, between(0))
    fd_reserve: int = checked(64, between(8))
    login_free_failures: int = checked(4, between(0))
    login_delay_max: int = checked(30, between(1))
    account_delay_max: int = checked(8, between(0))
    failure_memory: int = checked(900, between(1))
    registrations_per_hour: int = checked(5, between(0))
    proxy_protocol: bool = False


@dataclass(frozen=True)
class Web:
    """Where the web face listens and what a stranger can make it spend (fibsd.web.gate,
    protocol/web.md); its port and pages are the top-level ``web_*`` keys."""

    interface: str = ""  # empty: the game's ``interface``
    max_connections: int = checked(0, between(0))
    connections_per_address: int = checked(32, between(1))
    request_timeout: int = checked(20, between(1))
    idle_timeout: int = checked(60, between(1))
    max_body: int = checked(1024, between(0))
    live_per_address: int = checked(4, between(1))
    metrics_from: tuple[str, ...] = checked(("127.0.0.1", "::1"), networks)
    # HTTPS (and WSS) on a port of its own, with ``[tls]``'s certificate and key.
    tls: bool = False
    tls_port: int = checked(8443, between(0, 65535))


@dataclass(frozen=True)
class Privacy:
    """What others see of a user's address: "full", "masked" or "hidden" ("-")."""

    show_addresses: str = checked("masked", one_of("full", "masked", "hidden"))


@dataclass(frozen=True)
class Tls:
    """An optional second listener speaking the same protocol over TLS."""

    enabled: bool = False
    port: int = checked(4323, between(0, 65535))
    certificate: Path = Path("tls/fibsd.crt")
    key: Path = Path("tls/fibsd.key")


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
class Archive:
    """The match archive over telnet: ``archive`` pages and ``export`` (.mat) texts."""

    site: str = "fibsd"
    page_size: int = checked(20, between(1, 200))
    max_export_bytes: int = checked(262144, between(1024))
    exports_per_minute: int = checked(6, between(1))


@dataclass(frozen=True)
class FairPlay:
    """Fair dice and answers to droppers and stallers (protocol/fair-dice.md).  Pure
    FIBS behaviour: ``announce_seed = false``, ``reliability = false``,
    ``abandon_days = 0``, ``adjudicate = false``, ``claim_after = 0``."""

    announce_seed: bool = True
    max_dice_text: int = checked(64, between(1, 200))
    reliability: bool = True
    abandon_days: int = checked(7, between(0, 3650))
    abandon_check_interval: int = checked(3600, between(1))
    adjudicate: bool = False
    claim_after: int = checked(0, between(0))


def clock_text(value: str) -> str | None:
    try:
        ClockSpec.parse(value)
    except InvalidClock:
        return f"must be 'off' or a delay and a reserve per point like '12s+2m', not {value!r}"
    return None


@dataclass(frozen=True)
class Clocks:
    """Match clocks (protocol/clock.md).  Pure FIBS behaviour: ``enabled = false``."""

    enabled: bool = True
    default: str = checked("off", clock_text)  # a user's ``set clock`` until he sets one
    required_for_rated: bool = False
    on_timeout: str = checked("match", one_of("match", "game"))
    lag_allowance_ms: int = checked(1000, between(0, 10000))


@dataclass(frozen=True)
class Pace:
    """Matches that survive a dropped connection (protocol/play.md, "Drop grace").
    Pure FIBS behaviour: ``drop_grace = 0``."""

    drop_grace: int = checked(60, between(0, 3600))  # seconds; 0: saved at the drop
    max_held: int = checked(1000, between(1))  # matches held for a dropped player at once
    # Web session tokens (protocol/web.md, "Reconnecting"): lifetime, per user, tries.
    token_lifetime: int = checked(3600, between(0, 2592000))  # seconds; 0: none issued
    tokens_per_user: int = checked(5, between(1, 100))


@dataclass(frozen=True)
class Tournaments:
    """Tournaments run by the server (protocol/tournaments.md): how many may be open or
    running at once, how many players one may have, how long a paired player has to
    start his match before he loses by forfeit, how often the director looks, its lease
    on a cluster, and the largest round-robin group."""

    max_open: int = checked(10, between(1, 1000))
    max_players: int = checked(256, between(2, 4096))
    start_timeout: int = checked(300, between(5, 86400))
    tick_ms: int = checked(1000, between(10, 3600000))
    lease: int = checked(30, between(5, 3600))
    group_size: int = checked(8, between(2, 64))


@dataclass(frozen=True)
class Db:
    """Waiting for the database (``fibsd.server.dbthread``, docs/deployment.md): when a
    call counts as hung, how often a database that is down is asked again, and
    PostgreSQL's connect and statement timeouts and TCP keepalives."""

    stall_ms: int = checked(2000, between(100, 60000))
    retry_max_ms: int = checked(2000, between(100, 600000))
    connect_timeout: int = checked(5, between(2, 3600))
    statement_timeout_ms: int = checked(5000, between(100, 3600000))
    keepalives_idle: int = checked(10, between(1, 7200))
    keepalives_interval: int = checked(5, between(1, 3600))
    keepalives_count: int = checked(3, between(1, 100))


@dataclass(frozen=True)
class Analysis:
    """Engine analysis of finished matches by GNU Backgammon worker processes
    (protocol/analysis.md, fibsd/analysis/)."""

    matches: str = checked("all", one_of("all", "rated", "none"))
    plies: int = checked(2, between(0, 4))
    workers: int = checked(1, between(0, 64))
    lease: int = checked(900, between(2, 86400))
    attempts: int = checked(3, between(1, 100))
    time_limit: int = checked(600, between(1, 86400))
    engine: str = "gnubg"
    poll_ms: int = checked(2000, between(100, 600000))
    deeper_plies: int = checked(3, between(0, 4))
    deeper_per_day: int = checked(5, between(0, 1000))
    ladder_min_matches: int = checked(5, between(1, 1000000))


def redis_url(value: str) -> str | None:
    if value and not value.startswith(("redis://", "rediss://", "unix://")):
        return f"must be empty (no cluster) or a redis://, rediss:// or unix:// URL, not {shown(value)!r}"
    return None


def node_name(value: str) -> str | None:
    if len(value) > NODE_NAME_MAX or not all(c.isascii() and (c.isalnum() or c in "._:-")
                                             for c in value):
        return (f"must be at most {NODE_NAME_MAX} letters, digits and . _ : - "
                f"(it names a Redis channel), not {value!r}")
    return None


def cluster_secret(value: str) -> str | None:
    if value and len(value) < SECRET_MIN:
        return f"must be at least {SECRET_MIN} characters (openssl rand -hex 32 makes one)"
    return None


def absolute_or_empty(value: str) -> str | None:
    if value and not Path(value).expanduser().is_absolute():
        return f"must be an absolute path (or empty), not {value!r}"
    return None


NODE_NAME_MAX = 64
SECRET_MIN = 16


@dataclass(frozen=True)
class Cluster:
    """Several fibsd nodes as one server over a Redis broker (docs/cluster.md)."""

    url: str = checked("", redis_url)  # empty: a single node, no broker
    node: str = checked("", node_name)  # this node's name; empty: host name and port
    heartbeat_ms: int = checked(1000, between(100, 60000))
    dead_after_ms: int = checked(3000, between(300, 600000))
    # The shared secret that signs every message (fibsd.cluster.envelope); never shown.
    secret: str = field(default="", repr=False, metadata={"check": cluster_secret})
    secret_file: str = checked("", absolute_or_empty)  # read at start instead of ``secret``
    encrypt: bool = False  # cross-node payloads encrypted too (AES-256-GCM)
    replay_window_ms: int = checked(30000, between(1000, 3600000))
    max_nodes: int = checked(32, between(1, 1000))
    max_message_bytes: int = checked(8388608, between(65536, 536870912))
    forward_timeout_ms: int = checked(5000, between(100, 600000))
    # The broker over TLS (rediss://): a CA file (empty: the system's), and a client
    # certificate and key where Redis asks for one (tls-auth-clients).
    tls_ca: str = checked("", absolute_or_empty)
    tls_certificate: str = checked("", absolute_or_empty)
    tls_key: str = checked("", absolute_or_empty)


# The strengths a resident bot may play at: the heuristic brain's one, then GNU
# Backgammon's own predefined levels, weakest first (fibsd/residents/levels.py).
HEURISTIC_STRENGTH = "heuristic"
GNUBG_STRENGTHS = ("beginner", "casual", "intermediate", "advanced", "expert", "worldclass",
                   "supremo", "grandmaster")
MAX_BOT_LENGTH = 99


@dataclass(frozen=True)
class ResidentBot:
    """One ``[[bots.resident]]`` entry: an account the server plays with a program."""

    name: str
    brain: str = "heuristic"  # heuristic | gnubg
    strength: str = HEURISTIC_STRENGTH  # for gnubg: one of GNUBG_STRENGTHS
    lengths: tuple[int, ...] = (1, 3, 5, 7)  # match lengths it accepts
    at_once: int = 1  # matches at once: accounts name, name_b, name_c ...

    def accounts(self) -> tuple[str, ...]:
        """The account names it plays as (a FIBS account plays one match at a time;
        names have no digits, so further ones take a letter)."""
        return (self.name, *(f"{self.name}_{chr(ord('a') + n)}" for n in range(1, self.at_once)))


_BOT_KEYS = {"name", "brain", "strength", "lengths", "at_once"}


def resident_bots(raw: Any, name: str) -> tuple[ResidentBot, ...]:
    """The ``[[bots.resident]]`` tables as ResidentBots; ConfigError names the entry."""
    if not isinstance(raw, list) or not all(isinstance(item, Mapping) for item in raw):
        raise ConfigError(name, "must be an array of tables ([[bots.resident]])")
    bots: list[ResidentBot] = []
    seen: set[str] = set()
    for number, table in enumerate(raw, start=1):
        where = f"{name}[{number}]"
        unknown = sorted(set(table) - _BOT_KEYS)
        if unknown:
            raise ConfigError(f"{where}.{unknown[0]}", "unknown key")
        bot = ResidentBot(name="")
        values: dict[str, Any] = {}
        for key in ("name", "brain", "strength"):
            value = table.get(key, getattr(bot, key))
            if not isinstance(value, str):
                raise ConfigError(f"{where}.{key}", f"must be a string, not {value!r}")
            values[key] = value
        problem = user_names((values["name"],)) if values["name"] else "every bot needs a name"
        if problem is None and len(values["name"]) > 18:
            problem = f"{values['name']!r} is longer than 18 letters"
        if problem is None and reserved_name(values["name"]):
            problem = f"{values['name']!r} is a name no account may have (protocol/access.md)"
        if problem is not None:
            raise ConfigError(f"{where}.name", problem)
        brain = values["brain"]
        if brain not in ("heuristic", "gnubg"):
            raise ConfigError(f"{where}.brain", f"must be 'heuristic' or 'gnubg', not {brain!r}")
        if brain == "gnubg" and "strength" not in table:
            values["strength"] = "expert"
        strengths = GNUBG_STRENGTHS if brain == "gnubg" else (HEURISTIC_STRENGTH,)
        if values["strength"] not in strengths:
            raise ConfigError(f"{where}.strength", f"the {brain} brain plays at "
                              f"{', '.join(map(repr, strengths))}, not {values['strength']!r}")
        lengths = table.get("lengths", bot.lengths)
        if (not isinstance(lengths, (list, tuple)) or not lengths
                or not all(isinstance(n, int) and not isinstance(n, bool)
                           and 1 <= n <= MAX_BOT_LENGTH for n in lengths)):
            raise ConfigError(f"{where}.lengths", "must be a non-empty list of match lengths "
                              f"from 1 to {MAX_BOT_LENGTH}, not {lengths!r}")
        at_once = table.get("at_once", bot.at_once)
        if not isinstance(at_once, int) or isinstance(at_once, bool) or not 1 <= at_once <= 26:
            raise ConfigError(f"{where}.at_once", f"must be a whole number from 1 to 26, "
                              f"not {at_once!r}")
        entry = ResidentBot(lengths=tuple(sorted(set(lengths))), at_once=at_once, **values)
        clash = seen.intersection(n.lower() for n in entry.accounts())
        if clash:
            raise ConfigError(f"{where}.name", f"a second bot plays as {sorted(clash)[0]!r}")
        seen.update(n.lower() for n in entry.accounts())
        bots.append(entry)
    return tuple(bots)


DEFAULT_BOTS = (
    ResidentBot("GnubgExpert", brain="gnubg", strength="expert"),
    ResidentBot("HeuristicBot", brain="heuristic", strength=HEURISTIC_STRENGTH),
)


@dataclass(frozen=True)
class Bots:
    """Resident bots: programs the server starts, supervises and stops (fibsd/residents/)."""

    enabled: bool = True
    # Where the bots connect: "" is this server over the loopback (127.0.0.1 and its
    # own port); `fibsd bots` on another machine sets the server's address.
    server: str = ""
    port: int = checked(0, between(0, 65535))  # 0: the server's own port
    restart_min_seconds: int = checked(1, between(1, 3600))
    restart_max_seconds: int = checked(300, between(1, 86400))
    stable_seconds: int = checked(60, between(1, 86400))  # a run this long resets the backoff
    gnubg: str = ""  # the gnubg program ("": gnubg on PATH or in /usr/games)
    # The web ladder: bots ranked with people ("together") or in a list of their own
    # ("apart"); the telnet `ratings` list stays FIBS's, everyone together.
    ladder: str = checked("apart", one_of("apart", "together"))
    resident: tuple[ResidentBot, ...] = DEFAULT_BOTS


@dataclass(frozen=True)
class Settings:
    interface: str = "0.0.0.0"
    port: int = checked(4321, between(0, 65535))
    data_dir: Path = Path("~/.local/share/fibsd")
    database: Path | str = Path("fibsd.sqlite")  # a str only as a PostgreSQL URL
    idle_timeout: int = checked(3600, between(0))
    motd: Path = Path("motd.txt")
    help_dir: Path = Path("help")
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
    access: Access = field(default_factory=Access)
    web: Web = field(default_factory=Web)
    privacy: Privacy = field(default_factory=Privacy)
    tls: Tls = field(default_factory=Tls)
    archive: Archive = field(default_factory=Archive)
    fair: FairPlay = field(default_factory=FairPlay)
    clock: Clocks = field(default_factory=Clocks)
    pace: Pace = field(default_factory=Pace)
    cluster: Cluster = field(default_factory=Cluster)
    db: Db = field(default_factory=Db)
    analysis: Analysis = field(default_factory=Analysis)
    tournaments: Tournaments = field(default_factory=Tournaments)
    bots: Bots = field(default_factory=Bots)


def load_settings(path: Path | None, overrides: Mapping[str, Any]) -> Settings:
    """Read ``path`` (if given) over the defaults, then apply ``overrides``.

    ``overrides`` uses the file's key names, dotted for sections
    (``{"port": 4322, "limits.max_users": 10}``).
    """
    settings = _resolve(Settings(), defaults_dir(), "")
    if path is not None:
        settings = _merge(settings, _read(path), path.parent.absolute(), "", data_paths=True)
    nested: dict[str, Any] = {}
    for dotted, value in overrides.items():
        *sections, key = dotted.split(".")
        table = nested
        for section in sections:
            table = table.setdefault(section, {})
        table[key] = value
    settings = _merge(settings, nested, Path.cwd(), "")
    cluster = settings.cluster
    if cluster.url and not (cluster.secret or cluster.secret_file):
        raise ConfigError("cluster.secret", "a cluster needs a shared secret: set [cluster] "
                          "secret or secret_file, the same on every node (docs/cluster.md)")
    if settings.bots.restart_max_seconds < settings.bots.restart_min_seconds:
        raise ConfigError("bots.restart_max_seconds", "must not be below restart_min_seconds")
    if isinstance(settings.database, Path) and not settings.database.is_absolute():
        settings = replace(settings, database=_absolute(settings.data_dir, settings.database))
    tls = settings.tls
    return replace(settings, tls=replace(tls, certificate=_absolute(settings.data_dir,
                                                                     tls.certificate),
                                         key=_absolute(settings.data_dir, tls.key)))


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except OSError as error:
        raise ConfigError(str(path), f"cannot read: {error.strerror}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(str(path), f"not valid TOML: {error}") from error


def _resolve(value: Any, base: Path, prefix: str) -> Any:
    """The dataclass with every relative path made absolute against ``base`` (but those
    of ``DATA_PATHS`` and ``DATA_DEFAULTS``: ``load_settings`` puts them under
    ``data_dir`` at the end)."""
    changes = {}
    for item in fields(value):
        current = getattr(value, item.name)
        name = prefix + item.name
        if isinstance(current, Path) and name not in DATA_PATHS | DATA_DEFAULTS:
            changes[item.name] = _absolute(base, current)
        elif is_dataclass(current):
            changes[item.name] = _resolve(current, base, name + ".")
    return replace(value, **changes)


def _absolute(base: Path, path: Path) -> Path:
    return Path(os.path.normpath(base / path.expanduser()))


def _merge(current: Any, table: Mapping[str, Any], base: Path, prefix: str,
           data_paths: bool = False) -> Any:
    """``table`` over ``current``; with ``data_paths`` a relative path in ``DATA_PATHS``
    stays relative (``load_settings`` puts it under ``data_dir`` at the end)."""
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
            changes[key] = _merge(existing, raw, base, name + ".", data_paths)
            continue
        if name == "database" and is_postgres_url(raw):
            changes[key] = raw
            continue
        if wanted == Path | str:
            wanted = Path
        try:
            value = _convert(name, wanted, raw, base)
        except ConfigError:
            if known[key].repr:
                raise
            raise ConfigError(name, "has the wrong type (its value is not shown)") from None
        if data_paths and name in DATA_PATHS and not Path(str(raw)).expanduser().is_absolute():
            value = Path(str(raw))
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
    if wanted == tuple[ResidentBot, ...]:
        return resident_bots(raw, name)
    raise AssertionError(f"no conversion for {name}: {wanted}")
