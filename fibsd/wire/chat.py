"""Every line the chat and social commands send, for client (CLIP) and telnet users.

A chat event reads differently to a client program (a numbered CLIP line, parsed by
regex) and to a human on telnet (a sentence).  Each formatter returns a ``Said`` with
both forms and the session picks one, so no command has to know the two spellings.
Telnet wordings nobody recorded from FIBS follow the protocol reference's
recommendations; protocol/chat.md lists which ones are guesses.  A user's words in a
line that is not CLIP-numbered go through ``user_text.shown``, so that no phrase of
them reads as a FIBS event to a client's patterns.
"""

from __future__ import annotations

from dataclasses import dataclass

from fibsd.wire.user_text import shown


@dataclass(frozen=True)
class Said:
    clip: str
    telnet: str

    def for_client(self, is_clip: bool) -> str:
        return self.clip if is_clip else self.telnet


# --- incoming chat (CLIP 9, 12-15) -----------------------------------------------

def message_received(sender: str, sent: int, text: str) -> Said:
    """CLIP 9: a personal message, live or stored (``sent`` = Unix time it was sent)."""
    return Said(f"9 {sender} {sent} {text}", f"Message from {sender}: {shown(text)}")


def tell_received(sender: str, text: str) -> Said:
    """CLIP 12: a ``tell`` to you."""
    return Said(f"12 {sender} {text}", f"{sender} tells: {shown(text)}")


def say_received(sender: str, text: str) -> Said:
    """CLIP 12 as well: your opponent's ``say``."""
    return Said(f"12 {sender} {text}", f"{sender} says: {shown(text)}")


def shout_received(sender: str, text: str) -> Said:
    return Said(f"13 {sender} {text}", f"{sender} shouts: {shown(text)}")


def whisper_received(sender: str, text: str) -> Said:
    return Said(f"14 {sender} {text}", f"{sender} whispers: {shown(text)}")


def kibitz_received(sender: str, text: str) -> Said:
    return Said(f"15 {sender} {text}", f"{sender} kibitzes: {shown(text)}")


# --- echoes to the speaker (CLIP 10, 11, 16-19) ------------------------------------

def message_delivered(recipient: str) -> Said:
    """CLIP 10: nothing may follow the name (FCM anchors it)."""
    return Said(f"10 {recipient}", f"Message delivered to {recipient}.")


def message_saved(recipient: str) -> Said:
    """CLIP 11: nothing may follow the name (FCM anchors it)."""
    return Said(f"11 {recipient}", f"Message saved for {recipient}.")


def you_tell(recipient: str, text: str) -> Said:
    return Said(f"16 {recipient} {text}", f"** You tell {recipient}: {shown(text)}")


def you_say(opponent: str, text: str) -> Said:
    return Said(f"16 {opponent} {text}", f"** You say to {opponent}: {shown(text)}")


def you_shout(text: str) -> Said:
    return Said(f"17 {text}", f"** You shout: {shown(text)}")


def you_whisper(text: str) -> Said:
    return Said(f"18 {text}", f"** You whisper: {shown(text)}")


def you_kibitz(text: str) -> Said:
    return Said(f"19 {text}", f"** You kibitz: {shown(text)}")


def heard_by(count: int) -> str:
    """After a kibitz or whisper: how many users received it."""
    return f"** {count} user heard you." if count == 1 else f"** {count} users heard you."


def say_to_yourself(text: str) -> str:
    return f"You say to yourself: {shown(text)}"


def is_away(name: str, away_message: str) -> str:
    return f"{name} is away: {shown(away_message)}"


# --- replies and errors -----------------------------------------------------------

NOTHING_TO_SAY = "** You can't say nothing."
SILENT_SHOUT = "** Please type 'toggle silent' again before you shout."
SHOUT_FLOOD = "** Please don't shout so much. Wait a little before you shout again."
NOT_PLAYING = "** You're not playing."
NOT_WATCHING_OR_PLAYING = "** You're not watching or playing."
CANT_TALK = "** You can't talk if you won't listen."
MESSAGE_USAGE = "** usage: message <user> <text>"
MESSAGES_FOLLOW = "There are messages for you:"
NO_MESSAGES = "** There are no messages for you."
GAG_SELF = "** You talk too much, don't you?"
BLIND_SELF = "** You can't read this message now, can you?"
NOBODY_GAGGED = "** You don't gag anyone."
NOBODY_BLINDED = "** You don't blind anyone."
NOBODY_AWAITED = "** You aren't waiting for anyone."
WAIT_SELF = "** You can't wait for yourself."
AWAY = "You're away. Please type 'back'"
NOBODY_AWAY = "None of the users is away."
AWAY_LIST_HEADER = "The following users are away:"
WELCOME_BACK = "Welcome back."
NOT_AWAY = "** You're not away."
WAVE = "You wave goodbye."
WAVE_AGAIN = "You wave goodbye again and log out."
NAME_NEEDED = "** please give a name as an argument."


def no_one_called(name: str) -> str:
    """Every command that names someone not logged in (tell, invite, watch, who ...).
    FIBS ends it with a period (client test captures: ``** There is no one called
    playerOne.``); FCM matches only the prefix."""
    return f"** There is no one called {name}."


def wont_listen(name: str) -> str:
    return f"** {name} won't listen to you."


def dont_know_user(name: str) -> str:
    return f"** Don't know user {name}"


def mailbox_full(name: str) -> str:
    return f"** Too many messages are waiting for {name}. Try again later."


def gag_changed(name: str, gagged: bool) -> str:
    return f"** You gag {name}." if gagged else f"** You ungag {name}."


def blind_changed(name: str, blinded: bool) -> str:
    return f"** You blind {name}." if blinded else f"** You unblind {name}."


def gag_list(names: list[str]) -> str:
    return f"** Gagged users: {', '.join(names)}"


def blind_list(names: list[str]) -> str:
    return f"** Blinded users: {', '.join(names)}"


def waiting(name: str) -> str:
    """Reply to ``waitfor <name>``; must not start like the notify toggle's texts."""
    return f"** Waiting for {name} to log in."


def already_online(name: str) -> str:
    return f"** {name} is already logged in."


def waiting_list(names: list[str]) -> str:
    return f"** Waiting for: {', '.join(names)}"


def finally_logs_in(name: str) -> str:
    return f"** FINALLY!!! {name} logs in"


def is_waiting_for_you(name: str) -> str:
    return f"{name} is waiting for you to log in."


def waves(name: str) -> str:
    return f"{name} waves goodbye."


def waves_again(name: str) -> str:
    return f"{name} waves goodbye again."


# --- limits (protocol/limits.md) ----------------------------------------------------

def talk_flood(verb: str) -> str:
    """A talking command used too often (``verb``: tell, say, kibitz, whisper), worded
    like FIBS's shout limit (``SHOUT_FLOOD``)."""
    return f"** Please don't {verb} so much. Wait a little before you {verb} again."


def command_flood(command: str) -> str:
    """Another limited command (message, away, toggle, set) used too often."""
    return f"** Please wait a little before you use '{command}' again."


def not_reading(name: str, what: str = "message") -> str:
    """``name``'s client has left more than half of ``limits.max_output`` unread."""
    return f"** {name} is not reading; your {what} was not delivered."
