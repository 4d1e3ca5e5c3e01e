"""Matches over the wire, in memory: invitations, every game action, saving and resuming,
the end of a rated match.  Dice are scripted.  Every ``board:`` line the server renders
is parsed back and checked against the engine's position, score, cube, dice and turn at
that moment; every line any client receives must match the message catalogue."""

from __future__ import annotations

import random
import re

import pytest

from fibsd.rules.dice import ScriptedDice
from fibsd.rules.game import Phase
from fibsd.rules.notation import format_fibs_moves
from fibsd.server.match import LiveMatch
from fibsd.wire.board import Colour, consistency_problems, parse_board, view_position
from tests.helpers import FakeClient, FakeServer
from tests.server.board_check import check_every_board
from tests.server.test_transcripts import catalogue

NAMES = ("alice", "bob", "carol")
# The catalogue, without the entry that admits any line of a help text.
ENTRIES = [entry for entry in catalogue() if entry[0] != "presence:help-text"]


@pytest.fixture(autouse=True)
def boards_match_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``board:`` line the server renders in these tests, read back with
    ``parse_board``, must show the engine's state at that moment."""
    check_every_board(monkeypatch)


class Table:
    """Three CLIP users (alice, bob, carol), all ready; alice invites, bob joins."""

    def __init__(self, rolls: list[tuple[int, int]], *, coin: int = 1,
                 telnet: tuple[str, ...] = (), server: FakeServer | None = None) -> None:
        self.server = server or FakeServer()
        if server is None:
            for name in NAMES:
                self.server.register(name)
        self.server.lobby.coin = lambda: coin
        self.dice = ScriptedDice(rolls)
        self.server.lobby.dice = self.dice
        self.clients: dict[str, FakeClient] = {}
        self.received: dict[str, list[str]] = {}
        for name in NAMES:
            self.login(name, telnet=name in telnet)

    def login(self, name: str, telnet: bool = False) -> FakeClient:
        client = self.server.connect()
        client.received()
        if telnet:
            client.send(name)
            client.send("secret")
        else:
            client.send(f"login test 1008 {name} secret")
        client.received()  # the login block is other tests' business
        self.clients[name] = client
        self.received[name] = []
        self.lines()
        return client

    def send(self, name: str, line: str) -> None:
        self.clients[name].send(line)

    def lines(self, name: str | None = None) -> dict[str, list[str]] | list[str]:
        """What each client received since the last call (checked: catalogue, boards)."""
        got = {}
        for who, client in self.clients.items():
            lines = client.lines()
            check_lines(lines)
            self.received[who] += lines
            got[who] = lines
        self.check_last_boards(got)
        return got[name] if name is not None else got

    def user(self, name: str):
        return self.server.lobby.find(name)

    @property
    def match(self) -> LiveMatch:
        return self.server.lobby.matches["alice"]

    def check_last_boards(self, got: dict[str, list[str]]) -> None:
        match = self.server.lobby.matches.get("alice")
        if match is None:
            return
        for who, lines in got.items():
            boards = [line for line in lines if line.startswith("board:")]
            if not boards:
                continue
            view = parse_board(boards[-1])
            player = who if who in match.names else self.user(who).watching
            index = match.names.index(player)
            assert view_position(view, Colour(view.colour)) == match.rules.position_for(index)
            assert view.player == ("You" if who in match.names else player)

    def start(self, length: str = "3") -> None:
        self.send("alice", "toggle ready")
        self.send("bob", "toggle ready")
        self.lines()
        self.send("alice", f"invite bob {length}")
        self.send("bob", "join alice")
        self.lines()

    def play_move(self, pick: int = 0) -> None:
        """The player on roll plays legal play number ``pick``, typed as FIBS text."""
        match = self.match
        player = match.rules.turn
        play = match.rules.legal_plays()[pick]
        moves = format_fibs_moves(play.moves, match.colour(player).direction)
        self.send(match.names[player], f"move {moves}")

    def play_until(self, done, pick: int = 0) -> None:
        """Roll and move for whoever is on roll until ``done()`` (at most 500 steps)."""
        for _ in range(500):
            if done():
                return
            match = self.server.lobby.matches.get("alice")
            assert match is not None and match.rules.game is not None
            rules = match.rules
            if rules.phase is Phase.ROLL:
                self.send(match.names[rules.turn], "roll")
            elif rules.phase is Phase.MOVE:
                self.play_move(pick)
            else:
                raise AssertionError(f"stuck in {rules.phase}")
            self.lines()
        raise AssertionError("did not finish")


def check_lines(lines: list[str]) -> None:
    for line in lines:
        line = line.removeprefix("> ")  # a telnet prompt before the next line
        if not line:
            continue
        assert any(pattern.fullmatch(line) for _, pattern, prompt in ENTRIES if not prompt), line
        if line.startswith("board:"):
            assert consistency_problems(parse_board(line)) == [], line


def random_rolls(seed: int, count: int = 3000) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    return [(rng.randint(1, 6), rng.randint(1, 6)) for _ in range(count)]


OPENING_BOB = "board:You:alice:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:5:3:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0"
OPENING_ALICE = "board:You:bob:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:0:0:5:3:1:1:1:0:-1:1:25:0:0:0:0:0:0:0:0:0"


