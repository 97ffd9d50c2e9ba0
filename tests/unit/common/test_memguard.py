"""The memory watcher of every heavy job (aicd.common.memguard): past its mem_mb a job stops with one
line naming the job, its input size and the resource to raise; at the end it logs its peak
memory summed over its processes and their CPU (what benchmarks/paper_scale.py reads)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

STAGE = """
import sys
import time
from aicd.common.stagecli import run

def main(argv):
    import numpy as np
    from aicd.common.parallel import map_chunks
    ballast = np.ones(({rows}, 1000))  # {rows} x 8 KB
    time.sleep(1.5)  # held over three of the watcher's samples (every 0.5 s)
    if {rows} == 0:
        from aicd.common.errors import AicdError
        raise AicdError("nothing to do here")
    list(map_chunks(work, [["x = 1"] * 50] * 4, 2))
    open(sys.argv[1], "w").write("done")

def work(codes):
    from aicd.normalize.langid import cue_scores
    time.sleep(1.0)  # alive over two of the watcher's samples, however busy the machine
    return [cue_scores(c) for c in codes]

if __name__ == "__main__":
    sys.exit(run(main))
"""


def run_stage(tmp_path: Path, rows: int, limit_mb: int) -> subprocess.CompletedProcess:
    script = tmp_path / "stage.py"
    script.write_text(STAGE.replace("{rows}", str(rows)))
    env = {**os.environ, "AICD_MEM_MB": str(limit_mb), "AICD_JOB": "detect T1 toy",
           "PYTHONPATH": str(REPO / "workflow")}
    return subprocess.run([sys.executable, str(script), str(tmp_path / "out.txt")], capture_output=True, text=True,
                          env=env, timeout=300)


def test_a_job_over_its_memory_stops_with_a_line_that_says_what_to_raise(tmp_path):
    proc = run_stage(tmp_path, rows=100_000, limit_mb=400)  # 800 MB of ballast
    assert proc.returncode == 3, proc.stderr
    line = [x for x in proc.stderr.splitlines() if x.startswith("error: job detect T1 toy")]
    assert line and "needs more than its 400 MB" in line[0] and "--set-resources detect:mem_mb=800" in line[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out.txt").exists()


def test_a_finished_job_logs_its_peak_memory_and_cpu_over_its_processes(tmp_path):
    spec = importlib.util.spec_from_file_location("paper_scale_meter", REPO / "benchmarks" / "paper_scale.py")
    paper_scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(paper_scale)
    proc = run_stage(tmp_path, rows=30_000, limit_mb=4000)  # 240 MB of ballast
    assert proc.returncode == 0, proc.stderr
    found = paper_scale.METER.findall(proc.stderr)
    assert len(found) == 1, proc.stderr
    peak, cpu = (float(v.replace(",", "")) for v in found[0])
    assert peak >= 240 and cpu > 0
    assert "summed over" in proc.stderr and "processes" in proc.stderr  # the workers were counted


def test_a_user_error_stays_the_last_line_with_the_meter_before_it(tmp_path):
    proc = run_stage(tmp_path, rows=0, limit_mb=4000)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[-1] == "error: nothing to do here"
    assert lines[-2].startswith("memguard: job detect T1 toy: peak memory")
    assert sum(line.startswith("memguard:") for line in lines) == 1
