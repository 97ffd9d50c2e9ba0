"""A user's own detectors in the real workflow, with no edit of the package: a class and a score
function (kind python, imported from PYTHONPATH) and predictions made elsewhere (kind
predictions), each a Table 4 row with its breakdowns and threshold metrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

pytestmark = pytest.mark.workflow
PLUGINS = Path(__file__).resolve().parent.parent / "plugins"


def snakemake(repo, workdir, *targets):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore",
                "PYTHONPATH": os.pathsep.join([str(PLUGINS), env.get("PYTHONPATH", "")])})
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"),
                           "--directory", str(workdir), "--cores", "2", *targets,
                           "--configfile", str(workdir / "mine.yaml")], capture_output=True, text=True, env=env,
                          timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def test_own_detectors_are_table4_rows_with_threshold_metrics(repo, trial_path, tmp_path):
    files = tmp_path / "elsewhere"
    config = {
        "sources": {"trial": {"files": str(trial_path), "limit": 400, "columns": {"source_row_id": "row_id"},
                              "label_map": {0: "human", 1: "machine"}, "label_audit": "correct",
                              "defaults": {"domain": "algorithmic"}}},
        "tasks": {"mine": {"title": "Mine", "labels": ["human", "machine"],
                           "ood": {"protocol": "in_distribution", "train": "trial"}}},
        "detectors": {
            "nearest": {"kind": "python", "title": "Nearest", "params": {"object": "own_detectors:NearestMeanDetector"}},
            "comments": {"kind": "python", "title": "Comments",
                         "params": {"score_function": "own_detectors:comment_density"}},
            "theirs": {"kind": "predictions", "title": "Theirs",
                       "params": {"file": str(files / "test.csv"), "validation_file": str(files / "validation.csv")}}},
    }
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(config))
    snakemake(repo, tmp_path, "results/tasks/mine/test.parquet")
    # someone else's detector, run on the task's rows outside the workflow
    files.mkdir()
    rng = np.random.default_rng(0)
    for split in ("test", "validation"):
        rows = pd.read_parquet(tmp_path / "results" / "tasks" / "mine" / f"{split}.parquet", columns=["id", "code"])
        machine = np.clip(rows["code"].str.count("#").to_numpy() / 20 + rng.random(len(rows)) * 0.5, 0, 1)
        pd.DataFrame({"id": rows["id"], "pred": np.where(machine > 0.5, "machine", "human"),
                      "score_human": 1 - machine, "score_machine": machine}).to_csv(files / f"{split}.csv", index=False)
    snakemake(repo, tmp_path)
    results = tmp_path / "results"
    table = (results / "tables" / "table4.md").read_text()
    assert all(title in table for title in ("Nearest", "Comments", "Theirs")), table
    for detector in ("nearest", "comments", "theirs"):
        score = json.loads((results / "scores" / "mine" / f"{detector}.json").read_text())
        assert score["coverage"] == 1.0 and "language" in score["by"], detector
        m = score["threshold_metrics"]
        assert m["available"] and 0 <= m["auroc"] <= 1 and m["validation_human_rows"] > 0, detector
        assert set(m["at_fpr"]) == {"0.01", "0.05"} and "language" in m["by"], detector
    theirs = pd.read_parquet(results / "predictions" / "mine" / "theirs.parquet")
    given = pd.read_csv(files / "test.csv", dtype={"id": str})
    assert theirs.set_index("id")["pred"].to_dict() == given.set_index("id")["pred"].to_dict()
    thresholds = (results / "tables" / "thresholds.md").read_text()
    assert all(title in thresholds for title in ("Nearest", "Comments", "Theirs"))
