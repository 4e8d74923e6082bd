"""A headless Chromium driven over the DevTools protocol, with the standard library only.

Chromium is started with `--remote-debugging-pipe`: it reads protocol messages from its fd 3 and
writes to its fd 4, each a JSON object ended by a NUL byte, so no websocket and no port are
needed (and nothing listens on the network); two pipes are placed on those fds in the child.
The page runs with the network emulated offline; every request the page makes, every console
error and every uncaught exception is recorded for the test to check.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--remote-debugging-pipe"]
TIMEOUT = 60.0


def find_chromium() -> str | None:
    """The browser: $CHROMIUM, else chromium, chromium-browser or google-chrome on PATH."""
    given = os.environ.get("CHROMIUM")
    if given:
        return shutil.which(given)
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(Exception):
    pass


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, executable: str, width: int = 1280, height: int = 1800) -> None:
        self.executable = executable
        self.size = (width, height)
        self.profile = tempfile.mkdtemp(prefix="loa-mem-chromium-")
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self.next_id = 0
        self.session: str | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - its stderr, closed on exit

    # -- process and pipe
    def __enter__(self) -> Browser:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Far from 3 and 4, so that placing one cannot overwrite the other.
        child_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 20)
        child_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 20)
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)

        def place_pipes() -> None:  # in the child, before exec: its fds 3 and 4
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)

        command = [self.executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self.log,
                                        pass_fds=(3, 4),
                                        preexec_fn=place_pipes)  # noqa: PLW1509 - dup2 only
        os.close(child_r)
        os.close(child_w)
        threading.Thread(target=self._read, daemon=True).start()
        self._attach()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.process is not None and self.process.poll() is None:
                self._send("Browser.close", {}, session=False)
                self.process.wait(timeout=10)
        except (BrowserError, OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.process is not None and self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            for fd in (self._to_browser, self._from_browser):
                with contextlib.suppress(OSError):
                    os.close(fd)
            shutil.rmtree(self.profile, ignore_errors=True)
            self.log.close()

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self.messages.put(None)
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                self.messages.put(json.loads(raw))

    def _send(self, method: str, params: dict[str, Any], session: bool = True) -> int:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self.next_id

    def _next(self, deadline: float) -> dict[str, Any]:
        try:
            message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            raise BrowserError("the browser did not answer in time") from None
        if message is None:
            self.log.seek(0)
            stderr = self.log.read().decode(errors="replace")
            raise BrowserError(f"the browser closed its pipe: {stderr[-800:]}")
        return message

    def call(self, method: str, params: dict[str, Any] | None = None,
             session: bool = True) -> dict[str, Any]:
        wanted = self._send(method, params or {}, session)
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._next(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method: str) -> dict[str, Any]:
        for event in self.events:
            if event["method"] == method:
                self.events.remove(event)
                return event
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._next(deadline)
            if message.get("method") == method:
                return message
            if "method" in message:
                self.events.append(message)

    def _attach(self) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = self.call("Target.attachToTarget",
                             {"targetId": target["targetId"], "flatten": True}, session=False)
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Network.emulateNetworkConditions", {
            "offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        width, height = self.size
        self.call("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    # -- the page
    def open(self, path: Path) -> None:
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": path.resolve().as_uri()})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> bytes:
        data = base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])
        path.write_bytes(data)
        return data

    def settle(self) -> None:
        """Let pending events (console messages of the last script) arrive."""
        self.evaluate("new Promise(r => setTimeout(r, 50))")

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and requests for anything but the file itself."""
        found = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails']}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error",
                                                                                  "assert"):
                found.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(f"log: {params['entry'].get('text')}")
            elif method == "Network.requestWillBeSent" and not params["request"][
                    "url"].startswith(("file:", "data:", "about:")):
                found.append(f"request: {params['request']['url']}")
        return found