def test_match_start_seen_by_both_players_and_a_reporter() -> None:
    table = Table([(4, 4), (3, 5)])
    table.start()
    got = table.received
    bob_tail = got["bob"][got["bob"].index("** You are now playing a 3 point match with alice"):]
    assert bob_tail[:10] == [
        "** You are now playing a 3 point match with alice",
        "", "Starting a new game with alice.",
        "", "You rolled 4, alice rolled 4",
        "", "You rolled 5, alice rolled 3",
        "", "It's your turn to move.", OPENING_BOB,
    ]
    joined = got["alice"].index("** Player bob has joined you for a 3 point match.")
    alice_tail = got["alice"][joined:]
    assert alice_tail[:11] == [
        "** Player bob has joined you for a 3 point match.",
        "", "Starting a new game with bob.",
        "", "You rolled 4, bob rolled 4",
        "", "You rolled 3, bob rolled 5",
        "", "bob makes the first move.", OPENING_ALICE,
        "5 alice bob - 1 0 1500.00 0 0 1700000000 10.0.0.1 test -",
    ]
    carol = got["carol"]
    report = carol.index("alice and bob start a 3 point match.")
    assert carol[report - 5:report] == [
        "5 alice bob - 1 0 1500.00 0 0 1700000000 10.0.x.x test -", "6",
        "5 bob alice - 1 0 1500.00 0 0 1700000000 10.0.x.x test -", "6", ""]


def test_a_turn_as_the_mover_the_opponent_and_a_watcher() -> None:
    table = Table([(3, 5), (6, 2)])
    table.start("5")
    table.match.add_watcher(table.user("carol"), "alice")
    assert table.lines("carol") == [
        "board:alice:bob:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:0:0:5:3:1:1:1:0:-1:1:25:0:0:0:0:0:0:0:0:0"]
    table.send("bob", "move 8-3 6-3")
    got = table.lines()
    after = "0:-2:0:2:0:0:4:0:2:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0"
    assert got["bob"] == [f"board:You:alice:5:0:0:{after}:-1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0"]
    assert got["alice"] == ["", "bob moves 8-3 6-3 .",
                            f"board:You:bob:5:0:0:{after}:-1:0:0:0:0:1:1:1:0:-1:1:25:0:0:0:0:0:0:0:0:0",
                            "It's your turn to roll or double."]
    assert got["carol"] == ["", "bob moves 8-3 6-3 .",
                            f"board:alice:bob:5:0:0:{after}:-1:0:0:0:0:1:1:1:0:-1:1:25:0:0:0:0:0:0:0:0:0"]
    table.send("alice", "roll")
    got = table.lines()
    assert got["alice"] == [
        "You roll 6 and 2.",
        f"board:You:bob:5:0:0:{after}:-1:6:2:0:0:1:1:1:0:-1:1:25:0:0:0:0:0:2:0:0:0",
        "Please move 2 pieces."]
    assert got["bob"][:3] == ["", "alice rolls 6 and 2.", ""]
    assert got["carol"][:3] == ["", "alice rolls 6 and 2.", ""]
    table.send("alice", "1-7 12 14")  # no command word; a blank between the points
    got = table.lines()
    assert got["bob"][:2] == ["", "alice moves 1-7 12-14 ."]
    assert got["bob"][-1] == "It's your turn to roll or double."


@pytest.mark.parametrize(("line", "reply"), [
    ("move 1-7 12-14", "** It's not your turn to move."),
    ("roll", "** It's not your turn to roll the dice."),
    ("double", "** You cannot double in the first move."),
    ("accept", "** bob didn't double or resign."),
])
def test_errors_of_the_player_not_on_turn(line: str, reply: str) -> None:
    table = Table([(3, 5)])
    table.start()
    table.send("alice", line)
    assert table.lines("alice") == [reply]
    assert table.lines("bob") == []


@pytest.mark.parametrize(("line", "reply"), [
    ("move 8-3", "** You must give 2 moves."),
    ("move 8-3 6-3 6-3", "** Please don't give more than 2 moves."),
    ("move 8-x 6-3", "** first move: legal words are 'bar', 'home', 'off', 'b', 'h' and 'o'."),
    ("move 3-8 6-3", "** You can't move home in your first move."),
    ("move 8-3 6-4", "** You can't move 2 points in your second move."),
    ("move 7-2 8-5", "** You can't move from 7 in your first move."),
    ("move 8-5 6-1", "** You can't move to 1 in your second move."),
    ("move 6-off 8-5", "** You can't move to 1 in your first move."),  # 6-off read as 6-1
    ("roll", "** You did already roll the dice."),
])
def test_move_errors_change_nothing(line: str, reply: str) -> None:
    table = Table([(3, 5)])
    table.start()
    before = table.match.rules.position
    table.send("bob", line)
    assert table.lines("bob") == [reply]
    assert table.match.rules.position == before
    assert table.lines("alice") == []


