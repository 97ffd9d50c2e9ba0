"""A run built on another (aicd.records.baserun): what it reads from the base, what it computes, and what
it refuses, from the plans of both configs (no snakemake; the workflow test runs it for real:
tests/workflow/test_own_detector.py)."""

from __future__ import annotations

import copy
import json

import pytest
from aicd.common.errors import AicdError
from aicd.config import validate_config
from aicd.plan import Plan
from aicd.records import baserun

MINE = {"kind": "python", "title": "Mine", "tasks": ["binary"], "params": {"object": "my_detector:NearestMeanDetector"}}


def base_of(config, root="results") -> baserun.Base:
    return baserun.Base(root=root, config=copy.deepcopy(config), configfiles=("config/demo.yaml",), resolved={},
                        fingerprint={"inputs": "abc", "config": "def"})


def on_base(base, models, own):
    config = baserun.merged(base.config, {"base": base.root, "results": f"{base.root}/mine", **own})
    validate_config(config)
    baserun.check_sections(config, base)
    plan = Plan.from_config(config, models, {})
    return config, plan, baserun.reuse(plan, Plan.from_config(base.config, models, {}), config, base)


def test_an_extra_detector_reads_every_baseline_and_computes_only_itself(demo, models):
    base = base_of(demo)
    _config, plan, reuse = on_base(base, models, {"detectors": {"mine": MINE}})
    assert set(plan.pairs) - reuse.pairs == {("binary", "mine")}
    assert reuse.pairs == set(Plan.from_config(demo, models, {}).pairs)
    assert reuse.features == plan.feature_jobs()  # every feature set is the base's
    assert reuse.analyses == set(plan.tasks)                   # its row is not one the analyses read
    assert reuse.of_pair("binary", "mine", "results/mine") == "results/mine"
    assert reuse.of_pair("binary", "lr_tfidf", "results/mine") == "results"
    assert "computes mine and the tables" in baserun.note(plan, reuse, base, "results/mine")


def test_a_changed_baseline_or_feature_set_is_computed_anew_in_the_runs_own_root(demo, models):
    base = base_of(demo)
    _, plan, reuse = on_base(base, models, {"detectors": {"lr_tfidf": {"params": {"C": 0.5}}}})
    assert set(plan.pairs) - reuse.pairs == {(t, "lr_tfidf") for t in plan.tasks}
    assert not reuse.analyses  # LR_{TF-IDF} is one of the paper's trained rows the all-fail analysis reads
    _, plan, reuse = on_base(base, models, {"features": {"tfidf": {"params": {"max_features": 3000}}}})
    fresh = set(plan.pairs) - reuse.pairs
    on_tfidf = {(t, d) for t, d in plan.pairs if plan.detectors[d].features in ("tfidf", "ast_tfidf")}
    assert fresh == on_tfidf and not {(t, f) for t, f in reuse.features if f in ("tfidf", "ast_tfidf")}
    assert {(t, "ast") for t in plan.tasks} <= reuse.features
    _, plan, reuse = on_base(base, models, {"detectors": {"lr_tfidf": {"title": "Renamed"}}})
    assert reuse.pairs == set(plan.pairs)  # a title is the tables', not the fit's


def test_anything_but_detectors_and_feature_sets_is_refused_naming_the_key(demo, models):
    base = base_of(demo)
    with pytest.raises(AicdError, match=r"config\.tasks\.binary\.build\.seen_languages: differs from the base run's"):
        on_base(base, models, {"tasks": {"binary": {"build": {"seen_languages": ["Python"]}}}})
    with pytest.raises(AicdError, match=r"config\.seed: differs"):
        on_base(base, models, {"seed": 7})
    config = baserun.merged(base.config, {"base": "results", "detectors": {"mine": MINE}})
    validate_config(config)
    with pytest.raises(AicdError, match=r"config\.results: a run on the base results writes under a root of its own"):
        baserun.check_sections(config, base)


def test_a_base_that_changed_since_is_refused_with_what_changed(demo):
    base = base_of(demo)
    baserun.check_unchanged(None, base, rebase=False)  # a first run records the base as it is
    same = {"base": {"root": "results", "inputs": "abc", "config": "def"}}
    baserun.check_unchanged(same, base, rebase=False)
    moved = {"base": {"root": "results", "inputs": "000", "config": "def"}}
    with pytest.raises(AicdError, match=r"base results changed since this run was built on it \(its input "
                                        r"fingerprint 000 -> abc.*--config rebase=true"):
        baserun.check_unchanged(moved, base, rebase=False)
    baserun.check_unchanged(moved, base, rebase=True)


def test_loading_a_base_refuses_what_is_not_a_finished_run(demo, tmp_path):
    root = tmp_path / "results"
    with pytest.raises(AicdError, match=r"no run .*make demo"):
        baserun.load(str(root))
    root.mkdir()
    (root / "run.json").write_text(json.dumps({"configfiles": ["config/demo.yaml"]}))
    with pytest.raises(AicdError, match=r"no recorded config"):
        baserun.load(str(root))
    baserun.record(root, {**demo, "reprobe": True})
    with pytest.raises(AicdError, match=r"has not finished .*snakemake --configfile config/demo.yaml"):
        baserun.load(str(root))
    (root / "inputs.json").write_text(json.dumps({"fingerprint": "f00"}))
    base = baserun.load(str(root))
    flags = ("reprobe", "rebase", "drop_layers")
    assert base.config == {k: v for k, v in demo.items() if k not in flags}  # integer keys kept
    assert base.fingerprint["inputs"] == "f00" and base.configfiles == ("config/demo.yaml",)
    chained = dict(demo, base="elsewhere")
    baserun.record(root, chained)
    with pytest.raises(AicdError, match=r"itself built on elsewhere"):
        baserun.load(str(root))
