"""fibsd: a FIBS-compatible backgammon server."""

__version__ = "0.1.0"
