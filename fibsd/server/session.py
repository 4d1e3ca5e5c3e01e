"""One connection's conversation with the server, phase by phase.

Phases and what moves between them::

    LOGIN --name--> PASSWORD --right--> READY          (telnet mode, `> ` prompts)
    LOGIN --login <client> <clip> <name> <pw>--> READY  (client mode: CLIP lines)
    LOGIN --guest--> GUEST --name x--> NEW_PASSWORD --> CONFIRM_PASSWORD --> READY
    any --bye, timeout, lost connection--> CLOSED

Each phase has one handler; it returns the next phase, or a Deferred of it when it
must wait for the database or the password hasher.  While a Deferred is pending the
session is busy and later lines wait in a bounded queue, so a client that types ahead
(KBackgammon sends its login line before seeing the prompt) is served in order; when
the queue is full the protocol stops reading until there is room, so no line is lost.

Output comes in two kinds.  ``send`` answers the user's own input.  ``notify`` carries
events caused by others; in telnet mode it starts on a fresh line and re-prints the
prompt, exactly as FIBS does, unless the user's own command is still being answered.
"""

from __future__ import annotations

import copy
import enum
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from twisted.internet.defer import Deferred, maybeDeferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure

from fibsd.config import Settings
from fibsd.server import commands, grace, tokens
from fibsd.server.access import (
    Attempt, LoginThrottle, RefusalLog, RegistrationLimit, network, shown_host)
from fibsd.server.dbthread import log_write_failed, unattended
from fibsd.server.idle import IdleDeadlines
from fibsd.server.lobby import Lobby
from fibsd.server.user import OnlineUser
from fibsd.administration import banned_text
from fibsd.store import Ban, NameTaken, StoredMessage, Unavailable, UserRecord, WriteFailed
from fibsd.wire import chat, clip
from fibsd.wire.input import (
    NAME_MAX,
    WILL_ECHO,
    WONT_ECHO,
    NameProblem,
    PasswordProblem,
    name_problem,
    password_problem,
    reserved_name,
    split_command,
)

log = Logger()

LOGIN_PROMPT = "login: "
PASSWORD_PROMPT = "password: "
PROMPT = "> "
NEW_PASSWORD_PROMPT = "Please give your password: "
RETYPE_PROMPT = "Please retype your password: "

GOODBYE = (
    " " * 29 + "Goodbye.",
    "Thanks for playing backgammon here. Come back soon!",
)
GUEST_WELCOME = (
    "Welcome to FIBS. You just logged in as guest.",
    "Please register before using this server:",
    "",
    "Type 'name <username>' to choose the name you want to use here.",
    "A name may contain letters and the underscore _ only (no blanks, no colons,",
    f"no digits), at most {NAME_MAX} characters.",
    "You will be asked for a password twice. Passwords are stored encrypted:",
    "nobody can tell you yours if you forget it.",
    "Type 'bye' if you don't want to register now.",
    "",
    "ONE USERNAME PER PERSON ONLY!!!",
)
# After "You are registered.": a newcomer on telnet is walked from here to a first
# move (client programs register too, so no line starts with a digit or a star).
REGISTERED = (
    "You are registered.",
    "Type 'help beginner' to get started.",
    "",
    "Your first match, step by step:",
    "  set boardstyle 2     see the board as a picture (remembered; client programs",
    "                       use boardstyle 3, the machine line new accounts get)",
    "  toggle ready         tell everyone you want to play",
    "  who ready            list the players who want to play",
    "  invite <name> 1      invite one of them to a 1 point match, or",
    "  join <name>          accept an invitation you were sent",
    "  roll                 roll the dice when it is your turn",
    "  move 13-7 8-7        move a checker for each die: from point, to point",
    "                       (O from 24 down to 1; X from 1 up: 'move 12-18 17-18')",
    "",
)
MAX_QUEUED_LINES = 100
# A command that failed unexpectedly (here, or on the node of a cluster that ran it).
COMMAND_FAILED = "Sorry, the server could not complete that command."
# `!!` repeats the previous command, but never one of these (nor `message` with text).
NOT_REPEATED = frozenset({"shout", "tell", "tellx", "say", "kibitz", "whisper"})
REGISTRATION_CLOSED = "Your site is not allowed to create new accounts."
SERVER_FULL = "** Sorry, the server is full. Please try again later."
TOO_MANY_FAILURES = "** Too many failed logins. Closing the connection."
TOO_MANY_REGISTRATIONS = ("** Too many new accounts from your address. "
                          "Please try again in {minutes} minutes.")
