import re

import pytest

from fibsd.wire.settings import (
    INVALID_VARIABLE,
    TOGGLES,
    InvalidValue,
    default_toggles,
    default_variables,
    format_toggle_listing,
    format_unknown_toggle,
    format_variable_listing,
    format_variable_set,
    format_variable_value,
    parse_variable,
    redoubles_clip_field,
    resolve_toggle,
    resolve_variable,
    toggles_from_text,
    toggles_to_text,
)


def test_defaults_are_those_of_a_fresh_fibs_account():
    # 2 jonathanballs 1 1 0 0 0 0 1 1 0 0 1 0 1 1500.00 0 0 0 1 0 UTC
    assert default_toggles() == {
        "allowpip": True, "autoboard": True, "autodouble": False, "automove": False,
        "bell": False, "crawford": True, "double": True, "greedy": False,
        "moreboards": True, "moves": False, "notify": True, "ratings": False,
        "ready": False, "report": True, "silent": False, "telnet": True, "wrap": False,
    }
    assert default_variables() == {
        "boardstyle": "3", "linelength": "0", "pagelength": "0",
        "redoubles": "none", "sortwho": "login", "timezone": "UTC",
        "analysis": "on",  # fibsd's own (protocol/analysis.md), never listed
    }


def test_allowpip_yes_text_keeps_the_missing_of():
    assert TOGGLES["allowpip"].confirmation(True) == (
        "** You allow the use the server's 'pip' command.")
    assert TOGGLES["allowpip"].confirmation(False) == (
        "** You don't allow the use of the server's 'pip' command.")


@pytest.mark.parametrize("name, yes, no", [
    ("bell", "** Your terminal will ring the bell if someone talks to you or invites you",
     "** Your terminal won't ring the bell if someone talks to you or invites you"),
    ("silent", "** You won't hear what other players shout.",
     "** You will hear what other players shout."),
    ("wrap", "** Your terminal knows how to wrap long lines.",
     "** The server will wrap long lines."),
    ("ready", "** You're now ready to invite or join someone.",
     "** You're now refusing to play with someone."),
    ("telnet", "** You use telnet and don't need extra 'newlines'.",
     "** You use a client program and will receive extra 'newlines'."),
])
def test_confirmation_pairs_follow_cookie_monster(name, yes, no):
    assert TOGGLES[name].confirmation(True) == yes
    assert TOGGLES[name].confirmation(False) == no


@pytest.mark.parametrize("pattern, name, value", [
    (r"\*\* You allow the use the server's 'pip' command\.", "allowpip", True),
    (r"\*\* You insist on playing with the Crawford rule\.", "crawford", True),
    (r"\*\* You would like to play without using the Crawford rule\.", "crawford", False),
    (r"\*\* You will be asked if you want to double\.", "double", True),
    (r"\*\* You won't be asked if you want to double\.", "double", False),
    (r"\*\* Will use automatic greedy bearoffs\.", "greedy", True),
    (r"\*\* Won't use automatic greedy bearoffs\.", "greedy", False),
    (r"\*\* Will send rawboards after rolling\.", "moreboards", True),
    (r"\*\* You want a list of moves after this game\.", "moves", True),
    (r"\*\* You'll see how the rating changes are calculated\.", "ratings", True),
    (r"\*\* You won't hear what other players shout\.", "silent", True),
    (r"\*\* Your terminal will ring", "bell", True),
    (r"\*\* You'll be notified when new users log in", "notify", True),
    (r"\*\* You will be informed about starting", "report", True),
])
def test_cookie_monster_regexes_match(pattern, name, value):
    assert re.match(pattern, TOGGLES[name].confirmation(value))


def test_toggle_listing_pads_to_sixteen_columns_with_blanks():
    toggles = default_toggles()
    toggles["automove"] = True
    toggles["ratings"] = True
    assert format_toggle_listing(toggles) == [
        "The current settings are:",
        "allowpip        YES",
        "autoboard       YES",
        "autodouble      NO",
        "automove        YES",
        "bell            NO",
        "crawford        YES",
        "double          YES",
        "greedy          NO",
        "moreboards      YES",
        "moves           NO",
        "notify          YES",
        "ratings         YES",
        "ready           NO",
        "report          YES",
        "silent          NO",
        "telnet          YES",
        "wrap            NO",
    ]


def test_toggle_names_accept_unique_prefixes_and_the_old_alias():
    assert resolve_toggle("gr").name == "greedy"
    assert resolve_toggle("READY").name == "ready"
    assert resolve_toggle("moves").name == "moves"
    assert resolve_toggle("mo") is None  # moreboards, moves
    assert resolve_toggle("auto") is None
    assert resolve_toggle("autoroll").name == "double"
    assert resolve_toggle("rawboard") is None
    assert resolve_toggle("") is None
    assert format_unknown_toggle("fizz") == "** Don't know how to toggle fizz"


