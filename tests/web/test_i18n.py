"""The web face's languages (fibsd/web/i18n.py, static/play/i18n/, say.js): the English
and French catalogs say the same things, every key the pages and the client use exists,
the client's translations of the server's game lines, and the choice of the language
(Accept-Language, the cookie, ``?lang=``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import pytest_twisted

from fibsd.web import i18n
from tests.web.conftest import Web

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WEB = ROOT / "fibsd" / "web"
PLAY = WEB / "static" / "play"
CATALOGUE = ROOT / "protocol" / "catalogue"
NODE = shutil.which("node")
PREFIXES = {"nav", "page", "error", "match", "who", "play", "login", "chat", "board", "reader",
            "invite", "line", "point"}
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def test_english_and_french_have_the_same_keys_and_placeholders() -> None:
    catalogs = i18n.load()
    assert set(catalogs) == {"en", "fr"}
    assert sorted(catalogs["fr"]) == sorted(catalogs["en"])
    differ = {key: (text, catalogs["fr"][key]) for key, text in catalogs["en"].items()
              if placeholders(text) != placeholders(catalogs["fr"][key])}
    assert differ == {}
    assert all(text.strip() for catalog in catalogs.values() for text in catalog.values())


def used_keys() -> set[str]:
    """The keys the templates, /play's page and its modules name."""
    found: set[str] = set()
    for path in [*(WEB / "templates").glob("*.html"), WEB / "pages.py"]:
        found |= set(re.findall(r"""\bt\(['"]([a-z_]+\.[a-z_]+)['"]""", path.read_text()))
        found |= set(re.findall(r'"((?:page|error|nav)\.[a-z_]+)"', path.read_text()))
    page = (PLAY / "index.html").read_text()
    found |= set(re.findall(r'data-t="([^"]+)"', page))
    for attrs in re.findall(r'data-t-attr="([^"]+)"', page):
        found |= {pair.split("=")[1] for pair in attrs.split()}
    for path in PLAY.glob("*.js"):
        found |= set(re.findall(r'"([a-z]+\.[a-z_]+)"', path.read_text()))
    return {key for key in found if key.split(".")[0] in PREFIXES and not key.endswith(".html")}


def test_every_key_used_is_in_the_catalogs() -> None:
    used = used_keys()
    assert len(used) > 150
    assert used - set(i18n.load()["en"]) == set()


def test_the_language_of_a_reader() -> None:
    assert i18n.from_accept(b"fr-CA,fr;q=0.9,en;q=0.8") == "fr"
    assert i18n.from_accept(b"de-DE,en;q=0.5,fr;q=0.7") == "fr"
    assert i18n.from_accept(b"en-GB,en;q=0.9") == "en"
    assert i18n.from_accept(b"de,it") is None
    assert i18n.from_accept(b"fr;q=0,en;q=x") is None
    assert i18n.from_accept(None) is None
    assert i18n.known(b"fr") == "fr" and i18n.known(b"xx") is None
    french = i18n.translator(i18n.load()["fr"])
    assert french("match.points", n=1) == "match en 1 point"
    assert french("match.points", n=3) == "match en 3 points"


def game_examples() -> list[str]:
    rows = tomllib.loads((CATALOGUE / "play.toml").read_text())["line"]
    return [row["example"] for row in rows if "example" in row]


def said(catalog: str, lines: list[str]) -> list[str]:
    assert NODE is not None
    script = HERE / "js" / "say_check.mjs"
    run = subprocess.run([NODE, str(script), str(PLAY / "i18n" / catalog)],
                         input="\n".join(json.dumps(line) for line in lines),
                         capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in run.stdout.splitlines()]


NEEDS_NODE = pytest.mark.skipif(NODE is None,
                                reason="Node.js is not installed (Debian: apt-get install nodejs)")


@NEEDS_NODE
def test_the_english_catalog_says_the_game_lines_as_the_server_does() -> None:
    lines = [*game_examples(), "Please move 1 piece.", "alice wins the 1 point match 1-0 ."]
    assert said("en.json", lines) == lines


