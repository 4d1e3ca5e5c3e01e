"""A logged-in user: the live state the lobby and the commands share.

The account itself (name, password hash, rating...) is a ``UserRecord`` in the store;
an ``OnlineUser`` holds what changes while the user is connected and writes back
through the session's database proxy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from fibsd.server.shared_settings import replaced, shared
from fibsd.store import UserRecord
from fibsd.wire.clip import WhoInfo, format_who_info, who_info_parts
from fibsd.wire.settings import toggles_from_text, toggles_to_text

if TYPE_CHECKING:
    from fibsd.config import Settings


class Indexes(Protocol):
    """The lobby's indexes of watchers and waiters (``fibsd.server.lobby.Lobby``), which
    a user's ``watching`` and ``awaits`` keep up to date."""

    def watching_changed(self, user: OnlineUser, old: str | None, new: str | None) -> None: ...

    def awaits_changed(self, user: OnlineUser, old: tuple[str, ...],
                       new: tuple[str, ...]) -> None: ...


class Line(Protocol):
    """What the lobby, the commands and the matches use of the connection a user is
    reached through: a connection here (``fibsd.server.session.Session``) or a stand-in
    for one on another node (``fibsd.cluster.remote.RemoteSession``).  Named here, so
    that a user needs nothing of the module that makes sessions."""

    remote: bool
    is_clip: bool
    host: str
    user: OnlineUser | None

    @property
    def lobby(self) -> Indexes: ...

    @property
    def db(self) -> Any: ...

    @property
    def settings(self) -> Settings: ...

    def now(self) -> int: ...

    def send(self, *lines: str) -> None: ...

    def error(self, text: str) -> None: ...

    def notify(self, *lines: str) -> None: ...

    def notify_event(self, *lines: str) -> None: ...

    def notify_clip(self, data: bytes) -> None: ...

    def not_reading(self) -> bool: ...

    def replaced(self) -> None: ...

    def disconnect(self, goodbye: bool = True, notice: str | None = None) -> None: ...