def test_variable_listing_starts_values_in_column_twelve():
    variables = default_variables()
    variables["timezone"] = "America/Los_Angeles"
    assert format_variable_listing(variables) == [
        "Settings of variables:",
        "boardstyle: 3",
        "linelength: 0",
        "pagelength: 0",
        "redoubles:  none",
        "sortwho:    login",
        "timezone:   America/Los_Angeles",
    ]


@pytest.mark.parametrize("name, value, stored, reply", [
    ("boardstyle", "3", "3", "Value of 'boardstyle' set to 3."),
    ("boardstyle", "01", "1", "Value of 'boardstyle' set to 1."),
    ("linelength", "0", "0", "Value of 'linelength' set to 0."),
    ("pagelength", "999", "999", "Value of 'pagelength' set to 999."),
    ("redoubles", "none", "none", "Value of 'redoubles' set to 'none'."),
    ("redoubles", "Unlimited", "unlimited", "Value of 'redoubles' set to 'unlimited'."),
    ("redoubles", "42", "42", "Value of 'redoubles' set to 42."),
    ("sortwho", "rrating", "rrating", "Value of 'sortwho' set to rrating."),
    ("timezone", "america/los_angeles", "America/Los_Angeles",
     "Value of 'timezone' set to America/Los_Angeles."),
    ("timezone", "UTC", "UTC", "Value of 'timezone' set to UTC."),
])
def test_valid_values_and_their_confirmations(name, value, stored, reply):
    assert parse_variable(name, value) == stored
    assert format_variable_set(name, stored) == reply


@pytest.mark.parametrize("name, value, reply", [
    ("boardstyle", "4", "** Valid arguments are the numbers 1 to 3."),
    ("boardstyle", "x", "** Valid arguments are the numbers 1 to 3."),
    ("linelength", "1000", "** Valid arguments are the numbers 0 to 999. Use 0 for no linelength."),
    ("pagelength", "-1", "** Valid arguments are the numbers 0 to 999. Use 0 for no pagelength."),
    ("redoubles", "0", "** Valid arguments are 'none', 'unlimited' and the numbers 1 to 99."),
    ("redoubles", "100", "** Valid arguments are 'none', 'unlimited' and the numbers 1 to 99."),
    ("sortwho", "age", "** Unknown value 'age'. Try 'login', 'name', 'rating' or 'rrating'."),
])
def test_invalid_values_carry_the_fibs_reply(name, value, reply):
    with pytest.raises(InvalidValue) as caught:
        parse_variable(name, value)
    assert caught.value.reply == (reply,)
    assert (caught.value.variable, caught.value.value) == (name, value)


def test_unknown_timezone_lists_the_zones_in_short_lines():
    with pytest.raises(InvalidValue) as caught:
        parse_variable("timezone", "Mars/Olympus")
    head, *rest = caught.value.reply
    assert head == "** Can't find timezone 'Mars/Olympus'. Try one of:"
    assert rest and all(0 < len(line) <= 79 for line in rest)
    assert "UTC" in " ".join(rest).split()


def test_variable_names_and_single_values():
    assert resolve_variable("board") == "boardstyle"
    assert resolve_variable("sort") == "sortwho"
    assert resolve_variable("l") == "linelength"
    assert resolve_variable("xyz") is None
    assert format_variable_value("boardstyle", "3") == "Value of 'boardstyle' is 3"
    assert INVALID_VARIABLE == "** Invalid argument. Type 'help set'."


def test_redoubles_in_the_own_info_line():
    assert redoubles_clip_field("none") == "0"
    assert redoubles_clip_field("7") == "7"
    assert redoubles_clip_field("unlimited") == "unlimited"


def test_settings_round_trip_through_store_text():
    toggles = default_toggles()
    toggles["ready"] = True
    variables = default_variables()
    variables["redoubles"] = "unlimited"
    text = toggles_to_text(toggles, variables)
    assert text["toggle.ready"] == "1"
    assert text["toggle.silent"] == "0"
    assert text["set.redoubles"] == "unlimited"
    assert toggles_from_text(text) == (toggles, variables)


def test_unreadable_store_text_falls_back_to_defaults():
    toggles, variables = toggles_from_text(
        {"toggle.ready": "maybe", "set.boardstyle": "9", "toggle.bogus": "1",
         "set.sortwho": "name"})
    assert toggles == default_toggles()
    assert variables == {**default_variables(), "sortwho": "name"}


def test_a_site_may_choose_other_defaults_for_new_accounts():
    toggles, variables = toggles_from_text({"set.sortwho": "name"},
                                           {"boardstyle": "2", "timezone": "Europe/Sofia"})
    assert variables == {**default_variables(), "boardstyle": "2", "timezone": "Europe/Sofia",
                         "sortwho": "name"}
    with pytest.raises(InvalidValue):
        toggles_from_text({}, {"boardstyle": "7"})
