"""The realm of online users: who is here, and who hears about whom.

Sessions log users in and out through the lobby; the lobby tells everyone else, each in
their own mode: CLIP users get numbered lines (``7``/``8`` notices, ``5``+``6`` who-info
updates), telnet users a sentence.  Other command families hook into logins and
logouts with ``@on_login`` / ``@on_logout`` (``waitfor`` needs to know who arrives)
instead of the lobby knowing about them.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from fibsd.rules.dice import SEED_BYTES, DiceSource
from fibsd.server.feed import Feed
from fibsd.wire import clip

if TYPE_CHECKING:
    from twisted.internet.interfaces import IReactorTime

    from fibsd.server.user import OnlineUser

Hook = Callable[["Lobby", "OnlineUser"], None]


class ClusterHooks(Protocol):
    """What the lobby tells a cluster node (fibsd.cluster.node) about its users."""

    def logged_in(self, user: OnlineUser, text: str, replaced: OnlineUser | None) -> None: ...
    def logged_out(self, user: OnlineUser, text: str) -> None: ...
    def who_changed(self, user: OnlineUser) -> None: ...
    def changed(self, user: OnlineUser) -> None: ...
LOGIN_HOOKS: list[Hook] = []
LOGOUT_HOOKS: list[Hook] = []


def on_login(hook: Hook) -> Hook:
    """Run ``hook(lobby, user)`` after every login, once the notices are out."""
    LOGIN_HOOKS.append(hook)
    return hook


def on_logout(hook: Hook) -> Hook:
    """Run ``hook(lobby, user)`` after every logout, once the user has left."""
    LOGOUT_HOOKS.append(hook)
    return hook


# The size past which a login's line starts a new piece of the cached who listing.
WHO_PIECE = 16384


class Lobby:
    def __init__(self, clock: IReactorTime, dice: DiceSource | None = None,
                 presence_delay: float = 0.0) -> None:
        self.clock = clock
        # What every CLIP user is told (who-info, logins, logouts, match reports) waits
        # here briefly (fibsd.server.feed).
        self.feed = Feed(clock, presence_delay)
        self.online: dict[str, OnlineUser] = {}
        # Matches (fibsd.server.match): each rolls its own seeded dice from a server
        # seed drawn here (protocol/fair-dice.md), unless a test scripts ``dice`` for
        # every match; the coin that picks game one's colours, live matches and
        # invitations by player name.
        self.dice: DiceSource | None = dice
        self.draw_seed: Callable[[], bytes] = lambda: secrets.token_bytes(SEED_BYTES)
        self.coin: Callable[[], int] = lambda: secrets.randbelow(2)
        # The server is shutting down: the matches it saves count against no one.
        self.stopping = False
        self.matches: dict[str, Any] = {}
        # Matches with a write not yet stored, live or ended (fibsd.server.match): told
        # when the database goes down; a paused one keeps its pair from a new start.
        self.writing: set[Any] = set()
        self.invitations: dict[str, Any] = {}
        # Dropped players' held matches by name (fibsd.server.grace.Hold).
        self.graces: dict[str, Any] = {}
        # Told each finished match (a ``FinishedMatch``) once its result is stored or
        # refused: the tournament director (fibsd.tournament) feeds its next round.
        self.result_hooks: list[Callable[[Any], None]] = []
        # Watched player's name -> the users whose ``watching`` names him (insertion
        # ordered); kept by ``OnlineUser.watching``'s setter, pruned at logout.
        self._watchers: dict[str, dict[OnlineUser, None]] = {}
        # Awaited name -> the users whose ``waitfor`` names him; kept by
        # ``OnlineUser.awaits``'s setter, pruned at logout.
        self._awaited: dict[str, dict[OnlineUser, None]] = {}
        # The users who may have ``report`` on: added at login and by ``toggle``, pruned
        # at logout, so match starts and results do not walk every online user.
        self._reporting: dict[OnlineUser, None] = {}
        # ``who_lines``: (second, pieces) or None once a who change made them stale.
        self._who_lines: tuple[int, list[bytes]] | None = None
        # A cluster of nodes (fibsd.cluster, wired by fibsd.app): told of this node's
        # logins, logouts and who changes.  Users of other nodes are then in ``online``
        # too, as proxies; lobby broadcasts go to this node's own users only, since
        # every node tells its own.  None: a single node.
        self.cluster: ClusterHooks | None = None

    def who_lines(self, now: float, without: OnlineUser | None = None) -> tuple[bytes, ...]:
        """Every online user's CLIP 5 line (but ``without``'s), in login order: the list
        each CLIP login receives, in pieces to be written one after the other.  Kept
        for the current second, since only the idle fields change with time: after a
        who change it is made again, and a login adds the newcomer's line (to the last
        piece, or a new one past ``WHO_PIECE`` bytes: a login at 10,000 users copies a
        few kilobytes, not the whole listing), so a burst of logins does not format
        every line again for each newcomer."""
        if without is not None:
            return (_encoded(*(u.clip_who_line(now) for u in self.users() if u is not without)),)
        second = int(now)
        if self._who_lines is None or self._who_lines[0] != second:
            self._who_lines = (second, [_encoded(*(u.clip_who_line(now) for u in self.users()))])
        return tuple(self._who_lines[1])

    def users(self) -> Iterator[OnlineUser]:
        return iter(list(self.online.values()))

    def local_users(self) -> Iterator[OnlineUser]:
        """The users connected to this node (in a cluster, ``users()`` has everyone's)."""
        if self.cluster is None:
            return self.users()
        return iter([u for u in self.online.values() if not u.session.remote])

    def reorder(self, key: Callable[[OnlineUser], Any]) -> None:
        """List the online users in ``key`` order (a cluster node puts the users it
        learnt of from other nodes in login order)."""
        ordered = sorted(self.online.values(), key=key)
        self.online.clear()
        self.online.update((user.name, user) for user in ordered)
        self._who_lines = None

    def find(self, name: str) -> OnlineUser | None:
        """The online user with exactly this name."""
        return self.online.get(name)

    def complete(self, prefix: str) -> OnlineUser | None:
        """FIBS name completion: a unique prefix of an online name, tried first with
        case, then without; an exact name always wins."""
        exact = self.online.get(prefix)
        if exact is not None or not prefix:
            return exact
        for fold in (str, str.lower):
            key = fold(prefix)
            matches = [u for n, u in self.online.items() if fold(n).startswith(key)]
            if len(matches) == 1:
                return matches[0]
            if matches:
                return None
        return None

    def reporting(self) -> list[OnlineUser]:
        """The online users with ``report`` on, in the order they turned it on."""
        return [u for u in self._reporting
                if u.toggles["report"] and self.online.get(u.name) is u]

    def report_toggled(self, user: OnlineUser) -> None:
        if user.toggles["report"]:
            self._reporting[user] = None
        else:
            self._reporting.pop(user, None)

    def watched(self, player: str) -> bool:
        """Whether anyone may watch ``player`` (``watchers_of`` says who is online)."""
        return player in self._watchers

    def watchers_of(self, player: str) -> list[OnlineUser]:
        """The online users watching ``player`` (the current connection of each)."""
        return [u for u in self._watchers.get(player, ())
                if u.watching == player and self.online.get(u.name) is u]

    def watching_changed(self, user: OnlineUser, old: str | None, new: str | None) -> None:
        if old is not None:
            self._forget_watcher(user, old)
        if new is not None:
            self._watchers.setdefault(new, {})[user] = None

    def _forget_watcher(self, user: OnlineUser, player: str) -> None:
        watchers = self._watchers.get(player)
        if watchers is not None:
            watchers.pop(user, None)
            if not watchers:
                del self._watchers[player]

    def waiters_for(self, name: str) -> list[OnlineUser]:
        """The online users waiting for ``name`` (``waitfor``), in login order."""
        waiters = self._awaited.get(name)
        if not waiters:
            return []  # the usual case: no walk over every user at each login
        return [u for u in self.users() if u in waiters and name in u.awaits]

    def awaits_changed(self, user: OnlineUser, old: tuple[str, ...],
                       new: tuple[str, ...]) -> None:
        for name in set(old).difference(new):
            waiters = self._awaited.get(name)
            if waiters is not None:
                waiters.pop(user, None)
                if not waiters:
                    del self._awaited[name]
        for name in new:
            self._awaited.setdefault(name, {})[user] = None

    def state_changed(self, user: OnlineUser) -> None:
        """A hook changed ``user``'s state outside his commands: in a cluster, the
        other nodes are told."""
        if self.cluster is not None:
            self.cluster.changed(user)

    def now(self) -> float:
        return self.clock.seconds()

    # --- arrivals and departures ----------------------------------------------------

    def login(self, user: OnlineUser, text: str, replaced: OnlineUser | None = None) -> None:
        """Add ``user`` and tell the others; ``text`` is the CLIP 7 text.

        ``replaced`` is the same account's old connection, closed by this login.
        """
        if replaced is not None:
            self._tell_departure(replaced, clip.closed_old_connection(replaced.name))
            if replaced.watching is not None:
                self._forget_watcher(replaced, replaced.watching)
            self.awaits_changed(replaced, replaced.awaits, ())
            self._reporting.pop(replaced, None)
        self.online[user.name] = user
        self.report_toggled(user)
        line = _encoded(user.clip_who_line(self.now()))
        if replaced is None and self._who_lines is not None:
            pieces = self._who_lines[1]
            if len(pieces[-1]) < WHO_PIECE:
                pieces[-1] += line
            else:
                pieces.append(line)
        else:
            self._who_lines = None
        clip_who = line + _encoded(clip.WHO_END)
        clip_notified = _encoded(clip.format_login(user.name, text)) + clip_who
        if self.cluster is not None:
            self.cluster.logged_in(user, text, replaced)
        for other in self.local_users():
            if other is user:
                continue
            if other.session.is_clip:
                other.session.notify_clip(clip_notified if other.toggles["notify"] else clip_who)
            elif other.toggles["notify"]:
                other.session.notify(text)
        for hook in list(LOGIN_HOOKS):
            hook(self, user)

    def logout(self, user: OnlineUser, text: str) -> None:
        """Remove ``user`` (if still the current connection) and tell the others."""
        if self.online.get(user.name) is not user:
            return
        del self.online[user.name]
        self._who_lines = None
        if user.watching is not None:
            self._forget_watcher(user, user.watching)
        self.awaits_changed(user, user.awaits, ())
        self._reporting.pop(user, None)
        user.departure = text
        if self.cluster is not None:
            self.cluster.logged_out(user, text)
        self._tell_departure(user, text)
        for hook in list(LOGOUT_HOOKS):
            hook(self, user)

    def _tell_departure(self, user: OnlineUser, text: str) -> None:
        clip_data = _encoded(clip.format_logout(user.name, text))
        for other in self.local_users():
            if other is not user and other.name != user.name and other.toggles["notify"]:
                if other.session.is_clip:
                    other.session.notify_clip(clip_data)
                else:
                    other.session.notify(text)

    # --- telling everyone -----------------------------------------------------------

    def broadcast_who(self, user: OnlineUser) -> None:
        """Push ``user``'s CLIP 5 line, and its own 6, to every CLIP user (self included)."""
        if self.online.get(user.name) is not user:
            return
        self._who_lines = None
        if self.cluster is not None:
            self.cluster.who_changed(user)
        data = _encoded(user.clip_who_line(self.now()), clip.WHO_END)
        for other in self.local_users():
            if other.session.is_clip:
                other.session.notify_clip(
                    data if other is not user
                    else _encoded(user.own_clip_who_line(self.now()), clip.WHO_END))

    def announce(self, users: Iterable[OnlineUser], *lines: str) -> None:
        """A game event's lines (as ``notify_event`` puts them) for many users: CLIP
        users get them encoded once, through the feed."""
        clip_data = _encoded("", *lines)
        for user in users:
            if user.session.is_clip:
                user.session.notify_clip(clip_data)
            else:
                user.session.notify_event(*lines)

    def send_to_all(self, lines: Iterable[str], except_: OnlineUser | None = None) -> None:
        lines = tuple(lines)
        for other in self.users():
            if other is not except_:
                other.session.notify(*lines)


def _encoded(*lines: str) -> bytes:
    """CLIP lines as ``Session.send`` puts them on the wire."""
    return "".join(f"{line}\r\n" for line in lines).encode("ascii", "replace")
