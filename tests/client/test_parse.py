"""Every example line of the protocol reference, classified into its exact event."""

from __future__ import annotations

import pytest

from fibsd.client import events as ev
from fibsd.client.parse import LineReader, Phase, classify

YOU = ev.YOU

CLIP_EXAMPLES = [
    # login-and-clip.md 5.1 - 5.13
    ("1 myself 1041253132 192.168.1.308", ev.Welcome("myself", 1041253132, "192.168.1.308")),
    ("1 jonathanballs 1593791615 host109-151-213-145.range109-151.btcentralplus.com",
     ev.Welcome("jonathanballs", 1593791615, "host109-151-213-145.range109-151.btcentralplus.com")),
    ("2 myself 1 1 0 0 0 0 1 1 2396 0 1 0 1 3457.85 0 0 0 0 0 Australia/Melbourne",
     ev.OwnInfo(name="myself", allowpip=True, autoboard=True, autodouble=False, automove=False, away=False,
                bell=False, crawford=True, double=True, experience=2396, greedy=False, moreboards=True,
                moves=False, notify=True, rating=3457.85, ratings=False, ready=False, redoubles=0,
                report=False, silent=False, timezone="Australia/Melbourne")),
    ("2 jonathanballs 1 1 0 0 0 0 1 1 0 0 1 0 1 1500.00 0 0 0 1 0 UTC",
     ev.OwnInfo(name="jonathanballs", allowpip=True, autoboard=True, autodouble=False, automove=False,
                away=False, bell=False, crawford=True, double=True, experience=0, greedy=False,
                moreboards=True, moves=False, notify=True, rating=1500.0, ratings=False, ready=False,
                redoubles=0, report=True, silent=False, timezone="UTC")),
    ("2 bob 1 1 0 0 0 0 1 1 7 0 1 0 1 1500.00 0 1 unlimited 1 0 Europe/Sofia",
     ev.OwnInfo(name="bob", allowpip=True, autoboard=True, autodouble=False, automove=False, away=False,
                bell=False, crawford=True, double=True, experience=7, greedy=False, moreboards=True,
                moves=False, notify=True, rating=1500.0, ratings=False, ready=True, redoubles=None,
                report=True, silent=False, timezone="Europe/Sofia")),
    ("3", ev.MotdStart()),
    ("4", ev.MotdEnd()),
    ("5 mgnu_advanced someplayer - 1 0 1912.15 827 8 1040515752 192.168.143.5 3DFiBs -",
     ev.WhoInfo("mgnu_advanced", "someplayer", None, True, False, 1912.15, 827, 8, 1040515752,
                "192.168.143.5", "3DFiBs", None)),
    ("5 someplayer mgnu_advanced - 0 0 1418.61 23 1914 1041253132 192.168.40.3 MacFIBS someplayer@somewhere.com",
     ev.WhoInfo("someplayer", "mgnu_advanced", None, False, False, 1418.61, 23, 1914, 1041253132,
                "192.168.40.3", "MacFIBS", "someplayer@somewhere.com")),
    ("5 jonathanballs - GammonBot_VII 0 0 1500.00 0 11 1593791615 "
     "host109-151-213-145.range109-151.btcentralplus.com ?NT________________! jonathanballs@example.com",
     ev.WhoInfo("jonathanballs", None, "GammonBot_VII", False, False, 1500.0, 0, 11, 1593791615,
                "host109-151-213-145.range109-151.btcentralplus.com", "?NT________________!",
                "jonathanballs@example.com")),
    ("5 bonehead Noah_temporarily - 1 0 2093.33 316317 139 1591321090 grid9.quadspeedi.net - "
     "ComputerPlayer___bonehead@example.com",
     ev.WhoInfo("bonehead", "Noah_temporarily", None, True, False, 2093.33, 316317, 139, 1591321090,
                "grid9.quadspeedi.net", None, "ComputerPlayer___bonehead@example.com")),
    ("6", ev.WhoEnd()),
    ("7 HALIS HALIS logs in.", ev.LoginNotice("HALIS", "HALIS logs in.")),
    ("7 caspar_sixteen caspar_sixteen logs in again.",
     ev.LoginNotice("caspar_sixteen", "caspar_sixteen logs in again.")),
    ("8 Barger Connection with Barger timed out.", ev.LogoutNotice("Barger", "Connection with Barger timed out.")),
    ("8 caspar_sixteen Closed old connection with user caspar_sixteen.",
     ev.LogoutNotice("caspar_sixteen", "Closed old connection with user caspar_sixteen.")),
    ("9 someplayer 1041253132 I'll log in at 10pm if you want to finish that game.",
     ev.Message("someplayer", 1041253132, "I'll log in at 10pm if you want to finish that game.")),
    ("10 someplayer", ev.MessageDelivered("someplayer")),
    ("11 someplayer", ev.MessageSaved("someplayer")),
    ("12 someplayer Do you want to play a game?", ev.Says("someplayer", "Do you want to play a game?")),
    ("13 TourneyBot *** F3 - Fri 3/5 Tournament will start at 16:30UTC (in 17 minutes) ...",
     ev.Shouts("TourneyBot", "*** F3 - Fri 3/5 Tournament will start at 16:30UTC (in 17 minutes) ...")),
    ("14 someplayer I think he is using loaded dice :-)",
     ev.Whispers("someplayer", "I think he is using loaded dice :-)")),
    ("15 GammonBot_VII Hi, I am a computer program. Enjoy your match. ...",
     ev.Kibitzes("GammonBot_VII", "Hi, I am a computer program. Enjoy your match. ...")),
    ("16 someplayer What's this \"G'Day\" stuff you hick? :-)",
     ev.YouSay("someplayer", "What's this \"G'Day\" stuff you hick? :-)")),
    ("17 Watch out for someplayer.  He's a Tasmanian.", ev.YouShout("Watch out for someplayer.  He's a Tasmanian.")),
    ("18 Hello and hope you enjoy watching this game.", ev.YouWhisper("Hello and hope you enjoy watching this game.")),
    ("19 Are you sure those dice aren't loaded?", ev.YouKibitz("Are you sure those dice aren't loaded?")),
    ("20 admin The server restarts in 5 minutes.", ev.Alert("admin", "The server restarts in 5 minutes.")),
]

