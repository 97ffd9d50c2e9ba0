"""The job graph is a function of the config, not of the machine: the dry run of the full
config plans the same jobs with and without a Docker daemon and API keys (a compute node
without either plans what the login node planned), and a job whose resource is missing
where it runs fails with one line that says what to start or set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from workflow.test_demo_workflow import planned_jobs

pytestmark = pytest.mark.workflow
DEAD_DOCKER = "unix:///nonexistent/aicd-test/docker.sock"
DEAD_PODMAN = "unix:///nonexistent/aicd-test/podman.sock"
# A machine where no container engine answers: Docker's socket and Podman's service both dead
# (CONTAINER_HOST names the Podman service to use, so an installed podman is not tried either).
NO_ENGINE = {"DOCKER_HOST": DEAD_DOCKER, "CONTAINER_HOST": DEAD_PODMAN}


def key_names(repo: Path) -> set[str]:
    registry = yaml.safe_load((repo / "config" / "models.yaml").read_text())
    models = registry.get("models", registry)
    return {m["api_key_env"] for m in models.values() if isinstance(m, dict) and m.get("api_key_env")}


def dry_run(repo: Path, workdir: Path, env_extra: dict, drop: set[str], *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **env_extra})
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"), "--directory", str(workdir),
           "--cores", "2", "-n", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def full_config_dry_runs(repo, tmp_path_factory):
    """The full config's dry runs without Docker and keys and with them, per tasks_from (each
    made once: the release evaluation's bare run is also read by a test below)."""
    keys, runs = key_names(repo), {}

    def get(tasks_from: str):
        if tasks_from not in runs:
            where = tmp_path_factory.mktemp(f"dag_{tasks_from}")
            mode = ("--config", f"tasks_from={tasks_from}")
            runs[tasks_from] = (dry_run(repo, where / "bare", NO_ENGINE, keys, *mode),
                                dry_run(repo, where / "loaded", dict.fromkeys(keys, "sk-test"), set(), *mode))
        return runs[tasks_from]
    return get


@pytest.mark.parametrize("tasks_from", ["release", "pool"])
def test_full_config_plans_the_same_jobs_with_and_without_docker_and_keys(repo, full_config_dry_runs, tasks_from):
    keys = key_names(repo)
    assert {"OPENAI_API_KEY", "GEMINI_API_KEY"} <= keys
    bare, loaded = full_config_dry_runs(tasks_from)
    jobs_bare, jobs_loaded = planned_jobs(bare.stdout), planned_jobs(loaded.stdout)
    assert jobs_bare == jobs_loaded
    rules = {r for r, _ in jobs_bare}
    # the machine-dependent stages are in both plans: judging always; generation and
    # execution in the full build (tasks_from=pool)
    assert {"judge", "table8"} <= rules
    if tasks_from == "pool":
        assert {"generate", "execute", "sandbox_image"} <= rules
    assert "LLM stages:" not in bare.stderr and "Sandbox:" not in bare.stderr


def test_release_evaluation_plans_no_generation_or_execution(repo, tmp_path, full_config_dry_runs):
    """The default (tasks_from: release) reads the released splits: generating and executing
    the 77 models' code would feed only the full build, so neither is planned."""
    rules = {r for r, _ in planned_jobs(full_config_dry_runs("release")[0].stdout)}
    assert {"detect", "judge", "table8"} <= rules
    assert not rules & {"generate", "execute", "sandbox_image", "source"}
    # config/no_llm.yaml (README: without keys or endpoints) leaves the judges out, keeps Table 8
    configs = [str(repo / "config" / name) for name in ("config.yaml", "no_llm.yaml")]
    rules = {r for r, _ in planned_jobs(dry_run(repo, tmp_path / "no_llm", {}, set(), "--configfile", *configs).stdout)}
    assert "judge" not in rules and {"detect", "table8"} <= rules


def test_demo_auto_is_resolved_once_and_recorded(repo, tmp_path):
    """`enabled: auto` (the demo) follows the submitting machine, and says so in results/resolved.json."""
    keys = key_names(repo)
    proc = dry_run(repo, tmp_path, NO_ENGINE, keys, "--configfile", str(repo / "config" / "demo.yaml"))
    resolved = json.loads((tmp_path / "results" / "resolved.json").read_text())
    # an optional source absent here (../shared seen from the temporary directory) is recorded
    # too, so jobs on other nodes leave out the same source without looking for its files
    absent = resolved.pop("absent_sources")
    assert resolved == {"execution": False, "generators": [], "instructor": False, "judges": []}
    assert list(absent) == ["codeaid"] and absent["codeaid"].endswith("codeaid_answers.parquet")
    assert "Optional source codeaid:" in proc.stderr
    assert "Sandbox: no Docker daemon answers" in proc.stderr
    assert not [r for r, _ in planned_jobs(proc.stdout) if r in ("execute", "generate", "judge")]


@pytest.mark.parametrize("engine, message", [
    ("docker", "no Docker daemon answers: install docker.io and start dockerd (see README, Sandbox)"),
    ("auto", f"no Podman service answers at {DEAD_PODMAN} (CONTAINER_HOST)"),
])
def test_execute_without_an_engine_fails_with_one_line(tmp_path, engine, message):
    import pandas as pd

    table = tmp_path / "t.parquet"
    pd.DataFrame({"id": ["a"], "code": ["print(1)"], "language": ["Python"]}).to_parquet(table)
    env = {**os.environ, **NO_ENGINE}
    proc = subprocess.run([sys.executable, "-m", "aicd.sandbox", "execute", "--engine", engine, "--input", str(table),
                           "--name", "t", "--image", "aicd-sandbox:x", "--out", str(tmp_path / "o.parquet"),
                           "--report", str(tmp_path / "r.json")], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {message}"]
    assert "Traceback" not in proc.stderr


def test_judge_without_its_key_fails_with_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GEMINI_API_KEY"}
    model = json.dumps({"name": "gemma-3-27b-it", "api_key_env": "GEMINI_API_KEY", "params": {}})
    run = {"task": "T1", "mode": "zs", "test": "x.parquet", "labels": ["human", "machine"],
           "out": str(tmp_path / "o"), "report": str(tmp_path / "r")}
    proc = subprocess.run([sys.executable, "-m", "aicd.judge", "--model", model, "--runs", json.dumps([run]),
                           "--prompts", "p.yaml"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "set GEMINI_API_KEY" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr
