"""The plan (aicd.plan.Plan.from_config): a pure function of the validated config, the model
registry and the recorded resolution of the machine. Checked directly, without snakemake."""

import builtins
import copy
import os
import socket

import pytest
from aicd.config import validate_config
from aicd.detectors import REGISTRY
from aicd.detectors.base import Detector
from aicd.plan import Plan
from aicd.report import layouts


def plan_of(config, models, resolved=None, **kw):
    config = copy.deepcopy(config)
    validate_config(config)
    return Plan.from_config(config, models, resolved or {}, **kw)


def test_planning_does_no_io(demo, models, monkeypatch):
    """No file, socket or process is touched: a node plans from the config and the record only."""
    def refuse(*a, **k):
        raise AssertionError(f"the plan did I/O: {a[:1]}")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(os, "stat", refuse)
    monkeypatch.setattr(os, "listdir", refuse)
    plan = Plan.from_config(demo, models, {"execution": True})
    assert plan.pairs


def test_same_record_gives_the_same_plan_whatever_the_machine(demo, models, monkeypatch):
    """The plan reads the machine only through the record: with Docker's and the endpoints'
    environment changed, the same record plans the same jobs."""
    record = {"execution": False, "generators": [], "judges": []}
    first = plan_of(demo, models, record)
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent.sock")
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.setenv(key, "sk-test")
    assert plan_of(demo, models, record) == first


def test_auto_stages_follow_the_record_and_say_why(demo, models):
    config = copy.deepcopy(demo)
    config["execution"]["enabled"] = "auto"
    with_docker = plan_of(config, models, {"execution": True})
    without = plan_of(config, models, {"execution": False})
    assert with_docker.executions and not without.executions
    assert any(n.startswith("Sandbox: no Docker daemon answers") for n in without.notes)
    assert not any(n.startswith("Sandbox:") for n in with_docker.notes)


def test_disabled_stages_plan_nothing(demo, models):
    config = copy.deepcopy(demo)
    for stage in ("generation", "judging", "execution"):
        config[stage] = {"enabled": False}
    plan = plan_of(config, models, {"execution": True, "generators": list(models), "judges": ["x"]})
    assert plan.generators == () and plan.judges == {} and plan.executions == () and plan.modes == ()
    assert plan.judge_detectors == () and not plan.generation
    assert plan.pairs == plan_of(demo, models, {"execution": True}).pairs  # detectors are untouched


def test_adding_a_generator_adds_only_its_jobs(demo, models):
    config = copy.deepcopy(demo)
    config["generation"]["enabled"] = True
    config["generation"]["models"] = "all"
    config["execution"]["enabled"] = True
    config["execution"]["generations"] = True
    before = plan_of(config, models)
    _name, spec = next(iter(models.items()))
    grown = dict(models, **{"new-model-7b": dict(spec, family=spec.get("family", "Qwen"))})
    after = plan_of(config, grown)
    assert set(after.generators) - set(before.generators) == {"new-model-7b"}
    assert set(after.executions) - set(before.executions) == {"new-model-7b"}
    assert after.pairs == before.pairs and after.detectors == before.detectors
    assert after.judges == before.judges and after.tasks == before.tasks


def test_a_new_folder_stored_kind_is_planned_from_its_declaration(demo, models, monkeypatch):
    """A kind that stores a folder (save_pretrained) and needs two threads and its own memory is
    planned as such from the class alone: the rules read PLAN.stored("folder"), no kind names."""

    class Toy(Detector):
        storage = "folder"
        inputs = "nothing"
        max_threads = 2
        mem_mb = 1234

        def fit(self, X, y, X_val=None, y_val=None):
            return self

        def predict(self, X):
            return X

    monkeypatch.setitem(REGISTRY, "toy_folder", Toy)
    config = copy.deepcopy(demo)
    config["detectors"] = {"toy": {"kind": "toy_folder", "title": "Toy"}, **config["detectors"]}
    plan = plan_of(config, models)
    toy = plan.detectors["toy"]
    assert (toy.storage, toy.threads, toy.mem_mb, toy.environment) == ("folder", 2, 1234, "core")
    assert "toy" in plan.stored("folder") and "toy" not in plan.stored("file")
    assert set(plan.trained(next(iter(plan.tasks)))) >= {"toy"}


