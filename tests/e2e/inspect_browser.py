"""Drives Debian's headless chromium over the inspector page, step by step.

Run by crates/mcpl-cli/tests/inspect_browser.rs: argv[1] is the page URL, argv[2] the
screenshot path. Commands arrive on stdin, one per line; each prints `ok ...` or exits
non-zero with the reason.
  wait-instance NAME     the page lists instance NAME
  mark URL               remember the page object (no reload from here on)
  wait-marks N           the timeline has exactly N marks, as many as change rows
  wait-text TEXT         TEXT appears in the page
  wait-css SEL           an element matches the CSS selector SEL
  wait-css-text SEL|TEXT an element matching SEL has exactly the text TEXT
  wait-above SEL|N       an element matching SEL reads a number (its first word) above N
  read SEL               prints `ok TEXT`, the text of the first element matching SEL
                         (its line breaks as spaces: one answer is one line)
  shot                   save the screenshot now (else `finish` saves it)
  finish                 no reload happened, no console error; save the screenshot
"""
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

WAIT = 30


def until(what, check):
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        try:
            value = check()
        except StaleElementReferenceException:
            value = None  # the page redrew under us: look again
        if value:
            return value
        time.sleep(0.1)
    sys.exit(f"timed out waiting for {what}")


def main():
    url, shot = sys.argv[1], sys.argv[2]
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--window-size=1200,900",
                 f"--user-data-dir={tempfile.mkdtemp(prefix='mcpl-inspect-')}"]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    shot_taken = False
    try:
        driver.get(url)
        # A marker that a reload would wipe.
        driver.execute_script("window.__mcplNoReload = true;")
        print("ok loaded", flush=True)
        for line in sys.stdin:
            cmd, _, arg = line.strip().partition(" ")
            if cmd == "wait-instance":
                until(f"instance {arg}", lambda: driver.find_elements(
                    By.CSS_SELECTOR, f'.toolset[data-instance="{arg}"]'))
            elif cmd == "wait-marks":
                n = int(arg)
                def marks():
                    m = len(driver.find_elements(By.CSS_SELECTOR, "#timeline circle.mark"))
                    rows = len(driver.find_elements(By.CSS_SELECTOR, "#changes tbody tr"))
                    return m == n and rows == n
                until(f"{n} marks", marks)
            elif cmd == "wait-text":
                until(f"text {arg!r}", lambda: arg in driver.find_element(By.TAG_NAME, "body").text)
            elif cmd == "wait-css":
                until(f"selector {arg!r}", lambda: driver.find_elements(By.CSS_SELECTOR, arg))
            elif cmd == "wait-css-text":
                sel, _, text = arg.partition("|")
                until(f"{sel!r} reading {text!r}", lambda: any(
                    e.text == text for e in driver.find_elements(By.CSS_SELECTOR, sel)))
            elif cmd == "wait-above":
                sel, _, floor = arg.partition("|")
                def above():
                    for e in driver.find_elements(By.CSS_SELECTOR, sel):
                        try:
                            if float(e.text.split()[0]) > float(floor):
                                return True
                        except (ValueError, IndexError):
                            pass
                    return False
                until(f"{sel!r} above {floor}", above)
            elif cmd == "read":
                def first_text():
                    found = driver.find_elements(By.CSS_SELECTOR, arg)
                    return found and (found[0].text,)
                (text,) = until(f"selector {arg!r}", first_text)
                print("ok " + " ".join(text.splitlines()), flush=True)
                continue
            elif cmd == "shot":
                driver.save_screenshot(shot)
                shot_taken = True
            elif cmd == "finish":
                if not driver.execute_script("return window.__mcplNoReload === true;"):
                    sys.exit("the page was reloaded")
                errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
                if errors:
                    sys.exit(f"browser console errors: {errors}")
                if not shot_taken:
                    driver.save_screenshot(shot)
                print("ok finished", flush=True)
                return
            else:
                sys.exit(f"unknown command {cmd!r}")
            print(f"ok {cmd}", flush=True)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
