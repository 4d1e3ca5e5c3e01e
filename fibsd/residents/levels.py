"""Strengths: the heuristic brain (the weakest) and GNU Backgammon's predefined levels.

gnubg's manual ("Predefined settings") defines its levels by lookahead, noise and
move filter: beginner, casual, intermediate and advanced evaluate at 0-ply with noise
of 0.060, 0.050, 0.030 and 0.015; expert at 0-ply without noise; world class at 2-ply
with the normal move filter; supremo at 2-ply with a larger one; grandmaster at 3-ply
with a large one.  gnubg's ``external`` interface plays and doubles with its
``set evaluation`` settings (chequer play and cube decisions), so the bot's gnubg is
started with these commands before ``external``.  The noise is gnubg's default kind
(deterministic: the same position draws the same error), as in its own levels.
"""

from __future__ import annotations

from dataclasses import dataclass

from fibsd.config import HEURISTIC_STRENGTH, ResidentBot


@dataclass(frozen=True)
class Level:
    plies: int
    noise: float
    # ``set evaluation movefilter <ply> <level> <accept> <extra> <threshold>`` lines
    # that differ from gnubg's normal filter
    filters: tuple[tuple[int, int, int, int, float], ...] = ()

    def text(self) -> str:
        noise = f"noise {self.noise:.3f}" if self.noise else "no noise"
        larger = ", a larger move filter" if self.filters else ""
        return f"{self.plies}-ply, {noise}{larger}"


_LARGE_2 = ((2, 0, 0, 16, 0.32),)
_LARGE_3 = ((3, 0, 0, 16, 0.32), (3, 2, 0, 4, 0.08))

LEVELS: dict[str, Level] = {
    "beginner": Level(0, 0.060),
    "casual": Level(0, 0.050),
    "intermediate": Level(0, 0.030),
    "advanced": Level(0, 0.015),
    "expert": Level(0, 0.0),
    "worldclass": Level(2, 0.0),
    "supremo": Level(2, 0.0, _LARGE_2),
    "grandmaster": Level(3, 0.0, _LARGE_3),
}

_NAMES = {"worldclass": "world class"}


def gnubg_commands(strength: str) -> list[str]:
    """The commands that set gnubg's play to ``strength`` (before ``external``)."""
    level = LEVELS[strength]
    commands = []
    for what in ("chequerplay", "cubedecision"):
        commands += [f"set evaluation {what} evaluation plies {level.plies}",
                     f"set evaluation {what} evaluation noise {level.noise:.3f}",
                     f"set evaluation {what} evaluation prune on"]
    commands += [f"set evaluation movefilter {ply} {at} {accept} {extra} {threshold:.3f}"
                 for ply, at, accept, extra, threshold in level.filters]
    return commands


def describe(bot: ResidentBot) -> str:
    """The bot's brain and strength for people: whois, the web, the log."""
    if bot.brain != "gnubg" or bot.strength == HEURISTIC_STRENGTH:
        return "fibsd's heuristic, the weakest"
    level = LEVELS[bot.strength]
    return f"gnubg {_NAMES.get(bot.strength, bot.strength)}: {level.text()}"


def resident(bots: tuple[ResidentBot, ...], name: str) -> ResidentBot | None:
    """The resident bot that plays as the account ``name`` (any case), or None."""
    lowered = name.lower()
    for bot in bots:
        if lowered in (account.lower() for account in bot.accounts()):
            return bot
    return None