def test_a_config_entry_lowers_its_threads_within_the_kind_ceiling(demo, models):
    config = copy.deepcopy(demo)
    config["detectors"]["lr_tfidf"]["resources"] = {"threads": 1}
    config["detectors"]["svm_tfidf"]["resources"] = {"threads": 64}
    config["detectors"]["lr_ast"].pop("resources", None)  # no entry: the kind's own
    plan = plan_of(config, models)
    assert plan.detectors["lr_tfidf"].threads == 1
    assert plan.detectors["svm_tfidf"].threads == REGISTRY["linear_svm"].max_threads  # never above what it can use
    assert plan.detectors["lr_ast"].threads == REGISTRY["logistic_regression"].max_threads


def test_zero_shot_and_binarised_kinds_are_scored_as_declared(demo, models):
    config = copy.deepcopy(demo)  # the core demo has no zero-shot row (the full demo's panel has five)
    config["detectors"]["curvature"] = {"kind": "fast_detectgpt", "title": "Curvature", "params": {"model": "x"}}
    plan = plan_of(config, models)
    fdg = [d for d, det in plan.detectors.items() if det.kind == "fast_detectgpt"]
    assert fdg
    for task in plan.tasks:
        assert not set(fdg) & set(plan.trained(task))
        if (task, fdg[0]) in plan.pairs:
            assert plan.score_labels(task, fdg[0]) == ("human", "machine")


def test_a_detector_reading_torch_features_runs_in_the_neural_environment(demo, models):
    """A feature kind that needs torch (code_embedding) puts every detector reading it, directly
    or through a concat, in envs/neural.yaml; the others stay in core."""
    config = copy.deepcopy(demo)
    config["features"]["embedding"] = {"kind": "code_embedding"}
    config["features"]["both"] = {"kind": "concat", "parts": ["embedding", "tfidf"]}
    config["detectors"]["lr_embedding"] = {"kind": "logistic_regression", "title": "LR_{emb}", "features": "both"}
    plan = plan_of(config, models)
    assert plan.detectors["lr_embedding"].environment == "neural"
    assert plan.detectors["lr_tfidf"].environment == "core"


def test_a_minimal_config_plans_only_its_detectors(models):
    """tasks and detectors only: no generation, judging, execution or dataset is planned."""
    config = {"tasks": {"T1": {"title": "Binary", "labels": ["human", "machine"], "label_map": {0: "human", 1: "machine"},
                               "release": {"files": {s: f"/data/{s}.parquet" for s in ("train", "validation", "test")}}}},
              "detectors": {"majority": {"kind": "majority", "title": "Majority", "dummy": True}}}
    plan = plan_of(config, models)
    assert plan.pairs == (("T1", "majority"),)
    assert plan.summary() == {"pairs": 1, "generators": 0, "judges": 0, "executions": 0, "test_sets": 0, "lms": 0}
    assert plan.dataset is None and plan.notes == ()


def test_unknown_registry_names_are_named_before_planning(demo, models):
    from aicd.common.errors import AicdError
    from aicd.generate.registry import check_config_models

    config = copy.deepcopy(demo)
    config["generation"].update(enabled=True, models=["no-such-model"], instructor="nor-this-one")
    config["judging"]["enabled"] = True
    config["judging"]["judges"] = {"j": {"model": "nor-that", "title": "J"}}
    with pytest.raises(AicdError) as err:
        check_config_models(config, models)
    message = str(err.value)
    for key in ("config.generation.models", "config.generation.instructor", "config.judging.judges.j.model"):
        assert key in message
    check_config_models(demo, models)  # the shipped demo names only registry models


def test_a_config_that_leaves_nothing_to_the_machine_needs_no_record(tmp_path, demo, models):
    from aicd.resolve import asks, resolve

    config = copy.deepcopy(demo)
    for stage in ("generation", "judging", "execution"):
        config[stage] = {"enabled": False}
    config["dataset"]["sources"] = [s for s in config["dataset"]["sources"]
                                    if not config["sources"][s].get("optional")]
    assert asks(demo) and not asks(config)
    assert resolve(config, models, tmp_path, remote=True) == {}  # a node without the record plans
    assert not (tmp_path / "resolved.json").exists()


