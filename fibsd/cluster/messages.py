"""What nodes say to each other over the broker, and a user's shared state.

Channels: ``fibsd:all`` (every node listens) and ``fibsd:node:<name>`` (one node).
A message (sealed by fibsd.cluster.envelope: signed, stamped against replays, and
encrypted if asked) carries a list of items: everything one node has for another in
one reactor turn goes out as ONE message on the receiver's channel, items in the
order they were made.  Redis keeps the order of one publishing
connection, so between two nodes there is one ordered stream.  Items (lists, first
element the kind):

On ``fibsd:all`` (and ``hello`` to one node too):
  ``["hello"]``        a node (re)started: forget what you knew of it, send it ``sync``.
                       To one node: "I did not know you (I started late, or took you
                       for dead): forget what you held of me", before the sender's
                       ``sync``.  (A node not known yet is met by its ``hello``, a
                       heartbeat or its ``sync``; other messages of an unknown node are
                       dropped.)
  ``["bye"]``          a node stops (after its users' logouts): forget it now.
  ``["hb"]``           heartbeat, every ``cluster.heartbeat_ms``; a node unheard for
                       ``cluster.dead_after_ms`` is dead (its users drop connection).

To one node (a "broadcast" item is put in every known node's message):
  ``["want"]``         send me your ``sync`` (I did not know you: a late heartbeat).
  ``["sync", [login, ...], [player, ...], [[inviter, invitation], ...]]``  the sender's
                       own users (``login`` payloads as below), the players of the
                       matches it hosts and its users' invitations.
  ``["in", login, text, replaced_key]``  (broadcast) a user logged in on the sender;
                       ``text`` is the CLIP 7 text; ``replaced_key`` the key of the
                       connection it took over (None: a fresh login).
  ``["out", name, key, text]``  (broadcast) the user with that login key left; ``text``
                       is the departure notice (``logs out.``, ``drops connection.``...).
  ``["st", name, fields, who]``  (broadcast) changed state fields of a user (only those
                       that changed since the last ones replicated); ``who`` 1: the
                       node ran ``broadcast_who`` for him, every node does the same.
  ``["m", player, on]``  (broadcast) a match with ``player`` began (1) or ended (0) on
                       the sender: his match commands go there.
  ``["inv", inviter, invitation]``  (broadcast) an invitation made (``[inviter, invitee,
                       length, confirmed, sent, seed hex, [tournament, round] or
                       None]``: a tournament director's, on any node) or dropped (None); every
                       node keeps a copy (for ``fairdice``), ``join`` acts on the
                       inviter's node.
  ``["q", n, kind]`` / ``["a", n, answer]``  a question to every node and its answers
                       (``ClusterNode.ask``): ``games`` (the matches it hosts, for
                       ``show games`` and ``stat``) or ``ping`` (a round trip: after the
                       answer, each side has handled all the other sent before it).
  ``["d", method, args, [name, ...]]``  deliveries: call ``method`` (``DELIVERY``) with
                       ``args`` on these users' sessions (users of the receiver);
                       consecutive identical deliveries share one item.
  ``["rl", name, {key: tokens}]``  (broadcast) the user left the sender (logged out, or
                       in again on another node): his rate-limit buckets that are not
                       full (fibsd.server.ratelimit); each node keeps the lower level.
  ``["tr", tournament]``  (broadcast) a match of that tournament ended on the sender,
                       its result stored: the node driving it reads it again now.
  ``["lf", address, account]``  (broadcast) a failed login on the sender: every node's
                       login throttle counts it (fibsd.server.access).
  ``["f", name, command, rest, n]``  run ``command`` for ``name`` (a user of the
                       sender) here, as his proxy, checked as his node would (only a
                       forwardable command, ``admin_only`` for admins only); its
                       replies come back as deliveries, then
  ``["done", n]``      forwarded command ``n`` is done: the sender's session prompts and
                       goes on with the next line.

A login payload: ``{"u": name, "k": [time, node], "lt": login time, "h": host,
"sh": shown host, "c": client or None, "ct": account created, "s": state}``.  The
login key ``k`` orders two logins of one name: the greater key wins on every node.

State fields (``snapshot``): ``t`` toggles, ``v`` variables, ``a`` away text, ``g``
gagged, ``bl`` blinded, ``w`` watching, ``p`` playing, ``r`` rating, ``x``
experience, ``e`` e-mail address, ``dt`` dice text, ``wf`` the names ``waitfor`` waits for, ``i`` last active (reactor time;
sent when it moved a second or more).
"""

from __future__ import annotations

from typing import Any

from fibsd.server.user import OnlineUser

ALL = b"fibsd:all"
# Session methods a delivery may call, by their one-letter code; ``r`` (args: [index])
# counts a roll in the user's ``rolls_seen`` instead (``RemoteRolls``).
DELIVERY = {"s": "send", "n": "notify", "e": "notify_event", "c": "notify_clip",
            "x": "disconnect"}
IDLE_STEP = 1.0  # seconds: how far last_active must move before it is replicated


def node_channel(node: str) -> bytes:
    return f"fibsd:node:{node}".encode()


def snapshot(user: OnlineUser) -> dict[str, Any]:
    """The fields of ``user`` that every node keeps for him."""
    return {
        "t": dict(user.toggles), "v": dict(user.variables), "a": user.away,
        "g": sorted(user.gagged), "bl": sorted(user.blinded), "w": user.watching,
        "p": user.playing, "r": user.rating, "x": user.experience, "e": user.address,
        "dt": user.dice_text, "wf": list(user.awaits), "i": user.last_active,
        "b": user.bot,
    }


def changes(now: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``now`` that differ from ``before`` (the idle time only when it
    moved by ``IDLE_STEP``)."""
    changed = {key: value for key, value in now.items()
               if key != "i" and before.get(key) != value}
    if abs(now["i"] - before.get("i", 0.0)) >= IDLE_STEP:
        changed["i"] = now["i"]
    return changed


# The state fields that are one attribute each, set as they come.
_ATTRIBUTES = {"a": "away", "p": "playing", "r": "rating", "x": "experience",
               "e": "address", "dt": "dice_text", "wf": "awaits", "i": "last_active",
               "b": "bot"}


def apply(user: OnlineUser, fields: dict[str, Any]) -> None:
    """Set the replicated ``fields`` on ``user`` (``watching`` and ``awaits`` through
    their setters, which keep the lobby's indexes)."""
    for key, value in fields.items():
        if key == "t":
            user.set_toggles(value)
        elif key == "v":
            user.set_variables(value)
        elif key == "g":
            user.gagged = frozenset(value)
        elif key == "bl":
            user.blinded = frozenset(value)
        elif key == "w":
            if user.watching != value:
                user.watching = value
        elif key in _ATTRIBUTES:
            setattr(user, _ATTRIBUTES[key], value)


def login_payload(user: OnlineUser, key: tuple[float, str], state: dict[str, Any]) -> dict[str, Any]:
    return {"u": user.name, "k": list(key), "lt": user.login_time, "h": user.host,
            "sh": user.shown_host, "c": user.client, "ct": user.created, "s": state}
