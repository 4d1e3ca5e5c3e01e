"""The package ``fibsd.defaults``: this directory, shipped inside the installed package.

It holds the default configuration (``fibsd.toml``), the message of the day and the
help texts; ``fibsd.config`` finds them with ``importlib.resources``.
"""
