"""One rule per job kind, and the same resources for every job that runs a detector: in a dry
run of the demo with an extra test set, each detector's fit (`detect`, or its folder-stored
variant, one definition), its test-set predictions (`predict_test_set`, one rule for file- and
folder-stored models) and the causal LM it asks for (`train_causal_lm`) ask the same threads,
memory, runtime and GPUs, from the plan. A GPU asked in the config reaches every one of them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict

import pytest
import yaml

from workflow.test_demo_workflow import TRAINED_LM, TRAINED_LM_SPEC

pytestmark = pytest.mark.workflow
DETECTOR_RULES = ("detect", "detect_folder", "predict_test_set", "train_causal_lm")


def jobs_of(output: str) -> list[dict]:
    """rule, wildcards, threads and resources of every job in a dry run's output."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        m = re.match(r"(?:local)?rule (\w+):", block)
        if not m:
            continue
        fields = dict(re.findall(r"^\s+(\w+): (.*)$", block, flags=re.M))
        resources = dict(kv.split("=", 1) for kv in fields.get("resources", "").split(", ") if "=" in kv)
        wildcards = dict(kv.split("=", 1) for kv in fields.get("wildcards", "").split(", ") if "=" in kv)
        jobs.append({"rule": m.group(1), "wildcards": wildcards, "threads": int(fields.get("threads", 1)),
                     **{k: resources.get(k) for k in ("mem_mb", "runtime", "gpu")}})
    return jobs


@pytest.fixture(scope="module")
def planned(repo, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("resources")
    override = {
        "tasks": {"binary": {"test_sets": {"perturbed": {"perturbation": "rename"}}}},
        "detectors": {
            "minilm": {"resources": {"gpu": 1, "mem_mb": 4000, "runtime": 30, "threads": 1}},  # folder-stored
            "robust": {"resources": {"gpu": 1, "runtime": 45}},                                 # file-stored
            TRAINED_LM: {**TRAINED_LM_SPEC, "resources": {"gpu": 1, "mem_mb": 3000, "runtime": 20, "threads": 1}},
        },
    }
    (workdir / "override.yaml").write_text(yaml.safe_dump(override))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"})
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"), "--directory",
                           str(workdir), "--cores", "2", "-n", "--configfile", str(repo / "config" / "demo.yaml"),
                           str(workdir / "override.yaml")], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return jobs_of(proc.stdout)


def test_each_job_kind_has_one_rule(planned, repo):
    rules = {j["rule"] for j in planned}
    assert {"detect", "predict_test_set", "train_causal_lm"} <= rules
    assert not any(r.endswith("_folder") and r != "detect_folder" for r in rules)  # no predict_test_set_folder
    text = (repo / "workflow" / "rules" / "detectors.smk").read_text()
    assert text.count("\nrule detect:") == 1 and "use rule detect as detect_folder with:" in text
    assert "rule predict_test_set_folder" not in (repo / "workflow" / "rules" / "test_sets.smk").read_text()


def test_every_rule_that_runs_a_detector_asks_the_same_resources(planned):
    by_detector = defaultdict(set)
    rules = defaultdict(set)
    for job in planned:
        if job["rule"] in DETECTOR_RULES:
            detector = job["wildcards"]["detector"]
            by_detector[detector].add((job["threads"], job["mem_mb"], job["runtime"], job["gpu"]))
            rules[detector].add(job["rule"])
    assert {"detect_folder", "predict_test_set"} <= rules["minilm"]
    assert {"detect", "predict_test_set"} <= rules["robust"]
    assert {"detect", "train_causal_lm"} <= rules[TRAINED_LM]
    for detector, asked in by_detector.items():
        assert len(asked) == 1, (detector, rules[detector], asked)
    assert by_detector["minilm"] == {(1, "4000", "30", "1")}  # the GPU reaches its extra test sets too
    assert {a[2:] for a in by_detector["robust"]} == {("45", "1")}
    assert {a[3] for a in by_detector[TRAINED_LM]} == {"1"}
    assert {a[3] for a in by_detector["lr_tfidf"]} == {"0"}


# The dry run below runs snakemake with rows of the one table of job resources changed in its one
# home, aicd.plan.resources (a detector's and a feature set's runtime, a feature set's memory, the
# score rule's runtime and memory): nothing else is edited.
CHANGES = {"detector": {"runtime": 77}, "features": {"runtime": 77, "mem_mb": 3333},
           "score": {"runtime": 41, "mem_mb": 2222}}
