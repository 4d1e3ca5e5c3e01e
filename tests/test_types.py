"""The pure layers stay fully typed: ``mypy --strict`` over rules, wire, fair and rating."""

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parent.parent


def test_pure_layers_pass_mypy_strict() -> None:
    targets = [str(ROOT / "fibsd" / "rules"), str(ROOT / "fibsd" / "wire"), str(ROOT / "fibsd" / "fair"),
               str(ROOT / "fibsd" / "rating.py"), str(ROOT / "fibsd" / "tournament" / "pairing.py")]
    out, err, status = api.run(["--strict", "--no-incremental", *targets])
    assert status == 0, out + err
