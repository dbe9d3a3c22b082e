"""Headless Chromium driven over the DevTools protocol, with no library beyond the standard one.

Chromium runs with ``--remote-debugging-pipe``: commands go to its fd 3 and replies
come from its fd 4, one NUL-terminated JSON message each, so no websocket library
is needed. Used by tests/test_report_browser.py and by
docs/validation/scripts/report_screenshots.py (the pictures in docs/report-html.md).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-pipe")


def find_browser() -> str | None:
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
                                     preexec_fn=bind, pass_fds=(3, 4),  # preexec_fn: a single-threaded test
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

    def wait_for(self, method: str, session: str | None = None) -> dict:
        """The first event ``method`` (of ``session``, when given) not waited for yet."""
        def mine(event: dict) -> bool:
            return event.get("method") == method and (session is None or event.get("sessionId") == session)

        for event in self.events:
            if mine(event) and not event.get("_seen"):
                event["_seen"] = True
                return event
        while True:
            event = self._read()
            self.events.append(event)
            if mine(event):
                event["_seen"] = True
                return event

    def open(self, url: str, width: int, height: int) -> str:
        """A new tab of ``width`` x ``height`` CSS pixels showing ``url``; its session id."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session)
        self.send("Emulation.setDeviceMetricsOverride", session, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        self.send("Page.navigate", session, url=url)
        self.wait_for("Page.loadEventFired", session)
        return session

    def evaluate(self, session: str, expression: str, *, wait: bool = False):
        """The value of ``expression`` in the page (of the promise it returns, with ``wait``)."""
        result = self.send("Runtime.evaluate", session, expression=expression, returnByValue=True,
                           awaitPromise=wait)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self, session: str) -> list[dict]:
        """Exceptions and console errors the page of ``session`` reported."""
        return [e for e in self.events if e.get("sessionId") == session and (
            e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"))]

    def screenshot(self, session: str, *, clip: tuple[float, float] | None = None) -> bytes:
        """A PNG of the viewport, or of the page's full width from ``clip`` = (top, height)
        in CSS pixels."""
        params: dict = {"format": "png"}
        if clip:
            width = self.evaluate(session, "document.documentElement.clientWidth")
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": clip[0], "width": width, "height": clip[1], "scale": 1})
        return base64.b64decode(self.send("Page.captureScreenshot", session, **params)["data"])

    def close_tab(self, session: str) -> None:
        target = self.send("Target.getTargetInfo", session)["targetInfo"]["targetId"]
        self.send("Target.closeTarget", targetId=target)

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


@contextlib.contextmanager
def started_browser():
    """A Cdp on a throw-away profile for a script: exits with a one-line message where no
    Chromium is installed, and closes the browser however the block ends."""
    browser = find_browser()
    if browser is None:
        sys.exit("no Chromium found (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        cdp = Cdp(browser, Path(tmp) / "profile")
        try:
            yield cdp, Path(tmp)
        finally:
            cdp.close()


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