LOGIN_AND_SOCIAL_EXAMPLES = [
    ("login: ", ev.Prompt("login: ")),
    ("> ", ev.Prompt("> ")),
    ("** User someuser authenticated.", ev.UserAuthenticated("someuser")),
    ("** Last login: Fri Jul  3 16:04:27 2020 from 10.0.0.1", ev.LastLogin("Fri Jul  3 16:04:27 2020 from 10.0.0.1")),
    ("** Warning: You are already logged in.", ev.AlreadyLoggedIn()),
    ("Welcome to FIBS. You just logged in as guest.", ev.GuestWelcome("FIBS")),
    ("ONE USERNAME PER PERSON ONLY!!!", ev.OneUsername()),
    ("Your name will be alice", ev.NameAccepted("alice")),
    ("** Please use another name. 'guest' is already used by someone else.", ev.NameTaken("guest")),
    ("** Your name may only contain letters and the underscore character _ .",
     ev.Error("Your name may only contain letters and the underscore character _ .")),
    ("Minimal password length is 4 characters.", ev.PasswordRefused("Minimal password length is 4 characters.")),
    ("Your password may not contain ':'", ev.PasswordRefused("Your password may not contain ':'")),
    ("You are registered.", ev.Registered()),
    ("Type 'help beginner' to get started.", ev.Information("registration", "Type 'help beginner' to get started.")),
    ("There are messages for you:", ev.MessagesForYou()),
    ("** Unknown command: 'fizzbuzz'", ev.UnknownCommand("fizzbuzz")),
    ("** Unknown command: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'", ev.UnknownCommand("ABCDEFGHIJKLMNOPQRSTUVWXYZ")),
    ("Connection timed out.", ev.ConnectionTimedOut()),
    ("                             Goodbye.", ev.Goodbye()),
    ("** There is no one called playerOne.", ev.Error("There is no one called playerOne.")),
    ("You say to yourself: hello", ev.YouSayToYourself("hello")),
    ("bob is away: lunch", ev.IsAway("bob", "lunch")),
    ("** 1 user heard you.", ev.UsersHeard(1)),
    ("** 42 users heard you.", ev.UsersHeard(42)),
    ("bob is waiting for you to log in.", ev.WaitingForYou("bob")),
    ("You're away. Please type 'back'", ev.YouAreAway()),
    ("Welcome back.", ev.WelcomeBack()),
    ("You wave goodbye.", ev.Waves(YOU, False)),
    ("You wave goodbye again and log out.", ev.Waves(YOU, True)),
    ("bob waves goodbye.", ev.Waves("bob", False)),
    ("bob waves goodbye again.", ev.Waves("bob", True)),
    ("** You're now ready to invite or join someone.", ev.ToggleChanged("ready", True)),
    ("** You're now refusing to play with someone.", ev.ToggleChanged("ready", False)),
    ("** You allow the use the server's 'pip' command.", ev.ToggleChanged("allowpip", True)),
    ("** You won't hear what other players shout.", ev.ToggleChanged("silent", True)),
    ("** You use a client program and will receive extra 'newlines'.", ev.ToggleChanged("telnet", False)),
    ("Value of 'boardstyle' set to 3.", ev.VariableValue("boardstyle", "3", True)),
    ("Value of 'redoubles' set to 'none'.", ev.VariableValue("redoubles", "none", True)),
    ("Value of 'redoubles' set to 42.", ev.VariableValue("redoubles", "42", True)),
    ("Value of 'timezone' set to America/Los_Angeles.", ev.VariableValue("timezone", "America/Los_Angeles", True)),
    ("Value of 'sortwho' is login", ev.VariableValue("sortwho", "login", False)),
    ("No  S  username        rating  exp login    idle  from",
     ev.Information("who", "No  S  username        rating  exp login    idle  from")),
    ("23 P   BlunderBot_XI  1515.82 10025 16:49  0:04 47.199.51.61",
     ev.Information("who", "23 P   BlunderBot_XI  1515.82 10025 16:49  0:04 47.199.51.61")),
    ("Information about bob:", ev.Information("whois", "Information about bob:")),
    ("  Rating: 1693.11 Experience: 5781", ev.Information("whois", "  Rating: 1693.11 Experience: 5781")),
    ("  No email address.", ev.Information("whois", "  No email address.")),
    ("*  57 someplayer      1612.40         834", ev.Information("ratings", "*  57 someplayer      1612.40         834")),
    ("    1 GammonBot_XI    2160.34     1034159", ev.Information("ratings", "    1 GammonBot_XI    2160.34     1034159")),
]