def test_invitation_refusals() -> None:
    table = Table([(3, 5)])
    send, lines = table.send, table.lines
    send("alice", "invite bob 3")
    assert lines("alice") == ["** Use 'toggle ready' first."]
    send("alice", "toggle ready")
    lines()
    for command, reply in [
        ("invite", "** invite who?"),
        ("invite alice 3", "** You can't invite yourself."),
        ("invite nobody 3", "** There is no one called nobody."),
        ("invite bob 3", "** bob is refusing games."),
    ]:
        send("alice", command)
        assert lines("alice") == [reply]
    send("bob", "toggle ready")
    lines()
    send("alice", "invite bob five")
    assert lines("alice") == [
        "** The second argument to 'invite' has to be a number or the word 'unlimited'"]
    send("alice", "invite bob")
    assert lines("alice") == ["** There's no saved match with bob. Please give a match length."]
    send("alice", "invite bob 11")
    assert lines("alice") == ["** You're not experienced enough to play a match of that length."]
    send("bob", "join")
    assert lines("bob") == ["** Error: Join who?"]
    send("bob", "join alice")
    assert lines("bob") == ["** alice didn't invite you."]
    send("bob", "join zed")
    assert lines("bob") == ["** Error: can't find player zed"]
    send("alice", "invite bob unlimited")
    got = lines()
    assert got["alice"] == ["** You invited bob to an unlimited match."]
    assert got["bob"] == ["alice wants to play an unlimited match with you.",
                          "Type 'join alice' to accept."]
    send("alice", "invite bob unlimited")  # the same terms again: nothing to confirm
    lines()
    send("alice", "invite bob 1")  # other terms: bob's join may have been meant for the old
    lines()
    send("carol", "join alice")
    assert lines("carol") == ["** alice didn't invite you."]
    send("bob", "join alice")
    assert lines("bob") == ["** alice changed the invitation: it is now to a 1 point match. "
                            "Type 'join alice' again to accept.",
                            "alice wants to play a 1 point match with you.",
                            "Type 'join alice' to accept."]
    send("bob", "join alice")
    got = lines()
    assert got["bob"][0] == "** You are now playing a 1 point match with alice"
    send("carol", "toggle ready")
    lines()
    send("carol", "invite bob 3")
    assert lines("carol") == ["** bob is already playing with someone else."]
    send("alice", "invite carol 3")
    assert lines("alice") == ["** You are already playing."]
    send("bob", "join carol")
    assert lines("bob") == ["** You can't play two games at once"]
    send("carol", "leave")
    assert lines("carol") == ["** Error: No one to leave."]
    send("carol", "roll")
    assert lines("carol") == ["** You're not playing."]
    send("carol", "board")
    assert lines("carol") == ["** You're not watching or playing."]


def test_the_board_sent_with_the_winning_move_shows_the_score_before_the_game() -> None:
    """The last board of a game, to both players and a watcher, still shows 0-0; the
    points come with ``wins the game`` (GNU Gibbon adds them to the board's score).
    A board asked for after that counts them, as the next game's boards do."""
    table = Table([(3, 5)] + random_rolls(5))
    table.start("5")
    match = table.match
    match.add_watcher(table.user("carol"), "alice")
    table.lines()
    table.play_until(lambda: match.rules.waiting_for_new_game)
    result = match.rules.game.result
    assert result is not None and sum(match.rules.score) == result.points > 0
    for name in NAMES:
        lines = table.received[name]
        won = max(i for i, line in enumerate(lines) if "win the game" in line
                  or "wins the game" in line)
        last = [line for line in lines[:won] if line.startswith("board:")][-1]
        view = parse_board(last)
        assert (view.player_score, view.opponent_score) == (0, 0), (name, last)
        table.send(name, "board")
        view = parse_board(table.lines(name)[0])
        seen = match.names.index(name if name in match.names else "alice")
        assert (view.player_score, view.opponent_score) == (
            match.rules.score[seen], match.rules.score[1 - seen])


def test_a_join_that_crossed_the_leave_gets_the_reason_only() -> None:
    """Between games alice leaves as bob joins: bob's join, arriving just after the
    leave, is answered by the line that says alice left, not also ``Join who?``.  A
    join later than the race window is an ordinary join with no match."""
    from fibsd.server.commands.play import JOIN_RACE_WINDOW
    table = Table([(3, 5)] + random_rolls(2))
    table.start("5")
    table.send("alice", "resign n")
    table.send("bob", "accept")
    table.lines()
    table.send("alice", "leave")
    table.send("bob", "join")
    got = table.lines()
    assert got["bob"][0] == "** Player alice has left the game. The game was saved."
    assert "** Error: Join who?" not in got["bob"]
    table.server.advance(JOIN_RACE_WINDOW - 0.1)
    table.send("bob", "join alice")  # the opponent's name, as bots type it
    assert table.lines("bob") == []
    table.server.advance(0.2)
    table.send("bob", "join")
    assert table.lines("bob") == ["** Error: Join who?"]
    table.send("alice", "invite bob")  # a join for a new invitation is no crossing
    table.lines()
    table.send("bob", "join alice")
    assert table.lines("bob")[0] == "You are now playing with alice. Your running match was loaded."


