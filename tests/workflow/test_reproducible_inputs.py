"""Two runs of a small demo slice in two temporary directories give the same fingerprint and
byte-identical tables, even when the second machine has extra installed-looking sources (a
fake Go standard library and extra archives beside the pinned cache); a run with one changed
input file gets another fingerprint, and `aicd verify` names that input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

pytestmark = pytest.mark.workflow
KEEP = ("majority", "lr_tfidf", "svm_ast")  # classical detectors only: a few minutes on 2 cores


def slice_config(repo: Path, trial: Path) -> dict:
    """The demo with 300 trial rows, 15 gathered programs per language, no CodeAid, the binary
    task and KEEP's detectors on TF-IDF and AST features."""
    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    config["sources"]["trial"].update(files=str(trial), limit=300)
    config["sources"]["local_code"]["gather"]["per_language"] = 15
    config["sources"].pop("codeaid")
    config["dataset"]["sources"] = [s for s in config["dataset"]["sources"] if s != "codeaid"]
    config["tasks"] = {"binary": config["tasks"]["binary"]}
    config["detectors"] = {d: config["detectors"][d] for d in KEEP}
    config["features"] = {k: v for k, v in config["features"].items() if k in ("tfidf", "ast")}
    for key in ("execution", "judging", "generation"):
        config.pop(key, None)
    return config


def snakemake(repo: Path, workdir: Path, config: dict, env_extra: dict, *targets: str) -> subprocess.CompletedProcess:
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"), "--directory", str(workdir),
           "--cores", "2", *targets, "--configfile", str(workdir / "config.yaml")]
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "GEMINI_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **env_extra})
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1500)
    if proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def aicd(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from aicd.cli import main; sys.exit(main())", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def runs(slice_run, slice_run_b):
    """Machine A (a local run) and machine B (its own cache with extra archives and an
    installed-looking Go tree: tests/workflow/conftest.py; the SLURM run where SLURM runs here)."""
    a, proc_a, config = slice_run
    return a, proc_a, slice_run_b["workdir"], slice_run_b["proc"], config


def test_two_runs_have_one_fingerprint_and_byte_identical_tables(runs):
    a, proc_a, b, _, _ = runs
    ia = json.loads((a / "results" / "inputs.json").read_text())
    ib = json.loads((b / "results" / "inputs.json").read_text())
    assert ia["fingerprint"] == ib["fingerprint"] and ia["inputs"].keys() == ib["inputs"].keys()
    assert any(k.startswith("source:local_code/package:") for k in ia["inputs"])
    assert any(k.startswith("source:trial/file:") and v["sha256"] for k, v in ia["inputs"].items())
    for name in ("table4.tex", "table4.md"):
        assert (a / "results" / "tables" / name).read_bytes() == (b / "results" / "tables" / name).read_bytes()
    tex = (a / "results" / "tables" / "table4.tex").read_text()
    assert tex.startswith(f"% inputs: {ia['fingerprint']} code: {ia['code']}\n")
    assert f"Inputs \\texttt{{{ia['fingerprint']}}}" in tex
    for machine in (a, b):  # B's extra archives and Go tree are never read
        gathered = pd.read_parquet(machine / "results" / "sources" / "local_code.parquet")
        assert gathered["language"].nunique() == 9
        assert gathered["source_row_id"].str.match(r"^[\w.+-]+@[\w.+~-]+!").all()  # package@version!member: pinned only
        assert not gathered["source_row_id"].str.contains("extra").any()
    assert f"Inputs {ia['fingerprint']}" in proc_a.stderr  # said at the end of the run
    for doc in (a / "results" / "report.md", a / "results" / "dataset" / "README.md"):
        assert ia["fingerprint"] in doc.read_text(), doc
    card = (a / "results" / "dataset" / "README.md").read_text()
    assert "gathered: C 15" in card and "Python 15" in card and "lodash 4.17.21" in card
    proc = aicd("verify", str(a / "results"), str(b))
    assert proc.returncode == 0 and "identical:" in proc.stdout, proc.stdout + proc.stderr


def test_a_changed_input_changes_the_fingerprint_and_verify_names_it(runs, repo, tmp_path):
    a, _, _, _, config = runs
    trial = pd.read_parquet(config["sources"]["trial"]["files"])
    changed = tmp_path / "task_a_trial_subset.parquet"
    trial.iloc[:-1].to_parquet(changed)  # one row fewer, same file name
    config = json.loads(json.dumps(config))
    config["sources"]["trial"]["files"] = str(changed)
    snakemake(repo, tmp_path, config, {}, "results/inputs.json")
    proc = aicd("verify", str(a), str(tmp_path))
    assert proc.returncode == 1, proc.stdout
    differing = [line for line in proc.stdout.splitlines() if line.startswith(("differs:", "only in"))]
    assert len(differing) == 1 and "source:trial/file:task_a_trial_subset.parquet" in differing[0], proc.stdout


def test_a_short_language_is_warned_about_at_the_end_of_the_run_and_in_the_report(runs, repo, tmp_path):
    _, _, _, _, config = runs
    config = json.loads(json.dumps(config))
    config["sources"]["local_code"]["gather"]["roots"]["Go"] = ["pinned:cobra"]
    config["sources"]["local_code"]["gather"]["per_language"] = 500
    config["dataset"]["sources"] = ["local_code"]
    proc = snakemake(repo, tmp_path, config, {}, "results/inputs.json")
    info = json.loads((tmp_path / "results" / "inputs.json").read_text())
    assert any(w.startswith("source local_code: fewer rows than asked for (500 per language)") and "Go " in w
               for w in info["warnings"]), info["warnings"]
    assert "warning: source local_code: fewer rows than asked for" in proc.stderr