GAME_EXAMPLES = [
    # game-play.md 2 - 7 and 12
    ("Starting a new game with pipcat.", ev.StartingNewGame("pipcat")),
    ("You rolled 5, bob rolled 3", ev.OpeningRoll(YOU, 5, "bob", 3)),
    ("GammonBot_VII rolled 1, pipcat rolled 5", ev.OpeningRoll("GammonBot_VII", 1, "pipcat", 5)),
    ("GammonBot_VII rolled 6, pipcat rolled 6", ev.OpeningRoll("GammonBot_VII", 6, "pipcat", 6)),
    ("It's your turn to move.", ev.YourTurnToMove()),
    ("pipcat makes the first move.", ev.MakesFirstMove("pipcat")),
    ("It's your turn to roll or double.", ev.RollOrDouble()),
    ("It's your turn. Please roll or double", ev.RollOrDouble()),
    ("You roll 6 and 4.", ev.Rolls(YOU, 6, 4)),
    ("GammonBot_VII rolls 6 and 4.", ev.Rolls("GammonBot_VII", 6, 4)),
    ("Please move 2 pieces.", ev.PleaseMove(2)),
    ("Please move 1 piece.", ev.PleaseMove(1)),
    ("You can't move.", ev.CantMove(YOU)),
    ("GammonBot_VII can't move.", ev.CantMove("GammonBot_VII")),
    ("The only possible move is bar-22 13-10 .", ev.OnlyPossibleMove((("bar", "22"), ("13", "10")))),
    ("The only possible move is 8-2 6-2 .", ev.OnlyPossibleMove((("8", "2"), ("6", "2")))),
    ("Bearing off: 6 o 4 o", ev.BearingOff((6, 4))),
    ("pipcat moves 24-23 23-18 .", ev.Moves("pipcat", (("24", "23"), ("23", "18")))),
    ("pipcat moves bar-22 8-5 8-5 6-3 .",
     ev.Moves("pipcat", (("bar", "22"), ("8", "5"), ("8", "5"), ("6", "3")))),
    ("GammonBot_VII moves 16-20 24-off .", ev.Moves("GammonBot_VII", (("16", "20"), ("24", "off")))),
    ("GammonBot_VII moves bar-2 .", ev.Moves("GammonBot_VII", (("bar", "2"),))),
    ("Done.", ev.Done()),
    ("You double. Please wait for bob to accept or reject.", ev.YouDouble("bob")),
    ("alice doubles. Type 'accept' or 'reject'.", ev.Doubles("alice", True)),
    ("pipcat doubles.", ev.Doubles("pipcat", False)),
    ("You accept the double. The cube shows 2.", ev.AcceptsDouble(YOU, 2)),
    ("bob accepts the double. The cube shows 2.", ev.AcceptsDouble("bob", 2)),
    ("GammonBot_VII accepts the double.", ev.AcceptsDouble("GammonBot_VII", None)),
    ("You give up. alice wins 1 point.", ev.GivesUp(YOU, "alice", 1)),
    ("bob gives up. You win 2 points.", ev.GivesUp("bob", YOU, 2)),
    ("bob gives up. alice wins 1 point.", ev.GivesUp("bob", "alice", 1)),
    ("The number on the doubling cube is now 2", ev.DoublingCubeNow(2)),
    ("You want to resign. bob will win 2 points.", ev.ResignOffer(YOU, "bob", 2, False)),
    ("alice wants to resign. You will win 2 points. Type 'accept' or 'reject'.",
     ev.ResignOffer("alice", YOU, 2, True)),
    ("pipcat wants to resign. GammonBot_VII will win 4 points.", ev.ResignOffer("pipcat", "GammonBot_VII", 4, False)),
    ("pipcat wants to resign. GammonBot_VII will win 1 point.", ev.ResignOffer("pipcat", "GammonBot_VII", 1, False)),
    ("You accept and win 2 points.", ev.AcceptsResignation(YOU, 2)),
    ("GammonBot_VII accepts and wins 4 points.", ev.AcceptsResignation("GammonBot_VII", 4)),
    ("GammonBot_VII accepts and wins 1 point.", ev.AcceptsResignation("GammonBot_VII", 1)),
    ("You reject. The game continues.", ev.RejectsResignation(YOU)),
    ("bob rejects. The game continues.", ev.RejectsResignation("bob")),
    ("You win the game and get 1 point. Congratulations!", ev.GameWon(YOU, 1)),
    ("alice wins the game and gets 2 points. Sorry.", ev.GameWon("alice", 2)),
    ("alice wins the game and gets 2 points.", ev.GameWon("alice", 2)),
    ("score in 5 point match: alice-1 bob-0", ev.Score(5, "alice", 1, "bob", 0)),
    ("score in 5 point match: GammonBot_VII-4 pipcat-0", ev.Score(5, "GammonBot_VII", 4, "pipcat", 0)),
    ("score in unlimited match: alice-3 bob-2", ev.Score(None, "alice", 3, "bob", 2)),
    ("Type 'join' if you want to play the next game, type 'leave' if you don't.", ev.JoinNextGame()),
    ("** Please wait for bob to join too.", ev.WaitForJoin("bob")),
    ("You win the 5 point match 5-3 .", ev.MatchWon(YOU, 5, 5, 3)),
    ("GammonBot_VII wins the 5 point match 5-0 .", ev.MatchWon("GammonBot_VII", 5, 5, 0)),
    ("turn: alice.", ev.ResumeTurn("alice")),
    ("match length: 5", ev.ResumeMatchLength(5)),
    ("match length: unlimited", ev.ResumeMatchLength(None)),
    ("points for alice: 2", ev.ResumePoints("alice", 2)),
    ("points for user alice: 2", ev.ResumePoints("alice", 2)),
    ("Score is 0-0 in a 5 point match.", ev.MovesListScore(0, 0, 5)),
    ("bob is X - alice is O.", ev.MovesListPlayers("bob", "alice")),
    ("O: (5 3) 8-3 6-3", ev.MovesListEntry("O", "(5 3) 8-3 6-3")),
    ("X: (4 2) can't move", ev.MovesListEntry("X", "(4 2) can't move")),
    ("O: wants to resign", ev.MovesListEntry("O", "wants to resign")),
    ("** It's not your turn to move.", ev.Error("It's not your turn to move.")),
    ("** You must give 2 moves.", ev.Error("You must give 2 moves.")),
    ("** You can't move to 14 in your second move.", ev.Error("You can't move to 14 in your second move.")),
    ("** You're not watching or playing.", ev.Error("You're not watching or playing.")),
    ("** GammonBot_VII is not playing.", ev.Error("GammonBot_VII is not playing.")),
    ("rating calculation:", ev.RatingCalculation("rating calculation:")),
    ("match length      N=5", ev.RatingCalculation("match length      N=5")),
    ("change for pipcat: -4*K*sqrt(N)*P=-2.824664", ev.RatingCalculation("change for pipcat: -4*K*sqrt(N)*P=-2.824664")),
    ("P=0.315807 is 1-Pu if underdog wins and Pu if favorite wins",
     ev.RatingCalculation("P=0.315807 is 1-Pu if underdog wins and Pu if favorite wins")),
]

