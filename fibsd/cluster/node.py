"""One fibsd node in a cluster: the other nodes' users as proxies in this lobby.

Every node keeps an ``OnlineUser`` for every user online anywhere; those of other
nodes have a ``RemoteSession`` (fibsd.cluster.remote), so the lobby, the commands and
the matches work on them as on local users, and what they send a proxy travels to
the user's own node.  Lobby broadcasts (logins, logouts, who-info) stay per node:
each node tells its own users of what it hears (``Lobby.local_users``).

Who owns what: a user's own node owns his state and republishes it when a command of
his changed it (``changed``) or when the lobby pushes his who-info; another node
that changed a proxy (a match there sets ``playing``, ``watch`` there sets
``watching``) sends the fields that changed since the last replicated ones.  A match
lives on the node where ``join`` ran (the inviter's: his invitation is there); a
command about it typed on another node is forwarded there and run as the user's
proxy, and the typing session waits for its ``done`` (``route``), for at most
``cluster.forward_timeout_ms``.  The inter-node messages are listed in
fibsd.cluster.messages.

What a node takes from the broker: only messages signed with the cluster's secret,
fresh and in order (fibsd.cluster.envelope); from a node it knows, or one that
introduces itself (``hello``, a heartbeat, a ``sync``), up to ``cluster.max_nodes``.
Anything else, and any message that fails to apply, is dropped and counted
(``dropped``, and a ``limit`` event at most once a minute per reason and source):
nothing a message holds can break the broker connection.

Death is judged by heartbeats heard since this node's own broker link last changed:
a node whose link was down does not take the others for dead until it has been down
for ``dead_after_ms``, nor before they had ``dead_after_ms`` to be heard again once
it is back; and a node judges only after reading what waits for it (``_beat``).
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.cluster import messages as m
from fibsd.cluster.broker import Address, Broker, tls_options
from fibsd.cluster.envelope import Dropped, Envelope, Freshness
from fibsd.cluster.remote import RemoteRolls, RemoteSession
from fibsd.config import SECRET_MIN
from fibsd.server import commands
from fibsd.server.commands.listings import running_games
from fibsd.server.commands.play import Invitation
from fibsd.server.match import live_match
from fibsd.server.ratelimit import adopt, levels
from fibsd.server.session import COMMAND_FAILED
from fibsd.server.user import OnlineUser
from fibsd.wire import clip
from fibsd.wire import game_text
from fibsd.wire.listings_text import GameRow

if TYPE_CHECKING:
    from fibsd.server.session import Services, Session

_log = Logger()

# Commands about the user's own match: run where it lives.
MATCH_COMMANDS = frozenset({
    "roll", "move", "off", "double", "redouble", "accept", "reject", "resign", "beaver",
    "raccoon", "leave", "claim"})
# Commands about the match played, or else watched (``fairdice <number>`` is not: a
# finished match, read on the user's own node).  (``join``, ``watch``, ``look``,
# ``oldboard`` and ``oldmoves`` go where the match or invitation they name is: ``_where``.)
VIEW_COMMANDS = frozenset({"board", "pip", "fairdice", "clock"})
# Every command a node may forward (``_where``); a node runs no other for another's user.
FORWARDED = MATCH_COMMANDS | VIEW_COMMANDS | {"join", "watch", "look", "oldboard", "oldmoves"}
# Items that introduce a node not known yet (a start, a heartbeat, an answer to ours).
INTRODUCTIONS = frozenset({"hello", "hb", "sync"})
# What the operator may look at when messages are dropped for a reason.
HINTS = {
    "forged": " (not signed with this node's [cluster] secret: another secret, or not a node)",
    "replayed": " (seen before, or sent more than cluster.replay_window_ms from this "
                "node's clock: are the clocks in step?)",
    "too_many_nodes": " (cluster.max_nodes other nodes known already)",
    "too_large": " (over cluster.max_message_bytes)",
}
# A forwarded command unanswered within ``cluster.forward_timeout_ms`` (or not sent: the
# broker is unreachable); his session goes on.
NO_ANSWER = "Sorry, that command got no answer in time; it may not have been done."


def read_secret(settings: Any) -> str:
    """The cluster's secret: ``secret``, or the contents of ``secret_file``; raises
    ValueError (with one line that never holds the secret) when there is none."""
    if settings.secret:
        return str(settings.secret)
    try:
        secret = Path(settings.secret_file).expanduser().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError) as error:
        raise ValueError(f"cannot read cluster.secret_file {settings.secret_file}: "
                         f"{getattr(error, 'strerror', None) or error}") from error
    if len(secret) < SECRET_MIN:
        raise ValueError(f"cluster.secret_file {settings.secret_file}: the secret must be "
                         f"at least {SECRET_MIN} characters")
    return secret


class MatchTable(dict[str, Any]):
    """``Lobby.matches`` on a cluster node: tells the node when a match of this node
    begins or ends for a player, so the others know where to send his commands."""

    def __init__(self, node: ClusterNode) -> None:
        super().__init__()
        self._node = node

    def __setitem__(self, name: str, match: Any) -> None:
        super().__setitem__(name, match)
        self._node.broadcast(["m", name, 1])

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name)
        self._node.broadcast(["m", name, 0])


class InvitationTable(dict[str, Any]):
    """``Lobby.invitations`` on a cluster node: each invitation made or dropped here is
    told to the other nodes, which keep a copy (``fairdice`` lists the invitations a
    user got; the invitation itself is acted on where it was made, by ``join``)."""

    def __init__(self, node: ClusterNode) -> None:
        super().__init__()
        self._node = node

    def __setitem__(self, name: str, invitation: Any) -> None:
        super().__setitem__(name, invitation)
        self._node.broadcast(["inv", name, _invitation_fields(invitation)])

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name)
        self._node.broadcast(["inv", name, None])

    def pop(self, name: str, *default: Any) -> Any:
        if name in self:
            self._node.broadcast(["inv", name, None])
        return super().pop(name, *default)

    def copy_from(self, name: str, fields: list[Any] | None) -> None:
        """Another node's invitation (None: it is gone), kept without telling anyone."""
        if fields is None:
            dict.pop(self, name, None)
        else:
            inviter, invitee, length, confirmed, sent, seed, *rest = fields
            tag = rest[0] if rest else None  # a node of before tournaments sends none
            dict.__setitem__(self, name, Invitation(
                inviter, invitee, length, confirmed, sent,
                bytes.fromhex(seed) if seed is not None else None,
                tournament=(int(tag[0]), int(tag[1])) if tag is not None else None))


