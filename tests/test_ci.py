"""``.ci/run`` installs system packages, then runs exactly the README's test command."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_ci_ends_with_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    commands = [line.strip() for line in readme if "pytest -q" in line and "pip install" in line]
    assert len(commands) == 1
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert script[-1] == commands[0]
    packages = next(line for line in script if line.startswith("packages=("))
    assert {"gnubg"} <= set(packages.removeprefix("packages=(").removesuffix(")").split())
