"""First load of the web client: how soon /play is usable in headless Chromium on loopback.

    .venv/bin/python benchmarks/play_load.py --rounds 10

A fibsd server runs as a subprocess (as in load.py) with its web face; one Chromium
session (Debian's ``chromium`` and ``chromium-driver``, as the browser tests use) loads
``/play`` ``--rounds`` times with its cache off, so every file comes over the wire each
time.  For each load the page's own Navigation Timing gives the HTML's arrival, the
DOMContentLoaded end (all modules run) and the load event; ``ready`` is the page's
``performance.mark("ready")``, set when main.js has wired the login form.  Then one
login per round (CLIP over ``/ws``; the server checks the argon2 hash in a thread) until
the lobby is shown.  Medians and worst of the rounds, in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import ServerProcess, create_database, free_port  # noqa: E402

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")

TIMING = """
const n = performance.getEntriesByType('navigation')[0];
const ready = performance.getEntriesByName('ready')[0];
return [n.responseEnd, n.domContentLoadedEventEnd, n.loadEventEnd, ready ? ready.startTime : -1,
        n.transferSize];
"""


def browser(profile: Path):  # noqa: ANN201 - selenium's type
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument("--window-size=1280,900")
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(driver, script: str, seconds: float = 30) -> None:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while not driver.execute_script(script):
        if time.monotonic() > deadline:
            raise SystemExit(f"the page never answered {script!r}")
        time.sleep(0.005)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        database = directory / "fibsd.sqlite"
        create_database(database, ["alice"])
        server = ServerProcess(directory, free_port(), 10, False, web_port=free_port(),
                               database=database)
        server.wait_listening()
        driver = browser(directory / "profile")
        try:
            driver.execute_cdp_cmd("Network.enable", {})
            driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
            url = f"http://127.0.0.1:{server.web_port}/play"
            rows, logins = [], []
            for _ in range(options.rounds):
                driver.get(url)
                wait(driver, "return document.body.dataset.state === 'login'")
                rows.append(driver.execute_script(TIMING))
                driver.execute_script(
                    "document.getElementById('name').value = 'alice';"
                    "document.getElementById('password').value = 'secret';")
                start = time.monotonic()
                driver.find_element("id", "login").click()
                wait(driver, "return document.body.dataset.state === 'lobby'")
                logins.append((time.monotonic() - start) * 1000)
                driver.find_element("id", "logout").click()
                wait(driver, "return document.body.dataset.state === 'login'")
        finally:
            driver.quit()
            server.stop()
    names = ("HTML received", "DOMContentLoaded", "load event", "ready (login form wired)")
    for index, name in enumerate(names):
        values = [row[index] for row in rows]
        print(f"{name:26} median {statistics.median(values):7.1f} ms   worst {max(values):7.1f} ms")
    print(f"{'login to lobby':26} median {statistics.median(logins):7.1f} ms   "
          f"worst {max(logins):7.1f} ms   ({options.rounds} rounds)")


if __name__ == "__main__":
    main()
