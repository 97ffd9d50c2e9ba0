"""The full demo's dry runs: on 2 CPU cores its generation jobs claim both for their two
servers and the judge one core; the GPU layer (config/llm_gpu.yaml on the full demo) asks one
GPU for every job that serves the local model, and for the zero-shot panel's statistics, one
server each; the rest ask for none."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import yaml
from components import require

pytestmark = pytest.mark.workflow


def dry_run(repo, trial_path, tmp_path, layers: tuple, cores: int) -> dict:
    """(rule, wildcards) -> (threads, gpus, priority) of every job the full demo plans with these layers."""
    (tmp_path / "override.yaml").write_text(yaml.safe_dump({"sources": {"trial": {"files": str(trial_path)}},
                                                             "results": str(tmp_path / "results")}))
    configs = [str(repo / "config" / n) for n in ("demo.yaml", "demo_llm.yaml", *layers)]
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"), "--directory", str(tmp_path),
           "--cores", str(cores), "-n", "--configfile", *configs, str(tmp_path / "override.yaml")]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    asks = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", proc.stdout):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        wildcards = re.search(r"wildcards: (.*)", block)
        threads = re.search(r"\bthreads: (\d+)", block)
        gpu = re.search(r"resources: .*\bgpu=(\d+)", block)
        priority = re.search(r"\bpriority: (\d+)", block)
        if rule:
            asks[(rule.group(1), wildcards.group(1) if wildcards else "")] = (
                int(threads.group(1)) if threads else 1, int(gpu.group(1)) if gpu else 0,
                int(priority.group(1)) if priority else 0)
    return asks


def require_local_model(repo, models_file: str) -> None:
    from aicd.generate.registry import load_registry, servable

    entry = load_registry([repo / "config" / "models.yaml", repo / "config" / models_file])
    missing = servable(entry["SmolLM2-135M-Instruct"])
    require(missing is None, f"the local model ({missing})", "make setup pinned-inputs")


def test_on_two_cores_the_generation_jobs_claim_both_and_the_judge_one(repo, trial_path, tmp_path):
    require_local_model(repo, "models_local.yaml")
    asks = dry_run(repo, trial_path, tmp_path, (), cores=2)
    threads = {rule: t for (rule, _), (t, _, _) in asks.items() if rule in ("instructions", "generate", "judge")}
    assert threads == {"instructions": 2, "generate": 2, "judge": 1}, threads
    # after the task splits the judge starts first, then the log-likelihood's statistics, fit and
    # calibration (the causal LM over the reference programs), before the second-long fits of the
    # same task and the other feature sets (5)
    first = {k for k, (_, _, priority) in asks.items()
             if priority == 10 and k[0] in ("judge", "detect", "calibrate", "features")}
    zs_loglik = "task=binary, detector=zs_loglik"
    assert {("judge", "judge=smollm2"), ("detect", zs_loglik), ("calibrate", zs_loglik),
            ("features", "task=binary, featureset=lm_smollm2")} <= first, sorted(first)
    assert asks[("detect", "task=binary, detector=lr_tfidf")][2] == 0
    assert asks[("features", "task=binary, featureset=tfidf")][2] == 5


def test_the_gpu_layer_asks_a_gpu_for_each_job_that_serves_the_model(repo, trial_path, tmp_path):
    require_local_model(repo, "models_local_gpu.yaml")
    planned = dry_run(repo, trial_path, tmp_path, ("llm_gpu.yaml",), cores=16)
    asks = {k: gpu for k, (_, gpu, _) in planned.items()}
    # one server of serve.threads per job on the one GPU, not the CPU demo's two
    assert {planned[k][0] for k in planned if k[0] in ("instructions", "generate", "judge")} == {4}
    served = {k for k in asks if k[0] in ("instructions", "generate", "judge")}
    assert {k[0] for k in served} == {"instructions", "generate", "judge"}, sorted(asks)
    assert all(asks[k] == 1 for k in served), {k: asks[k] for k in served}
    assert asks[("features", "task=binary, featureset=lm_smollm2")] == 1
    others = {k: v for k, v in asks.items() if k not in served and "lm_smollm2" not in k[1]}
    assert not any(others.values()), {k: v for k, v in others.items() if v}