BETWEEN_GAMES_EXAMPLES = [
    ("** You invited BlunderBot_XII to a 1 point match.", ev.YouInvited("BlunderBot_XII", 1)),
    ("** You invited bob to an unlimited match.", ev.YouInvited("bob", None)),
    ("** You invited bob to resume a saved match.", ev.YouInvitedResume("bob")),
    ("alice wants to play a 5 point match with you.", ev.Invitation("alice", 5)),
    ("alice wants to play an unlimited match with you.", ev.Invitation("alice", None)),
    ("BlunderBot_XII wants to resume a saved match with you.", ev.ResumeInvitation("BlunderBot_XII")),
    ("Type 'join BlunderBot_XII' to accept.", ev.TypeJoin("BlunderBot_XII")),
    ("WARNING: Don't accept if you want to continue the saved 5 point match!",
     ev.SavedMatchWarning("WARNING: Don't accept if you want to continue the saved 5 point match!")),
    ("** You are now playing a 5 point match with alice", ev.NewMatch("alice", 5, True)),
    ("** You are now playing an unlimited match with alice", ev.NewMatch("alice", None, True)),
    ("** Player bob has joined you for a 5 point match.", ev.NewMatch("bob", 5, False)),
    ("Player bob has joined you for an unlimited match.", ev.NewMatch("bob", None, False)),
    ("You are now playing with BlunderBot_XII. Your running match was loaded.",
     ev.MatchResumed("BlunderBot_XII", True)),
    ("bob has joined you. Your running match was loaded.", ev.MatchResumed("bob", False)),
    ("GammonBot_VII and pipcat start a 5 point match.", ev.MatchStartReport("GammonBot_VII", "pipcat", 5)),
    ("alice and bob start an unlimited match.", ev.MatchStartReport("alice", "bob", None)),
    ("GammonBot_XX and HALIS are resuming their 13-point match.", ev.MatchResumeReport("GammonBot_XX", "HALIS", 13)),
    ("alice and bob are resuming their unlimited match.", ev.MatchResumeReport("alice", "bob", None)),
    ("BlunderBot_III wins a 1 point match against nena  1-0 .", ev.MatchResult("BlunderBot_III", "nena", 1, 1, 0)),
    ("BlunderBot_XII wins a 1 point match against nena  2-0 .", ev.MatchResult("BlunderBot_XII", "nena", 1, 2, 0)),
    ("** You terminated the game. The game was saved.", ev.YouTerminated()),
    ("** Player alice has left the game. The game was saved.", ev.OpponentLeft("alice")),
    ("GammonBot_XX has left the game with HALIS.", ev.LeftGameReport("GammonBot_XX", "HALIS")),
    ("alice drops connection. The game was saved.", ev.GameSaved("alice", "alice drops connection. The game was saved.")),
    ("alice logs out. The game was saved.", ev.GameSaved("alice", "alice logs out. The game was saved.")),
    ("Connection with alice timed out. The game was saved.",
     ev.GameSaved("alice", "Connection with alice timed out. The game was saved.")),
    ("Network error with alice. The game was saved.",
     ev.GameSaved("alice", "Network error with alice. The game was saved.")),
    ("You're now watching GammonBot_VII.", ev.YouWatch("GammonBot_VII")),
    ("GammonBot_VII is not doing anything interesting.", ev.NothingInteresting("GammonBot_VII")),
    ("You stop watching bob.", ev.YouStopWatching("bob")),
    ("** You stop watching bob.", ev.YouStopWatching("bob")),
    ("bob logs out. You're not watching anymore.", ev.WatchedLoggedOut("bob")),
    ("carol is watching you.", ev.StartsWatching("carol", YOU)),
    ("carol starts watching alice.", ev.StartsWatching("carol", "alice")),
    ("carol stops watching you.", ev.StopsWatching("carol", YOU)),
    ("carol stops watching alice.", ev.StopsWatching("carol", "alice")),
    ("List of games:", ev.Information("games", "List of games:")),
    ("alice           -             bob (5 point match 2-1)",
     ev.Information("games", "alice           -             bob (5 point match 2-1)")),
    ("no saved games.", ev.Information("saved", "no saved games.")),
    ("  GammonBot_VII           5                0 -  0", ev.Information("saved", "  GammonBot_VII           5                0 -  0")),
    (" *BlunderBot_VI           3                1 -  0", ev.Information("saved", " *BlunderBot_VI           3                1 -  0")),
    ("**bonehead                3                1 -  2", ev.Information("saved", "**bonehead                3                1 -  2")),
    ("bob has 1 saved game.", ev.Information("saved", "bob has 1 saved game.")),
    ("** Error: No one to leave.", ev.Error("Error: No one to leave.")),
]

