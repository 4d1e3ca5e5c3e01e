"""The bot's answers, event by event, on a fake connection: no server, no reactor."""

from __future__ import annotations

from dataclasses import replace

from twisted.internet.task import Clock

from fibsd.client import events as ev
from fibsd.client.bot import Bot
from fibsd.client.parse import classify
from fibsd.client.protocol import Stage

# alice (O, moving 24 -> 1) to play an opening 5-3 against bob
LINE = ("board:You:bob:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:5:3:0:0:1:1:1:"
        "0:1:-1:0:25:0:0:0:0:2:0:0:0")


class FakeTransport:
    disconnecting = False


class FakeProtocol:
    stage = Stage.READY

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.transport = FakeTransport()

    def send(self, command: str) -> None:
        self.sent.append(command)


def bot(**options: object) -> tuple[Bot, FakeProtocol]:
    player = Bot("alice", **options)  # type: ignore[arg-type]
    protocol = FakeProtocol()
    player.protocol = protocol  # type: ignore[assignment]
    return player, protocol


def board(**fields: object) -> ev.Board:
    event = classify(LINE)
    assert isinstance(event, ev.Board)
    return replace(event, **fields)  # type: ignore[arg-type]


def test_the_opening_move_waits_for_the_board() -> None:
    player, protocol = bot()
    player(ev.YourTurnToMove())
    assert protocol.sent == []
    player(board())
    assert protocol.sent == ["move 8-3 6-3"]  # makes the 3 point


def test_rolls_then_moves_with_the_rolled_dice() -> None:
    player, protocol = bot()
    player(board(player_dice=(0, 0)))
    player(ev.RollOrDouble())
    player(ev.Rolls(ev.YOU, 6, 1))
    player(ev.PleaseMove(2))
    assert protocol.sent[0] == "roll" and protocol.sent[1].startswith("move ")
    assert player.dice == (6, 1)


def test_cube_answers() -> None:
    player, protocol = bot()
    player(board())
    player(ev.Doubles("bob", must_answer=True))
    player(ev.Doubles("bob", must_answer=False))  # a watcher's line: no answer
    assert protocol.sent == ["accept"]
    # match point for bob: drop and lose, so take whatever the position
    player(board(player_score=0, opponent_score=4))
    player(ev.Doubles("bob", must_answer=True))
    assert protocol.sent == ["accept", "accept"]


def test_the_free_double_after_crawford() -> None:
    player, protocol = bot()
    player(board(player_score=2, opponent_score=4, player_may_double=True))
    player(ev.RollOrDouble())
    player(board(player_score=2, opponent_score=4, player_may_double=False))
    player(ev.RollOrDouble())
    assert protocol.sent == ["double", "roll"]


def test_resignations_are_answered_by_the_rule() -> None:
    player, protocol = bot()
    player(board())
    player(ev.ResignOffer("bob", ev.YOU, 1, must_answer=True))
    assert protocol.sent == ["accept"]  # bob has no gammon danger at the start
    player(board(player_score=0, opponent_score=0, cube=2))
    player(ev.ResignOffer("bob", ev.YOU, 1, must_answer=True))
    assert protocol.sent == ["accept", "reject"]  # one point is less than the cube's two


def invite(player: Bot, inviter: str, length: int | None, warning: int | None = None) -> None:
    """The invitation's lines: the bot answers at the last one, ``Type 'join ...'``."""
    player(ev.Invitation(inviter, length) if length is not None else ev.ResumeInvitation(inviter))
    if warning is not None:
        player(ev.SavedMatchWarning(
            f"WARNING: Don't accept if you want to continue the saved {warning} point match!"))
    player(ev.TypeJoin(inviter))


def test_invitations_from_anyone_unless_inviting() -> None:
    player, protocol = bot()
    invite(player, "carol", 3)
    assert protocol.sent == ["join carol"]
    picky, sent = bot(invite="bob", length=3)
    invite(picky, "carol", 3)
    invite(picky, "bob", None)
    assert sent.sent == ["tell carol Sorry, I only play bob now.", "join bob"]


def test_a_join_line_without_an_invitation_line_is_answered_too() -> None:
    player, protocol = bot()
    player(ev.TypeJoin("carol"))
    picky, sent = bot(lengths=frozenset({1}))
    picky(ev.TypeJoin("carol"))
    assert protocol.sent == ["join carol"]
    assert sent.sent == ["tell carol Sorry, I could not read your invitation; please invite me again."]


def test_every_refused_invitation_gets_a_tell() -> None:
    player, protocol = bot(lengths=frozenset({1, 2, 3}))
    invite(player, "carol", 99)
    invite(player, "dave", None)
    player(ev.NewMatch("dave", 3, you_joined=True))
    invite(player, "erin", 1)
    assert protocol.sent == [
        "tell carol Sorry, I play 1-3 point matches only; please invite me to one of those.",
        "join dave",
        "tell erin Sorry, I am in a match with dave; please invite me again when it is over.",
    ]


def test_a_new_match_that_would_discard_a_saved_one_is_answered_with_a_resume() -> None:
    player, protocol = bot()
    player.looked = player.ready = True
    invite(player, "bob", 1, warning=7)
    assert protocol.sent == [
        "invite bob",
        "tell bob We have a saved 7 point match; a new match would discard it, so I invited "
        "you to resume it instead.",
    ]


