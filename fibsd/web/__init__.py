"""The web face: pages, replays, live boards, a JSON API and metrics over HTTP.

An edge room like the telnet server: it may use ``wire``, ``rules`` and ``rating``,
reads the lobby only through a read-only view of plain values and the store only
through its read methods, and never writes to either (``tests/test_layering.py``).
``fibsd.app`` builds it (``make_site``) and listens on ``web_port``.
"""
