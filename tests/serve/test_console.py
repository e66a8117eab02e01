"""The web console in a real headless Chromium (Debian's chromium and chromedriver, Selenium):
the token from the URL fragment, the form filled and submitted, the pick, alternatives, front
plot and script in the DOM as the API gave them, the copy button, the guard's reasons when it
escalates, hostile text shown as text, no browser errors. A screenshot is kept as a test
artifact (``tmp/artifacts/serve-console.png``; ``HPCDS1MPI_DOCS_SCREENSHOT=1`` also refreshes
``docs/serve-console.png`` for the README)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.helpers import REPO, system_program

ARTIFACT = REPO / "tmp" / "artifacts" / "serve-console.png"
DOCS_SHOT = REPO / "docs" / "serve-console.png"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = system_program("chromium"), system_program("chromedriver")
    opts = Options()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1500", "--no-first-run", "--disable-extensions",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _wait(driver, check, timeout: float = 60.0):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: check(d))


def _by_id(driver, name):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, name)


def _config_text(r: dict) -> str:
    def s(n, word):
        return f"{n} {word}{'s' if n > 1 else ''}"
    return (f"{s(r['nodes'], 'node')} × {s(r['ranks_per_node'], 'rank')} × "
            f"{s(r['threads'], 'thread')}, {r['device']}, {r['precision']}")


def _ask(driver, workload: str, size: int, objective: str = "time"):
    from selenium.webdriver.support.ui import Select

    for name, value in (("workload", workload), ("size", str(size))):
        box = _by_id(driver, name)
        box.clear()
        box.send_keys(value)
    Select(_by_id(driver, "objective")).select_by_value(objective)
    Select(_by_id(driver, "partition")).select_by_value("lab/standard")
    before = _by_id(driver, "script").text, _by_id(driver, "script-note").text
    _by_id(driver, "submit").click()
    _wait(driver, lambda d: _by_id(d, "submit").is_enabled() and (
        not _by_id(d, "error").is_displayed() or _by_id(d, "error").text) and (
        (_by_id(d, "script").text, _by_id(d, "script-note").text) != before
        or _by_id(d, "error").is_displayed()))


def test_console_recommends_and_shows_the_answer(server, browser):
    from selenium.webdriver.common.by import By

    browser.get(f"{server.extra['url']}#token={server.token}")
    _wait(browser, lambda d: "model default_model" in _by_id(d, "who").text)
    assert "token" not in browser.current_url  # the fragment is dropped from the address bar
    assert not _by_id(browser, "auth").is_displayed()

    _ask(browser, "nbody", 3000, "energy")
    status, api, _ = server.request("POST", "/v1/recommend", {
        "workload": "nbody", "size": 3000, "objective": "energy", "emit": "slurm",
        "partition": ["lab/standard"]})
    assert status == 200 and api["pick"]
    pick = _by_id(browser, "pick-config").text
    assert pick == _config_text(api["pick"]) + " on lab/standard"
    assert _by_id(browser, "verdict").text == api["verdict"]["verdict"]
    script = _by_id(browser, "script").text
    assert script.startswith("#!/bin/bash") and "#SBATCH --partition=standard" in script
    assert script.strip() == api["script"].strip()
    rows = browser.find_elements(By.CSS_SELECTOR, "#alternatives tbody tr")
    assert len(rows) == len(api["alternatives"])
    dots = browser.find_elements(By.CSS_SELECTOR, "#plot svg circle.pt")
    assert len(dots) == len(api["front"]) >= 1
    others = browser.find_elements(By.CSS_SELECTOR, "#plot svg circle.alt")
    assert len(others) == len(api["alternatives"])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#plot svg circle.pick")) == 1
    _by_id(browser, "copy").click()
    _wait(browser, lambda d: _by_id(d, "copied").text == "copied")

    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACT))
    if os.environ.get("HPCDS1MPI_DOCS_SCREENSHOT") == "1":
        shutil.copyfile(ARTIFACT, DOCS_SHOT)
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []  # no script error, no blocked resource (CSP)


def test_console_shows_the_guard_reasons_when_it_escalates(server, browser):
    from selenium.webdriver.common.by import By

    _ask(browser, "stencil", 1000)
    assert _by_id(browser, "verdict").text == "escalate"
    assert "no settings guessed" in _by_id(browser, "pick-config").text
    reasons = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#reasons li")]
    assert any("beyond the measured range" in r for r in reasons)
    assert _by_id(browser, "calibration").is_displayed()
    assert "calibration sweep for stencil at size 1000" in _by_id(browser, "script").text
    assert not _by_id(browser, "script-note").is_displayed()


def test_console_shows_the_answer_and_why_there_is_no_script(server, browser):
    """The API refuses a question whose script cannot be written (422, as the command exits
    2); the console then shows the answer without the script, and the API's line as why."""
    from selenium.webdriver.common.by import By

    _ask(browser, "stencil", 4096)  # escalated; no calibration step fits in memory
    status, api, _ = server.request("POST", "/v1/recommend", {
        "workload": "stencil", "size": 4096, "emit": "slurm", "partition": ["lab/standard"]})
    assert status == 422
    assert not _by_id(browser, "error").is_displayed()
    assert _by_id(browser, "verdict").text == "escalate"
    reasons = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#reasons li")]
    assert any("beyond the measured range" in r for r in reasons)
    assert _by_id(browser, "script").text == ""
    assert _by_id(browser, "script-note").text == api["error"]


def test_console_shows_hostile_text_as_text(server, browser):
    from selenium.webdriver.common.by import By

    evil = '<img src=x id=evil onerror="document.title=1">'
    _ask(browser, evil, 10)
    reasons = " ".join(li.text for li in browser.find_elements(By.CSS_SELECTOR, "#reasons li"))
    assert evil in reasons
    assert browser.find_elements(By.ID, "evil") == [] and browser.title == "hpcds1mpi console"


def test_console_refuses_a_wrong_token(server, browser):
    browser.execute_script("sessionStorage.clear()")
    browser.get(f"{server.extra['url']}#token=not-the-token-at-all")
    _wait(browser, lambda d: "refused this token" in _by_id(d, "token-status").text)
    assert _by_id(browser, "auth").is_displayed()
    _by_id(browser, "token").send_keys(server.token)
    _by_id(browser, "token-use").click()
    _wait(browser, lambda d: not _by_id(d, "auth").is_displayed())
