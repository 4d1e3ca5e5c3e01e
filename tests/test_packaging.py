"""fibsd as an operator installs it: a wheel built by ``python -m build`` (from the sdist,
so the sdist is shown to be enough), installed into a fresh virtual environment and run
from an empty directory.  Builds without isolation and installs without an index: the
tests use no network, so the fresh environment borrows the test environment's
dependencies (a ``.pth`` line) while fibsd itself comes only from the wheel."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHIPPED_DIRS = ("config", "fibsd", "tests", "protocol", "benchmarks", "docs", ".ci")
SHIPPED_FILES = ("LICENSE", "CHANGELOG.md", "README.md", "constraints.txt", "setup.py",
                 "pyproject.toml", "MANIFEST.in")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out),
                    str(REPO)], check=True, capture_output=True, timeout=300)
    [sdist] = out.glob("fibsd-*.tar.gz")
    [wheel] = out.glob("fibsd-*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.fixture(scope="module")
def fresh(built: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv holding the wheel; the test environment's packages behind it."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-q", "--no-deps", "--no-index", str(built["wheel"])],
                   check=True, capture_output=True, timeout=300)
    site = Path(subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True).stdout.strip())
    (site / "borrowed-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return venv


def test_the_wheel_is_a_working_server_from_an_empty_directory(fresh: Path,
                                                               tmp_path: Path) -> None:
    empty, home = tmp_path / "empty", tmp_path / "home"
    empty.mkdir()
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONUNBUFFERED": "1"}
    where = subprocess.run([str(fresh / "bin" / "python"), "-c", "import fibsd; print(fibsd.__file__)"],
                           cwd=empty, env=env, capture_output=True, text=True, check=True)
    assert where.stdout.startswith(str(fresh))  # not the checkout, not the test venv
    version = subprocess.run([str(fresh / "bin" / "fibsd"), "--version"], cwd=empty, env=env,
                             capture_output=True, text=True, timeout=60)
    assert (version.returncode, version.stdout) == (0, "fibsd 0.1.0\n")

    beginner = (REPO / "config" / "help" / "beginner.txt").read_text()
    with socket.socket() as probe:  # a free port for `fibsd --port N`
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([str(fresh / "bin" / "fibsd"), "--port", str(port),
                               "--web-port", "0", "--interface", "127.0.0.1"],
                              cwd=empty, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        for line in server.stdout:
            if f"fibsd listening on 127.0.0.1 port {port}" in line:
                break
            assert "cannot" not in line, line
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            reply = talk(conn, b"guest\r\nname newbie\r\nsecret1\r\nsecret1\r\n",
                         b"You are registered.")
            last = beginner.rstrip("\n").splitlines()[-1].encode()
            reply += talk(conn, b"help beginner\r\n", last)
            conn.sendall(b"bye\r\n")
            while conn.recv(4096):
                pass
        server.terminate()
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    text = reply.decode("ascii", "replace").replace("\r\n", "\n")
    assert "You are registered.\nType 'help beginner' to get started.\n" in text
    motd = (REPO / "config" / "motd.txt").read_text().splitlines()[0]
    assert f"|  {motd}" in text  # the shipped MOTD, in its box
    assert "\n> " + beginner.rstrip("\n") + "\n> " in text  # the reply to `help beginner`
    assert (home / ".local" / "share" / "fibsd" / "fibsd.sqlite").is_file()
    assert list(empty.iterdir()) == []  # nothing written where it was started


def talk(conn: socket.socket, data: bytes, marker: bytes) -> bytes:
    """Send ``data``; what comes back until ``marker`` has come and a prompt ends it."""
    conn.sendall(data)
    received = b""
    while marker not in received or not received.endswith(b"> "):
        chunk = conn.recv(4096)
        assert chunk, received
        received += chunk
    return received


def test_the_wheel_has_the_twistd_plugin(fresh: Path) -> None:
    found = subprocess.run(
        [str(fresh / "bin" / "python"), "-c",
         "from twisted.plugin import getPlugins\n"
         "from twisted.application.service import IServiceMaker\n"
         "print(sorted(p.tapname for p in getPlugins(IServiceMaker)))"],
        capture_output=True, text=True, check=True, cwd="/")
    assert "'fibsd'" in found.stdout


def test_the_wheel_metadata(built: dict[str, Path]) -> None:
    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = wheel.namelist()
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = wheel.read(metadata).decode()
    assert "License-Expression: MIT\n" in text
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "Requires-Dist: libpass<2,>=1.9; extra == \"server\"" in text
    assert not any(line.startswith("Requires-Dist: libpass") and "extra" not in line
                   for line in text.splitlines())
    shipped = {p.relative_to(REPO / "config").as_posix() for p in (REPO / "config").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert {n.removeprefix("fibsd/defaults/") for n in names
            if n.startswith("fibsd/defaults/")} == shipped
    assert "twisted/plugins/fibsd_plugin.py" in names


def test_the_sdist_holds_everything_to_build_and_test(built: dict[str, Path]) -> None:
    with tarfile.open(built["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    wanted = {p.relative_to(REPO).as_posix() for d in SHIPPED_DIRS for p in (REPO / d).rglob("*")
              if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".sqlite"}
    assert wanted - names == set()
    assert set(SHIPPED_FILES) - names == set()


def test_every_dependency_is_pinned_in_the_constraints_file() -> None:
    """CI installs with ``-c constraints.txt``: a dependency without a pin there would be
    whatever PyPI has that day."""
    with (REPO / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    names = {_normal(re.match(r"[A-Za-z0-9_.-]+", r).group()) for r in requirements}  # type: ignore[union-attr]
    names.discard("fibsd")
    pinned = {_normal(line.split("==")[0]) for line in
              (REPO / "constraints.txt").read_text().splitlines()
              if line and not line.startswith("#")}
    assert names - pinned == set()


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    command = (REPO / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert f"    {command}\n" in (REPO / "README.md").read_text()
