"""The LLM stages in the real snakemake against the local OpenAI-compatible test server
(a stand-in for frontier LLMs, which cannot run here; it speaks the real protocol over HTTP).

Generation for registry models with an endpoint, Table 8 from judges, the request cache
across reruns, and partial rebuilds after adding or changing one model."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from llm_server import running_server

from workflow.test_demo_workflow import planned_jobs, run

pytestmark = pytest.mark.workflow
TARGETS = ["results/tables/table8.tex", "results/generations/report.json"]
LOCAL = ["GPT-4o-mini", "Qwen2.5-Coder-7B-Instruct", "phi-4"]  # given the test server as endpoint
JUDGE_MODELS = ["gemini-2.5-flash-preview-05-20", "gemma-3-27b-it"]  # also registry models: they generate too
WITH_ENDPOINT = LOCAL + JUDGE_MODELS


def write_registry(workdir: Path, repo: Path, api_base: str, extra: dict | None = None, temperature=0.7) -> None:
    registry = yaml.safe_load((repo / "config" / "models.yaml").read_text())
    for name in LOCAL:
        registry["models"][name]["api_base"] = api_base
    registry["models"]["phi-4"]["params"] = {"temperature": temperature}
    registry["models"]["phi-4"]["cost_per_million_tokens"] = {"input": 100.0, "output": 400.0}
    # The judges' hosted providers speak their own protocols; here both go to the test server.
    for judge in JUDGE_MODELS:
        registry["models"][judge].update({"api_base": api_base, "litellm_model": f"openai/{judge}"})
    registry["models"].update(extra or {})
    (workdir / "models.yaml").write_text(yaml.safe_dump(registry, sort_keys=False))


def write_override(workdir: Path, trial_path: Path) -> None:
    override = {
        "sources": {"trial": {"files": str(trial_path), "limit": 400}},
        "registry": str(workdir / "models.yaml"),
        "llm": {"cache": "llm_cache/requests.sqlite", "concurrency": 8, "timeout": 20, "max_retries": 2},
        "generation": {"protocols": {p: {"n": 3} for p in
                                     ("inverse_instruction", "docstring", "hybrid_rewrite", "hybrid_complete", "adversarial")}},
        "judging": {"fraction": 0.1},
    }
    (workdir / "override.yaml").write_text(yaml.safe_dump(override))


@pytest.fixture(scope="module")
def llm_demo(tmp_path_factory, repo, trial_path):
    workdir = tmp_path_factory.mktemp("llm")
    with running_server(slow=1.0) as server:
        write_registry(workdir, repo, server.api_base)
        write_override(workdir, trial_path)
        proc = run(repo, workdir, *TARGETS)
        yield workdir, server, proc


def test_generation_runs_only_models_with_an_endpoint(llm_demo):
    workdir, _server, _proc = llm_demo
    assert sorted(p.stem for p in (workdir / "results" / "generations").glob("*.parquet")) == sorted(WITH_ENDPOINT)
    report = yaml.safe_load((workdir / "results" / "generations" / "report.json").read_text())
    assert len(report["without_endpoint"]) == 77 - len(WITH_ENDPOINT)
    for model in WITH_ENDPOINT:
        rows = pd.read_parquet(workdir / "results" / "generations" / f"{model}.parquet")
        mreport = next(m for m in report["models"] if m["model"] == model)
        planned = 5 * 3 - sum(mreport["skipped_before_prompting"].values())
        assert len(rows) == planned and rows["id"].is_unique           # rows out = prompts in
        assert set(rows["status"]) == {"ok"} and rows["code"].str.startswith("def solve_").all()
        assert set(rows["label"]) <= {"machine", "hybrid", "adversarial"} and (rows["generator"] == model).all()
        assert {"prompt_id", "source_sample_id", "params", "prompt_tokens", "cost", "finish_reason"} <= set(rows.columns)
        assert not {"latency_s", "attempts", "cached"} & set(rows.columns)  # the run's, in its report
        # a fresh run, no fault injected: every answer came from the server, at the first try
        assert (mreport["answered_from_cache"], mreport["retried_requests"]) == (0, 0) and mreport["request_seconds"] > 0
        assert mreport["prompt_tokens"] == rows["prompt_tokens"].sum()
    phi = pd.read_parquet(workdir / "results" / "generations" / "phi-4.parquet")
    assert phi["cost"].sum() == pytest.approx((phi["prompt_tokens"] * 100 + phi["completion_tokens"] * 400).sum() / 1e6)
    all_rows = pd.concat(pd.read_parquet(p) for p in (workdir / "results" / "generations").glob("*.parquet"))
    assert report["totals"]["cost"] == pytest.approx(all_rows["cost"].sum())  # the report adds up
    assert report["totals"]["prompt_tokens"] == all_rows["prompt_tokens"].sum()


def test_table8_from_judges(llm_demo):
    workdir, _, _ = llm_demo
    latex = (workdir / "results" / "tables" / "table8.tex").read_text()
    for row in ("Gemini${}_{\\text{zs}}$", "Gemini${}_{\\text{cot}}$", "Gemma${}_{\\text{zs}}$", "Gemma${}_{\\text{cot}}$"):
        line = next(line for line in latex.splitlines() if line.strip().startswith(row))
        cells = [c.strip().rstrip("\\").strip() for c in line.split("&")[1:]]
        # a number, bold where it ranks, then the marks that say when it cannot be trusted (aicd.report.marks)
        assert len(cells) == 2 and all(re.fullmatch(r"(\\textbf\{)?\d{1,3}\.\d{2}\}?(\\S\{\})?"
                                                    r"(\\textsuperscript\{[a-z, ]+\})?", c) for c in cells), line
    assert "not run" not in latex
    scores = yaml.safe_load((workdir / "results" / "scores" / "binary" / "judge_gemini_zs.json").read_text())
    assert 0 < scores["coverage"] < 0.2 and scores["n"] >= 5


def test_rerun_sends_zero_requests(llm_demo, repo):
    workdir, server, _ = llm_demo
    before = server.stats()["requests"]
    run(repo, workdir, *TARGETS, "--forcerun", "generate", "instructions", "judge")
    assert server.stats()["requests"] == before
    assert "Nothing to be done" in run(repo, workdir, *TARGETS, "-n").stdout


def test_adding_a_model_plans_only_its_jobs_and_the_aggregates(llm_demo, repo):
    workdir, server, _ = llm_demo
    new = {"my-new-coder": {"family": "Mistral", "reasoning": False, "droid_collection": False,
                            "litellm_model": "hosted_vllm/mistralai/my-new-coder", "api_base": server.api_base}}
    write_registry(workdir, repo, server.api_base, extra=new)
    try:
        # `enabled: auto` keeps the run's recorded answer until asked to probe again
        kept = run(repo, workdir, *TARGETS, "-n")
        assert not [j for j in planned_jobs(kept.stdout) if j[0] == "generate"]
        assert "generators with an endpoint" in kept.stderr and "--config reprobe=true" in kept.stderr
        jobs = planned_jobs(run(repo, workdir, *TARGETS, "-n", "--config", "reprobe=true").stdout)
        assert jobs == [("generate", "model=my-new-coder"), ("generation_report", "")]
    finally:
        write_registry(workdir, repo, server.api_base)


def test_a_second_model_served_here_by_vllm_rebuilds_only_its_own_jobs(llm_demo, repo):
    """A registry entry served on this machine by vLLM (the packaged model under another name,
    sampling): only its generate job and the report are planned; run, it starts its own server
    (the real model, every protocol's prompts answered), leaves every other model's table as it
    was, and a dry run after it has nothing to do."""
    from aicd.generate.registry import servable
    from components import require

    workdir, server, _ = llm_demo
    served = {"family": "other", "reasoning": False, "droid_collection": False,
              "litellm_model": "openai/smollm2-sampled", "concurrency": 16,
              "params": {"temperature": 0.7, "top_p": 0.95, "max_tokens": 48},
              "serve": {"model": "package:smollm2-135m-instruct", "server": "vllm", "dtype": "float32",
                        "kv_cache_gb": 1}}
    missing = servable(served)
    require(missing is None, f"the local model served by vLLM ({missing})", "make setup pinned-inputs")
    others = {p.name: p.stat().st_mtime_ns for p in (workdir / "results" / "generations").glob("*.parquet")}
    resolved = workdir / "results" / "resolved.json"
    recorded = resolved.read_bytes()  # the run below records the new model; later tests plan without it
    write_registry(workdir, repo, server.api_base, extra={"SmolLM2-sampled": served})
    try:
        jobs = planned_jobs(run(repo, workdir, *TARGETS, "-n", "--config", "reprobe=true").stdout)
        assert jobs == [("generate", "model=SmolLM2-sampled"), ("generation_report", "")]
        run(repo, workdir, *TARGETS, "--config", "reprobe=true")  # a new endpoint is taken in as the plan says
        rows = pd.read_parquet(workdir / "results" / "generations" / "SmolLM2-sampled.parquet")
        assert len(rows) and set(rows["generator"]) == {"SmolLM2-sampled"} and rows["raw"].str.len().min() > 0
        assert {p.name: p.stat().st_mtime_ns for p in (workdir / "results" / "generations").glob("*.parquet")
                if p.name in others} == others  # no other model's table was rewritten
        assert "Nothing to be done" in run(repo, workdir, *TARGETS, "-n").stdout
    finally:
        write_registry(workdir, repo, server.api_base)
        resolved.write_bytes(recorded)


def test_changing_one_model_reruns_only_that_model(llm_demo, repo):
    workdir, server, _ = llm_demo
    write_registry(workdir, repo, server.api_base, temperature=0.2)
    try:
        jobs = planned_jobs(run(repo, workdir, *TARGETS, "-n").stdout)
        assert jobs == [("generate", "model=phi-4"), ("generation_report", "")]
    finally:
        write_registry(workdir, repo, server.api_base)


def test_generated_code_enters_the_pool_and_a_new_model_adds_only_its_jobs(llm_demo, repo, trial_path):
    """With dataset.generations on, every generator's table is normalized on its own and joins
    the pool; a new registry model plans its generation, its normalization and the pool only."""
    workdir, server, _ = llm_demo
    override = workdir / "override.yaml"
    saved = override.read_text()
    config = yaml.safe_load(saved)
    config["dataset"] = {"sources": ["trial", "local_code"], "generations": True, "dedup": {"threshold": 0.8}}
    override.write_text(yaml.safe_dump(config))
    pool_target = "results/dataset/pool.parquet"
    try:
        run(repo, workdir, pool_target)
        filt = yaml.safe_load((workdir / "results" / "dataset" / "filter_report.json").read_text())
        generated = sum(len(pd.read_parquet(workdir / "results" / "generations" / f"{m}.parquet")) for m in WITH_ENDPOINT)
        sources = sum(yaml.safe_load((workdir / "results" / "sources" / f"{s}.report.json").read_text())["rows_out"]
                      for s in ("trial", "local_code"))
        assert filt["rows_in"] == generated + sources  # every generated row is accounted for
        for model in WITH_ENDPOINT:
            rep = yaml.safe_load((workdir / "results" / "dataset" / "normalized" / "generations" / f"{model}.report.json").read_text())
            assert rep["rows_in"] == rep["kept"] + sum(rep["rejected"].values())
        new = {"my-new-coder": {"family": "Mistral", "reasoning": False, "droid_collection": False,
                                "litellm_model": "hosted_vllm/mistralai/my-new-coder", "api_base": server.api_base}}
        write_registry(workdir, repo, server.api_base, extra=new)
        jobs = planned_jobs(run(repo, workdir, pool_target, "-n", "--config", "reprobe=true").stdout)
        assert jobs == [("dataset_pool", ""), ("generate", "model=my-new-coder"),
                        ("normalize", "kind=generations, name=my-new-coder")]
    finally:
        write_registry(workdir, repo, server.api_base)
        override.write_text(saved)


def test_a_new_models_code_is_scored_by_the_fitted_detectors_without_a_rebuild(llm_demo, repo):
    """A models file of one's own layered on the paper's registry, and the new model's
    generations as a test set of T1: only its generation, its normalization (the paper's
    filters), the test set, and each fitted detector's prediction and score on it run; nothing is refitted, no pool is built."""
    workdir, server, _ = llm_demo
    detectors = ("majority", "lr_tfidf")
    run(repo, workdir, *[f"results/scores/binary/{d}.json" for d in detectors])  # fitted once, on the task
    override = workdir / "override.yaml"
    saved = override.read_text()
    mine = {"models": {"my-new-coder": {"family": "Mistral", "reasoning": False, "droid_collection": False,
                                        "litellm_model": "hosted_vllm/mistralai/my-new-coder",
                                        "api_base": server.api_base}}}
    (workdir / "my_models.yaml").write_text(yaml.safe_dump(mine))
    config = yaml.safe_load(saved)
    config["registry"] = [str(workdir / "models.yaml"), str(workdir / "my_models.yaml")]
    config["tasks"] = {"binary": {"test_sets": {"my_coder": {"generation": "my-new-coder", "outside_labels": "drop"}}}}
    override.write_text(yaml.safe_dump(config))
    targets = [f"results/scores/binary/test_sets/my_coder/{d}.json" for d in detectors]
    try:
        jobs = planned_jobs(run(repo, workdir, *targets, "-n").stdout)
        assert jobs == sorted([("generate", "model=my-new-coder"), ("normalize", "kind=generations, name=my-new-coder"),
                               ("test_set", "task=binary, test_set=my_coder"),
                               *[("predict_test_set", f"task=binary, test_set=my_coder, detector={d}") for d in detectors],
                               *[("score_test_set", f"task=binary, test_set=my_coder, detector={d}") for d in detectors]])
        run(repo, workdir, *targets)
        rows = pd.read_parquet(workdir / "results" / "tasks" / "binary" / "test_sets" / "my_coder.parquet")
        assert len(rows) and set(rows["generator"]) == {"my-new-coder"} and set(rows["target"]) == {"machine"}
        for d in detectors:
            score = yaml.safe_load((workdir / "results" / "scores" / "binary" / "test_sets" / "my_coder" / f"{d}.json")
                                   .read_text())
            assert score["n"] == len(rows) and score["per_class"]["machine"]["support"] == len(rows)
    finally:
        override.write_text(saved)