TELNET_AND_UNLIMITED_EXAMPLES = [
    ("someplayer logs in.", ev.LoginNotice("someplayer", "someplayer logs in.")),
    ("someplayer just registered and logs in.", ev.LoginNotice("someplayer", "someplayer just registered and logs in.")),
    ("someplayer drops connection.", ev.LogoutNotice("someplayer", "someplayer drops connection.")),
    ("Connection with Barger timed out.", ev.LogoutNotice("Barger", "Connection with Barger timed out.")),
    ("Message from someplayer: see you", ev.Message("someplayer", None, "see you")),
    ("Message delivered to someplayer.", ev.MessageDelivered("someplayer")),
    ("Message saved for someplayer.", ev.MessageSaved("someplayer")),
    ("someplayer tells: hi", ev.Says("someplayer", "hi")),
    ("someplayer says: gl", ev.Says("someplayer", "gl")),
    ("dorbel shouts: hello all", ev.Shouts("dorbel", "hello all")),
    ("someplayer whispers: psst", ev.Whispers("someplayer", "psst")),
    ("someplayer kibitzes: nice", ev.Kibitzes("someplayer", "nice")),
    ("** You tell someplayer: hi", ev.YouSay("someplayer", "hi")),
    ("** You say to someplayer: gl", ev.YouSay("someplayer", "gl")),
    ("** You shout: hello all", ev.YouShout("hello all")),
    ("** You whisper: psst", ev.YouWhisper("psst")),
    ("** You kibitz: nice", ev.YouKibitz("nice")),
    ("Your pip count is 142. bob's pip count is 127.", ev.PipCounts(YOU, 142, "bob", 127)),
    ("alice's pip count is 142. bob's pip count is 127.", ev.PipCounts("alice", 142, "bob", 127)),
]

