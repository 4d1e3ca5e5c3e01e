"""Bot accounts (issue 24): ``set bot`` at registration, ``admin bot``, the whois line
(after FIBS's lines, with a resident bot's strength), read by no stock client pattern."""

from __future__ import annotations

import pytest

from fibsd.wire import bot_text
from tests.helpers import FakeServer, make_settings
from tests.server.test_admin import login, said
from tests.server.test_social import every_line_is_catalogued  # noqa: F401


@pytest.fixture
def server() -> FakeServer:
    # the default's resident bots (a FakeServer starts no processes)
    fake = FakeServer(settings=make_settings(admins=["root"], **{"bots.enabled": True}))
    for name in ("root", "alice", "GnubgExpert"):
        fake.register(name)
    return fake


def test_a_new_account_marks_itself_and_whois_says_so(server: FakeServer) -> None:
    bot = login(server, "GnubgExpert")
    alice = login(server, "alice")
    bot.send("set bot")
    assert said(bot) == ["** This account is not marked as a bot."]
    bot.send("set bot yes")
    assert said(bot) == ["** This account is now marked as a bot."]
    assert server.store.get_user("GnubgExpert").bot is True  # type: ignore[union-attr]
    alice.send("whois GnubgExpert")
    lines = said(alice)
    # the resident bot's brain, from the site's [bots] (the default lists GnubgExpert)
    assert lines[-3:] == ["  No email address.",
                          "  Bot: a program plays this account (gnubg expert: 0-ply, no noise).",
                          "  Abandoned matches: 0 of 0 (reliability 100%)."]
    bot.send("bye")
    server.settle()
    alice.send("whois GnubgExpert")
    assert said(alice)[-3:] == lines[-3:]
    alice.send("whois alice")
    assert not any("Bot" in line for line in said(alice))


def test_set_bot_keeps_the_set_listing_and_its_abbreviations(server: FakeServer) -> None:
    alice = login(server, "alice")
    alice.send("set")
    listing = said(alice)
    alice.send("set bot maybe")
    assert said(alice) == ["** Usage: set bot yes|no"]
    alice.send("set")
    assert said(alice) == listing
    assert not any("bot" in line for line in listing)
    alice.send("set b 3")  # boardstyle, as on FIBS
    assert said(alice) == ["Value of 'boardstyle' set to 3."]


def test_an_account_with_matches_is_marked_only_by_an_admin(server: FakeServer) -> None:
    server.store.set_rating("alice", 1520.0, 3)
    alice = login(server, "alice")
    root = login(server, "root")
    alice.send("set bot yes")
    assert said(alice) == [bot_text.ONLY_NEW]
    assert server.store.get_user("alice").bot is False  # type: ignore[union-attr]
    root.send("admin bot alice yes")
    assert said(root) == ["** alice is now marked as a bot."]
    root.send("whois alice")
    assert said(root)[-2] == "  Bot: a program plays this account."  # not a resident
    root.send("admin bot alice no")
    assert said(root) == ["** alice is no longer marked as a bot."]
    assert server.store.bot_names() == set()
    root.send("admin bot nobody yes")
    assert said(root) == ["** There is no user nobody."]
    root.send("admin bot alice")
    assert said(root) == ["** Usage: admin bot <name> yes|no"]



def test_help_bot_lists_the_sites_bots(server: FakeServer) -> None:
    alice = login(server, "alice")
    alice.send("help bot")
    lines = said(alice)
    assert lines[0] == "Playing a bot"
    assert lines[-6:] == [
        "",
        "The bots of this server:",
        "  invite GnubgExpert 1",
        "      gnubg expert: 0-ply, no noise; matches of 1, 3, 5, 7 points",
        "  invite HeuristicBot 1",
        "      fibsd's heuristic, the weakest; matches of 1, 3, 5, 7 points",
    ]


def test_help_bot_on_a_site_without_bots() -> None:
    server = FakeServer(settings=make_settings(**{"bots.enabled": False}))
    server.register("alice")
    alice = login(server, "alice")
    alice.send("help bot")
    assert said(alice)[-2:] == [
        "", "This server runs no resident bots: 'who' may show other ones."]


def test_set_bot_counts_as_a_set(server: FakeServer) -> None:
    server = FakeServer(settings=make_settings(**{"limits.sets_per_minute": 2}))
    server.register("newbie")
    newbie = login(server, "newbie")
    for value in ("yes", "no"):
        newbie.send(f"set bot {value}")
        said(newbie)
    newbie.send("set bot yes")
    assert said(newbie) == ["** Please wait a little before you use 'set' again."]
    assert server.store.get_user("newbie").bot is False  # type: ignore[union-attr]
