"""The Twisted edge of fibsd: connections, sessions, commands, the lobby.

This is the only package that imports Twisted.  It turns bytes into lines, lines
into commands on the pure layers (``fibsd.rules``, ``fibsd.wire``,
``fibsd.rating``), and their results back into lines for each audience.

Invariants:

* Nothing here blocks the reactor thread.  Disk goes through the single database
  thread (``dbthread``); password hashing and checking go through the reactor's
  thread pool (``passwords``).
* Time and randomness are injected (an ``IReactorTime``, a dice source), so tests
  run with ``task.Clock`` and scripted dice, without sockets.
"""
