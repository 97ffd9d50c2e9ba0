"""Headless Chromium driven over the DevTools protocol (aiohttp's websocket client): open a
page, run JavaScript in it, save a screenshot. For checking Snakemake's HTML report renders."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

BINARIES = ("chromium-headless-shell", "chromium", "chromium-browser")


def chromium() -> str | None:
    return next((shutil.which(b) for b in BINARIES if shutil.which(b)), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Page:
    """One page of a headless Chromium; `js` evaluates an expression and returns its value."""

    def __init__(self, binary: str, width: int = 1400, height: int = 1000):
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [binary, "--no-sandbox", "--disable-gpu", f"--remote-debugging-port={self.port}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json", timeout=2) as resp:
                    targets = json.load(resp)
                self.ws_url = next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"]
                break
            except (OSError, StopIteration, ValueError) as err:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.close()
                    raise RuntimeError(f"{binary} did not open its DevTools port") from err
                time.sleep(0.2)

    def run(self, steps):
        """Run `steps(call)` (an async function of a DevTools `call(method, **params)`)."""
        return asyncio.run(self._session(steps))

    async def _session(self, steps):
        import aiohttp

        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(self.ws_url, max_msg_size=0) as ws:
                ids = iter(range(1, 1 << 30))

                async def call(method, **params):
                    my = next(ids)
                    await ws.send_json({"id": my, "method": method, "params": params})
                    while True:
                        msg = json.loads((await asyncio.wait_for(ws.receive(), 60)).data)
                        if msg.get("id") == my:
                            if "error" in msg:
                                raise RuntimeError(f"{method}: {msg['error']}")
                            return msg["result"]

                return await steps(call)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


async def evaluate(call, expression: str):
    result = await call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
    return result["result"].get("value")


async def screenshot(call, path: Path) -> None:
    shot = await call("Page.captureScreenshot", format="png")
    path.write_bytes(base64.b64decode(shot["data"]))
