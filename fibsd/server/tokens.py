"""Web session tokens: the web client logs in again after a dropped WebSocket without
asking for the password (issue 23; protocol/web.md, "Reconnecting").

* **Asked for, never pushed.** Only a WebSocket connection whose CLIP login line has a
  sixth word ``token`` (``login fibsd-web 1008 bob <password> token``) gets one, as one
  line ``token: <secret>`` after its login block, on that connection only.  A telnet or
  CLIP client never sees the line: stock clients send five words, and the game port is
  not a WebSocket.
* **Used instead of the password**, on a WebSocket only:
  ``login fibsd-web 1008 bob token:<secret>``.  A password cannot hold ``:``, so no
  password is taken for a token.  It goes through the same login throttle and failure
  count as a password (``fibsd.server.access.LoginThrottle``, ``limits.login_attempts``),
  and the account's ban is checked after it as after a password.
* **Stored hashed**: the SHA-256 of 32 random bytes (a slow hash adds nothing to a
  random secret) in the ``session_tokens`` table (fibsd.store.tokens); the secret is
  never logged.  A token lasts ``[pace] token_lifetime`` seconds from the login that got
  or used it, and as long again from the drop of its connection (a session longer than
  that keeps it: the drop stores it anew; so does a server shutdown, for the page to come
  back after the restart); ``bye`` revokes it, a new password revokes
  every token of the account, and an account holds at most ``tokens_per_user`` (the
  newest).  Expired tokens are purged whenever one is stored.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import TYPE_CHECKING, Any, Protocol, cast

from twisted.internet.defer import Deferred, maybeDeferred

from fibsd.server.dbthread import unattended
from fibsd.server.lobby import Lobby, on_login
from fibsd.server.user import Line

if TYPE_CHECKING:
    from fibsd.server.user import OnlineUser

PREFIX = "token:"  # in the password's place of the login line
ASK = "token"  # the login line's sixth word
LINE = "token: {secret}"  # the answer, after the login block


class Holder(Line, Protocol):
    """A connection here, which may hold a token (``fibsd.server.session.Session``):
    named here, so that the tokens need nothing of the module that makes sessions."""

    web: bool
    token_hash: str | None
    token_guard: str

    @property
    def lobby(self) -> Lobby: ...


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii", "replace")).hexdigest()


def asked(session: Holder, words: list[str]) -> bool:
    """Whether a CLIP login line (split) asks for a token, on a connection that may
    get one."""
    return session.web and words[5:6] == [ASK] and session.settings.pace.token_lifetime > 0


def is_token(session: Holder, password: str) -> bool:
    return (session.web and password.startswith(PREFIX)
            and session.settings.pace.token_lifetime > 0)


def verify(session: Holder, name: str, password: str) -> Deferred[bool]:
    """Whether ``password`` (``token:<secret>``) is a live token of account ``name``;
    if so the session holds it from now on."""
    digest = _digest(password[len(PREFIX):])

    def check(owner: str | None) -> bool:
        if owner != name:
            return False
        session.token_hash = digest
        unattended(_store(session, name, digest), "add_token")  # it lasts from this login
        return True

    return maybeDeferred(session.db.token_user, digest, session.now()).addCallback(check)


def _store(session: Holder, name: str, digest: str) -> Deferred[bool]:
    """Store the token (again), guarded by the password hash the session logged in
    with (``Session.token_guard``): a token revoked by a new password stays revoked."""
    pace = session.settings.pace
    now = session.now()
    return maybeDeferred(session.db.add_token, name, digest, now, now + pace.token_lifetime,
                         pace.tokens_per_user, session.token_guard)


@on_login
def _issue(lobby: Lobby, user: OnlineUser) -> None:
    """A login that asked for a token (and did not log in with one) gets it."""
    line = user.session
    if not getattr(line, "token_asked", False) or getattr(line, "token_hash", None):
        return
    session = cast(Holder, line)  # it asked for a token: a connection here
    secret = secrets.token_urlsafe(32)
    digest = _digest(secret)

    def send(stored: bool) -> None:
        if stored and session.user is user:  # still this connection: it alone gets it
            session.token_hash = digest
            session.notify(LINE.format(secret=secret))

    unattended(_store(session, user.name, digest).addCallback(send), "add_token")


def ended(session: Holder, name: str, *, logged_out: bool) -> None:
    """The connection holding a token ended: ``bye`` revokes it; a drop (or a timeout)
    keeps it for ``token_lifetime`` more seconds, for the client to come back with."""
    digest, session.token_hash = session.token_hash, None
    if digest is None:
        return
    if logged_out and not session.lobby.stopping:  # a restart: the page comes back
        unattended(maybeDeferred(session.db.revoke_token, digest), "revoke_token")
    else:
        unattended(_store(session, name, digest), "add_token")


def password_changed(session: Holder, name: str) -> Deferred[Any]:
    """A new password (``password``, ``admin password``): every token of the account
    goes; the sessions holding one forget it (the store would refuse it anyway: it
    checks the password hash each session logged in with)."""
    user = session.lobby.find(name)
    for held in (session, user.session if user is not None else None):
        if held is not None and getattr(held, "token_hash", None) is not None:
            cast(Holder, held).token_hash = None
    return maybeDeferred(session.db.revoke_tokens, name)
