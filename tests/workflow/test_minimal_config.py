"""A config of three sections (sources, tasks, detectors) validates and runs: no generation,
judging, execution, dataset or features section, and no resolved.json needed; its task's test
rows perturbed (two test sets) give flip rates in the OOD table."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest
import yaml

pytestmark = pytest.mark.workflow


def test_sources_tasks_detectors_is_a_whole_config(repo, trial_path, tmp_path):
    config = {
        "sources": {"trial": {"files": str(trial_path), "limit": 400, "columns": {"source_row_id": "row_id"},
                              "label_map": {0: "human", 1: "machine"}, "label_audit": "correct",
                              "defaults": {"domain": "algorithmic"}}},
        "tasks": {"mine": {"title": "Mine", "labels": ["human", "machine"],
                           "ood": {"protocol": "in_distribution", "train": "trial"},
                           # the test rows rewritten: flip rates in the OOD table, no Table 4 column
                           "test_sets": {"p_rename": {"perturbation": "rename"},
                                         "p_tabs": {"perturbation": "reindent_tabs"}}}},
        "detectors": {"majority": {"kind": "majority", "title": "Majority", "dummy": True},
                      "robust": {"kind": "robust", "title": "Robust", "params": {"max_iter": 20}}},
    }
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"})
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"),
                           "--directory", str(tmp_path), "--cores", "2", "--configfile", str(tmp_path / "mine.yaml")],
                          capture_output=True, text=True, env=env, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = tmp_path / "results"
    for detector in ("majority", "robust"):
        score = json.loads((results / "scores" / "mine" / f"{detector}.json").read_text())
        assert 0 <= score["macro_f1"] <= 1 and score["coverage"] == 1.0
    table = (results / "tables" / "table4.md").read_text()
    assert "Majority" in table and "Robust" in table and "p_rename" not in table
    robust = json.loads((results / "scores" / "mine" / "robust.json").read_text())
    flips = json.loads((results / "scores" / "mine" / "test_sets" / "p_rename" / "robust.json").read_text())["flip_rate"]
    renamed = pd.read_parquet(results / "tasks" / "mine" / "test_sets" / "p_rename.parquet")
    assert flips["rows"] == robust["n"] and flips["changed_rows"] == int(renamed["perturbed"].sum()) > 0
    assert flips["flipped"] == round(flips["rate"] * flips["rows"])
    perturbed = pd.read_parquet(results / "tasks" / "mine" / "test_sets" / "p_tabs.parquet")
    assert perturbed["code"].str.contains("\t").any()
    ood = (results / "tables" / "ood.md").read_text()
    assert "Under semantics-preserving perturbations" in ood and "reindent_tabs" in ood and "rename" in ood
    assert not (results / "resolved.json").exists()  # nothing was left to the machine
    assert not any((results / d).exists() for d in ("generations", "execution", "dataset"))
