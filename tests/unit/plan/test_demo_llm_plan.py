"""The full demo's plan (config/demo.yaml + config/demo_llm.yaml, merged as snakemake merges
config files): the local model generates and judges where its pinned file is, Task 3 joins T1
and T2, the zero-shot panel scores T1 on a sample, and the core demo names no local model."""

import copy

import pytest
import yaml
from aicd.config import validate_config
from aicd.generate.registry import has_endpoint, load_registry
from aicd.plan import Plan
from aicd.published import match_detectors
from aicd.resolve import probe
from components import require
from snakemake.utils import update_config

LOCAL = "SmolLM2-135M-Instruct"


def merged(repo, *names):
    config = {}
    for name in names:
        update_config(config, yaml.safe_load((repo / "config" / name).read_text()))
    validate_config(config)
    return config


@pytest.fixture(scope="module")
def full(repo):
    config = merged(repo, "demo.yaml", "demo_llm.yaml")
    models = load_registry([repo / p for p in config["registry"]])
    return config, models


def test_the_core_demo_names_no_local_model_and_no_fast_detectgpt(repo):
    core = merged(repo, "demo.yaml")
    models = load_registry(repo / core["registry"])
    assert LOCAL not in models  # the core demo's registry is the paper's 77
    assert not any(d["kind"] in ("fast_detectgpt", "zero_shot_lm") for d in core["detectors"].values())
    assert not any(spec.get("kind") == "lm_stats" for spec in core["features"].values())


def test_the_full_demo_plans_the_local_model_in_every_llm_stage(full, monkeypatch, tmp_path):
    config, models = full
    require(has_endpoint(models[LOCAL]), "the pinned local model", "make pinned-inputs")
    resolved = probe(config, models)
    assert resolved["generators"] == [LOCAL] and resolved["instructor"] is True
    assert resolved["judges"] == ["smollm2"]  # the paper's Gemini and Gemma have no endpoint here
    plan = Plan.from_config(config, models, resolved)
    assert plan.generators == (LOCAL,) and plan.instructor == LOCAL
    assert set(plan.gen_protocols) == {"inverse_instruction", "docstring", "hybrid_rewrite", "hybrid_complete",
                                       "adversarial"}
    assert set(plan.tasks) == {"binary", "family", "fine_grained"} and plan.tasks["fine_grained"].kind == "fine_grained"
    assert set(plan.judge_tasks) == set(plan.tasks) and plan.modes == ("zs", "cot")
    assert plan.dataset and plan.dataset["generations"] and LOCAL in plan.pool_generators


def test_without_the_pinned_file_the_local_model_has_no_endpoint(full, monkeypatch, tmp_path):
    config, models = full
    monkeypatch.setenv("AICD_CACHE", str(tmp_path / "empty"))
    resolved = probe(config, models)
    assert resolved["generators"] == [] and resolved["judges"] == []
    plan = Plan.from_config(config, models, resolved)
    assert plan.generators == () and not plan.judges
    assert any("LLM stages: no endpoint" in n for n in plan.notes)


def test_the_zero_shot_panel_scores_t1_on_a_sample_and_fast_detectgpt_is_the_papers_row(full):
    config, models = full
    plan = Plan.from_config(config, models, {"generators": [LOCAL], "instructor": True, "judges": ["smollm2"]})
    panel = {d: det for d, det in plan.detectors.items() if det.kind == "zero_shot_lm"}
    assert set(panel) == {"fast_detectgpt", "zs_loglik", "zs_logrank", "zs_entropy", "zs_lrr"}
    for det in panel.values():
        assert det.tasks == ("binary",) and det.zero_shot and det.binarise and det.samples_test
        assert det.features == "lm_smollm2" and det.environment == "neural"
    rows = match_detectors({d: {"kind": det.kind, "features": det.features, "params": det.params,
                                "paper": det.paper} for d, det in plan.detectors.items()})
    assert rows.get("fast_detectgpt") == "Fast-DetectGPT"
    assert all(d not in rows for d in panel if d != "fast_detectgpt")  # the other criteria are ours
    # a zero-shot criterion is never one of the rows averaged in Tables 5-7
    assert not set(panel) & set(plan.averaged("binary")[0])


def test_a_panel_over_a_feature_set_of_every_row_scores_the_whole_test_split(full):
    config, models = full
    config = copy.deepcopy(config)
    config["features"]["lm_smollm2"]["params"].pop("rows")
    validate_config(config)
    plan = Plan.from_config(config, models, {})
    assert not plan.detectors["fast_detectgpt"].samples_test


def test_the_full_demos_generation_fits_what_each_protocol_asks_and_reproduces(full):
    """Its sizes are too slow to run in CI, so the plan says them: a token cap per protocol (a
    completion fewer than a rewrite), docstring prompts over the nine languages of the library
    code, v2 prompts; a greedy float32 model batched continuously by vLLM (the same answer whatever
    it is batched with: two fresh runs give the same bytes); the seen languages' general-domain
    machine rows for T1's unseen-domain subsets; T3's generated classes two in three
    to test; the Advent of Code collection beside CodeAid for T1's unseen-language humans."""
    config, models = full
    plan = Plan.from_config(config, models, {"generators": [LOCAL], "instructor": True, "judges": ["smollm2"]})
    caps = {p: spec["max_tokens"] for p, spec in plan.gen_protocols.items()}
    assert set(caps) == set(plan.gen_protocols) and caps["hybrid_complete"] < caps["hybrid_rewrite"]
    docstring = plan.gen_protocols["docstring"]
    assert docstring["sources"] == ["local_code"] and docstring["by_language"] and docstring["n"] >= 9
    inverse = plan.gen_protocols["inverse_instruction"]  # general-domain programs in every language
    assert inverse["sources"] == ["local_code"] and inverse["by_language"] and not inverse.get("languages")
    assert config["generation"]["prompts"].endswith("generation.v2.yaml")
    entry = models[LOCAL]
    assert entry["params"]["temperature"] == 0 and entry["serve"]["dtype"] == "float32"
    assert entry["serve"]["server"] == "vllm" and entry["serve"].get("batching", True)
    assert entry["concurrency"] >= entry["serve"]["max_num_seqs"]
    shares = config["tasks"]["fine_grained"]["build"]["class_fractions"]
    assert all(shares[c]["test"] >= 0.6 for c in ("hybrid", "adversarial"))
    assert "aoc" in plan.dataset["sources"] and config["sources"]["aoc"]["optional"]

