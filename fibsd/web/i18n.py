"""The language of a page: English or French message catalogs shared with /play.

The catalogs are the client's own JSON files (``static/play/i18n/<lang>.json``), one
flat object of keys to texts with ``{name}`` placeholders, so the pages and the client
say the same thing in the same words.  The language is the reader's choice: ``?lang=``
sets it (and a cookie that keeps it), else the ``lang`` cookie, else the best of
``Accept-Language``, else English.  Only the web face is translated: the game's wire
lines stay English because clients parse them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

CATALOGS = Path(__file__).resolve().parent / "static" / "play" / "i18n"
LANGUAGES = ("en", "fr")  # the first is the default
NAMES = {"en": "English", "fr": "Français"}
COOKIE = "lang"
MAX_ACCEPT = 512  # longer Accept-Language headers are read up to here


def load() -> dict[str, dict[str, str]]:
    """Every catalog, by language."""
    return {lang: json.loads((CATALOGS / f"{lang}.json").read_text("utf-8"))
            for lang in LANGUAGES}


def known(value: bytes | str | None) -> str | None:
    """``value`` if it names a language we have."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    return value if value in LANGUAGES else None


def from_accept(header: bytes | None) -> str | None:
    """The language the reader's browser prefers most among ours (``fr-CA,fr;q=0.9``)."""
    if not header:
        return None
    best: tuple[float, str] | None = None
    for part in header[:MAX_ACCEPT].decode("ascii", "replace").split(","):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                continue
        lang = known(tag.strip().split("-")[0].lower())
        if lang and quality > 0 and (best is None or quality > best[0]):
            best = (quality, lang)
    return best[1] if best else None


def translator(catalog: dict[str, str]) -> Callable[..., str]:
    """``t(key, **values)``: the text of ``key`` with its placeholders filled; plain text,
    escaped by the templates' autoescaping like everything else.  ``key_one`` instead when
    the count ``n`` is 1 and the catalog has it (as i18n.js does)."""

    def t(key: str, **values: object) -> str:
        if str(values.get("n")) == "1" and f"{key}_one" in catalog:
            key = f"{key}_one"
        return catalog[key].format(**values) if values else catalog[key]

    return t
