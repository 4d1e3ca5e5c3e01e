"""Classify FIBS server lines into events, the way FIBS Cookie Monster does.

Rule 1: the first character of the line picks the table - a digit the CLIP
table, ``*`` the star table, anything else the text table (a leading blank is
"anything else", so a CLIP or ``** `` line with a blank in front is unknown, as
it is to every FCM client).

Rule 2: each table is an ordered list of anchored regular expressions; the
first that matches wins and builds the event from its named groups.  In the
patterns ``@`` stands for a user name, ``[a-zA-Z_<>]+`` - FCM's name class.

Rule 3: a generic rule converts each named group by the type of the event field
of the same name (``int``, ``float``, ``bool`` from ``0``/``1``, ``str``,
``int | None`` where a missing group or ``unlimited`` means None, ``str | None``
where ``-`` means None); fixed field values come with the rule.  Lines whose
fields are not a plain mapping (``board:``, move lists) have builders.

``classify`` looks at one line alone.  A few lines only make sense in context
(the banner before login, the message of the day between ``3`` and ``4``, the
farewell text after ``Goodbye.``); ``LineReader`` keeps that context, like
FCM's login/MOTD/run states, and is what a connection should use.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from typing import Any, ClassVar, get_type_hints

from fibsd.client import events as ev

NAME = r"[a-zA-Z_<>]+"
_PAIR = r"(?:bar|[0-9]+)-(?:off|[0-9]+)"
# Sent without a line end; a connection also turns them into events (protocol.py).
PROMPTS = ("login: ", "> ", "password: ", "Please give your password: ", "Please retype your password: ")

Builder = Callable[[re.Match[str]], ev.Event]


@dataclass(frozen=True)
class Rule:
    """One line shape: the anchored pattern and how its match becomes an event."""

    pattern: re.Pattern[str]
    build: Builder


def _convert(kind: Any, value: str | None) -> Any:
    if kind is int:
        return int(value)  # type: ignore[arg-type]
    if kind is float:
        return float(value)  # type: ignore[arg-type]
    if kind is bool:
        return value == "1"
    if kind == int | None:
        return None if value in (None, "unlimited") else int(value)  # type: ignore[arg-type]
    if kind == str | None:
        return None if value in (None, "-") else value
    return value


@cache
def _field_types(cls: type[ev.Event]) -> dict[str, Any]:
    return get_type_hints(cls)


def _fields(cls: type[ev.Event], **fixed: Any) -> Builder:
    """The generic builder of rule 3."""

    def build(match: re.Match[str]) -> ev.Event:
        types = _field_types(cls)
        values = {key: _convert(types[key], text) for key, text in match.groupdict().items()}
        return cls(**values, **fixed)

    return build


def _rule(pattern: str, build: type[ev.Event] | Builder, **fixed: Any) -> Rule:
    regex = re.compile(pattern.replace("@", NAME))
    if isinstance(build, type):
        return Rule(regex, _fields(build, **fixed))
    assert not fixed, "fixed values only go with a generic rule"
    return Rule(regex, build)


# -- builders for lines that are not a plain field mapping ------------------------


def _board(match: re.Match[str]) -> ev.Event:
    token = match.group(0).split(":")
    n = [int(t) for t in token[3:]]  # n[i] is token i + 3
    return ev.Board(
        player=token[1],
        opponent=token[2],
        match_length=n[0],
        player_score=n[1],
        opponent_score=n[2],
        points=tuple(n[3:29]),
        turn=n[29],
        player_dice=(n[30], n[31]),
        opponent_dice=(n[32], n[33]),
        cube=n[34],
        player_may_double=n[35] == 1,
        opponent_may_double=n[36] == 1,
        was_doubled=n[37] == 1,
        colour=n[38],
        direction=n[39],
        home=n[40],
        bar=n[41],
        player_home=n[42],
        opponent_home=n[43],
        player_bar=n[44],
        opponent_bar=n[45],
        can_move=n[46],
        forced_move=n[47],
        did_crawford=n[48] == 1,
        redoubles=n[49],
    )


def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    return tuple((src, dst) for src, dst in (pair.split("-") for pair in text.split()))


def _moves(match: re.Match[str]) -> ev.Event:
    return ev.Moves(match["player"], _pairs(match["moves"]))


def _only_move(match: re.Match[str]) -> ev.Event:
    return ev.OnlyPossibleMove(_pairs(match["moves"]))


def _bearing_off(match: re.Match[str]) -> ev.Event:
    return ev.BearingOff(tuple(int(word) for word in match["points"].split() if word != "o"))


def _toggle_rules() -> list[Rule]:
    """The fixed confirmation sentences of ``toggle``; settings.md 1.2."""
    texts = {
        "allowpip": ("You allow the use the server's 'pip' command.",
                     "You don't allow the use of the server's 'pip' command."),
        "autoboard": ("The board will be refreshed after every move.",
                      "The board won't be refreshed after every move."),
        "autodouble": ("You agree that doublets during opening double the cube.",
                       "You don't agree that doublets during opening double the cube."),
        "automove": ("Forced moves will be done automatically.",
                     "Forced moves won't be done automatically."),
        "bell": ("Your terminal will ring the bell if someone talks to you or invites you",
                 "Your terminal won't ring the bell if someone talks to you or invites you"),
        "crawford": ("You insist on playing with the Crawford rule.",
                     "You would like to play without using the Crawford rule."),
        "double": ("You will be asked if you want to double.",
                   "You won't be asked if you want to double."),
        "greedy": ("Will use automatic greedy bearoffs.", "Won't use automatic greedy bearoffs."),
        "moreboards": ("Will send rawboards after rolling.", "Won't send rawboards after rolling."),
        "moves": ("You want a list of moves after this game.",
                  "You won't see a list of moves after this game."),
        "notify": ("You'll be notified when new users log in.",
                   "You won't be notified when new users log in."),
        "ratings": ("You'll see how the rating changes are calculated.",
                    "You won't see how the rating changes are calculated."),
        "ready": ("You're now ready to invite or join someone.",
                  "You're now refusing to play with someone."),
        "report": ("You will be informed about starting and ending matches.",
                   "You won't be informed about starting and ending matches."),
        "silent": ("You won't hear what other players shout.", "You will hear what other players shout."),
        "telnet": ("You use telnet and don't need extra 'newlines'.",
                   "You use a client program and will receive extra 'newlines'."),
        "wrap": ("Your terminal knows how to wrap long lines.", "The server will wrap long lines."),
    }
    return [
        Rule(re.compile("^" + re.escape("** " + text) + "$"),
             _fields(ev.ToggleChanged, toggle=toggle, value=value))
        for toggle, pair in texts.items()
        for text, value in zip(pair, (True, False))
    ]


_TOGGLES = ("allowpip|autoboard|autodouble|automove|bell|crawford|double|greedy|moreboards"
            "|moves|notify|ratings|ready|report|silent|telnet|wrap")
_LENGTH = r"(?:a (?P<match_length>[0-9]+) point|an unlimited)"  # "a 5 point" / "an unlimited"
_FLAG, _INT = "[01]", "[0-9]+"
_OWN_INFO = " ".join(f"(?P<{field}>{regex})" for field, regex in (
    ("name", "@"), ("allowpip", _FLAG), ("autoboard", _FLAG), ("autodouble", _FLAG), ("automove", _FLAG),
    ("away", _FLAG), ("bell", _FLAG), ("crawford", _FLAG), ("double", _FLAG), ("experience", _INT),
    ("greedy", _FLAG), ("moreboards", _FLAG), ("moves", _FLAG), ("notify", _FLAG), ("rating", r"[0-9]+\.[0-9]+"),
    ("ratings", _FLAG), ("ready", _FLAG), ("redoubles", "[0-9]+|unlimited"), ("report", _FLAG),
    ("silent", _FLAG), ("timezone", r"\S+"),
))


# -- the three tables -------------------------------------------------------------

# A line of the telnet-mode who list; it starts with a digit or, for ranks below 10, a blank.
_WHO_LINE = _rule(r"^(?P<text>[0-9 ][0-9] [-PRWA ]{3} @ +[0-9]+\.[0-9]+ .*)$", ev.Information, kind="who")

CLIP_RULES: tuple[Rule, ...] = (
    _rule(r"^1 (?P<name>@) (?P<last_login>[0-9]+) (?P<last_host>\S+)$", ev.Welcome),
    _rule(rf"^2 {_OWN_INFO}$", ev.OwnInfo),
    _rule(r"^3$", ev.MotdStart),
    _rule(r"^4$", ev.MotdEnd),
    # FCM has three patterns for CLIP 5: opponent and watching are never both set.
    _rule(r"^5 (?P<name>@) (?!@ @ )(?P<opponent>@|-) (?P<watching>@|-) (?P<ready>[01]) (?P<away>[01]) "
          r"(?P<rating>[0-9]+\.[0-9]+) (?P<experience>[0-9]+) (?P<idle>[0-9]+) (?P<login>[0-9]+) "
          r"(?P<hostname>\S+) (?P<client>\S+) (?P<email>\S+)$", ev.WhoInfo),
    _rule(r"^6$", ev.WhoEnd),
    _rule(r"^7 (?P<name>@) (?P<text>.+)$", ev.LoginNotice),
    _rule(r"^8 (?P<name>@) (?P<text>.+)$", ev.LogoutNotice),
    _rule(r"^9 (?P<sender>@) (?P<time>[0-9]+) (?P<text>.+)$", ev.Message),
    _rule(r"^10 (?P<recipient>@)$", ev.MessageDelivered),
    _rule(r"^11 (?P<recipient>@)$", ev.MessageSaved),
    _rule(r"^12 (?P<sender>@) (?P<text>.+)$", ev.Says),
    _rule(r"^13 (?P<sender>@) (?P<text>.+)$", ev.Shouts),
    _rule(r"^14 (?P<sender>@) (?P<text>.+)$", ev.Whispers),
    _rule(r"^15 (?P<sender>@) (?P<text>.+)$", ev.Kibitzes),
    _rule(r"^16 (?P<recipient>@) (?P<text>.+)$", ev.YouSay),
    _rule(r"^17 (?P<text>.+)$", ev.YouShout),
    _rule(r"^18 (?P<text>.+)$", ev.YouWhisper),
    _rule(r"^19 (?P<text>.+)$", ev.YouKibitz),
    _rule(r"^20 (?P<sender>@) (?P<text>.+)$", ev.Alert),
    # informational commands whose output starts with a digit (FCM tries them too)
    _WHO_LINE,
    _rule(r"^(?P<text>[0-9]+(?: bytes| accounts| ratings saved| registered users|\([0-9]+\) saved games).*)$",
          ev.Information, kind="stat"),
    _rule(r"^(?P<text>[1-6]: [0-9]+|[1-6]-1 [0-9].*)$", ev.Information, kind="dicetest"),
)

STAR_RULES: tuple[Rule, ...] = (
    _rule(r"^\*\* Unknown command: '(?P<word>.*)'$", ev.UnknownCommand),
    _rule(r"^\*\* User (?P<name>@) authenticated\.$", ev.UserAuthenticated),
    _rule(r"^\*\* Last login: (?P<text>.*)$", ev.LastLogin),
    _rule(r"^\*\* Warning: You are already logged in\.$", ev.AlreadyLoggedIn),
    _rule(r"^\*\* Please use another name\. '(?P<name>[^']*)' is already used by someone else\.$",
          ev.NameTaken),
    _rule(rf"^\*\* You invited (?P<invitee>@) to {_LENGTH} match\.$", ev.YouInvited),
    _rule(r"^\*\* You invited (?P<invitee>@) to resume a saved match\.$", ev.YouInvitedResume),
    _rule(rf"^\*\* You are now playing {_LENGTH} match with (?P<opponent>@)$", ev.NewMatch,
          you_joined=True),
    _rule(rf"^\*\* Player (?P<opponent>@) has joined you for {_LENGTH} match\.$", ev.NewMatch,
          you_joined=False),
    _rule(r"^\*\* Please wait for (?P<opponent>@) to join too\.$", ev.WaitForJoin),
    _rule(r"^\*\* You terminated the game\. The game was saved\.$", ev.YouTerminated),
    _rule(r"^\*\* Player (?P<player>@) has left the game\. The game was saved\.$", ev.OpponentLeft),
    _rule(r"^\*\* (?P<count>[0-9]+) users? heard you\.$", ev.UsersHeard),
    # telnet-mode echoes of CLIP 16-19
    _rule(r"^\*\* You (?:tell|say to) (?P<recipient>@): (?P<text>.+)$", ev.YouSay),
    _rule(r"^\*\* You shout: (?P<text>.+)$", ev.YouShout),
    _rule(r"^\*\* You whisper: (?P<text>.+)$", ev.YouWhisper),
    _rule(r"^\*\* You kibitz: (?P<text>.+)$", ev.YouKibitz),
    _rule(r"^\*\* You stop watching (?P<player>@)\.$", ev.YouStopWatching),
    _rule(r"^\*\* (?P<text>WARNING: Don't accept if you want to continue .*)$", ev.SavedMatchWarning),
    *_toggle_rules(),
    _rule(r"^(?P<text>\* *[0-9]+ +@ +[0-9]+\.[0-9]+ +[0-9]+)$", ev.Information, kind="ratings"),
    _rule(r"^(?P<text>\*\*@ +(?:[0-9]+|unlimited) +[0-9]+ +- +[0-9]+)$", ev.Information, kind="saved"),
    # `set bot` answers an account's own choice: information, never a refusal of
    # something else the bot is waiting for (protocol/bots.md)
    _rule(r"^\*\* (?P<text>This account is (?:now |no longer |not )?marked as a bot\.)$",
          ev.Information, kind="bot"),
    _rule(r"^\*\* (?P<text>With a clock: .*)$", ev.InvitationClock),
    _rule(r"^\*\* (?P<text>Your clock: (?P<seconds>[0-9]+) seconds of reserve left\.)$",
          ev.ClockWarning),
    _rule(r"^\*\* (?P<text>.+)$", ev.Error),
)

TEXT_RULES: tuple[Rule, ...] = (
    _rule(r"^board:@:@(?::-?[0-9]+){50}$", _board),
    _rule(rf"^(?P<text>{'|'.join(map(re.escape, PROMPTS))})$", ev.Prompt),
    _rule(r"^$", ev.Empty),
    # one turn
    _rule(r"^(?P<player>You) roll (?P<die1>[1-6]) and (?P<die2>[1-6])\.$", ev.Rolls),
    _rule(r"^(?P<player>@) rolls (?P<die1>[1-6]) and (?P<die2>[1-6])\.$", ev.Rolls),
    _rule(r"^(?P<first>@) rolled (?P<first_die>[1-6]), (?P<second>@) rolled (?P<second_die>[1-6])$",
          ev.OpeningRoll),
    _rule(r"^It's your turn to move\.$", ev.YourTurnToMove),
    _rule(r"^(?P<player>@) makes the first move\.$", ev.MakesFirstMove),
    _rule(r"^It's your turn to roll or double\.$", ev.RollOrDouble),
    _rule(r"^It's your turn\. Please roll or double\.?$", ev.RollOrDouble),
    _rule(r"^Please move (?P<count>[1-4]) pieces?\.$", ev.PleaseMove),
    _rule(r"^(?P<player>@) can't move\.$", ev.CantMove),
    _rule(rf"^(?P<player>@) moves(?P<moves>(?: {_PAIR})+) \.$", _moves),
    _rule(rf"^The only possible move is(?P<moves>(?: {_PAIR})+) \.$", _only_move),
    _rule(r"^Bearing off:(?P<points>(?: [0-9]+ o)+)\.?$", _bearing_off),
    _rule(r"^Done\.$", ev.Done),
    _rule(r"^(?P<player>You)r pip count is (?P<player_pips>[0-9]+)\. (?P<opponent>@)'s pip count is "
          r"(?P<opponent_pips>[0-9]+)\.$", ev.PipCounts),
    _rule(r"^(?P<player>@)'s pip count is (?P<player_pips>[0-9]+)\. (?P<opponent>@)'s pip count is "
          r"(?P<opponent_pips>[0-9]+)\.$", ev.PipCounts),
    # the cube
    _rule(r"^You double\. Please wait for (?P<opponent>@) to accept or reject\.$", ev.YouDouble),
    _rule(r"^(?P<player>@) doubles\. Type 'accept' or 'reject'\.$", ev.Doubles, must_answer=True),
    _rule(r"^(?P<player>@) doubles\.$", ev.Doubles, must_answer=False),
    _rule(r"^(?P<player>You) accept the double\. The cube shows (?P<cube>[0-9]+)\.$", ev.AcceptsDouble),
    _rule(r"^(?P<player>@) accepts the double\.(?: The cube shows (?P<cube>[0-9]+)\.)?$", ev.AcceptsDouble),
    _rule(r"^(?P<player>You) give up\. (?P<winner>@) wins (?P<points>[0-9]+) points?\.$", ev.GivesUp),
    _rule(r"^(?P<player>@) gives up\. (?P<winner>You) win (?P<points>[0-9]+) points?\.$", ev.GivesUp),
    _rule(r"^(?P<player>@) gives up\. (?P<winner>@) wins (?P<points>[0-9]+) points?\.$", ev.GivesUp),
    _rule(r"^The number on the doubling cube is now (?P<value>[0-9]+)$", ev.DoublingCubeNow),
    # resigning
    _rule(r"^(?P<player>You) want to resign\. (?P<winner>@) will win (?P<points>[0-9]+) points?\.$",
          ev.ResignOffer, must_answer=False),
    _rule(r"^(?P<player>@) wants to resign\. (?P<winner>You) will win (?P<points>[0-9]+) points?\. "
          r"Type 'accept' or 'reject'\.$", ev.ResignOffer, must_answer=True),
    _rule(r"^(?P<player>@) wants to resign\. (?P<winner>@) will win (?P<points>[0-9]+) points?\.$",
          ev.ResignOffer, must_answer=False),
    _rule(r"^(?P<player>You) accept and win (?P<points>[0-9]+) points?\.$", ev.AcceptsResignation),
    _rule(r"^(?P<player>@) accepts and wins (?P<points>[0-9]+) points?\.$", ev.AcceptsResignation),
    _rule(r"^(?P<player>You) reject\. The game continues\.$", ev.RejectsResignation),
    _rule(r"^(?P<player>@) rejects\. The game continues\.$", ev.RejectsResignation),
    # game and match end
    _rule(r"^(?P<player>You) win the game and get (?P<points>[0-9]+) points?\. Congratulations!$", ev.GameWon),
    _rule(r"^(?P<player>@) wins the game and gets (?P<points>[0-9]+) points?\.(?: Sorry\.)?$", ev.GameWon),
    _rule(r"^score in (?:(?P<match_length>[0-9]+) point|unlimited) match: (?P<player>@)-(?P<player_score>[0-9]+) "
          r"(?P<opponent>@)-(?P<opponent_score>[0-9]+)$", ev.Score),
    _rule(r"^Type 'join' if you want to play the next game, type 'leave' if you don't\.$", ev.JoinNextGame),
    _rule(r"^(?P<player>You) win the (?P<match_length>[0-9]+) point match "
          r"(?P<winner_score>[0-9]+)-(?P<loser_score>[0-9]+) \.$", ev.MatchWon),
    _rule(r"^(?P<player>@) wins the (?P<match_length>[0-9]+) point match "
          r"(?P<winner_score>[0-9]+)-(?P<loser_score>[0-9]+) \.$", ev.MatchWon),
    _rule(r"^Starting a new game with (?P<opponent>@)\.$", ev.StartingNewGame),
    # resuming, and the move list of a game
    _rule(r"^turn: (?P<player>@)\.$", ev.ResumeTurn),
    _rule(r"^match length: (?:(?P<match_length>[0-9]+)|unlimited)$", ev.ResumeMatchLength),
    _rule(r"^points for (?:user )?(?P<player>@): (?P<points>[0-9]+)$", ev.ResumePoints),
    _rule(rf"^Score is (?P<player_score>[0-9]+)-(?P<opponent_score>[0-9]+) in {_LENGTH} match\.$",
          ev.MovesListScore),
    _rule(r"^(?P<x_player>@) is X - (?P<o_player>@) is O\.?$", ev.MovesListPlayers),
    _rule(r"^(?P<colour>[XO]): (?P<text>.+)$", ev.MovesListEntry),
    # invitations, starting, resuming, leaving matches
    _rule(rf"^(?P<inviter>@) wants to play {_LENGTH} match with you\.$", ev.Invitation),
    _rule(r"^(?P<inviter>@) wants to resume a saved match with you\.$", ev.ResumeInvitation),
    _rule(r"^Type 'join (?P<inviter>@)' to accept\.$", ev.TypeJoin),
    _rule(r"^(?P<text>WARNING: Don't accept if you want to continue .*)$", ev.SavedMatchWarning),
    _rule(r"^Player (?P<opponent>@) has joined you for an unlimited match\.$", ev.NewMatch,
          match_length=None, you_joined=False),
    _rule(r"^You are now playing with (?P<opponent>@)\. Your running match was loaded\.$", ev.MatchResumed,
          you_joined=True),
    _rule(r"^(?P<opponent>@) has joined you\. Your running match was loaded\.$", ev.MatchResumed,
          you_joined=False),
    _rule(rf"^(?P<player1>@) and (?P<player2>@) start {_LENGTH} match\.$", ev.MatchStartReport),
    _rule(r"^(?P<player1>@) and (?P<player2>@) are resuming their (?:(?P<match_length>[0-9]+)-point|unlimited) "
          r"match\.$", ev.MatchResumeReport),
    _rule(r"^(?P<winner>@) wins a (?P<match_length>[0-9]+) point match against (?P<loser>@)  "
          r"(?P<winner_score>[0-9]+)-(?P<loser_score>[0-9]+) \.$", ev.MatchResult),
    _rule(r"^(?P<player>@) has left the game with (?P<opponent>@)\.$", ev.LeftGameReport),
    _rule(r"^(?P<player>@) logs out\. You're not watching anymore\.$", ev.WatchedLoggedOut),
    _rule(r"^(?P<text>(?P<player>@) (?:logs out|drops connection)\. The game was saved\.)$", ev.GameSaved),
    _rule(r"^(?P<text>(?:Connection with|Network error with) (?P<player>@)(?: timed out)?\. "
          r"The game was saved\.)$", ev.GameSaved),
    _rule(r"^(?P<text>(?:rating calculation:|rating difference|match length  |Experience: "
          r"|Probability that underdog wins:|P=[0-9.]+ is 1-Pu if underdog wins|K=max\(1|change for ).*)$",
          ev.RatingCalculation),
    # watching
    _rule(r"^You're now watching (?P<player>@)\.$", ev.YouWatch),
    _rule(r"^(?P<player>@) is not doing anything interesting\.$", ev.NothingInteresting),
    _rule(r"^(?P<text>You look great\.)$", ev.Information, kind="look"),
    _rule(r"^You stop watching (?P<player>@)\.$", ev.YouStopWatching),
    _rule(r"^(?P<watcher>@) is watching you\.$", ev.StartsWatching, player=ev.YOU),
    _rule(r"^(?P<watcher>@) starts watching (?P<player>@)\.$", ev.StartsWatching),
    _rule(r"^(?P<watcher>@) stops watching you\.$", ev.StopsWatching, player=ev.YOU),
    _rule(r"^(?P<watcher>@) stops watching (?P<player>@)\.$", ev.StopsWatching),
    # social
    _rule(r"^(?P<name>@) is away: (?P<message>.*)$", ev.IsAway),
    _rule(r"^You're away\. Please type 'back'$", ev.YouAreAway),
    _rule(r"^Welcome back\.$", ev.WelcomeBack),
    _rule(r"^You wave goodbye\.$", ev.Waves, player=ev.YOU, again=False),
    _rule(r"^You wave goodbye again and log out\.$", ev.Waves, player=ev.YOU, again=True),
    _rule(r"^(?P<player>@) waves goodbye\.$", ev.Waves, again=False),
    _rule(r"^(?P<player>@) waves goodbye again\.$", ev.Waves, again=True),
    _rule(r"^ +Goodbye\.$", ev.Goodbye),
    _rule(r"^Connection timed out\.$", ev.ConnectionTimedOut),
    _rule(r"^You say to yourself: (?P<text>.*)$", ev.YouSayToYourself),
    _rule(r"^(?P<name>@) is waiting for you to log in\.$", ev.WaitingForYou),
    _rule(r"^There are messages for you:$", ev.MessagesForYou),
    # telnet-mode forms of CLIP 7-15
    _rule(r"^(?P<text>(?P<name>@) (?:logs in|logs in again|just registered and logs in)\.)$", ev.LoginNotice),
    _rule(r"^(?P<text>(?P<name>@) (?:logs out|drops connection)\.)$", ev.LogoutNotice),
    _rule(r"^(?P<text>(?:Connection with|Closed old connection with user) (?P<name>@)(?: timed out)?\.)$",
          ev.LogoutNotice),
    _rule(r"^Message from (?P<sender>@): (?P<text>.+)$", ev.Message, time=None),
    _rule(r"^Message delivered to (?P<recipient>@)\.$", ev.MessageDelivered),
    _rule(r"^Message saved for (?P<recipient>@)\.$", ev.MessageSaved),
    _rule(r"^(?P<sender>@) (?:tells|says): (?P<text>.+)$", ev.Says),
    _rule(r"^(?P<sender>@) shouts: (?P<text>.+)$", ev.Shouts),
    _rule(r"^(?P<sender>@) whispers: (?P<text>.+)$", ev.Whispers),
    _rule(r"^(?P<sender>@) kibitzes: (?P<text>.+)$", ev.Kibitzes),
    _rule(r"^Value of '(?P<variable>[a-z]+)' set to '?(?P<value>[^']*?)'?\.$", ev.VariableValue, changed=True),
    _rule(r"^Value of '(?P<variable>[a-z]+)' is '?(?P<value>[^']*?)'?\.?$", ev.VariableValue, changed=False),
    # guest registration
    _rule(r"^Welcome to (?P<server>\w+)\. You just logged in as guest\.$", ev.GuestWelcome),
    _rule(r"^ONE USERNAME PER PERSON ONLY!!!$", ev.OneUsername),
    _rule(r"^Your name will be (?P<name>@)\.?$", ev.NameAccepted),
    _rule(r"^(?P<text>Minimal password length is [0-9]+ characters\.|Your password may not contain ':'\.?)$",
          ev.PasswordRefused),
    _rule(r"^You are registered\.$", ev.Registered),
    _rule(r"^(?P<text>Type in no password and hit Enter/Return if you want to change it now\."
          r"|Type 'help beginner' to get started\.|Please register before using this server:"
          r"|Your site is not allowed to create new accounts\.)$", ev.Information, kind="registration"),
    # output of informational commands
    _WHO_LINE,
    _rule(r"^(?P<text>No  S  username        rating  exp login    idle  from|There are [0-9]+ users logged on\.|There is 1 user logged on\.)$",
          ev.Information, kind="who"),
    _rule(r"^(?P<text>Information about @:?|  Last login: .*|  Last logout: .*|  Not logged in right now\."
          r"|  Still logged in\..*|  @ is (?:playing with|watching|ready to play|not ready).*"
          r"|  Rating: +[0-9]+\..*|  Email address: .*|  No email address\.|No information found on user.*"
          r"|  Abandoned matches: [0-9]+ of [0-9]+ .*|  Bot: a program plays this account.*)$",
          ev.Information, kind="whois"),
    _rule(r"^(?P<text>fairdice: .*)$", ev.Information, kind="fairdice"),
    _rule(r"^(?P<text>(?:    )?clock: .*)$", ev.Information, kind="clock"),
    _rule(r"^(?P<text>tournament: .*)$", ev.Information, kind="tournament"),
    # fibsd's engine analysis (protocol/analysis-command.md)
    _rule(r"^(?P<text>Analysis of match #[0-9]+, @ - @, .*:|  @: PR .*|Worst decisions.*"
          r"|  game [0-9]+, @, (?:checker play|cube action|take or pass): .*"
          r"|Match #[0-9]+ will be analysed again at [0-9]+-ply; .*"
          r"|Analysis ready: match #[0-9]+, @ - @\. .*)$", ev.Information, kind="analysis"),
    _rule(r"^(?P<text>n: [0-9]+|Chi-square of the .*)$", ev.Information, kind="dicetest"),
    _rule(rf"^(?P<text>The current settings are:|(?:{_TOGGLES}) +(?:YES|NO))$", ev.Information, kind="toggles"),
    _rule(r"^(?P<text>Settings of variables:|(?:boardstyle|linelength|pagelength|redoubles|sortwho|timezone):"
          r" +\S+)$", ev.Information, kind="settings"),
    _rule(r"^(?P<text> rank name +rating +Experience| +[0-9]+ +@ +[0-9]+\.[0-9]+ +[0-9]+)$",
          ev.Information, kind="ratings"),
    _rule(r"^(?P<text>List of games:|@ +- +@ \((?:[0-9]+ point|unlimited) match .*)$", ev.Information, kind="games"),
    _rule(r"^(?P<text>no saved games\.|  opponent          matchlength   score \(your points first\)"
          r"|(?:  | \*)@ +(?:[0-9]+|unlimited) +[0-9]+ +- +[0-9]+|@ has (?:no|[0-9]+) saved games?\.)$",
          ev.Information, kind="saved"),
    _rule(r"^(?P<text>Watching players:|@ is watching @\.)$", ev.Information, kind="watchers"),
    # fibsd's match archive (protocol/export.md)
    _rule(r"^(?P<text>Finished matches of @, newest first \(times in UTC\):|#[0-9]+ [0-9-]+ [0-9:]+ @ [0-9]+"
          r" - @ [0-9]+ \((?:[0-9]+ point|unlimited) match\)|Type 'archive @ [0-9]+' for more\.)$",
          ev.Information, kind="archive"),
    _rule(r"^Match #(?P<match_id>[0-9]+) in \.mat format, (?P<lines>[0-9]+) lines:$", ev.ExportStart),
    _rule(r"^End of match #(?P<match_id>[0-9]+)\.$", ev.ExportEnd),
    _rule(r"^(?P<text>None of the users is away\.|The following users are away:)$", ev.Information, kind="away"),
    _rule(r"^(?P<text>Your email address is '.*'\.|Password changed\.)$", ev.Information, kind="account"),
    _rule(r"^(?P<text>max_logins is [0-9]+ \(maximum: [0-9]+\))$", ev.Information, kind="show"),
    _rule(r"^(?P<text>[A-Za-z0-9]+, .* \S+   \( .* UTC \))$",
          ev.Information, kind="time"),
    _rule(r"^(?P<text>fibsd version \S+, a FIBS-compatible backgammon server.*)$",
          ev.Information, kind="version"),
    _rule(r"^(?P<text>This is fibsd, an open-source backgammon server that speaks the line protocol of"
          r"|FIBS, the First Internet Backgammon Server \(1992-\), and its client protocol CLIP,"
          r"|so FIBS client programs and bots connect to it unchanged\. Every move is checked by"
          r"|a rules engine; matches are rated with the FIBS rating formula\."
          r"|Type 'help' for the commands, 'help beginner' to get started\.)$",
          ev.Information, kind="about"),
    _rule(r"^(?P<text>(?:Users logged in|Matches being played): [0-9]+)$", ev.Information, kind="stat"),
    _rule(r"^(?P<text>[A-Z][A-Za-z_+-]*(?:/[A-Za-z0-9_+-]+)+(?: [A-Z][A-Za-z_+-]*(?:/[A-Za-z0-9_+-]+)*)*)$",
          ev.Information, kind="timezones"),
    _rule(r"^(?P<text>   [+|].*|  v\|.*|   BAR: O-[0-9]+ X-[0-9]+ .*| {4,5}[0-9][0-9 ]+)$", ev.Information,
          kind="ascii_board"),
)


def _table(line: str) -> tuple[Rule, ...]:
    if line[:1].isdigit():
        return CLIP_RULES
    if line[:1] == "*":
        return STAR_RULES
    return TEXT_RULES


def classify(line: str) -> ev.Event:
    """The event for one server line (without its CR LF), by rules 1-3 of the module doc.

    >>> classify("12 someplayer Do you want to play a game?")
    Says(sender='someplayer', text='Do you want to play a game?')
    """
    for rule in _table(line):
        match = rule.pattern.match(line)
        if match:
            return rule.build(match)
    return ev.Unknown(line)


class Phase(Enum):
    """Where a connection is, as far as the meaning of free text goes."""

    LOGIN = "login"  # banner, prompts, guest dialogue: free text is Banner
    MOTD = "motd"  # between CLIP 3 and 4: every line is MotdLine
    TELNET_MOTD = "telnet motd"  # after a telnet login, until its first "> ": free text is MotdLine
    RUN = "run"  # logged in: free text is Unknown
    GONE = "gone"  # after Goodbye.: free text is Farewell
    EXPORT = "export"  # the counted lines after ExportStart: every line is MatLine


@dataclass
class LineReader:
    """``classify`` plus the little context FCM keeps (its login, MOTD and run states)."""

    phase: Phase = field(default=Phase.LOGIN)
    mat_lines: int = 0  # lines of .mat text still to come (Phase.EXPORT)

    def feed(self, line: str) -> ev.Event:
        if self.phase is Phase.EXPORT:
            self.mat_lines -= 1
            if self.mat_lines <= 0:
                self.phase = Phase.RUN
            return ev.MatLine(line)
        if self.phase is Phase.MOTD:
            if line == "4":
                self.phase = Phase.RUN
                return ev.MotdEnd()
            return ev.MotdLine(line)
        event = classify(line)
        if isinstance(event, ev.Information) and event.kind == "time" and self.phase is Phase.LOGIN:
            return ev.Banner(line)  # the banner's date line has the shape of `time`'s answer
        if isinstance(event, ev.Unknown):
            return self._free_text.get(self.phase, ev.Unknown)(line)
        if isinstance(event, ev.MotdStart):
            self.phase = Phase.MOTD
        elif isinstance(event, ev.Welcome):
            self.phase = Phase.RUN
        elif isinstance(event, ev.UserAuthenticated):
            self.phase = Phase.TELNET_MOTD  # telnet mode sends the MOTD box without 3 and 4
        elif isinstance(event, ev.Prompt) and self.phase is Phase.TELNET_MOTD:
            self.phase = Phase.RUN
        elif isinstance(event, ev.Goodbye):
            self.phase = Phase.GONE
        elif isinstance(event, ev.ExportStart) and event.lines > 0:
            self.phase, self.mat_lines = Phase.EXPORT, event.lines
        return event

    _free_text: ClassVar[dict[Phase, Callable[[str], ev.Event]]] = {
        Phase.LOGIN: ev.Banner,
        Phase.TELNET_MOTD: ev.MotdLine,
        Phase.GONE: ev.Farewell,
    }
