"""Start the local OpenAI-compatible test server (tests/openai_server.py) in a subprocess.

A frontier LLM cannot run on the build machine; this server speaks the real protocol over
real HTTP with deterministic completions and injectable faults."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@contextmanager
def running_server(slow: float = 3.0):
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "openai_server.py"), "--port", "0", "--slow", str(slow)],
                            stdout=subprocess.PIPE, text=True, env={"PATH": "/usr/bin:/bin"})
    try:
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"test server did not start: {line!r}")
        yield Server(int(line.split()[1]))
    finally:
        proc.kill()
        proc.wait()


class Server:
    def __init__(self, port: int):
        self.port = port
        self.api_base = f"http://127.0.0.1:{port}/v1"

    def stats(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats") as r:
            return json.loads(r.read())

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{self.port}/reset", method="POST")).read()

    def model(self, **extra) -> dict:
        return {"name": "local-test", "family": "OpenAI", "litellm_model": "openai/local-test",
                "api_base": self.api_base, **extra}
