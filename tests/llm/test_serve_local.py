"""`aicd serve-local` with the real local model server (SmolLM2-135M-Instruct, `transformers serve`
on loopback): Ctrl-C (SIGINT) stops it as SIGTERM does, while it serves and while it is still
starting: exit 0, no traceback, one line saying so, and no server process left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from components import require

REPO = Path(__file__).resolve().parents[2]


def children(pid: int) -> set[int]:
    """Pids whose parent is `pid` (the server runs in a session of its own, but is our child)."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.add(int(entry))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def servable():
    from aicd.generate.registry import load_registry, servable

    entry = load_registry([REPO / "config" / "models.yaml", REPO / "config" / "models_local.yaml"])["SmolLM2-135M-Instruct"]
    missing = servable(entry)
    require(missing is None, f"the local model ({missing})", "make setup pinned-inputs")


@pytest.mark.parametrize("sig, phase", [(signal.SIGINT, "serving"), (signal.SIGINT, "starting"),
                                        (signal.SIGTERM, "serving")])
def test_a_signal_stops_the_server_cleanly(servable, sig, phase):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    aicd = [sys.executable, "-c", "import sys; from aicd.cli import main; sys.exit(main(sys.argv[1:]))"]
    proc = subprocess.Popen([*aicd, "serve-local", "SmolLM2-135M-Instruct"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        if phase == "serving":
            line = proc.stdout.readline()  # printed once the server answers its health check
            assert "served at http://127.0.0.1:" in line, line
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not children(proc.pid):
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.1)
        server = children(proc.pid)
        assert server, "no server was started"
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert f"{signal.Signals(sig).name}: stopping the server" in err and "stopped (status" in err
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(alive(pid) for pid in server):
        time.sleep(0.2)
    assert not any(alive(pid) for pid in server), "the server is still running"
