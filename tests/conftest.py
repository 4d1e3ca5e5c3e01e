"""Fixtures shared across test packages: fresh stores."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from fibsd.store.sqlite import SQLiteStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    """A new SQLite store in a file of its own."""
    opened = SQLiteStore(tmp_path / "fibsd.sqlite")
    yield opened
    opened.close()


@pytest.fixture
def memory_store() -> Iterator[SQLiteStore]:
    """A new SQLite store that lives in memory only."""
    opened = SQLiteStore(":memory:")
    yield opened
    opened.close()