ALL_EXAMPLES = TELNET_AND_UNLIMITED_EXAMPLES + CLIP_EXAMPLES + LOGIN_AND_SOCIAL_EXAMPLES + GAME_EXAMPLES + BETWEEN_GAMES_EXAMPLES


@pytest.mark.parametrize(("line", "expected"), ALL_EXAMPLES, ids=[line[:50] for line, _ in ALL_EXAMPLES])
def test_reference_example(line: str, expected: ev.Event) -> None:
    assert classify(line) == expected


@pytest.mark.parametrize("line", [
    " 12 someplayer hello",  # CLIP line with a leading blank: FCM rule 1
    " ** Unknown command: 'x'",
    "10 someplayer trailing",  # FCM anchors 10 with $
    "3 ",
    "5 a-b - - 1 0 1500.00 0 0 1 host client -",  # a digit or hyphen in a name
    "5 alice bob carol 1 0 1500.00 0 0 1 host client -",  # opponent and watching both set
    "board:You:alice:5:0:0",
    "board:You:alice:5:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:1:5:3:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0 ",
    "pipcat moves 24-23 23-18.",  # the blank before the final period is part of the format
])
def test_malformed_lines_are_unknown(line: str) -> None:
    assert classify(line) == ev.Unknown(line)


def test_reader_phases_banner_motd_run_farewell() -> None:
    reader = LineReader()
    lines = ["WELCOME TO THE", "login: ", "1 bob 1 host", "3", "| news |", "", "4", "| news |",
             "                             Goodbye.", "Thanks for playing."]
    events = [reader.feed(line) for line in lines]
    assert events == [
        ev.Banner("WELCOME TO THE"), ev.Prompt("login: "), ev.Welcome("bob", 1, "host"), ev.MotdStart(),
        ev.MotdLine("| news |"), ev.MotdLine(""), ev.MotdEnd(), ev.Unknown("| news |"), ev.Goodbye(),
        ev.Farewell("Thanks for playing."),
    ]
    assert reader.phase is Phase.GONE