NOT_SAVED = "Sorry, that was not saved: the server could not write its database."
DATABASE_DOWN = ("Sorry, the server's database is not available at the moment."
                 " Please try again in a minute.")


LOGGED_MESSAGE = 200  # characters of an error's message that reach the log


class ClippedError(Exception):
    """Stands for an error whose message was too long to log whole."""


def _clipped(failure: Failure) -> Failure:
    """``failure`` with its error message cut to ``LOGGED_MESSAGE`` characters: a message
    can quote the input line, and a client sending such lines must not grow the log
    by more than a bounded traceback per line."""
    message = failure.getErrorMessage()
    if len(message) <= LOGGED_MESSAGE:
        return failure
    clipped = copy.copy(failure)
    clipped.type = ClippedError
    clipped.value = ClippedError(f"{failure.type.__name__}: {message[:LOGGED_MESSAGE]}..."
                                 f" ({len(message)} characters)")
    return clipped


@dataclass(frozen=True)
class TooLong:
    """Stands for an input line longer than ``limit``, thrown away unread."""

    limit: int


class Phase(enum.Enum):
    LOGIN = "login"
    PASSWORD = "password"
    GUEST = "guest"
    NEW_PASSWORD = "new password"
    CONFIRM_PASSWORD = "confirm password"
    READY = "ready"
    CLOSED = "closed"


class PasswordHasher(Protocol):
    """Argon2 off the reactor thread (``fibsd.server.passwords``)."""

    def hash(self, password: str) -> Deferred[str]: ...
    def verify(self, password: str, password_hash: str) -> Deferred[bool]: ...
    def needs_rehash(self, password_hash: str) -> bool: ...


class Connection(Protocol):
    """What a session needs from its network protocol."""

    def write(self, data: bytes) -> None: ...
    def close(self) -> None: ...

    def unsent(self) -> int:
        """Bytes written and not yet taken by the client."""
        ...

    def input_wanted(self) -> None:
        """The session has room for typed-ahead lines again."""
        ...


@dataclass
class Services:
    """Everything sessions share, built once by ``fibsd.app``."""

    lobby: Lobby
    db: Any  # fibsd.server.dbthread.DatabaseThread (or a test double): Store calls -> Deferreds
    passwords: PasswordHasher
    clock: IReactorTime
    settings: Settings
    throttle: LoginThrottle
    registrations: RegistrationLimit
    refusals: RefusalLog
    motd: tuple[str, ...] = ()
    banner: tuple[str, ...] = ()
    # Stops the whole server (``admin shutdown``): the reactor's stop under fibsd.app.
    stop: Callable[[], object] | None = None
    countdown: Any = None  # a running ``admin shutdown`` (fibsd.server.commands.admin)
    # Called with (command name, seconds) once each command is done: the web face's
    # metrics (fibsd.app connects them), which must not reach into sessions.
    command_observers: list[Callable[[str, float], None]] = field(default_factory=list)
    # A cluster of nodes (fibsd.cluster.node, wired by fibsd.app); None: a single node.
    cluster: ClusterRouter | None = None
    # Whether finished matches are analysed (fibsd.analysis.supervisor.analysis_state:
    # off with [analysis] matches = "none", or without gnubg for the server's workers).
    analysis_on: bool = True
    # The tournament director (fibsd.tournament.director, wired by fibsd.app).
    tournaments: Any = None
    # Every logged-in session's idle timeout, on one timer.
    idle: IdleDeadlines = field(init=False)

    def __post_init__(self) -> None:
        self.idle = IdleDeadlines(self.clock)


class ClusterRouter(Protocol):
    """What sessions ask a cluster node: where a command runs, and what changed."""

    def route(self, session: Session, command: str, rest: str) -> Deferred[None] | None:
        """A Deferred when the command runs on another node (fired once it is done
        there and its replies are written here); None: run it here."""
        ...

    def changed(self, user: OnlineUser) -> None:
        """The user's state may have changed (his command is done, say): what changed
        goes to the other nodes."""
        ...

    def games(self) -> Deferred[list[Any]]:
        """The matches running on the other nodes, as ``show games`` rows."""
        ...

    def leads(self) -> bool:
        """Whether this node does the site-wide chores (the abandoned-match check), which
        one node of the cluster does."""
        ...


# The method that reads a line in each phase: shared by every session, not one dict of
# bound methods each.
_HANDLERS: dict[Phase, str] = {
    Phase.LOGIN: "_line_login",
    Phase.PASSWORD: "_line_password",
    Phase.GUEST: "_line_guest",
    Phase.NEW_PASSWORD: "_line_new_password",
    Phase.CONFIRM_PASSWORD: "_line_confirm_password",
    Phase.READY: "_line_ready",
}


