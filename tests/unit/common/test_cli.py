import subprocess
import sys

import pandas as pd
import pytest

STAGES = ["sources", "splits", "features", "detectors", "scoring", "report"]


def run(repo, *args):
    env = {"PYTHONPATH": str(repo / "workflow"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_has_a_help(repo, stage):
    proc = run(repo, f"aicd.{stage}", "--help")
    assert proc.returncode == 0 and "usage: python -m aicd." in proc.stdout


def test_user_error_is_one_line_and_exit_2(repo, tmp_path):
    src = tmp_path / "x.parquet"
    pd.DataFrame({"text": ["x"]}).to_parquet(src)
    out = tmp_path / "out.parquet"
    proc = run(repo, "aicd.sources", "--name", "x", "--spec", f'{{"files": "{src}"}}',
               "--out", str(out), "--report", str(tmp_path / "r.json"))
    assert proc.returncode == 2
    assert "error: x: the table has no 'code' column" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_bad_json_spec_is_a_user_error(repo, tmp_path):
    proc = run(repo, "aicd.features", "--spec", "{not json", "--out", "a", "--model", "b", "--report", "c")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