def test_while_it_resumes_a_saved_match_others_are_told_to_wait_a_minute() -> None:
    clock = Clock()
    player, protocol = bot(clock=clock)
    own_info(player)
    player(ev.Information("saved", "**bob                     5                0 -  1"))
    player(ev.Information("saved", "alice has 1 saved game."))
    player(ev.YouInvitedResume("bob"))
    invite(player, "carol", 1)
    clock.advance(60)  # bob did not join: others may have the bot meanwhile
    invite(player, "dave", 1)
    assert protocol.sent[2:] == [
        "invite bob",
        "tell carol Sorry, I am resuming a saved match with bob first; please invite me "
        "again later.",
        "join dave",
    ]
    player(ev.LoginNotice("bob", "bob logs in."))  # he is back: resume first again
    assert protocol.sent[-1] == "invite bob"


def own_info(player: Bot) -> None:
    player(ev.OwnInfo("alice", *[False] * 8, 0, *[False] * 4, 1500.0, False, True, 0, False,
                      False, "UTC"))


def test_limits_end_the_bot() -> None:
    player, protocol = bot(games=1)
    player(ev.NewMatch("bob", 5, you_joined=True))
    player(ev.JoinNextGame())
    assert protocol.sent == ["leave"] and player.finished.done
    counted, sent = bot(matches=1, invite="bob", length=1)
    counted(ev.NewMatch("bob", 1, you_joined=False))
    counted(ev.MatchWon(ev.YOU, 1, 1, 0))
    assert sent.sent == [] and counted.finished.done and counted.matches_played == 1
    idle, told = bot(matches=0)
    own_info(idle)
    idle(ev.Information("saved", "alice has no saved games."))
    assert idle.finished.done and told.sent == ["show saved", "show savedcount alice"]


def test_after_a_lost_connection_the_bot_reads_show_saved_and_resumes() -> None:
    player, protocol = bot(invite="bob", length=5)
    player(ev.NewMatch("bob", 5, you_joined=False))
    player._lost(player.protocol)  # type: ignore[arg-type]
    own_info(player)
    assert protocol.sent == ["show saved", "show savedcount alice"]
    player(ev.Information("saved", "  opponent          matchlength   score (your points first)"))
    player(ev.Information("saved", "**bob                     5                0 -  1"))
    player(ev.Information("saved", "alice has 1 saved game."))
    assert protocol.sent[2:] == ["invite bob"]


def test_show_saved_is_asked_again_when_the_database_is_away() -> None:
    clock = Clock()
    player, protocol = bot(clock=clock)
    own_info(player)
    player(ev.Error("Sorry, the server's database is not available at the moment. "
                    "Please try again in a minute."))
    assert protocol.sent == ["show saved", "show savedcount alice"]
    clock.advance(60)
    assert protocol.sent == ["show saved", "show savedcount alice"] * 2


def test_a_login_during_the_listing_counts() -> None:
    """Listed offline, logged in before the listing ended: he is invited."""
    player, protocol = bot()
    own_info(player)
    player(ev.Information("saved", "  bob                     5                0 -  1"))
    player(ev.LoginNotice("bob", "bob logs in."))
    player(ev.Information("saved", "alice has 1 saved game."))
    assert protocol.sent[2:] == ["invite bob"]


def test_a_new_connection_that_replaced_a_held_one_plays_the_match_on() -> None:
    """The server had us in a match (our own who line says so) and shows no resume
    lines: the bot knows it plays, and counts the match when it ends."""
    player, protocol = bot()
    player(ev.WhoInfo("alice", "bob", None, True, False, 1500.0, 0, 0, 0, "-", None, None))
    assert player.playing and player.opponent == "bob"
    player(ev.MatchWon("bob", 1, 1, 0))
    assert player.matches_played == 1 and not player.playing and player.opponent is None


def test_a_double_offered_back_is_answered_as_a_redouble() -> None:
    """fibsd words an instant redouble as a double (issue 21): the bot knows it by its
    own double still waiting for an answer."""
    player, protocol = bot()
    seen: list[bool] = []
    take = player.brain.take

    def recording(position: object, state: object) -> bool:
        seen.append(state.redouble)  # type: ignore[attr-defined]
        return take(position, state)  # type: ignore[arg-type]

    player.brain.take = recording  # type: ignore[method-assign]
    player(board())
    player(ev.YouDouble("bob"))
    player(ev.Doubles("bob", must_answer=True))  # bob beavers
    player(ev.Doubles("bob", must_answer=True))  # a later, ordinary double
    assert seen == [True, False] and len(protocol.sent) == 2


def test_a_clocked_bot_sets_its_clock_before_it_invites() -> None:
    player, protocol = bot(invite="bob", length=1, match_clock="1s+5s")
    own_info(player)
    player(ev.Information("saved", "alice has no saved games."))
    assert protocol.sent[2:] == ["set clock 1s+5s", "invite bob 1"]


class SlowBrain:
    """A brain that would take its time: counts the decisions it was asked."""

    def __init__(self) -> None:
        self.asked = 0

    def play(self, *args: object) -> None:
        self.asked += 1

    def double(self, *args: object) -> bool:
        self.asked += 1
        return False


def test_warned_that_its_clock_is_short_the_bot_decides_at_once() -> None:
    brain = SlowBrain()
    player, protocol = bot(brain=brain)
    player(ev.NewMatch("bob", 5, you_joined=True))
    player(board())
    player(ev.RollOrDouble())
    assert brain.asked == 1 and protocol.sent == ["roll"]
    event = classify("** Your clock: 10 seconds of reserve left.")
    assert event == ev.ClockWarning("Your clock: 10 seconds of reserve left.", 10)
    player(event)
    player(ev.YourTurnToMove())
    player(board())
    assert brain.asked == 1 and protocol.sent[-1] == "move 8-3 6-3"  # the heuristic's
    player(ev.NewMatch("bob", 5, you_joined=True))  # a new match: no hurry
    player(board())
    player(ev.RollOrDouble())
    assert brain.asked == 2
