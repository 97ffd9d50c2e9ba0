"""The full build's dataset path (config/config.yaml with tasks_from=pool) through the real
snakemake, with each of the six Hub sources pointed at a local file in that source's own
column layout (`files:` wins over `hub:`; the Hub is not reachable here).

The files are stand-ins: disjoint slices of the real trial rows, written in each source's Hub
layout — one parquet file per config / data_dir / split, under the dataset card's column names
(CodeNet's p_id and status, StarCoderData's content, The Vault's original_string and docstring,
The Heap's content, SwallowCode's text, DroidCollection's Code/Label/Source) — plus CodeNet
problem tests in Project CodeNet's input_output layout. What is checked is the plumbing the paper's tasks need — the
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


PARTS = {"Python": "python", "C++": "cpp", "Java": "java"}  # StarCoderData / The Vault part names
DROID_SOURCES = ["TACO", "ARXIV", "STARCODER_DATA", "CODEFORCES", "THEVAULT_FUNCTION", "DROID_PERSONAHUB"]


def _parquet(table: pd.DataFrame, path) -> str:
    table.reset_index(drop=True).to_parquet(path, index=False)
    return str(path)


def write_sources(trial_raw: pd.DataFrame, folder) -> dict:
    """Each source as local parquet files in its Hub layout: one file per config / data_dir /
    split (a `files:` mapping keyed like the Hub parts), under the dataset card's column names."""
    human = trial_raw[trial_raw["generator"].str.lower() == "human"].drop_duplicates("code")
    machine = trial_raw[trial_raw["generator"].str.lower() != "human"].drop_duplicates("code")
    h = [human.iloc[i::5] for i in range(5)]
    m = [machine.iloc[i::2] for i in range(2)]
    py_machine = m[1][m[1]["language"] == "Python"]
    droid = pd.concat([
        m[0].assign(Label="MACHINE_GENERATED"),
        py_machine.iloc[: len(py_machine) // 2].assign(Label="MACHINE_GENERATED_ADVERSARIAL"),
        h[4].assign(Label="HUMAN_GENERATED", generator="Human"),
    ]).reset_index(drop=True)
    droid["Source"] = [DROID_SOURCES[i % len(DROID_SOURCES)] for i in range(len(droid))]
    sources: dict = {name: {"files": {}} for name in
                     ("codenet", "starcoderdata", "the_vault", "the_heap", "droidcollection")}
    for lang, rows in h[0].groupby("language"):  # CodeNet: config per language, every status
        n = len(rows)
        table = pd.DataFrame({"s_id": [f"s{r}" for r in rows["row_id"]], "p_id": [f"p{i % 40:05d}" for i in range(n)],
                              "u_id": ["u1"] * n, "date": ["1400000000"] * n, "language": [lang] * n,
                              "original_language": [lang] * n, "filename_ext": ["txt"] * n,
                              "status": ["Accepted" if i % 10 else "Runtime Error" for i in range(n)],
                              "cpu_time": ["1"] * n, "memory": ["1"] * n, "code_size": ["1"] * n,
                              "code": rows["code"].to_numpy()})
        sources["codenet"]["files"][lang] = _parquet(table, folder / f"codenet_{PARTS[lang]}.parquet")
    tests = folder / "input_output" / "data"
    for i in range(0, 40, 2):  # half the problems have sample input/output (Project CodeNet layout)
        (tests / f"p{i:05d}").mkdir(parents=True)
        (tests / f"p{i:05d}" / "input.txt").write_text("1 2\n")
        (tests / f"p{i:05d}" / "output.txt").write_text("3\n")
    sources["codenet"]["tests"] = {"dir": str(tests)}
    for lang, rows in h[1].groupby("language"):  # StarCoderData: data_dir per language
        n = len(rows)
        table = pd.DataFrame({"id": [str(r) for r in rows["row_id"]], "content": rows["code"].to_numpy(),
                              "max_stars_repo_path": ["a.x"] * n, "max_stars_repo_name": ["o/r"] * n,
                              "max_stars_count": [1] * n})
        sources["starcoderdata"]["files"][PARTS[lang]] = _parquet(table, folder / f"starcoder_{PARTS[lang]}.parquet")
    for lang, rows in h[2][h[2]["language"] != "Java"].groupby("language"):  # The Vault mirror: no Java
        n = len(rows)
        table = pd.DataFrame({"identifier": [f"f{i}" for i in range(n)], "language": [PARTS[lang]] * n,
                              "docstring": ["Return the result."] * n, "original_string": rows["code"].to_numpy(),
                              "code": rows["code"].to_numpy(), "repo": ["o/r"] * n, "path": ["a"] * n})
        sources["the_vault"]["files"][PARTS[lang]] = _parquet(table, folder / f"vault_{PARTS[lang]}.parquet")
    for lang, rows in h[3].groupby("language"):  # The Heap: config per language
        table = pd.DataFrame({"content": rows["code"].to_numpy(), "language": [lang] * len(rows),
                              "exact_duplicates_stackv2": [False] * len(rows),
                              "near_duplicates_stackv2": [False] * len(rows)})
        sources["the_heap"]["files"][lang] = _parquet(table, folder / f"heap_{PARTS[lang]}.parquet")
    swallow = py_machine.iloc[len(py_machine) // 2:].rename(columns={"code": "text"})[["text"]]
    sources["swallowcode"] = {"files": _parquet(swallow, folder / "swallowcode.parquet")}
    droid = droid.rename(columns={"code": "Code", "language": "Language", "generator": "Generator"}).assign(
        Generation_Mode="INSTRUCT", Sampling_Params="{}", Rewriting_Params="{}", Model_Family=None)
    for k, split in enumerate(("train", "dev", "test")):  # DroidCollection: train / dev / test
        sources["droidcollection"]["files"][split] = _parquet(droid.iloc[k::3], folder / f"droid_{split}.parquet")
    return sources


@pytest.fixture(scope="module")
def full_build(tmp_path_factory, repo, trial_raw):
    workdir = tmp_path_factory.mktemp("full")
    # No endpoints here: config.yaml plans every generator (generation.enabled: true), so the
    # build is run with generation off, as a user without keys would.
    override = {"sources": write_sources(trial_raw, workdir), "generation": {"enabled": False}}
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
        stream = rep["stream"]
        assert rep["rows_out"] > 0
        assert stream["rows_scanned"] == rep["rows_in"] + stream["not_sampled"] + sum(stream["filtered_out"].values())
    codenet = json.loads((full_build / "results" / "sources" / "codenet.report.json").read_text())
    assert codenet["stream"]["filtered_out"]["where_status"] > 0 and codenet["tests"]["rows_with_tests"] > 0
    droid = pd.read_parquet(full_build / "results" / "sources" / "droidcollection.parquet")
    assert set(droid["label"]) == {"human", "machine", "adversarial"}
    assert set(droid["domain"]) == {"algorithmic", "research", "general"}
    assert sorted(json.loads((full_build / "results" / "sources" / "droidcollection.report.json").read_text())
                  ["stream"]["scanned_per_part"]) == ["dev", "test", "train"]
    assert set(pd.read_parquet(full_build / "results" / "sources" / "swallowcode.parquet")["label"]) == {"hybrid"}


def test_the_three_tasks_have_their_subsets_and_pass_the_leakage_guards(full_build):
    tasks = full_build / "results" / "tasks"
    t1 = pd.read_parquet(tasks / "T1" / "test.parquet")
    assert {"seen_language_seen_domain", "seen_language_unseen_domain"} <= set(t1["subset"])
    assert "research" in set(t1["domain"])  # DroidCollection's ARXIV rows: T1's unseen research domain
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
