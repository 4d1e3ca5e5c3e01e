"""Resident bots: accounts the server plays with programs (issue 24).

The server never plays inside its own reactor: each bot is a separate ``fibsd-bot``
process that logs in over the loopback like any client (and, for the gnubg brain, a
``gnubg`` process of its own, set to the bot's strength).  ``accounts`` creates and
marks the bots' accounts and keeps their passwords in files only the site's user can
read; ``supervisor`` starts the processes, restarts a crashed one with backoff, logs
each change of state once and stops them with the server (or with ``fibsd bots``,
which runs the same bots on another machine); ``levels`` maps a strength to gnubg's
own settings.
"""
