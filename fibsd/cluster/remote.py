"""The session of a user connected to another node: what this node's lobby, commands
and matches call on ``user.session`` travels to his node, which calls the same method
on his real session (``fibsd.cluster.node``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from fibsd.server.session import SharedParts

if TYPE_CHECKING:
    from fibsd.server.session import Services
    from fibsd.server.user import OnlineUser


class Courier(Protocol):
    """What carries a call to the user's node: the ``ClusterNode`` that made the proxy
    (named by its part here, so that this module needs nothing of the node's)."""

    def deliver(self, node: str, name: str, method: str, args: list[Any]) -> None: ...


class RemoteSession(SharedParts):
    """A proxy user's session: the parts of ``fibsd.server.session.Session`` that the
    lobby, the commands and ``fibsd.server.match`` use."""

    remote = True

    def __init__(self, node: Courier, home: str, services: Services, *,
                 is_clip: bool, host: str) -> None:
        self.node = node
        self.home = home  # the name of the node the user is connected to
        self.services = services
        self.is_clip = is_clip
        self.host = host
        self.user: OnlineUser | None = None

    def send(self, *lines: str) -> None:
        if lines:
            self._deliver("s", list(lines))

    def notify(self, *lines: str) -> None:
        if lines:
            self._deliver("n", list(lines))

    def notify_event(self, *lines: str) -> None:
        if lines:
            self._deliver("e", list(lines))

    def notify_clip(self, data: bytes) -> None:
        self._deliver("c", [data.decode("latin-1")])

    def disconnect(self, goodbye: bool = True, notice: str | None = None) -> None:
        self._deliver("x", [goodbye, notice])

    def not_reading(self) -> bool:
        """Unknown here (his output queue is on his node): taken as reading."""
        return False

    def replaced(self) -> None:
        """His own node closes the old connection when it hears of the new login."""

    def _deliver(self, method: str, args: list[Any]) -> None:
        if self.user is not None:
            self.node.deliver(self.home, self.user.name, method, args)


class RemoteRolls(list[int]):
    """A proxy user's ``rolls_seen`` (for ``dicetest``): each roll a match here counts
    for him is counted on his node too, in the same message as the roll's lines."""

    def __init__(self, node: Courier, home: str, name: str) -> None:
        super().__init__([0] * 36)
        self._node = node
        self._home = home
        self._name = name

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, int) and value == self[index] + 1:
            self._node.deliver(self._home, self._name, "r", [index])
        super().__setitem__(index, value)