def test_double_take_drop_next_game_and_colour_swap() -> None:
    table = Table([(3, 5), (6, 2), (4, 1), (2, 1), (5, 6)] + random_rolls(1))
    table.start("5")
    table.match.add_watcher(table.user("carol"), "alice")
    table.lines()
    table.send("bob", "move 8-3 6-3")
    table.lines()
    table.send("alice", "roll")
    table.lines()
    table.play_move()
    table.lines()
    # bob's turn: double.
    table.send("bob", "double")
    got = table.lines()
    assert got["bob"] == ["You double. Please wait for alice to accept or reject."]
    assert got["alice"] == ["", "bob doubles. Type 'accept' or 'reject'."]
    assert got["carol"] == ["", "bob doubles."]
    table.send("alice", "board")
    view = parse_board(table.lines("alice")[0])
    flags = (view.was_doubled, view.player_may_double, view.opponent_may_double)
    assert flags == (True, False, False)
    assert view.turn == view.colour and view.cube == 1
    table.send("alice", "roll")
    assert table.lines("alice") == ["** It's not your turn to roll the dice."]
    table.send("alice", "accept")
    got = table.lines()
    assert got["alice"][0] == "You accept the double. The cube shows 2."
    assert got["bob"][:3] == ["", "alice accepts the double. The cube shows 2.", ""]
    assert got["bob"][3] == "You roll 4 and 1."  # the doubler rolls at once
    assert got["carol"][:4] == ["", "alice accepts the double.", "", "bob rolls 4 and 1."]
    assert parse_board(got["bob"][4]).cube == 2
    table.play_move()
    table.lines()
    # alice owns the cube; bob is rolled for automatically after alice's move.
    table.send("alice", "double")
    assert table.lines("alice") == ["You double. Please wait for bob to accept or reject."]
    table.send("bob", "reject")
    got = table.lines()
    assert got["bob"][:4] == ["You give up. alice wins 2 points.", "",
                              "score in 5 point match: bob-0 alice-2",
                              "Type 'join' if you want to play the next game, type 'leave' if you don't."]
    assert got["alice"] == ["", "bob gives up. You win 2 points.", "",
                            "score in 5 point match: alice-2 bob-0",
                            "Type 'join' if you want to play the next game, type 'leave' if you don't."]
    assert got["carol"] == ["", "bob gives up. alice wins 2 points.", "",
                            "score in 5 point match: alice-2 bob-0"]
    table.send("bob", "board")
    assert parse_board(table.lines("bob")[0]).turn == 0
    table.send("bob", "roll")
    assert table.lines("bob") == ["** It's not your turn to roll the dice."]
    table.send("bob", "join")
    assert table.lines("bob") == ["** Please wait for alice to join too."]
    game_one_colour = table.match.colour(0)
    table.send("alice", "join")
    got = table.lines()
    assert got["alice"][:2] == ["Starting a new game with bob.", ""]  # the reply: no blank first
    assert got["carol"][:2] == ["", "Starting a new game with bob."]
    assert table.match.colour(0) is game_one_colour.other
    assert table.match.rules.cube == 1


def test_resignations_of_each_kind_and_a_rejection() -> None:
    table = Table([(3, 5)] + random_rolls(2))
    table.start("9")
    table.match.add_watcher(table.user("carol"), "bob")
    table.lines()
    table.send("bob", "resign x")
    assert table.lines("bob") == ["** Type 'n' (normal), 'g' (gammon) or 'b' (backgammon) after resign."]
    table.send("bob", "resign n")
    got = table.lines()
    assert got["bob"] == ["You want to resign. alice will win 1 point."]
    assert got["alice"] == ["", "bob wants to resign. You will win 1 point. Type 'accept' or 'reject'."]
    assert got["carol"] == ["", "bob wants to resign. alice will win 1 point."]
    table.send("bob", "move 8-3 6-3")
    assert table.lines("bob") == ["** Wait until alice accepted or rejected your resign."]
    table.send("bob", "resign g")
    assert table.lines("bob") == ["** You already did that."]
    table.send("alice", "reject")
    got = table.lines()
    assert got == {"alice": ["You reject. The game continues."],
                   "bob": ["", "alice rejects. The game continues."],
                   "carol": ["", "alice rejects. The game continues."]}
    table.send("bob", "resign g")
    table.lines()
    table.send("alice", "accept")
    got = table.lines()
    assert got["alice"][:4] == ["You accept and win 2 points.", "",
                                "score in 9 point match: alice-2 bob-0",
                                "Type 'join' if you want to play the next game, type 'leave' if you don't."]
    assert got["bob"][:2] == ["", "alice accepts and wins 2 points."]
    assert got["carol"] == ["", "alice accepts and wins 2 points.", "",
                            "score in 9 point match: bob-0 alice-2"]
    table.send("alice", "join")
    table.send("bob", "join")
    table.lines()
    loser = table.match.names[table.match.rules.turn]
    winner = "alice" if loser == "bob" else "bob"
    table.send(loser, "resign b")
    got = table.lines()
    assert got[loser] == [f"You want to resign. {winner} will win 3 points."]
    table.send(winner, "accept")
    assert table.lines(winner)[0] == "You accept and win 3 points."


