"""The rules' input builders (aicd.plan.files.RunFiles), without snakemake: on the full demo's
plan, each job's inputs are the files the plan says, under the run's root, and a run built on
another reads what the base made from the base's root."""

from __future__ import annotations

import pytest
import yaml
from aicd.config import validate_config
from aicd.generate.registry import load_registry
from aicd.plan import Plan
from aicd.plan.files import RunFiles
from snakemake.utils import update_config

LOCAL = "SmolLM2-135M-Instruct"


@pytest.fixture(scope="module")
def full(repo):
    config = {}
    for name in ("demo.yaml", "demo_llm.yaml"):
        update_config(config, yaml.safe_load((repo / "config" / name).read_text()))
    validate_config(config)
    models = load_registry([repo / p for p in config["registry"]])
    plan = Plan.from_config(config, models, {"generators": [LOCAL], "instructor": True, "judges": ["smollm2"],
                                             "execution": True})
    return plan, config


def test_a_detector_reads_its_tasks_splits_and_its_feature_sets_files(full):
    plan, config = full
    files = RunFiles(plan, config, "R")
    inputs = files.detect_inputs("binary", "cb_ast_tfidf")
    assert inputs == {"train": "R/tasks/binary/train.parquet", "validation": "R/tasks/binary/validation.parquet",
                      "test": "R/tasks/binary/test.parquet",
                      "features": files.out.features("binary", "ast_tfidf"),
                      "featurizer": files.out.featurizer("binary", "ast_tfidf")}
    # a concat set reads its parts, in the order of its `parts`
    parts = files.feature_inputs("binary", "ast_tfidf")
    assert parts["parts"] == [files.out.features("binary", p) for p in ("ast", "tfidf")]
    assert files.fitted_model("binary", "minilm").endswith("/minilm") and \
        files.fitted_model("binary", "lr_tfidf").endswith("lr_tfidf.skops")  # a folder, a file


def test_the_judge_jobs_runs_are_in_the_order_of_its_outputs(full):
    plan, config = full
    files = RunFiles(plan, config, "R")
    pairs = [(t, m) for t in plan.judge_tasks for m in plan.modes]
    predictions = [f"p-{t}-{m}" for t, m in pairs]
    reports = [f"r-{t}-{m}" for t, m in pairs]
    runs = files.judge_runs("smollm2", files.judge_tests(), predictions, reports)
    assert [(r["task"], r["mode"]) for r in runs] == pairs
    assert all(r["out"] == f"p-{r['task']}-{r['mode']}" and r["report"] == f"r-{r['task']}-{r['mode']}" for r in runs)
    family = next(r for r in runs if r["task"] == "family")  # the paper's T2: its classes are families
    assert family["target"] == "family" and "human" in family["labels"] and len(family["labels"]) == 12
    assert next(r for r in runs if r["task"] == "fine_grained")["target"] == "label"
    cot = next(r for r in runs if r["mode"] == "cot")
    assert cot["params"] == config["judging"]["judges"]["smollm2"]["params"]["cot"]


def test_the_generator_card_reads_the_models_code_its_filters_and_every_fitted_detector(full):
    plan, config = full
    files = RunFiles(plan, config, "R")
    inputs = files.generator_card_inputs(LOCAL)
    assert inputs["normalized"] == files.out.normalized_report("generations", LOCAL)
    assert inputs["execution"] == files.out.execution_report(LOCAL)
    scored = files.generator_card_scored(LOCAL)
    built = [t for t in plan.tasks if plan.tasks[t].mode == "build"]
    assert len(scored) == len(built) and all(w.endswith("its rows of the test split") for w in scored)
    assert files.out.predictions("fine_grained", "lr_tfidf") in inputs["scored"]


def test_a_run_on_a_base_reads_what_the_base_made_from_the_bases_root(full):
    plan, config = full

    class Reuse:  # the base made lr_tfidf's fit, the tfidf features and the analyses
        def of_pair(self, task, detector, own):
            return "BASE" if detector == "lr_tfidf" else own

        def of_features(self, task, featureset, own):
            return "BASE" if featureset == "tfidf" else own

        def of_analyses(self, task, own):
            return "BASE"

    files = RunFiles(plan, config, "R", data="BASE", reuse=Reuse(), base_calibrated={("binary", "lr_tfidf")})
    assert files.made("binary", "lr_tfidf").scores("binary", "lr_tfidf").startswith("BASE/")
    assert files.made("binary", "svm_tfidf").scores("binary", "svm_tfidf").startswith("R/")
    assert files.detect_inputs("binary", "lr_tfidf")["train"].startswith("BASE/tasks/")  # the base's data
    assert files.detect_inputs("binary", "svm_tfidf")["features"].startswith("BASE/")
    assert files.calibrated("binary", "lr_tfidf").root == "BASE" and files.calibrated("binary", "svm_tfidf").root == "R"
    assert files.calibrated_by("binary") == "BASE"  # the reference table of a task the base calibrated
    assert not files.targets(own_stages=False)[3:4] or all(
        not t.startswith("R/generators") for t in files.targets(own_stages=False))


def test_everything_the_run_makes_by_default(full):
    plan, config = full
    targets = RunFiles(plan, config, "R").targets(own_stages=True)
    assert "R/tables/table8.tex" in targets and f"R/generators/{LOCAL}.md" in targets
    assert "R/report.md" in targets and "R/dataset/README.md" in targets