@NEEDS_NODE
def test_the_common_game_lines_in_french() -> None:
    cases = {
        "It's your turn to roll or double.": "À vous de lancer les dés ou de doubler.",
        "Please move 2 pieces.": "Déplacez 2 pions.",
        "Please move 1 piece.": "Déplacez 1 pion.",
        "You win the 1 point match 1-0 .": "Vous gagnez le match en 1 point 1-0.",
        "bob rolls 6 and 4.": "bob fait 6 et 4.",
        "You roll 3 and 1.": "Vous faites 3 et 1.",
        "bob moves 8-3 6-3 .": "bob joue 8-3 6-3.",
        "bob can't move.": "bob ne peut pas jouer.",
        "alice doubles. Type 'accept' or 'reject'.": "alice double. Acceptez ou refusez.",
        "You accept the double. The cube shows 2.": "Vous acceptez le double. Le videau est à 2.",
        "You win the game and get 1 point. Congratulations!":
            "Vous gagnez la partie et marquez 1 point. Bravo !",
        "alice wins the game and gets 2 points. Sorry.":
            "alice gagne la partie et marque 2 points. Dommage.",
        "You win the 3 point match 3-1 .": "Vous gagnez le match en 3 points 3-1.",
        "score in 5 point match: alice-1 bob-0": "score du match en 5 points : alice 1, bob 0",
        "bob shouts: hello": "bob shouts: hello",  # not a game line: as it came
    }
    assert dict(zip(cases, said("fr.json", list(cases)))) == cases
    french = said("fr.json", game_examples())
    translated = [line for line, shown in zip(game_examples(), french) if line != shown]
    assert len(translated) >= 25
    assert not [shown for shown in french if "{" in shown]


@pytest_twisted.ensureDeferred
async def test_a_page_in_the_readers_language(web: Web) -> None:
    french = await web.get("/ratings", {b"accept-language": [b"fr-FR,fr;q=0.9,en;q=0.5"]})
    assert french.code == 200
    assert '<html lang="fr">' in french.text
    assert "<title>Classement · fibsd</title>" in french.text
    assert '<a href="/play">Jouer</a>' in french.text
    assert '<a class="lang" href="/ratings?lang=en" hreflang="en" lang="en">English</a>' \
        in french.text
    assert "Accept-Language" in french.header("vary")
    english = await web.get("/ratings")
    assert '<html lang="en">' in english.text and "<title>Ratings · fibsd</title>" in english.text
    assert '<a class="lang" href="/ratings?lang=fr" hreflang="fr" lang="fr">Français</a>' \
        in english.text


@pytest_twisted.ensureDeferred
async def test_the_switch_sets_a_cookie_that_wins_over_the_browser(web: Web) -> None:
    switched = await web.get("/ratings?page=1&lang=en", {b"accept-language": [b"fr"]})
    assert '<html lang="en">' in switched.text
    assert switched.header("set-cookie").startswith("lang=en; ")
    assert "SameSite=lax" in switched.header("set-cookie")
    assert 'href="/ratings?page=1&amp;lang=fr"' in switched.text
    kept = await web.get("/", {b"accept-language": [b"fr"], b"cookie": [b"lang=en"]})
    assert '<html lang="en">' in kept.text and "Who is here" in kept.text
    play = await web.get("/play", {b"cookie": [b"lang=fr"]})
    assert '<html lang="fr">' in play.text
    assert '<link rel="preload" href="/play/i18n/fr.json" as="fetch"' in play.text
    missing = await web.get("/nothing?lang=fr")
    assert missing.code == 404 and "Cette page n&#39;existe pas." in missing.text
    bogus = await web.get("/?lang=xx", {b"accept-language": [b"fr"]})
    assert '<html lang="fr">' in bogus.text and not bogus.header("set-cookie")
    catalog = await web.get("/play/i18n/fr.json")
    assert catalog.code == 200 and json.loads(catalog.body)["play.roll"] == "Lancer les dés"
    assert (await web.get("/play/i18n/de.json")).code == 404
