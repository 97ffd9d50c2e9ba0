"""Worker pools (aicd.common.parallel.map_chunks): results in input order whatever the threads, and a
worker that dies ends the job with one line saying why, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

SCRIPT = """
import os
import sys
from aicd.common.parallel import map_chunks
from aicd.common.stagecli import run

def square(chunk):
    return [x * x for x in chunk]

def die(chunk):
    if chunk[0] >= {die_from}:
        os._exit(1)
    return chunk

def main(argv):
    out = [v for part in map_chunks(square, [[i, i + 1] for i in range(0, 40, 2)], 2) for v in part]
    assert out == [i * i for i in range(40)], out
    print("ordered", flush=True)
    list(map_chunks(die, [[i] for i in range(12)], 2))

if __name__ == "__main__":
    sys.exit(run(main))
"""


def run_script(tmp_path: Path, die_from: int) -> subprocess.CompletedProcess:
    script = tmp_path / "stage.py"
    script.write_text(SCRIPT.replace("{die_from}", str(die_from)))
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)


def test_results_come_back_in_input_order_and_a_dead_worker_is_one_clear_line(tmp_path):
    for die_from in (0, 6):  # at the first chunk, and after several results
        proc = run_script(tmp_path, die_from)
        assert proc.stdout.strip() == "ordered", proc.stderr
        assert proc.returncode == 2, proc.stderr
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith("error: a worker process of __main__.die died"), proc.stderr
        assert "Traceback" not in proc.stderr
