"""A SLURM dry run says whether the jobs on the compute nodes can read the release and the other
inputs (aicd.site_profile.input_access_note): which come from the Hub and whether this
machine's Hub cache holds them (the folder layout huggingface_hub writes), which from local
files and whether they exist here; and a real dry run with the SLURM executor prints it."""

from __future__ import annotations

import os
import subprocess
import sys

import yaml
from aicd.config import validate_config
from aicd.generate.registry import load_registry
from aicd.plan import Plan
from aicd.site_profile import hub_cached, input_access_note, input_locations
from aicd.sources.loader import source_parts

SHA = "b7dc6d82257de6e0146d1e7b0831abd7088633af"


def hub_cache(root, repo, revision=SHA, ref=None):
    folder = root / "hub" / f"datasets--{repo.replace('/', '--')}"
    (folder / "snapshots" / revision).mkdir(parents=True)
    if ref:
        (folder / "refs").mkdir()
        (folder / "refs" / ref).write_text(revision)
    return {"HF_HOME": str(root)}


def test_the_release_tasks_are_found_and_their_cache_is_looked_up(repo, tmp_path):
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    validate_config(config)
    plan = Plan.from_config(config, load_registry(repo / "config" / "models.yaml"), {})
    found = input_locations(config, plan, source_parts)
    assert [w for w, _ in found] == ["task T1 (the release)", "task T2 (the release)", "task T3 (the release)"]
    empty = input_access_note(found, {"HF_HOME": str(tmp_path / "none")})
    assert len(empty) == 1 and "AICD-bench/AICD-Bench@b7dc6d82257d for task T1 (the release)" in empty[0]
    assert "not in this machine's Hub cache" in empty[0] and "must reach huggingface.co" in empty[0]
    assert "release.files" in empty[0]
    env = hub_cache(tmp_path, "AICD-bench/AICD-Bench")
    assert hub_cached("AICD-bench/AICD-Bench", SHA, env) and not hub_cached("AICD-bench/AICD-Bench", "0" * 40, env)
    offline = input_access_note(found, {**env, "HF_HUB_OFFLINE": "1"})[0]
    assert ": in this machine's Hub cache" in offline and "the nodes must share it" in offline
    missing = input_access_note(found, {"HF_HOME": str(tmp_path / "none"), "HF_HUB_OFFLINE": "1"})[0]
    assert "those jobs cannot read them" in missing


def test_a_branch_revision_is_read_through_its_ref(tmp_path):
    env = hub_cache(tmp_path, "org/data", ref="main")
    assert hub_cached("org/data", "main", env) and hub_cached("org/data", None, env)
    assert not hub_cached("org/data", "dev", env)


def test_local_files_are_checked_here(tmp_path):
    there = tmp_path / "t.parquet"
    there.write_bytes(b"x")
    line = input_access_note([("source a", {"files": str(there)}), ("source b", {"files": ["/nowhere/b.parquet"]})],
                             {}, cwd=tmp_path)[0]
    assert "2 local input files read by jobs on the compute nodes (source a, source b)" in line
    assert "1 not found here (e.g. /nowhere/b.parquet)" in line and "under /tmp" in line


def test_a_slurm_dry_run_prints_it(repo, tmp_path):
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"), "--directory", str(tmp_path), "-n",
           "--executor", "slurm", "--jobs", "1", "--configfile", str(repo / "config" / "demo.yaml"),
           "--config", f"results={tmp_path / 'results'}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("SLURM: ") and "local input file" in ln), None)
    # from a temporary folder the demo's relative path to the shared CodeAid table leads nowhere: said
    assert line is not None and "source trial" in line and "not found here" in line, proc.stderr[-3000:]
    assert not (tmp_path / "results" / "run.json").exists()  # a dry run claims nothing
