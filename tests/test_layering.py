"""The pure layers import nothing from the network or storage edges."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "fibsd"
FORBIDDEN = ("twisted", "sqlite3", "socket", "fibsd.server", "fibsd.store", "random", "time")
PURE = sorted(
    [p for p in (ROOT / "rules").rglob("*.py")]
    + [p for p in (ROOT / "wire").rglob("*.py")]
    + [p for p in (ROOT / "fair").rglob("*.py")]
    + [p for p in (ROOT / "rating.py",) if p.exists()]
    + [ROOT / "tournament" / "pairing.py"]
)


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_pure_module_imports(path: Path) -> None:
    bad = {
        name
        for name in imported_modules(path)
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)
    }
    assert not bad, f"{path} imports {sorted(bad)}"


def test_there_are_pure_modules() -> None:
    assert len(PURE) >= 2


# The client library is for third-party bots: it may use the rules engine, never the
# server's internals, and the store stays standard-library only.  Its parser reads what
# the server writes without the server's wire code, so the transcript tests check one
# against the other; the gnubg brain alone writes board lines (for gnubg's `external`
# interface, not for parsing) and uses the pure board writer rather than a second copy.
EDGES = {
    "client": ("fibsd.server", "fibsd.store", "fibsd.wire", "fibsd.app"),
    "store": ("twisted", "fibsd.server", "fibsd.wire", "fibsd.rules", "fibsd.client"),
    # The web face reads the lobby through a view app.py hands it and the store through
    # its read methods: no server module, no store implementation, no client.
    "web": ("fibsd.server", "fibsd.app", "fibsd.client", "fibsd.store.sqlite",
            "fibsd.store.migrations", "sqlite3"),
    "server": ("fibsd.web", "fibsd.cluster"),
    # Analysis runs GNU Backgammon (GPL) as a program of its own: nothing imports it.
    "analysis": ("gnubg", "fibsd.server", "fibsd.client", "fibsd.app", "fibsd.cluster"),
    # A cluster node works on the server's lobby and sessions (fibsd.app wires it in);
    # the server knows it only through the small interfaces it defines.
    "cluster": ("fibsd.web", "fibsd.app", "fibsd.client", "fibsd.store.sqlite",
                "fibsd.store.postgres", "sqlite3"),
}
ALLOWED = {"client/gnubg_brain.py": {"fibsd.wire.board"}}


@pytest.mark.parametrize("package", sorted(EDGES))
def test_edge_package_imports(package: str) -> None:
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = {
            name
            for name in imported_modules(path)
            if any(name == f or name.startswith(f + ".") for f in EDGES[package])
        } - ALLOWED.get(str(path.relative_to(ROOT)), set())
        assert not bad, f"{path} imports {sorted(bad)}"


def test_the_web_face_never_writes_to_the_store() -> None:
    """Every store method fibsd/web names (as an attribute or as the name given to
    ``db.call``) is one of the read methods ``fibsd.web.sources.READS`` lists, and
    those are the only methods of its ``Archive``."""
    from fibsd.store import Store
    from fibsd.web.sources import READS, Archive

    store_methods = {name for name in vars(Store) if not name.startswith("_")}
    assert set(READS) <= store_methods
    assert {name for name in vars(Archive) if not name.startswith("_")} == set(READS)
    for path in sorted((ROOT / "web").rglob("*.py")):
        named = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute):
                named.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                named.add(node.value)
        writes = (named & store_methods) - set(READS)
        assert not writes, f"{path} names store methods that write: {sorted(writes)}"


def test_no_module_of_fibsd_imports_gnubg() -> None:
    """GNU Backgammon is GPL: fibsd runs it as a program (fibsd/analysis/engine.py),
    never as a library."""
    for path in sorted(ROOT.rglob("*.py")):
        assert not any(name == "gnubg" or name.startswith("gnubg.")
                       for name in imported_modules(path)), path
