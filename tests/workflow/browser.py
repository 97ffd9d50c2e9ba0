"""Headless Chromium driven over the DevTools protocol: open a page, run JavaScript in it, save a
screenshot. For checking that Snakemake's HTML report and the leaderboard page render.

The protocol runs over a pipe (--remote-debugging-pipe: the browser reads commands on its file
descriptor 3 and answers on 4), not a port: no other process on the machine can drive the
browser, and when this process ends, however it ends, the pipe closes and the browser quits.
The browser runs in a session and process group of its own (Debian's chromium-headless-shell is
a shell script whose child is the browser, with its zygote, GPU, network and renderer processes
below it), and close() stops that whole group and removes the browser's profile folder. Page is
a context manager; a page nobody closed is closed when it is collected or at exit."""

from __future__ import annotations

import atexit
import base64
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from pathlib import Path

BINARIES = ("chromium-headless-shell", "chromium", "chromium-browser")
ANSWER_S = 60  # the longest a DevTools call may take


def chromium() -> str | None:
    return next((shutil.which(b) for b in BINARIES if shutil.which(b)), None)


def group_members(pgid: int) -> list[int]:
    """The live processes (zombies aside) of a process group."""
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(name))
    return members


def stop_group(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    """SIGTERM to the process group led by proc, SIGKILL to what is left after grace_s; returns
    once no process of the group is left (the leader reaped). The leader may be gone while its
    children live on (a wrapper script's browser), so the group is signalled whatever the
    leader's state."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 30.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        end = time.monotonic() + wait_s
        while time.monotonic() < end:
            proc.poll()
            if not group_members(proc.pid):
                proc.wait()
                return
            time.sleep(0.05)
    proc.wait()


def _close(proc, fds, profile, owned) -> None:
    """What Page.close does, also from a finalizer (it holds no reference to the page)."""
    for fd in fds:
        try:
            os.close(fd)  # the browser sees its pipe close and quits
        except OSError:
            pass
    if proc is not None:
        stop_group(proc)
    if owned:
        shutil.rmtree(profile, ignore_errors=True)


class Page:
    """One page of a headless Chromium; `run(steps)` gives steps an async DevTools `call`.
    folder: where the browser keeps its profile (a temporary folder of its own by default)."""

    def __init__(self, binary: str, width: int = 1400, height: int = 1000, folder: Path | None = None):
        owned = folder is None
        self.profile = Path(tempfile.mkdtemp(prefix="aicd-browser-")) if owned else Path(folder)
        self.profile.mkdir(parents=True, exist_ok=True)
        for_browser, self._commands = os.pipe()   # the browser's fd 3: what it reads
        self._answers, from_browser = os.pipe()   # the browser's fd 4: what it writes

        def descriptors():  # in the child, before exec
            os.dup2(for_browser, 3)
            os.dup2(from_browser, 4)

        self.proc = None
        self._finalizer = weakref.finalize(self, _close, None, (self._commands, self._answers), self.profile, owned)
        try:
            self.proc = subprocess.Popen(
                [binary, "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
                 "--disable-crash-reporter", "--disable-breakpad", f"--user-data-dir={self.profile}",
                 f"--window-size={width},{height}", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(3, 4), preexec_fn=descriptors, start_new_session=True)
        finally:
            os.close(for_browser)
            os.close(from_browser)
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _close, self.proc, (self._commands, self._answers), self.profile,
                                           owned)
        atexit.register(self._finalizer)
        self._buffer, self._ids = b"", iter(range(1, 1 << 30))
        try:
            targets = self._call("Target.getTargets", timeout_s=30)["targetInfos"]
            target = next(t["targetId"] for t in targets if t["type"] == "page")
            self.session = self._call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        except (OSError, RuntimeError, StopIteration) as err:
            self.close()
            raise RuntimeError(f"{binary} did not answer on its DevTools pipe: {err}") from err

    def _call(self, method: str, session: str | None = None, timeout_s: float = ANSWER_S, **params):
        """Send one DevTools command and wait for its answer (events on the way are skipped)."""
        my = next(self._ids)
        message = {"id": my, "method": method, "params": params, **({"sessionId": session} if session else {})}
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        end = time.monotonic() + timeout_s
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == my:
                    if "error" in answer:
                        raise RuntimeError(f"{method}: {answer['error']}")
                    return answer["result"]
            left = end - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise RuntimeError(f"{method}: no answer within {timeout_s:g} s")
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                raise RuntimeError(f"{method}: the browser closed its DevTools pipe")
            self._buffer += chunk

    def run(self, steps):
        """Run `steps(call)` (an async function of a DevTools `call(method, **params)` on the page)."""
        import asyncio

        async def call(method, **params):
            return self._call(method, self.session, **params)

        return asyncio.run(steps(call))

    def close(self) -> None:
        """Stop the browser's whole process group and remove its profile folder (if it made it)."""
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


async def evaluate(call, expression: str):
    result = await call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
    return result["result"].get("value")


async def screenshot(call, path: Path) -> None:
    shot = await call("Page.captureScreenshot", format="png")
    path.write_bytes(base64.b64decode(shot["data"]))