@dataclass(eq=False, slots=True, weakref_slot=True)  # slots: thousands are online
class OnlineUser:
    name: str
    # The account's registration time (the cluster's proxies need it); not the whole
    # ``UserRecord``, whose stored settings and password hash an online user no longer
    # needs (about 400 bytes per idle user).
    created: int
    session: Line
    login_time: int
    host: str  # the full address: only the user himself sees it
    client: str | None  # the client word of a CLIP login; None for telnet users
    # Shared with every user whose settings are equal (fibsd.server.shared_settings):
    # read-only, changed by ``set_toggles`` and ``set_variables``.
    toggles: Mapping[str, bool]
    variables: Mapping[str, str]
    rating: float
    experience: int
    address: str = ""
    bot: bool = False  # the account is marked as played by a program (issue 24)
    shown_host: str = "-"  # the address as others see it (``privacy.show_addresses``)
    away: str | None = None
    # Replaced, never changed in place: an empty set is 216 bytes per idle user, the
    # empty frozenset is one object for all.
    gagged: frozenset[str] = frozenset()
    blinded: frozenset[str] = frozenset()
    last_active: float = 0.0  # reactor time of the last command, for idle times
    playing: str | None = None  # the opponent's name while in a match
    # The name of the player whose game is watched: the ``watching`` property, which
    # keeps the lobby's index of watchers up to date.
    _watching: str | None = field(default=None, init=False, repr=False)
    # The names ``waitfor`` waits for: the ``awaits`` property, which keeps the lobby's
    # index of waiters up to date.
    _awaits: tuple[str, ...] = field(default=(), init=False, repr=False)
    departure: str = ""  # the logout notice others saw (set by the lobby on logout)
    # The terms of the last invitation each inviter sent this user (length: 0 unlimited,
    # None resume; the clock's text): a join must not bind to terms the user may not
    # have read yet.  None until the first invitation (an empty dict per idle user is
    # 64 bytes).
    invitations_seen: dict[str, tuple[int | None, str]] | None = None
    # The match the opponent just left (``leave`` or a lost connection) and when this
    # user was told (None while the save is under way): a ``join`` that crossed the
    # leave is answered by that line alone (fibsd.server.commands.play.join).
    parted: tuple[Any, float | None] | None = None
    # Fair dice (fibsd.server.commands.fair): the ``diceseed`` text mixed into the next
    # match's seed, and how often each of the 36 rolls came to this user since login
    # (index 6 * (die1 - 1) + die2 - 1), for ``dicetest``: the ``rolls_seen`` property,
    # made at the first roll or ``dicetest`` (36 counts are 344 bytes per idle user).
    dice_text: str = ""
    _rolls_seen: list[int] | None = field(default=None, init=False, repr=False)
    # The CLIP 5 line around its idle field, and the fields it was made from.
    _who_parts: tuple[str, str] = field(default=("", ""), init=False, repr=False)
    _who_key: tuple[Any, ...] = field(default=(), init=False, repr=False)

    @classmethod
    def from_record(
        cls, record: UserRecord, session: Line, *, login_time: int, host: str,
        client: str | None, now: float, new_account_variables: Mapping[str, str] = {},
        shown_host: str | None = None,
    ) -> OnlineUser:
        """``new_account_variables`` are the site's defaults for variables the account
        has never stored (fibsd.toml ``[new_accounts]``)."""
        toggles, variables = toggles_from_text(record.settings, new_account_variables)
        toggles["telnet"] = client is None
        return cls(
            name=record.name, created=record.created, session=session, login_time=login_time,
            host=host, client=client, toggles=toggles, variables=variables,
            rating=record.rating, experience=record.experience, address=record.address,
            bot=record.bot, last_active=now, shown_host=host if shown_host is None else shown_host,
        )

    def __post_init__(self) -> None:
        self.toggles = shared(self.toggles)
        self.variables = shared(self.variables)

    def set_toggles(self, changes: Mapping[str, bool]) -> None:
        self.toggles = replaced(self.toggles, changes)

    def set_variables(self, changes: Mapping[str, str]) -> None:
        self.variables = replaced(self.variables, changes)

    @property
    def watching(self) -> str | None:
        return self._watching

    @watching.setter
    def watching(self, player: str | None) -> None:
        """Every assignment goes through the lobby's index, so a match finds its watchers
        without walking every online user at each roll and move."""
        self.session.lobby.watching_changed(self, self._watching, player)
        self._watching = player

    @property
    def rolls_seen(self) -> list[int]:
        """A list of 36 counts (a cluster's proxy user: its home's, ``RemoteRolls``)."""
        if self._rolls_seen is None:
            self._rolls_seen = [0] * 36
        return self._rolls_seen

    @rolls_seen.setter
    def rolls_seen(self, counts: list[int]) -> None:
        self._rolls_seen = counts

    @property
    def awaits(self) -> tuple[str, ...]:
        return self._awaits

    @awaits.setter
    def awaits(self, names: Iterable[str]) -> None:
        """Every assignment goes through the lobby's index, so a login finds its waiters
        without walking every online user."""
        names = tuple(names)
        self.session.lobby.awaits_changed(self, self._awaits, names)
        self._awaits = names

    @property
    def ready(self) -> bool:
        return self.toggles["ready"]

    def who_info(self, now: float, own: bool = False) -> WhoInfo:
        """What others see; ``own``: what the user sees of himself (his full address)."""
        return WhoInfo(
            name=self.name,
            opponent=self.playing,
            watching=self.watching,
            ready=self.ready,
            away=self.away is not None,
            rating=self.rating,
            experience=self.experience,
            idle=max(0, int(now - self.last_active)),
            login=self.login_time,
            host=self.host if own else self.shown_host,
            client=self.client,
            email=self.address,
        )

    def clip_who_line(self, now: float) -> str:
        """``format_who_info(self.who_info(now))``, formatted again only when a field
        other than the idle time changed: a CLIP login lists every online user."""
        key = (self.playing, self._watching, self.toggles["ready"], self.away is not None,
               self.rating, self.experience, self.address, self.shown_host, self.client,
               self.login_time)
        if key != self._who_key:
            self._who_parts = who_info_parts(self.who_info(now))
            self._who_key = key
        head, tail = self._who_parts
        return f"{head} {max(0, int(now - self.last_active))} {tail}"

    def own_clip_who_line(self, now: float) -> str:
        """The CLIP 5 line the user himself gets: with his full address."""
        return format_who_info(self.who_info(now, own=True))

    def who_line_for(self, viewer: OnlineUser | None, now: float) -> str:
        return self.own_clip_who_line(now) if viewer is self else self.clip_who_line(now)

    def settings_text(self) -> dict[str, str]:
        return toggles_to_text(self.toggles, self.variables)

    def save_settings(self) -> Any:
        """Persist toggles and ``set`` variables; returns the store call's Deferred."""
        return self.session.db.save_settings(self.name, self.settings_text())
