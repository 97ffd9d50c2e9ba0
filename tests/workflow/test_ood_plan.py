"""config/ood.yaml plans the out-of-distribution protocol as ordinary tasks: eleven splits cut
by rule ood_split, every detector on each, and the table that puts them side by side."""

from __future__ import annotations

from collections import Counter

import pytest

from workflow.test_demo_workflow import SNAKEMAKE, planned_jobs

pytestmark = pytest.mark.workflow


def test_ood_config_plans_eleven_splits_every_detector_and_one_table(repo, tmp_path):
    import os
    import subprocess

    import yaml

    config = yaml.safe_load((repo / "config" / "ood.yaml").read_text())
    proc = subprocess.run([*SNAKEMAKE, "--snakefile", str(repo / "Snakefile"), "--directory", str(tmp_path), "-n",
                           "--configfile", str(repo / "config" / "ood.yaml")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = Counter(rule for rule, _ in planned_jobs(proc.stdout))
    tasks, detectors = len(config["tasks"]), len(config["detectors"])
    assert tasks == 11 and jobs["ood_split"] == 11 and jobs["task_split"] == 0
    assert jobs["detect"] == jobs["score"] == tasks * detectors
    assert jobs["features"] == tasks * len(config["features"])
    assert jobs["ood_table"] == 1