def test_crawford_and_post_crawford_games() -> None:
    table = Table([(3, 5)] + random_rolls(3))
    table.start("3")
    table.send("bob", "resign g")
    table.send("alice", "accept")  # 2-0: alice is one point away
    table.send("alice", "join")
    table.send("bob", "join")
    table.lines()
    match = table.match
    assert match.rules.is_crawford_game
    received = {name: len(table.received[name]) for name in NAMES}
    table.play_until(lambda: match.rules.game.history.__len__() > 12)
    for name in ("alice", "bob"):
        lines = table.received[name][received[name]:]
        assert "It's your turn to roll or double." not in lines  # rolled automatically
        boards = [parse_board(line) for line in lines if line.startswith("board:")]
        assert boards and not any(view.did_crawford for view in boards)
        assert all(view.player_may_double and view.opponent_may_double for view in boards)
    on_roll = match.names[match.rules.turn]
    if match.rules.phase is Phase.MOVE:
        table.send(on_roll, "double")
        assert table.lines(on_roll) == ["** You can only double before you roll the dice."]
    # The trailer wins the Crawford game: 2-1, then a post-Crawford game.
    leader = match.user(0)
    table.send("alice", "resign n")
    table.send("bob", "accept")
    assert match.rules.score == (2, 1)
    table.send("alice", "join")
    table.send("bob", "join")
    table.lines()
    assert not match.rules.is_crawford_game and match.rules.is_post_crawford
    table.play_until(lambda: match.rules.phase is Phase.ROLL and match.rules.turn == 1
                     and len(match.rules.game.history) > 3)
    table.send("bob", "double")
    got = table.lines()
    assert got["bob"] == ["You double. Please wait for alice to accept or reject."]
    table.send("alice", "board")
    assert parse_board(table.lines("alice")[0]).did_crawford
    assert leader is table.user("alice")


def test_match_end_with_rating_changes_and_storage() -> None:
    table = Table([(3, 5)] + random_rolls(4))
    table.start("1")
    table.send("alice", "toggle ratings")
    table.lines()
    table.match.add_watcher(table.user("carol"), "bob")
    table.send("carol", "toggle report")  # a watcher gets the match lines, not the report
    table.lines()
    table.send("bob", "double")
    assert table.lines("bob") == ["** You cannot double in the first move."]
    table.send("alice", "resign g")
    got = table.lines()
    assert got["bob"] == ["", "alice wants to resign. You will win 2 points. Type 'accept' or 'reject'."]
    table.send("bob", "accept")
    got = table.lines()
    assert got["bob"][:1] == ["You accept and win 2 points."]
    assert got["bob"][1:3] == ["", "You win the 1 point match 2-0 ."]
    assert got["alice"][:5] == ["", "bob accepts and wins 2 points.", "",
                                "bob wins the 1 point match 2-0 .", ""]
    assert got["alice"][5:15] == [
        "rating calculation:",
        "rating difference D=0.000000",
        "match length      N=1",
        "Experience: bob 0 - alice 0",
        "Probability that underdog wins: Pu=1/(10^(D*sqrt(N)/2000)+1)=0.500000",
        "P=0.500000 is 1-Pu if underdog wins and Pu if favorite wins",
        "K=max(1 , -Experience/100+5) for bob: 5.000000",
        "change for bob: 4*K*sqrt(N)*P=10.000000",
        "K=max(1 , -Experience/100+5) for alice: 5.000000",
        "change for alice: -4*K*sqrt(N)*P=-10.000000",
    ]
    assert "5 bob - - 1 0 1510.00 1 0 1700000000 10.0.x.x test -" in got["alice"]
    assert "5 alice - - 1 0 1490.00 1 0 1700000000 10.0.x.x test -" in got["bob"]
    assert got["carol"][:4] == ["", "bob accepts and wins 2 points.", "",
                                "bob wins the 1 point match 2-0 ."]
    assert not any("wins a 1 point match" in line for line in got["carol"])
    store = table.server.store
    assert (store.get_user("bob").rating, store.get_user("bob").experience) == (1510.0, 1)
    assert (store.get_user("alice").rating, store.get_user("alice").experience) == (1490.0, 1)
    [finished] = store.finished_matches("bob")
    assert (finished.winner, finished.loser, finished.length) == ("bob", "alice", 1)
    assert (finished.winner_points, finished.loser_points) == (2, 0)
    assert finished.winner_rating_change == pytest.approx(10.0)
    assert "alice" not in table.server.lobby.matches
    assert table.user("alice").playing is None


def test_report_line_for_a_finished_match() -> None:
    table = Table([(3, 5)] + random_rolls(5))
    table.start("1")
    table.send("bob", "resign n")
    table.send("alice", "accept")
    got = table.lines()
    tail = got["carol"]
    index = tail.index("alice wins a 1 point match against bob  1-0 .")
    assert tail[index - 1] == ""
    assert tail[index + 1].startswith("5 alice - - 1 0 1510.00 1 ")


def test_whole_matches_played_to_the_end() -> None:
    for seed in range(3):
        table = Table([(3, 5)] + random_rolls(100 + seed))
        table.start("1")
        for user in ("alice", "bob"):
            table.send(user, "toggle automove")
            table.send(user, "toggle greedy")
        table.lines()
        table.play_until(lambda: "alice" not in table.server.lobby.matches)
        ends = [line for line in table.received["alice"]
                if re.fullmatch(r"(You|bob) wins? the 1 point match [0-9]-0 \.", line)]
        assert len(ends) == 1


