"""How often a user may make the server work or talk for him: one token bucket per user
and limited command (shout, tell, say, kibitz, whisper, message, invite, away,
toggle, set, fairdice, export).

A bucket holds ``limits.<key>`` tokens (the key is ``shouts_per_minute``,
``tells_per_minute`` ...; or a dotted key of another section,
``archive.exports_per_minute``) and refills at that many a minute; each use takes one,
and a use that finds the bucket empty is refused with the command's ``** `` line.  So a
user may do N at once and N a minute on average, where N is well above what a person
types or a client or bot sends (protocol/limits.md).

Buckets belong to the user's name, not to his connection (logging in again does not
refill them).  A bucket that has refilled is the same as a new one, so a user's buckets
are dropped when he logs out with all of them full.  In a cluster a user is on one node
at a time and every limited command runs on his own node, so his buckets live there;
when he leaves that node (he logs out, or logs in again on another), the node hands
his buckets that are not full (``levels``) to every other (fibsd.cluster.node), which
keep them (``adopt``): logging in again elsewhere does not refill them either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from twisted.logger import Logger

from fibsd.server.lobby import Lobby, on_logout

if TYPE_CHECKING:
    from fibsd.server.session import Session
    from fibsd.server.user import OnlineUser

_log = Logger()


@dataclass
class TokenBucket:
    """``capacity`` tokens, refilled at ``capacity`` per ``period`` seconds."""

    capacity: float
    period: float
    tokens: float
    stamp: float  # when ``tokens`` was last brought up to date
    refusing: bool = False  # refused the last use: the log says so once per run

    def level(self, now: float) -> float:
        elapsed = max(0.0, now - self.stamp)
        return min(self.capacity, self.tokens + elapsed * self.capacity / self.period)

    def take(self, now: float) -> bool:
        self.tokens, self.stamp = self.level(now), now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


PERIOD = 60.0  # seconds: every limit is stated per minute

# lobby -> user name (lower case) -> limit key -> bucket
_buckets: WeakKeyDictionary[Lobby, dict[str, dict[str, TokenBucket]]] = WeakKeyDictionary()


def _capacity(settings: Any, key: str) -> float:
    """The setting ``key`` names in ``settings``: ``tells_per_minute`` of ``[limits]``,
    or a dotted ``section.key``."""
    section, _, name = key.rpartition(".")
    return float(getattr(getattr(settings, section or "limits"), name))


def _config_key(key: str) -> str:
    return key if "." in key else f"limits.{key}"


def allow(session: Session, key: str) -> bool:
    """Take one token from the session user's ``key`` bucket (a ``[limits]`` key such as
    ``tells_per_minute``, or a dotted one such as ``archive.exports_per_minute``); False
    when there is none (logged as a ``limit`` event, once for a run of refusals)."""
    user = session.user
    assert user is not None
    capacity = _capacity(session.settings, key)
    now = session.clock.seconds()
    buckets = _buckets.setdefault(session.lobby, {}).setdefault(user.name.lower(), {})
    bucket = buckets.get(key)
    if bucket is None:
        bucket = buckets[key] = TokenBucket(capacity, PERIOD, capacity, now)
    if bucket.take(now):
        bucket.refusing = False
        return True
    if bucket.refusing:
        return False  # one log event per run of refusals, not one per line typed
    bucket.refusing = True
    _log.info("{user} refused by {limit}", event="limit", limit=_config_key(key),
              user=user.name, address=session.host)
    return False


def levels(lobby: Lobby, name: str) -> dict[str, float]:
    """The tokens now in ``name``'s buckets that are not full, by key: what another
    node needs to go on counting for him."""
    now = lobby.now()
    buckets = _buckets.get(lobby, {}).get(name.lower(), {})
    return {key: bucket.level(now) for key, bucket in buckets.items()
            if bucket.level(now) < bucket.capacity}


def adopt(lobby: Lobby, name: str, tokens: dict[str, float], settings: Any) -> None:
    """``name``'s buckets as another node left them (``levels``): each keeps the lower
    of its own level and that one, so no move between nodes gives him tokens."""
    now = lobby.now()
    buckets = _buckets.setdefault(lobby, {}).setdefault(name.lower(), {})
    for key, level in tokens.items():
        try:
            capacity = _capacity(settings, key)
        except AttributeError:  # a key this node does not know (another version)
            continue
        bucket = buckets.get(key)
        if bucket is None:
            bucket = buckets[key] = TokenBucket(capacity, PERIOD, capacity, now)
        bucket.tokens = min(bucket.level(now), max(0.0, float(level)))
        bucket.stamp = now


@on_logout
def _forget_full(lobby: Lobby, user: OnlineUser) -> None:
    users = _buckets.get(lobby)
    buckets = users.get(user.name.lower()) if users is not None else None
    if users is None or buckets is None:
        return
    now = lobby.now()
    if all(bucket.level(now) >= bucket.capacity for bucket in buckets.values()):
        del users[user.name.lower()]
