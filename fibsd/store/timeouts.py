"""How long the server waits for PostgreSQL: its own module, so that choosing a store
(``fibsd.store.opening``) and the PostgreSQL store itself (``fibsd.store.postgres``)
both read it without one importing the other, and without psycopg where it is absent."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timeouts:
    """How long the server waits for PostgreSQL (the ``[db]`` keys); a statement
    timeout of 0 waits for ever (the admin commands, a migration)."""

    connect_timeout: int = 5  # seconds (libpq counts whole seconds, at least 2)
    statement_timeout_ms: int = 0
    keepalives_idle: int = 10  # seconds of silence before the first TCP keepalive
    keepalives_interval: int = 5  # seconds between two unanswered keepalives
    keepalives_count: int = 3  # unanswered keepalives that end the connection