WITH_CHANGED_DEFAULTS = f"""
import dataclasses, sys
import aicd.plan.resources as table
for rule, change in {CHANGES!r}.items():
    table.RULES[rule] = dataclasses.replace(table.RULES[rule], **change)
from snakemake.cli import main
sys.argv = ["snakemake", *sys.argv[1:]]
main()
"""


def test_a_job_default_changed_in_its_one_home_reaches_the_rules_and_the_gpu_list(repo, tmp_path, monkeypatch):
    import dataclasses
    import shlex

    import aicd.plan.resources as table
    from aicd.config import validate_config
    from aicd.plan import Plan

    override = {"features": {"tfidf": {"resources": {"gpu": 1}}}, "scoring": {"fprs": [0.02, 0.1]}}
    (tmp_path / "override.yaml").write_text(yaml.safe_dump(override))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"})
    proc = subprocess.run([sys.executable, "-c", WITH_CHANGED_DEFAULTS, "--snakefile", str(repo / "Snakefile"),
                           "--directory", str(tmp_path), "--cores", "2", "-n", "-p", "--configfile",
                           str(repo / "config" / "demo.yaml"), str(tmp_path / "override.yaml")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = jobs_of(proc.stdout)
    features = [j for j in jobs if j["rule"] == "features" and j["wildcards"]["featureset"] == "tfidf"]
    assert features and {(j["runtime"], j["gpu"]) for j in features} == {("77", "1")}
    assert {j["runtime"] for j in jobs if j["rule"] == "detect" and j["wildcards"]["detector"] == "lr_tfidf"} == {"77"}
    assert {(j["runtime"], j["mem_mb"]) for j in jobs if j["rule"] == "score"} == {("41", "2222")}

    # the GPU list of the SLURM dry run, from the same plan with the same one change
    for rule, change in CHANGES.items():
        monkeypatch.setitem(table.RULES, rule, dataclasses.replace(table.RULES[rule], **change))
    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    config["features"]["tfidf"]["resources"] = {**config["features"]["tfidf"].get("resources", {}), "gpu": 1}
    config["scoring"] = override["scoring"]
    validate_config(config)
    plan = Plan.from_config(config)
    listed = [j for j in plan.gpu_jobs() if j["rule"] == "features" and j["detector"] == "tfidf"]
    assert listed == [{"rule": "features", "detector": "tfidf", "count": len(features), "gpu": 1, "mem_mb": 3333,
                       "mem_mb_per_input_mb": 8, "runtime": 77, "threads": features[0]["threads"]}]
    assert plan.features["tfidf"].job_mem_mb(100, attempt=2) == (3333 + 8 * 100) * 2  # what the rule asks

    # the score rule passes the configured FPRs and what made the predictions
    command = next(line for line in proc.stdout.splitlines()
                   if "python -m aicd.scoring --task binary --detector lr_tfidf " in line)
    args = shlex.split(command[command.index("python -m aicd.scoring"):].split(" > ")[0])
    assert args[args.index("--fpr") + 1:args.index("--fpr") + 3] == ["0.02", "0.1"]
    assert json.loads(args[args.index("--versions") + 1]) == plan.versions("binary", "lr_tfidf") == {
        "task": {"definition": "binary", "version": 1}, "detector": {"kind": "logistic_regression", "version": 2}}


def test_no_rule_states_a_resource_of_its_own(repo):
    """Every rule's threads and resources come from the one table (aicd.plan.resources) or the
    plan: no number in a rule's `resources:` or `threads:`, and every rule that runs a job asks."""
    for path in sorted((repo / "workflow" / "rules").glob("*.smk")):
        block = None
        for line in path.read_text().splitlines():
            if re.match(r"^    (resources|threads):", line):
                block = line.strip()
                assert not re.search(r"[:=]\s*\d", line), f"{path.name}: {line.strip()}"
            elif block and line.startswith("        "):
                assert not re.search(r"=\s*\d|\d\s*\*|\*\s*\d", line), f"{path.name}: {block} {line.strip()}"
            else:
                block = None
    text = "\n".join(p.read_text() for p in (repo / "workflow" / "rules").glob("*.smk"))
    rules = re.findall(r"^rule (\w+):", text, flags=re.M)
    asking = re.findall(r"^rule (\w+):(?:(?!^rule ).)*?^    resources:", text, flags=re.M | re.S)
    assert sorted(set(rules) - set(asking)) == [], "rules without resources from the table"