def test_leave_saves_and_invite_join_resumes_everything() -> None:
    table = Table([(3, 5), (6, 2), (5, 5)])
    table.start("5")
    table.send("bob", "move 8-3 6-3")
    table.send("alice", "roll")
    table.lines()
    match = table.match
    record, position, dice = match.to_record(), match.rules.position, match.rules.dice
    table.send("alice", "leave")
    got = table.lines()
    assert got["alice"][0] == "** You terminated the game. The game was saved."
    assert got["bob"][0] == "** Player alice has left the game. The game was saved."
    assert "5 alice - - 1 0 1500.00 0 0 1700000000 10.0.x.x test -" in got["bob"]
    assert got["carol"][-1] == "alice has left the game with bob."
    assert table.server.store.load_match("alice", "bob").record == record
    table.send("bob", "invite alice 3")
    got = table.lines()
    assert got["alice"] == ["bob wants to play a 3 point match with you.",
                            "WARNING: Don't accept if you want to continue the saved 5 point match!",
                            "Type 'join bob' to accept."]
    table.send("bob", "invite alice")
    got = table.lines()
    assert got["bob"] == ["** You invited alice to resume a saved match."]
    assert got["alice"] == ["bob wants to resume a saved match with you.", "Type 'join bob' to accept."]
    table.send("alice", "join bob")  # might have been meant for the new 3-point match
    assert table.lines() == {"alice": ["** bob changed the invitation: it is now to resume a "
                                       "saved match. Type 'join bob' again to accept.",
                                       "bob wants to resume a saved match with you.",
                                       "Type 'join bob' to accept."],
                             "bob": [], "carol": []}
    table.send("alice", "join bob")
    got = table.lines()
    assert got["alice"][:5] == ["You are now playing with bob. Your running match was loaded.",
                                "", "turn: alice.", "match length: 5", "points for alice: 0"]
    assert got["alice"][5] == "points for bob: 0"
    assert parse_board(got["alice"][6]).player_dice == (6, 2)
    assert got["alice"][7] == "Please move 2 pieces."
    assert got["bob"][:4] == ["", "alice has joined you. Your running match was loaded.", "",
                              "turn: alice."]
    assert got["carol"][-2:] == ["", "bob and alice are resuming their 5-point match."]
    resumed = table.match
    assert (resumed.rules.position, resumed.rules.dice) == (position, dice)
    table.play_move()
    assert table.lines("alice")[0].startswith("board:You:bob:5:")


def test_a_dropped_connection_saves_with_a_pending_double() -> None:
    table = Table([(3, 5), (6, 2)] + random_rolls(6))
    table.start("5")
    table.match.add_watcher(table.user("carol"), "bob")
    table.send("bob", "move 8-3 6-3")
    table.send("alice", "roll")
    table.play_move()
    table.send("bob", "double")
    table.lines()
    table.clients["bob"].close()
    got = table.lines()
    assert got["alice"][:2] == ["8 bob bob drops connection.", "bob drops connection. The game was saved."]
    assert got["carol"][1:3] == ["", "bob drops connection. The game was saved."]
    assert table.user("alice").playing is None
    table.login("bob")  # still ready: the toggle was saved
    table.send("alice", "invite bob")
    table.send("bob", "join alice")
    got = table.lines()
    assert got["alice"][got["alice"].index("points for bob: 0") + 2] == \
        "bob doubles. Type 'accept' or 'reject'."
    assert table.match.rules.pending_double is not None
    table.send("alice", "accept")
    assert table.lines("alice")[0] == "You accept the double. The cube shows 2."


def test_telnet_players_get_ascii_boards_and_no_empty_lines() -> None:
    table = Table([(3, 5), (6, 2)], telnet=("alice",))
    table.send("alice", "set boardstyle 2")
    table.lines()
    table.start("5")
    alice = table.received["alice"]
    start = alice.index("Starting a new game with bob.")
    assert alice[start:start + 4] == [
        "Starting a new game with bob.", "You rolled 3, bob rolled 5", "bob makes the first move.",
        "   +-1--2--3--4--5--6--------7--8--9-10-11-12-+ O: bob - score: 0"]
    table.send("bob", "move 8-3 6-3")
    data = table.clients["alice"].received()
    assert data.startswith(b"> \r\nbob moves 8-3 6-3 .\r\n   +")
    assert data.endswith(b"It's your turn to roll or double.\r\n> ")


def test_pip_and_unlimited_redoubles() -> None:
    table = Table([(3, 5)] + random_rolls(7))
    table.send("alice", "set redoubles 1")
    table.send("bob", "set redoubles 2")
    table.start("unlimited")
    table.send("alice", "pip")
    assert table.lines("alice") == ["Your pip count is 167. bob's pip count is 167."]
    table.send("bob", "board")
    assert parse_board(table.lines("bob")[0]).redoubles == 1
    table.send("bob", "move 8-3 6-3")
    table.lines()
    table.send("alice", "double")
    table.lines()
    table.send("bob", "redouble")
    got = table.lines()
    # Issue 21: in a double's words, which stock parsers read as the offer it is.
    assert got["bob"] == ["You double. Please wait for alice to accept or reject."]
    assert got["alice"] == ["", "bob doubles. Type 'accept' or 'reject'."]
    table.send("alice", "redouble")
    assert table.lines("alice") == ["** You can't redouble any more in this game."]
    table.send("alice", "accept")
    assert table.lines("alice")[0] == "You accept the double. The cube shows 4."


