import re

import pytest

from fibsd.wire import chat

NAME = r"[a-zA-Z_<>]+"


@pytest.mark.parametrize("said, clip, telnet", [
    (chat.message_received("someplayer", 1041253132, "I'll log in at 10pm."),
     "9 someplayer 1041253132 I'll log in at 10pm.",
     "Message from someplayer: I'll log in at 10pm."),
    (chat.tell_received("bob", "hi there"), "12 bob hi there", "bob tells: hi there"),
    (chat.say_received("bob", "gl"), "12 bob gl", "bob says: gl"),
    (chat.shout_received("bob", "anyone?"), "13 bob anyone?", "bob shouts: anyone?"),
    (chat.whisper_received("bob", "psst"), "14 bob psst", "bob whispers: psst"),
    (chat.kibitz_received("bob", "nice"), "15 bob nice", "bob kibitzes: nice"),
    (chat.message_delivered("ann"), "10 ann", "Message delivered to ann."),
    (chat.message_saved("ann"), "11 ann", "Message saved for ann."),
    (chat.you_tell("ann", "hi"), "16 ann hi", "** You tell ann: hi"),
    (chat.you_say("ann", "gl"), "16 ann gl", "** You say to ann: gl"),
    (chat.you_shout("hello all"), "17 hello all", "** You shout: hello all"),
    (chat.you_whisper("psst"), "18 psst", "** You whisper: psst"),
    (chat.you_kibitz("nice"), "19 nice", "** You kibitz: nice"),
])
def test_each_event_has_a_clip_and_a_telnet_line(said, clip, telnet):
    assert said == chat.Said(clip, telnet)
    assert said.for_client(True) == clip
    assert said.for_client(False) == telnet


@pytest.mark.parametrize("line, pattern", [
    ("9 bob 1041253132 text", rf"9 {NAME} [0-9]+ "),
    ("10 ann", rf"10 {NAME}$"),
    ("11 ann", rf"11 {NAME}$"),
    ("12 bob text", rf"12 {NAME} "),
    ("16 ann text", rf"16 {NAME} "),
])
def test_clip_lines_match_cookie_monster(line, pattern):
    assert re.match(pattern, line)


def test_fixed_texts():
    assert chat.heard_by(1) == "** 1 user heard you."
    assert chat.heard_by(42) == "** 42 users heard you."
    assert chat.say_to_yourself("hm") == "You say to yourself: hm"
    assert chat.is_away("bob", "lunch") == "bob is away: lunch"
    assert chat.no_one_called("zed") == "** There is no one called zed."
    assert chat.wont_listen("bob") == "** bob won't listen to you."
    assert chat.dont_know_user("zed") == "** Don't know user zed"
    assert chat.gag_changed("bob", True) == "** You gag bob."
    assert chat.gag_changed("bob", False) == "** You ungag bob."
    assert chat.blind_changed("bob", True) == "** You blind bob."
    assert chat.blind_changed("bob", False) == "** You unblind bob."
    assert chat.finally_logs_in("bob") == "** FINALLY!!! bob logs in"
    assert chat.is_waiting_for_you("ann") == "ann is waiting for you to log in."
    assert chat.waves("bob") == "bob waves goodbye."
    assert chat.waves_again("bob") == "bob waves goodbye again."


def test_guessed_replies_avoid_prefixes_cookie_monster_gives_to_others():
    dangerous = ("** You'll be notified", "** You won't be notified", "** You will be informed",
                 "** You won't be informed", "** You gag", "** You blind", "** You invited",
                 "** User", "** Last login:", "** You tell ", "** There is no one called")
    guesses = [chat.waiting("bob"), chat.waiting_list(["bob"]), chat.already_online("bob"),
               chat.gag_list(["bob"]), chat.blind_list(["bob"]), chat.NOBODY_GAGGED,
               chat.NOBODY_BLINDED, chat.NOBODY_AWAITED, chat.WAIT_SELF, chat.NO_MESSAGES,
               chat.SHOUT_FLOOD]
    for line in guesses:
        assert not line.startswith(dangerous), line
        assert not line[0].isdigit()
