"""``fibsd-bot --tournament <id>``: a bot that enters a tournament and plays it out.

At every login it asks to join (once entered, the server's refusal ``You are in
tournament N already`` is harmless); the server pairs it and sets up each invitation,
which the bot joins as any other; it stops once the server announces the tournament's
winner or its cancellation (protocol/tournaments.md).
"""

from __future__ import annotations

from typing import Any

from fibsd.client import events as ev
from fibsd.client.bot import Bot


class TournamentBot(Bot):
    def __init__(self, name: str, tournament: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(name, *args, **kwargs)
        self.tournament = tournament
        self.winner: str | None = None
        self.over = False

    def on_OwnInfo(self, event: ev.OwnInfo) -> None:
        self.send(f"tournament join {self.tournament}")
        super().on_OwnInfo(event)

    def on_Information(self, event: ev.Information) -> None:
        super().on_Information(event)  # the saved-match listing
        if event.kind != "tournament":
            return
        head = f"tournament: {self.tournament} "
        if event.text.startswith(head + "is won by "):
            self.winner = event.text[len(head + "is won by "):].split(":", 1)[0]
        elif not event.text.startswith(head + "is cancelled"):
            return
        self.over = True
        if not self.playing:
            self._finish()

    def on_MatchWon(self, event: ev.MatchWon) -> None:
        super().on_MatchWon(event)
        if self.over and not self.playing:
            self._finish()
