"""The GPU layer (config/llm_gpu.yaml on the full demo) plans: the local model served on a GPU
generates thousands of rows per protocol, judges hundreds of rows per task, and the zero-shot
panel's statistics ask for a GPU; the CPU demo's files stay as they are."""

from __future__ import annotations

import pytest
import yaml
from aicd.config import validate_config
from aicd.generate.registry import load_registry
from aicd.plan import Plan
from snakemake.utils import update_config

LOCAL = "SmolLM2-135M-Instruct"


@pytest.fixture(scope="module")
def gpu(repo):
    config = {}
    for name in ("demo.yaml", "demo_llm.yaml", "llm_gpu.yaml"):
        update_config(config, yaml.safe_load((repo / "config" / name).read_text()))
    validate_config(config)
    models = load_registry([repo / p for p in config["registry"]])
    return config, models


def test_the_gpu_layer_plans_thousands_of_rows_per_protocol_and_hundreds_of_judged_rows(gpu):
    config, models = gpu
    plan = Plan.from_config(config, models, {"generators": [LOCAL], "instructor": True, "judges": ["smollm2"]})
    assert plan.generators == (LOCAL,) and plan.instructor == LOCAL
    assert set(plan.gen_protocols) == {"inverse_instruction", "docstring", "hybrid_rewrite", "hybrid_complete",
                                       "adversarial"}
    assert all(spec["n"] >= 1000 for spec in plan.gen_protocols.values())
    assert config["judging"]["max_rows"] >= 100 and set(plan.judge_tasks) == {"binary", "family", "fine_grained"}
    assert config["results"] == "results/llm_gpu"  # its own root: the CPU demo's results stay


def test_the_gpu_layer_serves_the_model_on_a_gpu_and_its_statistics_ask_for_one(gpu, repo):
    config, models = gpu
    serve = models[LOCAL]["serve"]
    assert serve["device"].startswith("cuda") and serve["server"] == "vllm" and models[LOCAL]["concurrency"] >= 128
    plan = Plan.from_config(config, models, {"generators": [LOCAL], "instructor": True, "judges": ["smollm2"]})
    jobs = [j for j in plan.gpu_jobs() if j["rule"] == "features"]
    assert [(j["detector"], j["gpu"]) for j in jobs] == [("lm_smollm2", 1)]
    assert config["features"]["lm_smollm2"]["params"]["device"] == "cuda"
    # the same model, prompts and decoding as the CPU demo: only where and how fast it is served differ
    cpu = load_registry([repo / "config" / "models.yaml", repo / "config" / "models_local.yaml"])[LOCAL]
    assert {k: v for k, v in models[LOCAL].items() if k not in ("serve", "concurrency")} == \
        {k: v for k, v in cpu.items() if k not in ("serve", "concurrency")}
