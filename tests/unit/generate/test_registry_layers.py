"""A models file of one's own layered on the paper's registry: its models are added, a name in
both files is refused naming both, a family outside the eleven says why; a test set of a new
model's generations plans that model's generation without the pool."""

from __future__ import annotations

import pytest
import yaml
from aicd.common.errors import AicdError
from aicd.config import validate_config
from aicd.generate.registry import load_registry
from aicd.plan import Plan

NEW = {"family": "Mistral", "reasoning": False, "droid_collection": False,
       "litellm_model": "hosted_vllm/mistralai/my-new-coder", "api_base": "http://localhost:9/v1"}


def write(path, models):
    path.write_text(yaml.safe_dump({"models": models}))
    return path


def test_a_second_file_adds_its_models(repo, tmp_path):
    paper = repo / "config" / "models.yaml"
    models = load_registry([paper, write(tmp_path / "mine.yaml", {"my-new-coder": NEW})])
    assert len(models) == 78 and models["my-new-coder"]["family"] == "Mistral"
    assert models["my-new-coder"]["params"] == {}  # its file's defaults, not the paper's


def test_a_name_in_both_files_is_refused(repo, tmp_path):
    paper = repo / "config" / "models.yaml"
    twin = write(tmp_path / "twin.yaml", {"phi-4": {**NEW, "family": "Phi"}})
    with pytest.raises(AicdError, match=r"model phi-4 is in both .*models.yaml and .*twin.yaml"):
        load_registry([paper, twin])


def test_a_family_outside_the_eleven_says_why(tmp_path):
    with pytest.raises(AicdError, match=r"family 'Acme', not one of the paper's 11 .* Task 2's classes"):
        load_registry(write(tmp_path / "acme.yaml", {"acme-coder": {**NEW, "family": "Acme"}}))


def test_a_test_set_of_a_new_models_generations_plans_its_generation_only(repo, tmp_path):
    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    config["registry"] = [str(repo / "config" / "models.yaml"), str(tmp_path / "mine.yaml")]
    config["tasks"]["binary"]["test_sets"] = {"my_coder": {"generation": "my-new-coder", "outside_labels": "drop"}}
    validate_config(config)
    models = load_registry([repo / "config" / "models.yaml", write(tmp_path / "mine.yaml", {"my-new-coder": NEW})])
    plan = Plan.from_config(config, models, {"generators": [], "instructor": False, "judges": [], "execution": False})
    assert plan.generators == ("my-new-coder",) and not plan.dataset["generations"]  # the pool does not take it in
    assert ("binary", "my_coder", "lr_tfidf") in plan.test_set_plan()
    config["tasks"]["binary"]["test_sets"]["my_coder"]["generation"] = "nobody"
    with pytest.raises(AicdError, match="'nobody' is not in the model registry"):
        Plan.from_config(config, models, {})


def test_a_test_set_model_stays_out_of_a_built_pool(repo, tmp_path):
    """Where the tasks are built from the pool with its generators' code, a model asked for only
    as a test set gets its generate jobs and its sandbox runs (its card reports them), but never
    enters the pool."""
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    config["tasks_from"] = "pool"
    config["registry"] = [str(repo / "config" / "models.yaml"), str(tmp_path / "mine.yaml")]
    config["tasks"]["T1"]["test_sets"] = {"my_coder": {"generation": "my-new-coder", "outside_labels": "drop"}}
    config["generation"]["models"] = ["phi-4"]  # the pool's generators ("all" would take in every registry model)
    validate_config(config)
    models = load_registry([repo / "config" / "models.yaml", write(tmp_path / "mine.yaml", {"my-new-coder": NEW})])
    plan = Plan.from_config(config, models, {"generators": ["phi-4"], "instructor": False, "judges": [],
                                             "execution": True})
    assert plan.dataset and plan.dataset["generations"]  # the pool takes in its generators' code ...
    assert "my-new-coder" in plan.generators and "my-new-coder" not in plan.pool_generators  # ... not this one's
    assert "phi-4" in plan.pool_generators and "my-new-coder" in plan.executions



def test_a_stages_serving_goes_over_a_served_entry_and_leaves_an_endpoint_alone(repo):
    from aicd.generate.registry import with_serving

    local = load_registry([repo / "config" / "models.yaml", repo / "config" / "models_local.yaml"])[
        "SmolLM2-135M-Instruct"]
    served = with_serving(local, {"replicas": 2})
    assert served["serve"]["replicas"] == 2 and served["serve"]["dtype"] == local["serve"]["dtype"]
    assert "replicas" not in local["serve"]  # the registry's entry is left as it was
    mine = {**local, "api_base": "http://127.0.0.1:9/v1"}  # reached at a server of its own
    assert with_serving(mine, {"replicas": 2}) == mine
    assert with_serving(local, {}) is local


def test_a_stages_serving_takes_only_how_servers_run(repo):
    demo = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    with pytest.raises(Exception, match="dtype"):
        validate_config({**demo, "generation": {**demo["generation"], "serve": {"dtype": "bfloat16"}}})
