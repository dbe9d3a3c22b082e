"""The HTML report in a real headless Chromium, driven over the DevTools protocol.

Chromium runs with ``--remote-debugging-pipe``: commands go to its fd 3 and replies
come from its fd 4, one NUL-terminated JSON message each, so no websocket library
is needed. Checked: the page loads without console errors or exceptions, typing
into the operator filter changes the number of rows shown, sorting reorders them,
and a screenshot comes back at the requested size and is not blank.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from synthetic_report import rounds_model
from zl_report import render

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe")
WIDTH, HEIGHT = 1200, 900


def _browser() -> str | None:
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


class Cdp:
    """A minimal DevTools client over the pipe: send a command, read until its reply."""

    def __init__(self, browser: str, profile: Path):
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Chromium expects the pipe at fds 3 (read) and 4 (write) of its own process.
        def bind():  # via fds >= 10 first, so neither end can clobber the other
            read_end = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            write_end = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.proc = subprocess.Popen([browser, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                     preexec_fn=bind, pass_fds=(3, 4),  # noqa: PLW1509 - single-threaded test
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict] = []

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("the browser closed its DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, session: str | None = None, **params) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read()
            self.events.append(event)
            if event.get("method") == method:
                return event

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)


def png_size_and_colours(data: bytes) -> tuple[int, int, int]:
    """(width, height, distinct byte values in the decompressed image data)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    idat, pos = b"", 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    browser = _browser()
    if browser is None:
        pytest.skip("no Chromium found (apt-get install -y chromium); the browser test needs one")
    root = tmp_path_factory.mktemp("browser")
    report = root / "report.html"
    report.write_text(render(rounds_model(1000), "html"), encoding="utf-8")
    cdp = Cdp(browser, root / "profile")
    try:
        target = cdp.send("Target.createTarget", url="about:blank")["targetId"]
        session = cdp.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            cdp.send(f"{domain}.enable", session)
        cdp.send("Emulation.setDeviceMetricsOverride", session, width=WIDTH, height=HEIGHT,
                 deviceScaleFactor=1, mobile=False)
        cdp.send("Page.navigate", session, url=report.as_uri())
        cdp.wait_for("Page.loadEventFired")
        yield cdp, session
    finally:
        cdp.close()


def evaluate(cdp: Cdp, session: str, expression: str):
    result = cdp.send("Runtime.evaluate", session, expression=expression, returnByValue=True)
    assert "exceptionDetails" not in result, result
    return result["result"].get("value")


VISIBLE = ("Array.prototype.filter.call(document.querySelector('table.ops').tBodies[0].rows,"
           " r => r.style.display !== 'none').length")


def test_the_page_loads_without_console_errors(page):
    cdp, session = page
    assert evaluate(cdp, session, "document.querySelectorAll('table.ops tbody tr').length") == 1000
    errors = [e for e in cdp.events
              if e.get("method") == "Runtime.exceptionThrown"
              or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
              or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
    assert errors == []
    assert evaluate(cdp, session, "document.querySelectorAll('script[src],link[href],img[src]').length") == 0


def test_typing_into_the_filter_changes_the_rows_shown(page):
    cdp, session = page
    assert evaluate(cdp, session, VISIBLE) == 1000
    evaluate(cdp, session, "document.querySelector('.filter input').focus()")
    cdp.send("Input.insertText", session, text="SLOWER")
    assert evaluate(cdp, session, VISIBLE) == 200  # every fifth synthetic operator is SLOWER
    assert evaluate(cdp, session, "document.querySelector('.filter span').textContent") == \
        "200 of 1000 operators"
    evaluate(cdp, session, "var i=document.querySelector('.filter input'); i.value='op0007';"
                           "i.dispatchEvent(new Event('input'))")
    assert evaluate(cdp, session, VISIBLE) == 1
    evaluate(cdp, session, "var i=document.querySelector('.filter input'); i.value='';"
                           "i.dispatchEvent(new Event('input'))")
    assert evaluate(cdp, session, VISIBLE) == 1000


def test_a_header_click_sorts_the_table(page):
    cdp, session = page
    first = "document.querySelector('table.ops').tBodies[0].rows[0].cells[0].textContent"
    assert evaluate(cdp, session, first) == "op0000"
    evaluate(cdp, session, "document.querySelector('table.ops thead th').click()")
    evaluate(cdp, session, "document.querySelector('table.ops thead th').click()")  # descending
    assert evaluate(cdp, session, first) == "op0999"


def test_a_screenshot_is_the_right_size_and_not_blank(page, tmp_path):
    cdp, session = page
    shot = base64.b64decode(cdp.send("Page.captureScreenshot", session, format="png")["data"])
    (tmp_path / "report.png").write_bytes(shot)
    width, height, colours = png_size_and_colours(shot)
    assert (width, height) == (WIDTH, HEIGHT)
    assert colours > 30  # a blank page decompresses to a handful of byte values
