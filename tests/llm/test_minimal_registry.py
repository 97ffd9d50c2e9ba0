"""A generator registered with only the registry's required keys (family `other`, no `maker`, as
docs/adding_a_generator.md allows) goes through everything that reads an entry: the plan, the
endpoint check, generation and a judge over real HTTP (the local OpenAI-compatible test server,
a stand-in for an LLM that cannot run here), and its card, each through its command line as the
workflow runs it. A key only the card reads (`maker`) is kept out of the entry the jobs are
given, so adding it reruns the card alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from aicd.config import validate_config
from aicd.generate.registry import job_entry, load_registry
from aicd.judge.run import judge
from aicd.plan import Plan

REPO = Path(__file__).resolve().parents[2]
REQUIRED = {"family": "other", "reasoning": False, "droid_collection": False, "litellm_model": "openai/local-test"}


def minimal_registry(tmp_path, **extra) -> Path:
    path = tmp_path / "my_models.yaml"
    path.write_text(yaml.safe_dump({"models": {"Tiny-Coder": {**REQUIRED, **extra}}}))
    return path


def stage(*args) -> subprocess.CompletedProcess:
    """A stage's command line, as a rule's shell runs it."""
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=REPO)


def source(tmp_path, n=6) -> str:
    path = tmp_path / "human.parquet"
    pd.DataFrame({"id": [f"h{i}" for i in range(n)], "code": [f"def f{i}(x):\n    return x + {i}\n" for i in range(n)],
                  "label": "human", "language": "Python", "domain": "algorithmic", "source": "s",
                  "problem_id": [f"p{i}" for i in range(n)]}).to_parquet(path)
    return f"s={path}"


def test_the_plan_and_the_endpoint_check_take_a_minimal_entry(tmp_path):
    models = load_registry([REPO / "config" / "models.yaml", minimal_registry(tmp_path)])
    entry = models["Tiny-Coder"]
    assert "maker" not in entry and entry["params"] == {}
    config = yaml.safe_load((REPO / "config" / "demo.yaml").read_text())
    config["registry"] = [str(REPO / "config" / "models.yaml"), str(tmp_path / "my_models.yaml")]
    config["tasks"]["binary"]["test_sets"] = {"tiny": {"generation": "Tiny-Coder", "outside_labels": "drop"}}
    validate_config(config)
    plan = Plan.from_config(config, models, {"generators": [], "instructor": False, "judges": [], "execution": False})
    assert plan.generators == ("Tiny-Coder",)
    # no api_base and no key: its generate job stops with one line saying what to set, no traceback
    done = stage("aicd.generate", "generate", "--model", json.dumps(job_entry(entry)), "--source", source(tmp_path),
                 "--prompts", str(REPO / "config" / "prompts" / "generation.v1.yaml"),
                 "--protocols", json.dumps({"hybrid_rewrite": {"n": 2}}), "--out", str(tmp_path / "g.parquet"),
                 "--report", str(tmp_path / "g.json"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "generator Tiny-Coder: no endpoint on this machine: give it an api_base" in done.stderr


def test_a_key_only_the_card_reads_is_not_in_the_jobs_entry(tmp_path):
    """Snakemake reruns a job whose params changed: the generate, instructions and judge jobs get
    job_entry (inputs.smk model_arg; the generation jobs of the entry as generation.serve serves
    it), so adding `maker` changes only the card's params."""
    plain = load_registry(minimal_registry(tmp_path))["Tiny-Coder"]
    made = load_registry(minimal_registry(tmp_path, maker="Someone"))["Tiny-Coder"]
    assert made["maker"] == "Someone" and job_entry(made) == job_entry(plain) == plain
    rules = "\n".join((REPO / "workflow" / "rules" / f).read_text() for f in ("inputs.smk", "generation.smk"))
    assert "as_arg(job_entry(MODELS[name]))" in rules and "as_arg(job_entry(generation_entry(w.model)))" in rules
    assert "with_max_tokens(\n                job_entry(generation_entry(PLAN.instructor))" in rules


def test_generation_a_judge_and_the_card_run_on_a_minimal_entry(server, tmp_path):
    """The minimal entry plus the api_base of a server (the only way it has an endpoint), layered
    on the paper's registry: its code is generated, it judges, and its card is written."""
    models = load_registry([REPO / "config" / "models.yaml", minimal_registry(tmp_path, api_base=server.api_base)])
    entry = models["Tiny-Coder"]
    llm = {"cache": str(tmp_path / "cache.sqlite"), "max_retries": 0}
    generations, report = tmp_path / "Tiny-Coder.parquet", tmp_path / "Tiny-Coder.report.json"
    done = stage("aicd.generate", "generate", "--model", json.dumps(job_entry(entry)), "--source", source(tmp_path),
                 "--prompts", str(REPO / "config" / "prompts" / "generation.v1.yaml"),
                 "--protocols", json.dumps({"hybrid_rewrite": {"n": 4}}), "--llm", json.dumps(llm),
                 "--out", str(generations), "--report", str(report))
    assert done.returncode == 0, done.stderr
    table = pd.read_parquet(generations)
    assert len(table) == 4 and set(table["family"]) == {"other"} and set(table["status"]) == {"ok"}

    test = tmp_path / "test.parquet"
    pd.DataFrame({"id": [f"t{i}" for i in range(20)], "code": [f"x = {i}\n" for i in range(20)],
                  "target": ["human", "machine"] * 10, "language": "Python", "domain": "algorithmic"}).to_parquet(test)
    preds, judged = judge(job_entry(entry), "zs", str(test), ["human", "machine"], "label",
                          str(REPO / "config" / "prompts" / "judge.v1.yaml"), 1.0, 0, llm)
    assert judged["judge"] == "Tiny-Coder" and len(preds) == 20

    # the card, through its command line, on a detector's predictions for its rows and 120 humans
    rng = np.random.default_rng(0)
    ids = [*table["id"], *[f"h{i}" for i in range(120)]]
    gold = ["hybrid"] * len(table) + ["human"] * 120
    machine = np.r_[rng.uniform(0.4, 1, len(table)), rng.uniform(0, 0.7, 120)]
    pd.DataFrame({"id": ids, "gold": gold, "pred": np.where(machine > 0.5, "hybrid", "human"),
                  "score_human": 1 - machine}).to_parquet(tmp_path / "preds.parquet")
    pd.DataFrame({"id": ids}).to_parquet(tmp_path / "split.parquet")
    scored = {"T3: its rows of the test split": {"lr": {"predictions": str(tmp_path / "preds.parquet"),
                                                        "test": str(tmp_path / "split.parquet")}}}
    done = stage("aicd.report", "generator-card", "--model", json.dumps(entry), "--report", str(report),
                 "--generations", str(generations), "--scored", json.dumps(scored),
                 "--out-md", str(tmp_path / "card.md"), "--out-json", str(tmp_path / "card.json"))
    assert done.returncode == 0, done.stderr
    card = (tmp_path / "card.md").read_text()
    assert "Family other (not one of the paper's 11 families" in card and "made by" not in card
    assert "**4 of its rows** §" in card and "against 120 human rows" in card  # the rows line, first
    assert card.index("Rows behind the figures") < card.index("## Requests")