def test_classify_is_pure() -> None:
    import ast
    from pathlib import Path

    import fibsd.client.events
    import fibsd.client.parse

    for module in (fibsd.client.parse, fibsd.client.events):
        tree = ast.parse(Path(module.__file__).read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not any(name.split(".")[0] in ("twisted", "socket", "fibsd.server") for name in imported)
        assert not any(name.startswith(("fibsd.server", "fibsd.wire", "fibsd.store")) for name in imported)


def test_reader_telnet_login_motd_runs_until_the_first_prompt() -> None:
    reader = LineReader()
    lines = ["login: ", "password: ", "", "** User bob authenticated.", "** Last login: Fri Jul  3 from h",
             "+----+", "|  news  |", "", "> ", "+----+"]
    assert [reader.feed(line) for line in lines] == [
        ev.Prompt("login: "), ev.Prompt("password: "), ev.Empty(), ev.UserAuthenticated("bob"),
        ev.LastLogin("Fri Jul  3 from h"), ev.MotdLine("+----+"), ev.MotdLine("|  news  |"), ev.Empty(),
        ev.Prompt("> "), ev.Unknown("+----+"),
    ]
    assert reader.phase is Phase.RUN


def test_classify_doctest() -> None:
    import doctest

    import fibsd.client.parse

    assert doctest.testmod(fibsd.client.parse).failed == 0
