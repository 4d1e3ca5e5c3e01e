"""Fair play tools that need nothing of the server: dice statistics and ``fibsd-verify``.

Pure standard library, like the rules engine: anyone can read and run them without
a server (the derivation they check is in protocol/fair-dice.md and
``fibsd.rules.dice``).
"""