def test_a_row_that_is_not_the_papers_is_said_so_and_not_averaged_as_the_papers(demo, models):
    config = copy.deepcopy(demo)
    config["detectors"]["lr_ast"]["paper"] = {"comparable": False, "note": "trained on a tenth of the rows"}
    config["detectors"]["minilm"]["paper"] = {"row": "CodeBERT", "comparable": False, "note": "a CPU MiniLM"}
    plan = plan_of(config, models)
    layout = layouts.reproduction_layout(plan)
    assert layout["comparability"]["lr_ast"] == {"comparable": False, "note": "trained on a tenth of the rows"}
    assert ["minilm", "MiniLM-L6-v2 (CPU demo)", "CodeBERT"] in layout["detectors"]
    assert set(layout["dummies"]) == {"random", "majority"}
    averaged, over = plan.averaged("binary")
    assert over == "paper" and "lr_ast" not in averaged and "lr_tfidf" in averaged and "minilm" not in averaged
    assert "lr_ast" in layouts.subset_tables_layout(plan)["tables"]["5"]["ours"]  # shown beside the average, not in it
    assert layouts.report_layout(plan)["task_modes"] == {"binary": "build", "family": "build"}


def test_a_feature_set_that_asks_a_gpu_is_a_gpu_job_per_task_that_reads_it(demo, models):
    """An lm_stats set with `resources: {gpu: 1}` (a GPU node's zero-shot panel), read by a
    detector on T1 and, through a concat, by one on T2: two feature jobs that ask the GPU, which
    the SLURM dry run's partition note then names; a set without a GPU is not one."""
    config = copy.deepcopy(demo)
    config["features"]["lm_gpu"] = {"kind": "lm_stats", "params": {"model": "Qwen/Qwen2.5-Coder-1.5B"},
                                    "resources": {"gpu": 1, "mem_mb": 32000, "runtime": 480, "threads": 8}}
    config["features"]["lm_gpu_ast"] = {"kind": "concat", "parts": ["lm_gpu", "ast"]}
    config["detectors"]["zs_gpu"] = {"kind": "zero_shot_lm", "title": "LL", "features": "lm_gpu", "tasks": ["binary"],
                                     "params": {"criterion": "loglik"}}
    config["detectors"]["lr_gpu_ast"] = {"kind": "logistic_regression", "title": "LR", "features": "lm_gpu_ast", "tasks": ["family"]}
    jobs = plan_of(config, models).gpu_jobs()
    assert jobs == [{"rule": "features", "detector": "lm_gpu", "count": 2, "gpu": 1, "mem_mb": 32000,
                     "mem_mb_per_input_mb": 0, "runtime": 480, "threads": 8}]
    assert plan_of(demo, models).gpu_jobs() == []


def test_the_plan_reads_the_registries_it_is_given_and_decides_generation_once(demo, models):
    """The kinds' registries are the plan's own (no global read after from_config): with a feature
    registry whose tfidf does not back-project, the n-gram analysis has no detector to explain."""
    import dataclasses

    from aicd.features.registry import FEATURIZERS

    class Flat(FEATURIZERS["tfidf"]):
        back_projects = False

    binary = next(t for t, task in plan_of(demo, models).tasks.items() if task.kind == "binary")
    assert plan_of(demo, models).analyses(binary)["coefficients"]  # the demo's SVM on TF-IDF
    flat = plan_of(demo, models, featurizers={**FEATURIZERS, "tfidf": Flat})
    assert flat.featurizers["tfidf"] is Flat and flat.analyses(binary)["coefficients"] == []
    # who writes code is decided once, in a frozen GenerationPlan the plan's properties read
    plan = plan_of(demo, models, {"generators": ["SmolLM2-135M-Instruct"]})
    assert plan.generators is plan.gen.models and plan.gen_protocols is plan.gen.protocols
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.gen.models = ()
