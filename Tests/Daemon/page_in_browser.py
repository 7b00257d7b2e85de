#!/usr/bin/env python3
"""Drives braid daemon's web page in headless Chromium through Selenium, as a person with a browser would.

Opens ``PAGE/#token=SECRET``, waits for ``#connection`` to say ``connected`` (its WebSocket is open), adds the test
server's URL through ``#add-url`` and ``#add-button``, waits for its ``.download`` row and for ``data-completed`` to
grow, saves a screenshot mid-download (``--screenshot``), clicks ``.pause`` (``data-status`` becomes ``paused``, and
the daemon agrees over JSON-RPC), clicks ``.resume`` (``active``), and waits for ``complete``; the file must hold
exactly the bytes the server serves. The server must be throttled so the download is still running when paused.

    page_in_browser.py --page-url http://127.0.0.1:PORT/ --secret S --file-url http://127.0.0.1:P2/file \\
        --dir DIR --screenshot page.png

Needs Debian's chromium and chromium-driver (scripts/install-deps). Exits 0 when every check holds, 1 otherwise.
"""

import os
import shutil

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from daemon_common import (
    RPC,
    check,
    check_file,
    common_arguments,
    die_with_parent,
    keep_going,
    content_length,
    expected_content,
    run,
    wait_for_daemon,
    wait_until,
)

TIMEOUT = 120


def browser():
    """Headless Chromium driven by Debian's chromedriver."""
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    # chromedriver dies with this script even if it is killed before driver.quit() (a test's timeout).
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver", popen_kw={"preexec_fn": die_with_parent})
    return webdriver.Chrome(options=options, service=service)


def main():
    parser = common_arguments(__doc__)
    parser.add_argument("--page-url", required=True, help="the daemon's page, http://HOST:PORT/")
    parser.add_argument("--screenshot", required=True, help="where to save a PNG of the page mid-download")
    parser.add_argument("--rpc-url", help="the daemon's JSON-RPC URL (default: PAGE/jsonrpc, as braid serves both)")
    options = parser.parse_args()
    if options.keep_going:
        keep_going()
    size = content_length(options.file_url)
    expected = expected_content(size, options.seed)
    rpc_url = options.rpc_url or options.page_url.rstrip("/") + "/jsonrpc"
    wait_for_daemon(rpc_url, options.secret)
    rpc = RPC(rpc_url, options.secret)

    driver = browser()
    try:
        exercise(driver, rpc, options, size, expected)
    except BaseException:
        failure_shot = os.path.splitext(options.screenshot)[0] + "-failure.png"
        try:
            driver.save_screenshot(failure_shot)
            print(f"page at failure: {failure_shot}\n{driver.page_source[:4000]}", flush=True)
            for entry in driver.get_log("browser"):
                print(f"console: {entry}", flush=True)
        except WebDriverException:
            pass
        raise
    finally:
        driver.quit()
        rpc.close()


def exercise(driver, rpc, options, size, expected):
    def attribute(gid, name):
        """An attribute of the row for ``gid`` now, or None while it is absent (the page may redraw it)."""
        try:
            rows = driver.find_elements(By.CSS_SELECTOR, f'.download[data-gid="{gid}"]')
            return rows[0].get_attribute(name) if rows else None
        except StaleElementReferenceException:
            return None

    def click(gid, button):
        def clicked():
            try:
                driver.find_element(By.CSS_SELECTOR, f'.download[data-gid="{gid}"] .{button}').click()
                return True
            except StaleElementReferenceException:
                return False

        wait_until(f"the {button} button of {gid} to take a click", TIMEOUT, clicked)

    driver.get(options.page_url.rstrip("/") + f"/#token={options.secret}")
    wait_until(
        "#connection to say connected",
        TIMEOUT,
        lambda: driver.find_element(By.ID, "connection").text.strip() == "connected",
    )

    before = {row.get_attribute("data-gid") for row in driver.find_elements(By.CSS_SELECTOR, ".download")}
    driver.find_element(By.ID, "add-url").send_keys(options.file_url)
    driver.find_element(By.ID, "add-button").click()

    def new_row():
        gids = {row.get_attribute("data-gid") for row in driver.find_elements(By.CSS_SELECTOR, ".download")} - before
        return gids.pop() if len(gids) == 1 else None

    gid = wait_until("a new .download row after #add-button", TIMEOUT, new_row)
    listed = rpc.call("aria2.tellStatus", gid, ["gid", "status", "files", "totalLength"])
    check(listed["gid"] == gid, f"the row's data-gid {gid} is not a gid the daemon knows: {listed}")
    # The path is empty until the server's answer has named the file (as aria2 reports it): on a loaded machine
    # that can come after the row does.
    path = wait_until(
        "the download's path to be chosen",
        TIMEOUT,
        lambda: rpc.call("aria2.tellStatus", gid, ["files"])["files"][0]["path"],
    )
    check(os.path.dirname(path) == os.path.abspath(options.dir), f"the page's download goes to {path}, not --dir")

    check(
        driver.find_elements(By.CSS_SELECTOR, f'.download[data-gid="{gid}"] .segment-map'),
        "the row has no .segment-map",
    )
    first = int(wait_until("data-completed to be set", TIMEOUT, lambda: attribute(gid, "data-completed")) or 0)
    wait_until(
        "data-completed to grow",
        TIMEOUT,
        lambda: int(attribute(gid, "data-completed") or 0) > first,
    )
    wait_until("data-total to be the file's size", TIMEOUT, lambda: attribute(gid, "data-total") == str(size))
    check(attribute(gid, "data-status") == "active", f"data-status is {attribute(gid, 'data-status')} mid-download")
    check(driver.save_screenshot(options.screenshot), f"could not save a screenshot to {options.screenshot}")
    check(os.path.getsize(options.screenshot) > 0, f"the screenshot {options.screenshot} is empty")

    click(gid, "pause")
    wait_until("data-status to become paused", TIMEOUT, lambda: attribute(gid, "data-status") == "paused")
    daemon_status = rpc.call("aria2.tellStatus", gid, ["status", "completedLength"])
    check(daemon_status["status"] == "paused", f"the page says paused, the daemon says {daemon_status}")
    check(int(daemon_status["completedLength"]) < size, "the download finished before the pause; throttle harder")

    click(gid, "resume")
    wait_until(
        "data-status to become active again",
        TIMEOUT,
        lambda: attribute(gid, "data-status") in ("active", "complete"),
    )
    wait_until("data-status to become complete", TIMEOUT, lambda: attribute(gid, "data-status") == "complete")
    check(attribute(gid, "data-completed") == str(size), f"data-completed is {attribute(gid, 'data-completed')}")
    check_file(path, expected, "the download added through the page")


if __name__ == "__main__":
    run(main)