def _invitation_fields(invitation: Any) -> list[Any]:
    """An invitation as ``inv`` carries it; a tournament's keeps its (id, round), so
    that ``join`` on the inviter's node starts that round's match whichever node's
    director set it up."""
    seed = invitation.server_seed
    tag = invitation.tournament
    return [invitation.inviter, invitation.invitee, invitation.length, invitation.confirmed,
            invitation.sent, seed.hex() if seed is not None else None,
            list(tag) if tag is not None else None]


class ClusterNode:
    def __init__(self, services: Services, reactor: Any) -> None:
        self.services = services
        self.lobby = services.lobby
        self.reactor = reactor
        self.settings = services.settings.cluster
        self.name = self.settings.node
        self._secret = read_secret(self.settings)
        tls_options(Address.from_url(self.settings.url), self.settings)  # fails now, not later
        self.envelope: Envelope | None = None  # made at ``start``, once the name is known
        # Per sender, what was taken (replays are dropped); more room than ``max_nodes``
        # so that nodes just forgotten are still remembered.
        self.freshness = Freshness(self.settings.replay_window_ms, 2 * self.settings.max_nodes)
        self.dropped: Counter[str] = Counter()  # messages dropped, by reason
        # Heartbeats are counted from here: the last time our broker link went or came.
        self._judged_from = 0.0
        self.broker: Broker | None = None
        self.peers: dict[str, float] = {}  # node -> when last heard
        self.keys: dict[str, tuple[float, str]] = {}  # online name -> login key
        self.snaps: dict[str, dict[str, Any]] = {}  # online name -> last replicated state
        self.match_hosts: dict[str, str] = {}  # player -> the other node hosting his match
        # Commands forwarded to other nodes, by number: (node, fired when done, session,
        # the deadline's timer).
        self.pending: dict[int, tuple[str, Deferred[None], Session, Any]] = {}
        self._forward_count = 0
        self._out: dict[str, list[list[Any]]] = {}
        self._flush_call: Any = None
        self._applying: OnlineUser | None = None  # changes to him are not republished
        self._greeted = False
        self._heartbeat = LoopingCall(self._beat)
        self._judging: Any = None  # the judgement of the others after a heartbeat
        self._heartbeat.clock = reactor
        self.lobby.matches = MatchTable(self)
        self.invitations = self.lobby.invitations = InvitationTable(self)
        # Questions asked of every node (``ask``): token -> (nodes still to answer,
        # answers by node, fired with them).
        self._asks: dict[int, tuple[set[str], dict[str, Any], Deferred[list[Any]]]] = {}
        self._ask_count = 0
        self._handlers: dict[str, Callable[..., None]] = {
            "hello": self._hello, "hb": self._nothing, "bye": self._bye, "want": self._want,
            "sync": self._sync,
            "in": self._login, "out": self._logout, "st": self._state, "m": self._match,
            "d": self._deliveries, "f": self._forwarded, "done": self._done,
            "inv": self._invitation, "q": self._question, "a": self._answer,
            "rl": self._limits, "lf": self._login_failed, "tr": self._tournament_result,
        }
        self.lobby.result_hooks.append(self._result)
        services.throttle.observers.append(
            lambda address, account: self.broadcast(["lf", address, account]))

    # --- starting and stopping ------------------------------------------------------

    def start(self, port: int) -> None:
        if not self.name:
            self.name = f"{socket.gethostname()[:50]}:{port}"
        self.envelope = Envelope(self._secret, self.name, self.settings.encrypt, self.reactor)
        self.broker = Broker(self.reactor, self.settings,
                             [m.ALL, m.node_channel(self.name)], self._received,
                             self._subscribed, self._link_lost)
        self.broker.start()
        self._heartbeat.start(self.settings.heartbeat_ms / 1000, now=False)

    def stop(self) -> None:
        """Send what is queued, then close the broker connections."""
        if self._heartbeat.running:
            self._heartbeat.stop()
        if self._judging is not None and self._judging.active():
            self._judging.cancel()
        for _, _, _, timer in self.pending.values():
            timer.cancel()
        self._flush()
        if self.broker is not None:
            self._publish(m.ALL, [["bye"]])
            self.broker.stop()

    def _subscribed(self) -> None:
        """Connected and listening (again): greet the others (a first start) or ask
        them for their users (back after a lost broker connection: what they said
        meanwhile is lost)."""
        assert self.broker is not None
        self._judged_from = self.reactor.seconds()
        if not self._greeted:
            self._greeted = True
            _log.info("cluster node {node} joins at {url}", event="cluster", node=self.name,
                      url=self.broker.where)
            self._publish(m.ALL, [["hello"]])
        else:
            self._publish(m.ALL, [["hb"]])
            for peer in list(self.peers):  # whichever of two nodes is back last, both
                self.send(peer, ["want"])  # learn what they missed of each other
                self._want(peer)

    def _link_lost(self) -> None:
        """Our broker link is down: the others are not heard, which says nothing of
        them until it has lasted ``dead_after_ms``.  The commands forwarded and not
        done will not be: what was in flight is lost, so their sessions go on now."""
        self._judged_from = self.reactor.seconds()
        for number in list(self.pending):
            target, done, session, timer = self.pending.pop(number)
            timer.cancel()
            session.error(NO_ANSWER)
            done.callback(None)

    def _beat(self) -> None:
        if self.broker is not None:
            self._publish(m.ALL, [["hb"]])
        # The others are judged once what waits on the sockets has been read (timers run
        # before reads in a reactor's pass): after this process stood still (a long
        # pause, a stopped process), their heartbeats of that time are there, unread,
        # and must count before anyone is taken for dead.
        if self._judging is None or not self._judging.active():
            self._judging = self.reactor.callLater(0, self._judge)

    def _judge(self) -> None:
        now = self.reactor.seconds()
        limit = self.settings.dead_after_ms / 1000
        for peer, heard in list(self.peers.items()):
            if now - max(heard, self._judged_from) > limit:
                try:
                    self._dead(peer)
                except Exception:  # the heartbeat must go on whatever happens
                    _log.failure("cluster: failed forgetting node {node}", Failure(),
                                 event="error", node=peer)

    # --- sending ----------------------------------------------------------------------

    def send(self, node: str, item: list[Any]) -> None:
        """Queue ``item`` for ``node``: sent, with the others of this turn, at its end."""
        self._out.setdefault(node, []).append(item)
        if self._flush_call is None:
            self._flush_call = self.reactor.callLater(0, self._flush)

    def broadcast(self, item: list[Any]) -> None:
        for peer in self.peers:
            self.send(peer, item)

    def deliver(self, node: str, name: str, method: str, args: list[Any]) -> None:
        """A call on the session of ``name``, a user of ``node`` (``RemoteSession``);
        the same call right after the same call for another user joins its item."""
        items = self._out.get(node)
        if items:
            last = items[-1]
            if last[0] == "d" and last[1] == method and last[2] == args:
                last[3].append(name)
                return
        self.send(node, ["d", method, args, [name]])

    def _flush(self) -> None:
        if self._flush_call is not None and self._flush_call.active():
            self._flush_call.cancel()
        self._flush_call = None
        out, self._out = self._out, {}
        if self.broker is None:
            return
        for node, items in out.items():
            # Without a broker the items are lost (the broker connection logs its loss
            # once); the nodes resynchronise when they hear each other again.
            epoch = self.freshness.epoch_of(node)
            if epoch is not None:  # (always, for a node heard from)
                self._publish(m.node_channel(node), items, epoch)

    def _publish(self, channel: bytes, items: list[list[Any]], recipient: int = 0) -> None:
        assert self.broker is not None and self.envelope is not None
        payload = self.envelope.seal(channel, recipient, items)
        if len(payload) > self.settings.max_message_bytes:
            _log.error("cluster: a message of {size} bytes is over cluster.max_message_bytes "
                       "and will be dropped by the other nodes", event="error",
                       size=len(payload))
        self.broker.publish(channel, payload)

    # --- what the lobby and the sessions tell us ------------------------------------

    def logged_in(self, user: OnlineUser, text: str, replaced: OnlineUser | None) -> None:
        if user.session.remote:
            return
        replaced_key = self.keys.get(user.name) if replaced is not None else None
        key = (self.reactor.seconds(), self.name)
        self.keys[user.name] = key
        state = self.snaps[user.name] = m.snapshot(user)
        self.broadcast(["in", m.login_payload(user, key, state), text,
                        list(replaced_key) if replaced_key else None])

    def logged_out(self, user: OnlineUser, text: str) -> None:
        if user.session.remote:
            return
        key = self.keys.pop(user.name, None)
        self.snaps.pop(user.name, None)
        if key is not None:
            self.broadcast(["out", user.name, list(key), text])
        self._hand_over_limits(user.name)

    def who_changed(self, user: OnlineUser) -> None:
        if user is self._applying:
            return
        self.broadcast(["st", user.name, self._changes(user), 1])

    def leads(self) -> bool:
        """The node with the first name among those alive does the site-wide chores."""
        return all(self.name < peer for peer in self.peers)

    def changed(self, user: OnlineUser) -> None:
        if self.lobby.online.get(user.name) is not user:
            return
        changed = self._changes(user)
        if changed:
            self.broadcast(["st", user.name, changed, 0])
            if len(changed) > 1 or "i" not in changed:
                # Out now, with the reply still in the socket's buffer: the other nodes
                # know of his new state (a gag, a toggle) before anyone can react to
                # it.  (Idle times alone go with the rest of this turn.)
                self._flush()

    def _changes(self, user: OnlineUser) -> dict[str, Any]:
        now = m.snapshot(user)
        before = self.snaps.get(user.name)
        if before is None:
            self.snaps[user.name] = now
            return now
        changed = m.changes(now, before)
        before.update(changed)
        return changed

    # --- where commands run ---------------------------------------------------------

    def host_of(self, player: str | None) -> str | None:
        """The other node hosting ``player``'s match (None: here, or no match)."""
        if player is None or player in self.lobby.matches:
            return None
        host = self.match_hosts.get(player)
        return host if host in self.peers else None

    def route(self, session: Session, command: str, rest: str) -> Deferred[None] | None:
        user = session.user
        assert user is not None
        target = self._where(user, command, rest)
        if target is None:
            return None
        done: Deferred[None] = Deferred()
        if self.broker is None or not self.broker.connected:
            session.error(NO_ANSWER)  # it cannot be sent: no use waiting
            done.callback(None)
            return done
        self._forward_count += 1
        number = self._forward_count
        timer = self.reactor.callLater(self.settings.forward_timeout_ms / 1000,
                                       self._no_answer, number)
        self.pending[number] = (target, done, session, timer)
        self.send(target, ["f", user.name, command, rest, number])
        self._flush()  # he waits for nothing else
        return done

    def _no_answer(self, number: int) -> None:
        """The deadline of forwarded command ``number``: its session goes on.  (Its
        lines, should they come later, are shown then, as any event.)"""
        target, done, session, _ = self.pending.pop(number)
        count = self.services.refusals.due("cluster.forward_timeout_ms", target)
        if count is not None:  # at most a line a minute per node, however many players
            _log.warn("cluster: node {node} did not answer {count} forwarded command(s) in "
                      "{ms} ms", event="cluster", node=target, count=count,
                      ms=self.settings.forward_timeout_ms)
        session.error(NO_ANSWER)
        done.callback(None)

    def _where(self, user: OnlineUser, command: str, rest: str) -> str | None:
        mine = self.host_of(user.name) if user.playing is not None else None
        if command in MATCH_COMMANDS:
            return mine
        if command == "fairdice" and rest.split():
            return None  # a finished match, from the database: limited on his own node
        if command in VIEW_COMMANDS:
            return mine if user.playing is not None else self.host_of(user.watching)
        if command not in ("join", "watch", "look", "oldboard", "oldmoves"):
            return None
        if command in ("join", "oldboard", "oldmoves") and mine is not None \
                and not rest.split():
            return mine
        if command == "join" and mine is not None:
            return mine
        words = rest.split()
        target = self.lobby.complete(words[0]) if words else None
        if target is None:
            return None
        if command == "join":
            return target.session.home if target.session.remote else None
        return self.host_of(target.name)

    # --- receiving --------------------------------------------------------------------

    def _received(self, channel: bytes, payload: bytes | None) -> None:
        """A message from the broker (None: one over ``max_message_bytes``, skipped):
        verified, checked, applied; whatever fails is dropped and counted."""
        try:
            self._take(channel, payload)
        except Dropped as dropped:
            self._drop(dropped.reason, channel.decode("utf-8", "replace")[:80])
        except Exception:
            self._drop("malformed", channel.decode("utf-8", "replace")[:80], Failure())

    def _take(self, channel: bytes, payload: bytes | None) -> None:
        assert self.envelope is not None
        if payload is None:
            raise Dropped("too_large")
        message = self.envelope.open(channel, payload)
        sender = message.sender
        if sender == self.name:
            return  # our own, on fibsd:all
        # On our channel: meant for this run of this node (0 on fibsd:all).  What the
        # others sent to our earlier run before they heard our hello is expected.
        wanted = self.envelope.epoch if channel != m.ALL else 0
        if message.recipient != wanted:
            raise Dropped("earlier_run" if 0 < message.recipient < wanted else "replayed")
        self.freshness.take(message, int(self.reactor.seconds() * 1000))
        items = message.items
        kinds = {item[0] for item in items}
        if sender not in self.peers:
            if items[0][0] == "bye":
                return
            if not kinds & INTRODUCTIONS:
                raise Dropped("unknown_node")
            if len(self.peers) >= self.settings.max_nodes:
                raise Dropped("too_many_nodes")
            if items[0][0] != "hello":
                # A node we did not know (we started late, or took it for dead): tell it
                # our users, and ask for its own unless they are coming.  Unless they
                # are, it may still hold ours from before we took it for dead: a
                # ``hello`` makes it forget them (and save the matches between us) as we
                # did, so that both sides agree, then ``sync`` gives them back.
                self._met(sender)
                if "sync" not in kinds:
                    self.send(sender, ["hello"])
                self._want(sender)
        self.peers[sender] = self.reactor.seconds()
        for item in items:
            handler = self._handlers.get(item[0])
            try:
                if handler is None:
                    raise Dropped("malformed")
                handler(sender, *item[1:])
            except Dropped as dropped:
                self._drop(dropped.reason, sender)
            except Exception:
                self._drop("malformed", sender, Failure())

    def _drop(self, reason: str, source: str, failure: Failure | None = None) -> None:
        """Count a dropped message (or item); tell the operator at most once a minute
        per reason and source (``fibsd.server.access.RefusalLog``)."""
        self.dropped[reason] += 1
        if reason == "earlier_run":
            return  # after each restart of this node: counted, not worth a log line
        count = self.services.refusals.due(f"cluster.{reason}", source)
        if count is not None:
            _log.warn("cluster: dropped {count} {reason} message(s) from {source}{error}",
                      event="limit", limit=f"cluster.{reason}", reason=reason,
                      source=source, count=count,
                      error=f" ({failure.type.__name__}: {failure.getErrorMessage()[:120]})"
                      if failure else HINTS.get(reason, ""))

    def _met(self, node: str) -> None:
        self.peers[node] = self.reactor.seconds()
        _log.info("cluster node {node} joined", event="cluster", node=node)

    def _nothing(self, sender: str) -> None:
        pass

    def _hello(self, sender: str) -> None:
        """A node (re)started: what we knew of it is gone."""
        if sender in self.peers:
            self._forget(sender)
        self._met(sender)
        self._want(sender)

    def _want(self, sender: str) -> None:
        logins = [m.login_payload(user, self.keys[user.name], m.snapshot(user))
                  for user in self.lobby.local_users() if user.name in self.keys]
        players = [name for name in self.lobby.matches
                   if live_match(self.lobby, name) is not None]
        invitations = [[name, _invitation_fields(invitation)]
                       for name, invitation in self.invitations.items()
                       if name in self.keys and self.keys[name][1] == self.name]
        self.send(sender, ["sync", logins, players, invitations])

    def _sync(self, sender: str, logins: list[dict[str, Any]], players: list[str],
              invitations: list[list[Any]]) -> None:
        """All of ``sender``'s users and matches: those we knew and it no longer has
        left while we did not hear it (a lost broker connection)."""
        listed = {payload["u"] for payload in logins}
        for user in list(self.lobby.users()):
            if user.session.remote and user.session.home == sender \
                    and user.name not in listed:
                self._logout(sender, user.name, list(self.keys.get(user.name, (0, ""))),
                             clip.drops_connection(user.name))
        for name in [p for p, host in self.match_hosts.items()
                     if host == sender and p not in players]:
            del self.match_hosts[name]
        for payload in logins:
            current = self.lobby.online.get(payload["u"])
            if current is not None and self.keys.get(current.name) == tuple(payload["k"]):
                changed = m.changes(payload["s"], self.snaps.get(current.name, {}))
                if changed:  # a sync asked again: only news is pushed to clients
                    self._state(sender, current.name, changed, 1)
            else:
                self._login(sender, payload, clip.logs_in(payload["u"]), None)
        for name in players:
            self.match_hosts[name] = sender
        for name, fields in invitations:
            self.invitations.copy_from(name, fields)
        # Listed in login order, as on one node, however the syncs came in.
        self.lobby.reorder(lambda user: self.keys.get(user.name, (0.0, "")))

    def _login(self, sender: str, payload: dict[str, Any], text: str,
               replaced_key: list[Any] | None) -> None:
        name = payload["u"]
        key = (payload["k"][0], payload["k"][1])
        current = self.lobby.online.get(name)
        current_key = self.keys.get(name)
        if current is not None and current_key == key:
            return  # heard twice
        if current is not None and current_key is not None and current_key > key \
                and (replaced_key is None or tuple(replaced_key) != current_key):
            return  # two logins at once: the later key wins on every node
        proxy = self._proxy(sender, payload)
        self.keys[name] = key
        self.snaps[name] = dict(payload["s"])
        with self._as(proxy):
            self.lobby.login(proxy, text, replaced=current)
        if current is not None and not current.session.remote:
            current.session.replaced()
            self._hand_over_limits(name)

    def _hand_over_limits(self, name: str) -> None:
        """``name`` is no longer a user of this node: the others get his rate-limit
        buckets that are not full, so a move to another node refills none."""
        tokens = levels(self.lobby, name)
        if tokens:
            self.broadcast(["rl", name, tokens])

    def _limits(self, sender: str, name: str, tokens: dict[str, float]) -> None:
        adopt(self.lobby, name, tokens, self.services.settings)

    def _result(self, finished: Any) -> None:
        """A tournament match ended here: the node driving its tournament acts on it at
        once, not at its next look."""
        if getattr(finished, "tournament", None) is not None:
            self.broadcast(["tr", finished.tournament])

    def _tournament_result(self, sender: str, tournament: int) -> None:
        if not isinstance(tournament, int):
            raise Dropped("malformed")
        director = self.services.tournaments
        if director is not None:
            director.stored_elsewhere(tournament)

    def _login_failed(self, sender: str, address: str, account: str) -> None:
        self.services.throttle.failed_elsewhere(address, account)

    def _proxy(self, home: str, payload: dict[str, Any]) -> OnlineUser:
        state = payload["s"]
        session = RemoteSession(self, home, self.services, is_clip=payload["c"] is not None,
                                host=payload["h"])
        user = OnlineUser(
            name=payload["u"], created=payload["ct"], session=session,  # type: ignore[arg-type]
            login_time=payload["lt"], host=payload["h"], client=payload["c"],
            toggles=dict(state["t"]), variables=dict(state["v"]), rating=state["r"],
            experience=state["x"], address=state["e"], shown_host=payload["sh"],
            last_active=state["i"])
        session.user = user
        user.rolls_seen = RemoteRolls(self, home, user.name)
        m.apply(user, {k: v for k, v in state.items() if k in ("a", "g", "bl", "w", "p", "dt")})
        return user

    def _logout(self, sender: str, name: str, key: list[Any], text: str) -> None:
        user = self.lobby.online.get(name)
        if user is None or not user.session.remote \
                or self.keys.get(name) != (key[0], key[1]):
            return
        self.keys.pop(name, None)
        self.snaps.pop(name, None)
        with self._as(user):
            self.lobby.logout(user, text)

    def _state(self, sender: str, name: str, fields: dict[str, Any], who: int) -> None:
        user = self.lobby.online.get(name)
        if user is None:
            return
        with self._as(user):
            m.apply(user, fields)
            self.snaps.setdefault(name, {}).update(fields)
            if "t" in fields:  # ``report`` may have changed: match reports reach him
                self.lobby.report_toggled(user)
            if who:
                self.lobby.broadcast_who(user)

    def _match(self, sender: str, name: str, on: int) -> None:
        if on:
            self.match_hosts[name] = sender
        elif self.match_hosts.get(name) == sender:
            del self.match_hosts[name]

    def _invitation(self, sender: str, name: str, fields: list[Any] | None) -> None:
        self.invitations.copy_from(name, fields)

    def ask(self, kind: str) -> Deferred[list[Any]]:
        """Every node known now answers ``kind`` (``ANSWERS``); fires with their answers
        (those of nodes that die meanwhile left out).  Once it fires each node has also
        handled everything this node sent it before, and this node everything it sent
        before its answer."""
        done: Deferred[list[Any]] = Deferred()
        if not self.peers:
            done.callback([])
            return done
        self._ask_count += 1
        self._asks[self._ask_count] = (set(self.peers), {}, done)
        self.broadcast(["q", self._ask_count, kind])
        return done

    def round_trip(self) -> Deferred[list[Any]]:
        """A barrier (tests) or a health check: every node has caught up with this one."""
        return self.ask("ping")

    def _question(self, sender: str, token: int, kind: str) -> None:
        answer = None
        if kind == "games":
            answer = [[g.first, g.second, g.length, g.first_score, g.second_score]
                      for g in running_games(self.lobby)]
        self.send(sender, ["a", token, answer])

    def _answer(self, sender: str, token: int, answer: Any) -> None:
        asked = self._asks.get(token)
        if asked is not None:
            asked[0].discard(sender)
            asked[1][sender] = answer
            self._answered(token)

    def _answered(self, token: int) -> None:
        waiting, answers, done = self._asks[token]
        if not waiting:
            del self._asks[token]
            done.callback([answers[node] for node in sorted(answers)])

    def games(self) -> Deferred[list[GameRow]]:
        """The matches running on the other nodes (``show games``, ``stat``)."""
        return self.ask("games").addCallback(
            lambda answers: [GameRow(*row) for rows in answers for row in rows or ()])

    def _deliveries(self, sender: str, method: str, args: list[Any], names: list[str]) -> None:
        if method == "c":
            args = [args[0].encode("latin-1")]
        for name in names:
            user = self.lobby.online.get(name)
            if user is None or user.session.remote:
                continue
            if method == "r":
                user.rolls_seen[args[0]] += 1
            else:
                getattr(user.session, m.DELIVERY[method])(*args)

    def _forwarded(self, sender: str, name: str, command: str, rest: str, number: int) -> None:
        """A command of a user of ``sender`` about a match here: run it as his proxy,
        checked as his own node checks what he types (and only a command his node
        forwards: ``FORWARDED``)."""
        user = self.lobby.online.get(name)
        found = commands.COMMANDS.get(command) if command in FORWARDED else None
        if not isinstance(rest, str):
            raise Dropped("malformed")
        if found is not None and found.admin_only and name not in self.services.settings.admins:
            found = None
        limit = self.services.settings.limits.max_line_length
        refusal = None
        if user is None or not user.session.remote or user.session.home != sender:
            # Not (or no longer) known here: the login or the logout is on its way.
            refusal = f"** {COMMAND_FAILED}"
        elif found is None:
            refusal = f"** Unknown command: '{command[:40]}'"
        elif len(rest) > limit:
            refusal = f"** Your line was too long (more than {limit} characters) and was ignored."
        if refusal is not None:
            self.deliver(sender, name, "s", [refusal])
            self.send(sender, ["done", number])
            return

        def failed(failure: Failure) -> None:
            _log.failure("Unexpected error in a forwarded command (user {user}, command "
                         "{command})", failure, event="error", user=name, command=command)
            user.session.error(COMMAND_FAILED)

        def finish(_: object = None) -> None:
            self.changed(user)
            self.send(sender, ["done", number])

        try:
            result = found.run(user.session, rest)  # type: ignore[arg-type]
        except Exception:
            failed(Failure())
            result = None
        if isinstance(result, Deferred):
            result.addErrback(failed).addBoth(finish)
        else:
            finish()

    def _done(self, sender: str, number: int) -> None:
        waiting = self.pending.get(number)
        if waiting is not None and waiting[0] == sender:
            del self.pending[number]
            waiting[3].cancel()
            waiting[1].callback(None)

    # --- a node gone ------------------------------------------------------------------

    def _bye(self, sender: str) -> None:
        """The node stopped (its users have logged out already)."""
        _log.info("cluster node {node} left", event="cluster", node=sender)
        self._forget(sender)

    def _dead(self, node: str) -> None:
        _log.warn("cluster node {node} is dead: unheard for {ms} ms", event="cluster",
                  node=node, ms=self.settings.dead_after_ms)
        self._forget(node)

    def _forget(self, node: str) -> None:
        """Its users drop connection here, as on a dropped connection; its matches are
        gone from memory (their records are in the database, resumable anywhere)."""
        self.peers.pop(node, None)
        self._out.pop(node, None)
        for user in list(self.lobby.users()):
            if user.session.remote and user.session.home == node:
                self._logout(node, user.name, list(self.keys.get(user.name, (0, ""))),
                             clip.drops_connection(user.name))
        for player in [p for p, host in self.match_hosts.items() if host == node]:
            del self.match_hosts[player]
            user = self.lobby.online.get(player)
            if user is None or user.session.remote or user.playing is None:
                continue
            opponent = user.playing
            user.playing = None
            if self.lobby.find(opponent) is None:
                line = game_text.game_saved(clip.drops_connection(opponent))
                user.session.notify(line)
                for watcher in self.lobby.local_users():
                    if watcher.watching in (player, opponent):
                        watcher.session.notify_event(line)
            self.lobby.broadcast_who(user)
        for token, (waiting, _, _) in list(self._asks.items()):
            waiting.discard(node)
            self._answered(token)
        for number, (target, done, session, timer) in list(self.pending.items()):
            if target == node:
                del self.pending[number]
                timer.cancel()
                session.error(COMMAND_FAILED)
                done.callback(None)

    @contextmanager
    def _as(self, user: OnlineUser) -> Iterator[None]:
        """Apply what another node said about ``user`` without saying it again."""
        before, self._applying = self._applying, user
        try:
            yield
        finally:
            self._applying = before