@pytest.mark.parametrize(("seed", "points"), [(1, 2), (5, 3)])  # a gammon, a backgammon
def test_a_game_borne_off_ends_the_match(seed: int, points: int) -> None:
    table = Table([(3, 5)] + random_rolls(seed))
    table.start("1")
    table.match.add_watcher(table.user("carol"), "alice")
    table.lines()
    table.play_until(lambda: "alice" not in table.server.lobby.matches, pick=-1)
    bob, alice, carol = (table.received[name] for name in ("bob", "alice", "carol"))
    assert bob[-7:-4] == [f"You win the game and get {points} points. Congratulations!", "",
                          f"You win the 1 point match {points}-0 ."]
    assert parse_board(bob[-8]).player_home == 15
    assert alice[-10] == "" and alice[-9].startswith("bob moves ")
    assert alice[-7:-4] == [f"bob wins the game and gets {points} points. Sorry.", "",
                            f"bob wins the 1 point match {points}-0 ."]
    assert carol[-7:-4] == [f"bob wins the game and gets {points} points.", "",
                            f"bob wins the 1 point match {points}-0 ."]
    view = parse_board(alice[-8])
    assert (view.turn, view.player_home, view.opponent_home) == (0, 0, 15)
    assert "5 alice - - 1 0 1490.00 1 0 1700000000 10.0.x.x test -" in bob[-4:]


def test_automove_greedy_and_autoboard_off() -> None:
    table = Table([(3, 5)] + random_rolls(100))
    table.start("1")
    for name in ("alice", "bob"):
        table.send(name, "toggle automove")
        table.send(name, "toggle greedy")
    table.send("bob", "toggle autoboard")
    table.lines()
    table.play_move()
    assert table.lines("bob")[0] == "Done."
    table.play_until(lambda: "alice" not in table.server.lobby.matches)
    seen = table.received["alice"] + table.received["bob"]
    assert any(line.startswith("The only possible move is ") for line in seen)
    assert any(line.startswith("Bearing off: ") for line in seen)


def test_double_toggle_off_rolls_automatically() -> None:
    table = Table([(3, 5), (6, 2)])
    table.start("5")
    table.send("alice", "toggle double")
    table.lines()
    table.send("bob", "move 8-3 6-3")
    got = table.lines()
    assert got["alice"][:4] == ["", "bob moves 8-3 6-3 .", got["alice"][2], ""]
    assert got["alice"][4] == "You roll 6 and 2."
    assert got["alice"][-1] == "Please move 2 pieces."
    assert got["bob"][1:3] == ["", "alice rolls 6 and 2."]


def test_a_match_saved_between_games_resumes_with_the_next_game() -> None:
    table = Table([(3, 5), (2, 6)])
    table.start("5")
    table.send("bob", "resign n")
    table.send("alice", "accept")
    table.send("alice", "join")
    table.send("bob", "leave")
    table.lines()
    table.send("alice", "invite bob")
    table.lines()
    table.send("bob", "join alice")
    got = table.lines()
    bob = got["bob"]
    assert bob[:7] == ["You are now playing with alice. Your running match was loaded.", "",
                       "turn: bob.", "match length: 5", "points for bob: 0",
                       "points for alice: 1", bob[6]]
    assert parse_board(bob[6]).turn == 0
    assert bob[7:11] == ["", "Starting a new game with alice.", "", "You rolled 6, alice rolled 2"]
    assert table.match.rules.number == 2 and table.match.rules.score == (1, 0)
    assert table.match.colour(0) is Colour.O  # bob was O in game one, alice is O now


def test_errors_of_the_x_player_name_absolute_points() -> None:
    table = Table([(3, 5), (6, 2)])
    table.start("5")
    table.send("bob", "move 8-3 6-3")
    table.send("alice", "move 1-7 12-14")
    table.lines()
    assert table.received["alice"][-1] == "** You have to roll the dice before moving."
    table.send("alice", "roll")
    table.lines()
    for line, reply in [("move 1-7 1-3", "** You can't move to 3 in your second move."),
                        ("move 2-8 1-3", "** You can't move from 2 in your first move."),
                        ("m 7-1 1-3", "** You can't move home in your first move.")]:
        table.send("alice", line)
        assert table.lines("alice") == [reply]


def test_autodouble_on_opening_ties_in_unlimited_matches() -> None:
    table = Table([(4, 4), (3, 5)])
    for name in ("alice", "bob"):
        table.send(name, "toggle autodouble")
    table.start("unlimited")
    bob = table.received["bob"]
    tie = bob.index("You rolled 4, alice rolled 4")
    assert bob[tie + 1:tie + 4] == ["", "The number on the doubling cube is now 2", ""]
    assert table.match.rules.cube == 2
    table.send("bob", "redouble")
    assert table.lines("bob") == ["** alice didn't double."]