class SharedParts:
    """What every session offers commands of the server's shared parts, a connection
    here (``Session``) or a user's stand-in for one on another node of a cluster
    (fibsd.cluster.remote)."""

    services: Services

    @property
    def lobby(self) -> Lobby:
        return self.services.lobby

    @property
    def db(self) -> Any:
        return self.services.db

    @property
    def clock(self) -> IReactorTime:
        return self.services.clock

    @property
    def settings(self) -> Settings:
        return self.services.settings

    def now(self) -> int:
        return int(self.clock.seconds())

    def send(self, *lines: str) -> None:
        raise NotImplementedError

    def error(self, text: str) -> None:
        self.send(f"** {text}")


class Session(SharedParts):
    remote = False  # a connection here (fibsd.cluster.remote's sessions are elsewhere)
    web = False  # a WebSocket connection (fibsd.server.websocket sets it)
    token_asked = False  # its login line asked for a session token (fibsd.server.tokens)
    token_hash: str | None = None  # the session token it holds
    token_guard = ""  # the password hash it logged in with, on a WebSocket (tokens)

    def __init__(self, services: Services, connection: Connection, host: str) -> None:
        self.services = services
        self.connection = connection
        self.host = host
        self.network = network(host)  # what the per-address limits count by
        self.phase = Phase.LOGIN
        self.user: OnlineUser | None = None
        self.is_clip = False
        self._busy = False
        self._draining = False
        self._queue: list[str | TooLong] = []  # not a deque: see FibsProtocol._pending
        self._failures = 0
        self._new_name = ""
        self._new_password = ""
        self._pending_name = ""
        self._leaving: str | None = None  # the logout notice others will see
        self._replaced = False
        self._repeatable = ""  # the last line `!!` may repeat
        self._command = ""  # the command word being handled (for the error log)
        self._timer: IDelayedCall | None = None
        self._attempt: Attempt | None = None  # the login attempt waiting or being checked

    # --- what commands use (and SharedParts) ------------------------------------------

    def send(self, *lines: str) -> None:
        """Lines answering the user's own input, each ended with CR LF."""
        if lines and self.phase is not Phase.CLOSED:
            self.write("".join(f"{line}\r\n" for line in lines))

    def notify(self, *lines: str) -> None:
        """An event caused by someone else; telnet users see it on a fresh line."""
        if self.user is None or self.phase is Phase.CLOSED or not lines:
            return
        if self.is_clip or self._busy:
            self.send(*lines)
        else:
            self.write("\r\n" + "".join(f"{line}\r\n" for line in lines) + PROMPT)

    def notify_event(self, *lines: str) -> None:
        """``notify`` for a block of lines caused by a game event: CLIP users get an
        empty line in front of it (game-play.md 1.2)."""
        self.notify(*(("", *lines) if self.is_clip else lines))

    def notify_clip(self, data: bytes) -> None:
        """``notify`` for a CLIP user, of lines already ended and encoded, through the
        lobby's feed: a broadcast to thousands of CLIP users encodes them once and is
        written in batches (fibsd.server.feed)."""
        if self.user is not None and self.phase is not Phase.CLOSED:
            self.lobby.feed.hold(self, data)

    def write_held(self, data: bytes) -> None:
        """The feed's lines for this session, when it lets them go."""
        if self.phase is not Phase.CLOSED:
            self.connection.write(data)

    def write(self, text: str, raw: bytes = b"") -> None:
        """Seven-bit text (anything else becomes ``?``), after optional raw bytes, and
        after the feed's lines held for this session (which came first)."""
        if self.phase is Phase.CLOSED:
            return
        self.connection.write(self.lobby.feed.release(self) + raw + text.encode("ascii", "replace"))

    def not_reading(self) -> bool:
        """More than half of ``limits.max_output`` waits unsent: messages from others
        are refused (``chat.not_reading``) rather than queued for a client that may
        never read them."""
        return self.connection.unsent() > self.settings.limits.max_output // 2

    def cut_off(self) -> None:
        """The connection is dropped without a goodbye: its output passed the limit.
        Others see that the user drops his connection."""
        self.phase = Phase.CLOSED

    def disconnect(self, goodbye: bool = True, notice: str | None = None) -> None:
        """Close the connection; ``notice`` is what others see (default: logs out)."""
        if self.phase is Phase.CLOSED:
            return
        if goodbye:
            self.send(*GOODBYE)
        if self.user is not None:
            self._leaving = notice or clip.logs_out(self.user.name)
        self.phase = Phase.CLOSED
        self.connection.close()

    # --- driven by the protocol -------------------------------------------------------

    def connection_made(self) -> None:
        # Until the login, the whole conversation has one deadline: no line extends it.
        self._timer = self.clock.callLater(self.settings.access.login_timeout, self.timed_out)
        self.write("".join(f"{line}\r\n" for line in self.services.banner)
                   + clip.format_banner_date(self.now()) + "\r\n" + LOGIN_PROMPT)

    def wants_input(self) -> bool:
        """Whether ``line_received`` may be given another line now; the protocol holds
        further lines (and stops reading) until ``connection.input_wanted()``."""
        return self.phase is Phase.CLOSED or len(self._queue) < MAX_QUEUED_LINES

    def line_received(self, line: str | TooLong) -> None:
        """One input line (or the note that one was too long and thrown away)."""
        if self.phase is Phase.CLOSED:
            return
        if self._busy or self._draining:
            self._queue.append(line)  # bounded: the protocol asks wants_input() first
            return
        self._handle(line)
        self._drain()

    def connection_lost(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self.services.idle.forget(self)
        if self._attempt is not None and not self._attempt.started:
            self.services.throttle.cancel(self._attempt)  # its Deferred is dropped with us
            self._attempt = None
        self.phase = Phase.CLOSED
        self.lobby.feed.release(self)  # nobody left to read it
        user, self.user = self.user, None
        if user is None:
            return
        leaving = self._leaving or clip.drops_connection(user.name)
        tokens.ended(self, user.name, logged_out=self._leaving == clip.logs_out(user.name)
                     and not self._replaced)  # a new login may hold the same token
        grace.departing(self.lobby, user, leaving, self.settings.pace,
                        dropped=self._leaving is None and not self._replaced)
        self.lobby.logout(user, leaving)
        if not self._replaced:
            log.info("{user} logs out from {address}", event="logout", user=user.name,
                     address=self.host)
            self._store("record_logout", user.name, self.now())
            self._store("save_settings", user.name, user.settings_text())

    def make_way(self, line: str) -> None:
        """A full server gives this connection's place, before its login, to a newcomer
        from a less crowded address (``FibsFactory``)."""
        if self.phase is Phase.CLOSED or self.user is not None:
            return
        self.log_refusal("connection from {address} closed for a newcomer",
                         "access.max_connections")
        self._fresh_line()
        self.send(line)
        self.disconnect(goodbye=False)

    def shutdown(self) -> None:
        """The server is stopping: say goodbye without telling the others."""
        if self.phase is Phase.CLOSED:
            return
        self._fresh_line()
        for line in clip.SHUTDOWN:
            self.error(line)
        self.disconnect(goodbye=True)

    # --- the dispatch loop ------------------------------------------------------------

    def _handle(self, line: str | TooLong) -> None:
        if self.phase is Phase.READY:
            self._restart_timer()
        self._busy = True
        try:
            if isinstance(line, TooLong):
                result: Phase | Deferred[Phase] = self._overlong(line.limit)
            else:
                result = getattr(self, _HANDLERS[self.phase])(line)
        except Exception:
            result = self._recover(Failure())
        if isinstance(result, Deferred):
            result.addErrback(self._recover)
            result.addCallback(self._finish)
        else:
            self._finish(result)

    def _finish(self, phase: Phase) -> None:
        if self.phase is not Phase.CLOSED:
            self.phase = phase
        self._busy = False
        self._drain()

    def _drain(self) -> None:
        if self._draining:
            return
        self._draining = True
        try:
            while self._queue and not self._busy and self.phase is not Phase.CLOSED:
                self._handle(self._queue.pop(0))
        finally:
            self._draining = False
        if len(self._queue) < MAX_QUEUED_LINES:
            self.connection.input_wanted()

    def _recover(self, failure: Failure) -> Phase:
        """An unexpected error: log it, answer with a `** ` line, keep the connection."""
        if self.phase is Phase.CLOSED:
            return Phase.CLOSED
        refused = failure.check(WriteFailed) is not None
        down = failure.check(Unavailable) is not None
        user = self.user.name if self.user is not None else self._pending_name or self._new_name
        if refused or down:  # the database: an operating condition, not a bug
            log_write_failed(failure, "command", user=user, phase=self.phase.value)
        else:
            command = self._command[:40] if self.phase is Phase.READY else self.phase.value
            log.failure("Unexpected error in phase {phase} (user {user}, command {command})",
                        _clipped(failure), phase=self.phase, event="error", user=user,
                        command=command)
        if self.phase is Phase.READY:
            self.error(DATABASE_DOWN if down else NOT_SAVED if refused else COMMAND_FAILED)
            self._prompt()
            return Phase.READY
        what = DATABASE_DOWN if down or refused else "Sorry, something went wrong. Please try again."
        self.write(f"\r\n** {what}\r\n" + LOGIN_PROMPT,
                   raw=WONT_ECHO if self.phase is not Phase.LOGIN else b"")
        return Phase.LOGIN

    def _restart_timer(self) -> None:
        """The idle timeout from now on: one timer for all sessions (``IdleDeadlines``),
        the login deadline (this session's own timer) cancelled."""
        if self._timer is not None:
            if self._timer.active():
                self._timer.cancel()  # the login deadline no longer applies
            self._timer = None
        timeout = self.settings.idle_timeout
        if timeout:
            self.services.idle.restart(self, timeout)
        else:
            self.services.idle.forget(self)

    def timed_out(self) -> None:
        """The login deadline or the idle timeout has passed."""
        if self.phase is Phase.CLOSED:
            return
        self._fresh_line()
        self.send("Connection timed out.")
        notice = clip.timed_out(self.user.name) if self.user is not None else None
        if self.user is None:
            self.log_refusal("login timeout for {address}", "access.login_timeout")
        self.disconnect(goodbye=False, notice=notice)

    def log_refusal(self, text: str, limit: str) -> None:
        """An operator event for a refusal by ``limit``, through ``RefusalLog``: one a
        minute per address at most, ``count`` saying how many it stands for."""
        count = self.services.refusals.due(limit, self.network)
        if count is not None:
            log.info(text + " ({count} since the last report)", event="limit", limit=limit,
                     address=self.host, count=count)

    def _fresh_line(self) -> None:
        """End the line of a prompt still waiting for input, if there is one."""
        if self._busy:
            return
        if self.phase is not Phase.READY or not self.is_clip:
            self.write("\r\n")

    def _prompt(self) -> None:
        if self.phase is Phase.READY and not self.is_clip:
            self.write(PROMPT)

    def _overlong(self, limit: int) -> Phase:
        text = f"** Your line was too long (more than {limit} characters) and was ignored."
        if self.phase is Phase.READY:
            self.send(text)
            self._prompt()
        elif self.phase is Phase.GUEST:
            self.send(text)
            self.write(PROMPT)
        else:
            self.write(f"\r\n{text}\r\n" + LOGIN_PROMPT,
                       raw=WONT_ECHO if self.phase is not Phase.LOGIN else b"")
            return Phase.LOGIN
        return self.phase

    def _store(self, method: str, *args: Any) -> None:
        """A store write nobody waits for (``unattended``)."""
        unattended(maybeDeferred(getattr(self.db, method), *args), method)

    # --- LOGIN and PASSWORD ------------------------------------------------------------

    def _line_login(self, line: str) -> Phase | Deferred[Phase]:
        words = line.split()
        if not words:
            self.write(LOGIN_PROMPT)
            return Phase.LOGIN
        if words[0] == "login" and len(words) >= 5:
            _, client, _version, name, password = words[:5]
            self.token_asked = tokens.asked(self, words)
            # Interned: thousands of users of the same client program share one string.
            return self._authenticate(name, password, client=sys.intern(client[:20]))
        if words[0] == "login" and len(words) > 1:
            # A client's login line with a field missing (an empty password, say):
            # answer as for a wrong password, which every client recognises, rather
            # than taking "login" for a name and waiting for a password that never comes.
            return self._login_failed(words[1], words[3] if len(words) > 3 else "")
        if words[0] == "guest":
            if not self.settings.registration:
                self.write(f"{REGISTRATION_CLOSED}\r\n" + LOGIN_PROMPT)
                return Phase.LOGIN

            def welcome(ban: Ban | None) -> Phase:
                if ban is not None:
                    return self._banned(ban, "guest", echo_was_off=False)
                self.send(*GUEST_WELCOME)
                self.write(PROMPT)
                return Phase.GUEST

            return maybeDeferred(self.db.ban_for, "", self.host, self.now()).addCallback(welcome)
        self._pending_name = words[0]
        self.write(PASSWORD_PROMPT, raw=WILL_ECHO)
        return Phase.PASSWORD

    def _line_password(self, line: str) -> Phase | Deferred[Phase]:
        return self._authenticate(self._pending_name, line, client=None)

    def _authenticate(self, name: str, password: str, client: str | None) -> Deferred[Phase]:
        """Check the password when the attempt's turn comes (``LoginThrottle``): the wait
        is a timer, not a blocked reactor, and the session stays busy meanwhile, so the
        connection holds at most its bounded queue of typed-ahead lines."""
        self._attempt = Attempt(self.network, name.lower())

        def check(record: UserRecord | None) -> Deferred[Phase] | Phase:
            if self.phase is Phase.CLOSED:  # gone before the check: no guess was made
                self._attempt_done(failed=False)
                return Phase.CLOSED
            if record is None or not password:
                return self._login_failed(client, name)
            if tokens.is_token(self, password):  # a web session token instead
                verified = tokens.verify(self, record.name, password)
            else:
                verified = self.services.passwords.verify(password, record.password_hash)
            return verified.addCallback(checked, record)

        def checked(right: bool, record: UserRecord) -> Deferred[Phase] | Phase:
            if not right:
                return self._login_failed(client, name)
            self._attempt_done(failed=False)
            if self.web:
                self.token_guard = record.password_hash
            if (self.services.passwords.needs_rehash(record.password_hash)
                    and self.token_hash is None):
                # Made at an older cost: the password is at hand only now.
                rehashed = self.services.passwords.hash(password)
                rehashed.addCallback(lambda new: self._rehashed(record.name, new))
                rehashed.addErrback(lambda f: log.failure("Rehashing a password failed", f))
            def unless_banned(ban: Ban | None) -> Deferred[Phase] | Phase:
                if ban is not None:
                    return self._banned(ban, record.name, echo_was_off=client is None)
                messages = maybeDeferred(self.db.take_messages, record.name)
                return messages.addCallback(
                    lambda stored: self._enter(record, stored, client,
                                               echo_was_off=client is None))

            banned = maybeDeferred(self.db.ban_for, record.name, self.host, self.now())
            return banned.addCallback(unless_banned)

        waiting: Deferred[Phase] = Deferred()
        self.services.throttle.wait_turn(
            self._attempt,
            lambda: maybeDeferred(self.db.get_user, name).addCallback(check).chainDeferred(waiting))
        return waiting

    def _rehashed(self, name: str, password_hash: str) -> None:
        self._store("set_password_hash", name, password_hash)
        if self.web:
            self.token_guard = password_hash  # (fibsd.server.tokens)

    def _attempt_done(self, failed: bool) -> None:
        if self._attempt is not None:
            self.services.throttle.done(self._attempt, failed)
            self._attempt = None

    def _banned(self, ban: Ban, name: str, *, echo_was_off: bool) -> Phase:
        """Refuse a banned name or address (``admin ban``) and close the connection."""
        log.info("refused {user} from {address}: banned", event="connection_refused",
                 reason="banned", user=name, address=self.host)
        self.write(f"\r\n** {banned_text(ban)}\r\n", raw=WONT_ECHO if echo_was_off else b"")
        self.disconnect(goodbye=False)
        return Phase.CLOSED

    def _login_failed(self, client: str | None, name: str = "") -> Phase:
        self._failures += 1
        self._attempt_done(failed=True)
        # The name as typed, cut a little past the longest name: a long word typed at
        # the prompt costs the log nothing.
        log.info("failed login for {user} from {address}", event="login_failed",
                 user=name[:NAME_MAX + 4], address=self.host)
        raw = WONT_ECHO if client is None else b""
        if self._failures >= self.settings.limits.login_attempts:
            log.info("closing a connection from {address}: too many failed logins",
                     event="limit", limit="limits.login_attempts", address=self.host)
            self.write(f"\r\n{TOO_MANY_FAILURES}\r\n", raw=raw)
            self.disconnect(goodbye=False)
            return Phase.CLOSED
        self.write("\r\n" + LOGIN_PROMPT, raw=raw)
        return Phase.LOGIN

    def _enter(
        self, record: UserRecord, messages: Sequence[StoredMessage], client: str | None,
        *, echo_was_off: bool, registered: bool = False,
    ) -> Phase:
        """The user is who they claim: join the lobby and print the login block."""
        if self.phase is Phase.CLOSED:
            return Phase.CLOSED
        now = self.now()
        replaced = self.lobby.find(record.name)
        if replaced is None and len(self.lobby.online) >= self.settings.limits.max_users:
            log.warn("refused {user} from {address}: the server is full", event="limit",
                     limit="limits.max_users", user=record.name, address=self.host)
            self.write(f"\r\n{SERVER_FULL}\r\n", raw=WONT_ECHO if echo_was_off else b"")
            self.disconnect(goodbye=False)
            return Phase.CLOSED
        self.is_clip = client is not None
        user = OnlineUser.from_record(record, self, login_time=now, host=self.host,
                                      client=client, now=self.clock.seconds(),
                                      new_account_variables=self._new_account_variables(),
                                      shown_host=shown_host(
                                          self.host, self.settings.privacy.show_addresses))
        if replaced is not None:
            user.playing, user.watching = replaced.playing, replaced.watching
        self.user = user
        lines = [] if registered else [""]  # end the prompt's line first
        if replaced is not None:
            lines.append("** Warning: You are already logged in.")
        if self.is_clip:  # the first login ever: the registration time (protocol/README.md)
            lines.append(clip.format_welcome(user.name, record.last_login or record.created,
                                             record.last_host or self.host))
            lines.append(clip.format_own_info(user.name, user.toggles, user.variables,
                                              user.rating, user.experience))
            lines += clip.format_motd(self.services.motd)
        else:
            lines.append(f"** User {user.name} authenticated.")
            lines.append(self._last_login(record))
            lines += self.services.motd
        self.write("".join(f"{line}\r\n" for line in lines), raw=WONT_ECHO if echo_was_off else b"")
        lines = []
        who: tuple[bytes, ...] = ()
        if self.is_clip:  # everyone online (the others, then this user), ended by 6
            now_seconds = self.clock.seconds()
            who = self.lobby.who_lines(now_seconds, without=replaced)
            lines += [user.own_clip_who_line(now_seconds), clip.WHO_END]
        if messages:
            lines.append(chat.MESSAGES_FOLLOW)
            lines += [chat.message_received(m.sender, m.sent, m.text).for_client(self.is_clip)
                      for m in messages]
        for piece in who:  # the lobby's shared listing, written as it is, not copied
            self.write("", raw=piece)
        self.write("".join(f"{line}\r\n" for line in lines))
        self.phase = Phase.READY
        self._restart_timer()  # from the login deadline to the idle timeout
        if replaced is not None:
            replaced.session.replaced()
        self._store("record_login", user.name, now, self.host)
        log.info("{user} logs in from {address}", event="login", user=user.name,
                 address=self.host, client=client or "telnet")
        text = (clip.logs_in_again(user.name) if replaced is not None
                else clip.just_registered(user.name) if registered else clip.logs_in(user.name))
        self.lobby.login(user, text, replaced=replaced)
        self._prompt()
        return Phase.READY

    def _last_login(self, record: UserRecord) -> str:
        """The telnet login's ``** Last login:`` line: the login before this one, in the
        user's time zone; ``never`` for an account's first login (right after
        registering, the date would be this very login)."""
        if record.last_login is None:
            return "** Last login: never"
        assert self.user is not None
        zone = self.user.variables.get("timezone", "UTC")
        return (f"** Last login: {clip.format_date(record.last_login, zone)} "
                f"from {record.last_host or self.host}")

    def _new_account_variables(self) -> dict[str, str]:
        defaults = self.settings.new_accounts
        return {f.name: str(getattr(defaults, f.name)) for f in fields(defaults)}

    def replaced(self) -> None:
        """The same account logged in again elsewhere: this connection gives way."""
        self._replaced = True
        self._fresh_line()
        self.error("You logged in again from another connection; closing this one.")
        self.disconnect(goodbye=False)

    # --- registration -----------------------------------------------------------------

    def _line_guest(self, line: str) -> Phase | Deferred[Phase]:
        word, rest = split_command(line)
        if word in ("bye", "quit"):
            self.disconnect(goodbye=True)
            return Phase.CLOSED
        if word != "name":
            self.send(*GUEST_WELCOME)
            self.write(PROMPT)
            return Phase.GUEST
        name = rest.strip()
        problem = name_problem(name)
        if problem is NameProblem.BAD_CHARACTERS:
            return self._guest_again(
                "** Your name may only contain letters and the underscore character _ .")
        if problem is NameProblem.TOO_LONG:
            return self._guest_again(
                f"** Please use a name with at most {NAME_MAX} characters.")
        if reserved_name(name) or name.lower() in commands.command_words():
            return self._guest_again(self._name_used(name))

        def unless_too_many(minutes: int | None) -> Phase | Deferred[Phase]:
            if minutes is not None:
                return self._too_many_registrations(minutes)
            return maybeDeferred(self.db.name_taken, name).addCallback(decide)

        def decide(taken: bool) -> Phase:
            if taken:
                return self._guest_again(self._name_used(name))
            self._new_name = name
            self.send(f"Your name will be {name}",
                      "Type in no password and hit Enter/Return if you want to change it now.")
            self.write(NEW_PASSWORD_PROMPT, raw=WILL_ECHO)
            return Phase.NEW_PASSWORD

        return self.services.registrations.check(self.network).addCallback(unless_too_many)

    def _too_many_registrations(self, minutes: int, raw: bytes = b"") -> Phase:
        self.log_refusal("registration refused for {address}", "access.registrations_per_hour")
        return self._guest_again(("\r\n" if raw else "")
                                 + TOO_MANY_REGISTRATIONS.format(minutes=minutes), raw=raw)

    @staticmethod
    def _name_used(name: str) -> str:
        return f"** Please use another name. '{name}' is already used by someone else."

    def _guest_again(self, text: str, raw: bytes = b"") -> Phase:
        self.write(f"{text}\r\n" + PROMPT, raw=raw)
        return Phase.GUEST

    def _line_new_password(self, line: str) -> Phase:
        problem = password_problem(line)
        if problem is PasswordProblem.EMPTY:
            return self._guest_again("\r\n** No password given. Please choose a new name",
                                     raw=WONT_ECHO)
        if problem is None:
            self._new_password = line
            self.write("\r\n" + RETYPE_PROMPT)
            return Phase.CONFIRM_PASSWORD
        reply = {
            PasswordProblem.TOO_SHORT: "Minimal password length is 4 characters.",
            PasswordProblem.COLON: "Your password may not contain ':'",
            PasswordProblem.BLANK: "Your password may not contain blanks.",
        }[problem]
        self.write(f"\r\n{reply}\r\n" + NEW_PASSWORD_PROMPT)
        return Phase.NEW_PASSWORD

    def _line_confirm_password(self, line: str) -> Phase | Deferred[Phase]:
        password, self._new_password = self._new_password, ""
        if line != password:
            self.write("\r\n** The two passwords were not identical. "
                       "Please give them again. Password: ")
            return Phase.NEW_PASSWORD
        name = self._new_name

        def unless_too_many(minutes: int | None) -> Phase | Deferred[Phase]:
            # Counted now, before the hashing: guests registering side by side count too.
            if minutes is not None:
                return self._too_many_registrations(minutes, raw=WONT_ECHO)
            d = self.services.passwords.hash(password).addCallback(create)
            return d.addCallbacks(registered, taken)

        def create(password_hash: str) -> Deferred[UserRecord]:
            return maybeDeferred(self.db.create_user, name, password_hash, self.now())

        def registered(record: UserRecord) -> Phase:
            log.info("{user} registers from {address}", event="registration", user=name,
                     address=self.host)
            self.write("\r\n", raw=WONT_ECHO)
            self.send(*REGISTERED)
            return self._enter(record, (), None, echo_was_off=False, registered=True)

        def taken(failure: Failure) -> Phase:
            failure.trap(NameTaken)
            return self._guest_again("\r\n" + self._name_used(name), raw=WONT_ECHO)

        return self.services.registrations.reserve(self.network).addCallback(unless_too_many)

    # --- READY: commands --------------------------------------------------------------

    def _line_ready(self, line: str) -> Phase | Deferred[Phase]:
        assert self.user is not None
        if not line:
            self._prompt()
            return Phase.READY
        self.user.last_active = self.clock.seconds()
        if line == "!!" and self._repeatable:
            line = self._repeatable
        word, rest = split_command(line)
        self._command = word
        found = commands.resolve(word)
        if found is not None and found.admin_only and self.user.name not in self.settings.admins:
            found = None
        if found is None and word[:1].isdigit() and commands.resolve("move") is not None:
            # FIBS: a line that starts with a point number is a move.
            found, rest = commands.resolve("move"), line
        if found is None:
            self.error(f"Unknown command: '{word}'")
            self._prompt()
            return Phase.READY
        if found.name not in NOT_REPEATED and not (found.name == "message" and rest):
            self._repeatable = line
        started = time.perf_counter()
        cluster = self.services.cluster
        forwarded = cluster.route(self, found.name, rest) if cluster is not None else None
        result = forwarded if forwarded is not None else found.run(self, rest)
        if isinstance(result, Deferred):
            return result.addCallback(lambda _: self._command_done(found.name, started))
        return self._command_done(found.name, started)

    def _command_done(self, name: str, started: float) -> Phase:
        if self.services.cluster is not None and self.user is not None:
            self.services.cluster.changed(self.user)
        if self.services.command_observers:
            seconds = time.perf_counter() - started
            for observer in self.services.command_observers:
                observer(name, seconds)
        if self.phase is Phase.CLOSED:
            return Phase.CLOSED
        self._prompt()
        return Phase.READY

