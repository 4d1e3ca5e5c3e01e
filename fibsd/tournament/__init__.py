"""Tournaments run by the server (issue 25): knockout, Swiss and round robin.

``pairing`` is pure (the formats); ``director`` drives each tournament from its stored
state on the server; ``commands`` and the web pages read and change it through the
existing command and web registries.  Tournament matches are ordinary rated matches
started through the ordinary invitation path.
"""