def test_redouble_in_a_match_with_a_length() -> None:
    table = Table([(3, 5)])
    table.start("3")
    table.send("alice", "redouble")
    assert table.lines("alice") == ["** Redoubles are only allowed in unlimited matches."]


def test_an_idle_timeout_saves_the_match() -> None:
    table = Table([(3, 5)])
    table.start("3")
    table.send("alice", "board")  # alice is active; bob, on turn, falls silent
    table.server.advance(3599)
    table.send("alice", "board")
    table.send("carol", "board")
    table.lines()
    table.server.advance(2)
    got = table.lines()
    assert got["bob"] == ["Connection timed out."]
    assert got["alice"] == ["8 bob Connection with bob timed out.",
                            "Connection with bob timed out. The game was saved.",
                            "5 alice - - 1 0 1500.00 0 2 1700000000 10.0.0.1 test -", "6"]
    assert table.server.store.load_match("alice", "bob") is not None


def test_hits_and_entering_from_the_bar_with_both_spellings() -> None:
    table = Table([(1, 6), (4, 2), (3, 1), (1, 2)])
    table.start("5")
    table.send("bob", "move 13-7 8-7")
    table.send("alice", "roll")
    table.send("alice", "move 1-5 1-3")
    table.send("bob", "roll")
    table.lines()
    table.send("bob", "move 6-3 6-5")
    got = table.lines()
    assert got["alice"][:2] == ["", "bob moves 6-3 6-5 ."]
    assert got["alice"][3] == "It's your turn to roll or double."
    view = parse_board(got["alice"][2])
    assert (view.player_bar, view.board[0]) == (2, -2)
    table.send("alice", "roll")
    assert table.lines("alice")[0] == "You roll 1 and 2."
    table.send("alice", "roll")
    assert table.lines("alice") == ["** You did already roll the dice."]
    table.send("alice", "move 12-14 bar-1")
    assert table.lines("alice") == [
        "** You have to remove pieces from the bar in your first move."]
    table.send("alice", "m bar-1 b-2")
    got = table.lines()
    assert got["bob"][:2] == ["", "alice moves bar-1 bar-2 ."]
    assert parse_board(got["alice"][0]).player_bar == 0


def test_the_list_of_moves_after_a_game() -> None:
    table = Table([(3, 5), (6, 2), (5, 5)])
    table.start("5")
    table.send("alice", "toggle moves")
    table.send("bob", "move 8-3 6-3")
    table.send("alice", "roll")
    table.send("alice", "move 1-7 12-14")
    table.send("bob", "double")
    table.send("alice", "accept")  # bob rolls 5-5 at once
    table.play_move()
    table.send("alice", "resign g")
    table.lines()
    table.send("bob", "accept")
    got = table.lines()
    listing = got["alice"][got["alice"].index("Score is 0-0 in a 5 point match."):]
    assert listing[:9] == [
        "Score is 0-0 in a 5 point match.",
        "alice is X - bob is O.",
        "O: (5 3) 8-3 6-3",
        "X: (6 2) 1-7 12-14",
        "O: doubles",
        "X: accepts",
        listing[6],
        "X: wants to resign",  # the answer has no line: gnubg would read a take
        "O: wins 4 points",
    ]
    assert listing[6].startswith("O: (5 5) ")
    assert listing[9:] == ["", "score in 5 point match: alice-0 bob-4",
                            "Type 'join' if you want to play the next game, type 'leave' if you don't."]
    assert not any(line.startswith("Score is") for line in got["bob"])


def test_mutual_closeout_stops_rolling_automatically() -> None:
    from fibsd.rules.errors import CubeUnavailable
    from fibsd.rules.game import Game
    from fibsd.rules.position import Position
    from fibsd.server.match import MAX_AUTOMATIC_ROLLS

    table = Table([(3, 5)] + [(6, 5)] * (MAX_AUTOMATIC_ROLLS + 1))
    table.start("1")
    side = (2,) * 6 + (0,) * 6 + (2,) + (0,) * 11 + (1,)
    closed = Game.at_position(Position(side, side), 0, no_cube=CubeUnavailable.CUBE_DEAD)
    table.match.rules._games[-1] = closed  # a position no scripted game reaches quickly
    table.send("alice", "roll")
    got = table.lines()
    assert got["alice"].count("You can't move.") == MAX_AUTOMATIC_ROLLS // 2 + 1
    assert got["bob"][-1] == "It's your turn to roll or double."


@pytest.mark.parametrize("record", ["{", "[]", '{"format": "fibsd-live-match"}'])
def test_a_corrupt_saved_match_cannot_be_resumed(record: str) -> None:
    from fibsd.store import SavedMatch

    table = Table([])
    table.server.store.save_match(SavedMatch("alice", "bob", 1, record))
    for name in ("alice", "bob"):
        table.send(name, "toggle ready")
    table.send("alice", "invite bob")
    table.lines()
    table.send("bob", "join alice")
    assert table.lines("bob") == ["** ERROR: Saved match is corrupt. Please start another one."]
    assert table.user("bob").playing is None
