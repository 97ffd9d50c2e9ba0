"""The full build's dataset path (config/config.yaml with tasks_from=pool) through the real
snakemake, with each of the six Hub sources pointed at a local file in that source's own
column layout (`files:` wins over `hub:`; the Hub is not reachable here).

The files are stand-ins: disjoint slices of the real trial rows, written under each source's
column names and label conventions (DroidCollection's string labels, SwallowCode's `text`
column, The Heap's `content`). What is checked is the plumbing the paper's tasks need — the
sources' mappings, streaming, the pool, T1-T3 with their subsets and leakage guards, the
dataset card — not detection quality."""

from __future__ import annotations

import json
import os
import subprocess

import pandas as pd
import pytest
import yaml

from workflow.test_demo_workflow import SNAKEMAKE

pytestmark = pytest.mark.workflow
CARD = "results/dataset/README.md"


def write_sources(trial_raw: pd.DataFrame, folder) -> dict:
    human = trial_raw[trial_raw["generator"].str.lower() == "human"].drop_duplicates("code")
    machine = trial_raw[trial_raw["generator"].str.lower() != "human"].drop_duplicates("code")
    h = [human.iloc[i::5] for i in range(5)]
    m = [machine.iloc[i::2] for i in range(2)]
    py_machine = m[1][m[1]["language"] == "Python"]
    droid = pd.concat([
        m[0].assign(Label="MACHINE_GENERATED"),
        py_machine.iloc[: len(py_machine) // 2].assign(Label="MACHINE_GENERATED_ADVERSARIAL"),
        h[4].assign(Label="HUMAN_GENERATED", generator="Human"),
    ])
    tables = {
        "codenet": h[0].rename(columns={"row_id": "problem_id"})[["code", "language", "problem_id"]],
        "starcoderdata": h[1][h[1]["language"] == "Python"].rename(columns={"code": "content"})[["content"]],
        "the_vault": h[2][["code", "language"]],
        "the_heap": h[3].rename(columns={"code": "content"})[["content", "language"]],
        "swallowcode": py_machine.iloc[len(py_machine) // 2:].rename(columns={"code": "text"})[["text"]],
        "droidcollection": droid.rename(columns={"code": "Code", "language": "Language", "generator": "Generator"})
        .assign(Generation_Mode="instruct")[["Code", "Label", "Language", "Generator", "Generation_Mode"]],
    }
    sources = {}
    for name, table in tables.items():
        path = folder / f"{name}.jsonl"
        table.to_json(path, orient="records", lines=True)
        sources[name] = {"files": str(path)}
    return sources


@pytest.fixture(scope="module")
def full_build(tmp_path_factory, repo, trial_raw):
    workdir = tmp_path_factory.mktemp("full")
    override = {"sources": write_sources(trial_raw, workdir)}
    (workdir / "override.yaml").write_text(yaml.safe_dump(override))
    configs = [str(repo / "config" / "config.yaml"), str(workdir / "override.yaml")]
    cmd = [*SNAKEMAKE, "--snakefile", str(repo / "Snakefile"), "--directory", str(workdir),
           "--cores", "2", CARD, "--config", "tasks_from=pool", "--configfile", *configs]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}  # no real endpoints
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"})
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    assert proc.returncode == 0, f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return workdir


def test_every_source_is_read_from_its_local_copy(full_build):
    for name in ("codenet", "starcoderdata", "the_vault", "the_heap", "swallowcode", "droidcollection"):
        rep = json.loads((full_build / "results" / "sources" / f"{name}.report.json").read_text())
        assert rep["rows_out"] > 0 and rep["stream"]["rows_scanned"] == rep["rows_in"] + rep["stream"]["not_sampled"]
    labels = pd.read_parquet(full_build / "results" / "sources" / "droidcollection.parquet")["label"]
    assert set(labels) == {"human", "machine", "adversarial"}
    assert set(pd.read_parquet(full_build / "results" / "sources" / "swallowcode.parquet")["label"]) == {"hybrid"}


def test_the_three_tasks_have_their_subsets_and_pass_the_leakage_guards(full_build):
    tasks = full_build / "results" / "tasks"
    t1 = pd.read_parquet(tasks / "T1" / "test.parquet")
    assert {"seen_language_seen_domain", "seen_language_unseen_domain"} <= set(t1["subset"])
    t2 = json.loads((tasks / "T2" / "report.json").read_text())
    assert t2["held_out_generators"] and t2["leakage"]["held_out_generators_in_train"]["rows"] == 0
    t3_train = pd.read_parquet(tasks / "T3" / "train.parquet")
    t3_test = pd.read_parquet(tasks / "T3" / "test.parquet")
    assert set(t3_train["target"]) == {"human", "machine", "adversarial"}  # hybrid rows are all out of domain
    assert not t3_train["source"].isin(["the_heap", "swallowcode"]).any()
    ood = t3_test[t3_test["subset"] == "out_of_domain"]
    assert set(ood["source"]) == {"the_heap", "swallowcode"} and "hybrid" in set(ood["target"])
    for task in ("T1", "T2", "T3"):
        leak = json.loads((tasks / task / "report.json").read_text())["leakage"]
        assert leak["near_duplicates_train_test"]["pairs"] == 0


def test_the_card_accounts_for_every_row(full_build):
    dataset = full_build / "results" / "dataset"
    card = (dataset / "README.md").read_text()
    for name in ("codenet", "the_heap", "droidcollection", "T1", "T2", "T3", "out_of_domain", "unseen_generator"):
        assert name in card
    filt = json.loads((dataset / "filter_report.json").read_text())
    dedup = json.loads((dataset / "dedup_report.json").read_text())
    rows_out = sum(json.loads(p.read_text())["rows_out"] for p in (full_build / "results" / "sources").glob("*.report.json"))
    assert filt["rows_in"] == rows_out
    assert filt["rejected_total"] + dedup["rows_removed"] + dedup["pool_rows"] == filt["rows_in"]
    counts = pd.read_csv(dataset / "counts.csv")
    for task in ("T1", "T2", "T3"):
        tables = [full_build / "results" / "tasks" / task / f"{s}.parquet" for s in ("train", "validation", "test")]
        assert counts[counts["task"] == task]["rows"].sum() == sum(len(pd.read_parquet(t)) for t in tables)
