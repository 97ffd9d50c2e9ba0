"""What the submitting machine is told agrees with what is planned: every `LLM stages:`,
`Sandbox:` and `Recorded:` line comes from the decision the plan's jobs come from, one line per
stage, for the cases where the record and this machine disagree (aicd.resolve records the
machine once; aicd.plan says what it planned and why)."""

from __future__ import annotations

import copy

import pytest
from aicd import resolve as resolving
from aicd.plan import Plan


def lines(notes, prefix):
    return [n for n in notes if n.startswith(prefix)]


def resolved_with(tmp_path, monkeypatch, config, models, recorded, fresh):
    """resolve() over a record made earlier, on a machine that now answers `fresh`."""
    (tmp_path / "resolved.json").write_text(__import__("json").dumps(recorded))
    monkeypatch.setattr(resolving, "probe", lambda c, m: dict(fresh))
    notes = []
    answers = resolving.resolve(config, models, tmp_path, notes=notes)
    return answers, notes


def test_a_generator_named_by_a_test_set_is_said_to_be_generated(demo, models, tmp_path, monkeypatch):
    """The record says no generator has an endpoint, this machine now has one, and a test set
    names a model: the plan generates that model, and the one LLM line says so instead of
    'generation left out ... plans nothing new'."""
    config = copy.deepcopy(demo)
    model = next(iter(models))
    config["tasks"]["binary"]["test_sets"] = {"gen": {"generation": model}}
    config["results"] = str(tmp_path)
    recorded = {"execution": False, "generators": [], "instructor": False, "judges": [], "absent_sources": {}}
    fresh = dict(recorded, generators=[model])
    answers, notes = resolved_with(tmp_path, monkeypatch, config, models, recorded, fresh)
    assert answers["generators"] == [] and answers["now"] == {"generators": [model]}
    assert "now" not in __import__("json").loads((tmp_path / "resolved.json").read_text())  # never recorded
    plan = Plan.from_config(config, models, answers)
    assert plan.generators == (model,) and plan.pool_generators == ()
    said = lines([*notes, *plan.notes], "LLM stages:")
    assert len(said) == 1, said
    assert "generation for the pool" in said[0] and f"{model} is generated all the same" in said[0]
    assert "recorded 'none'" not in said[0] and "reprobe=true" in said[0]
    assert not lines(notes, "Recorded:")  # the stage's own line says it, once


@pytest.mark.parametrize("recorded_answer, now", [(False, True), (True, False), (False, False)])
def test_the_sandbox_line_follows_the_record_and_says_what_the_machine_says(demo, models, tmp_path, monkeypatch,
                                                                             recorded_answer, now):
    config = copy.deepcopy(demo)
    config["results"] = str(tmp_path)
    recorded = {"execution": recorded_answer, "generators": [], "instructor": False, "judges": [],
                "absent_sources": {}}
    answers, notes = resolved_with(tmp_path, monkeypatch, config, models, recorded, dict(recorded, execution=now))
    plan = Plan.from_config(config, models, answers)
    said = lines([*notes, *plan.notes], "Sandbox:")
    assert bool(plan.executions) == recorded_answer  # the plan follows the record
    if recorded_answer == now:
        assert said == (["Sandbox: no Docker daemon answers (nor Podman), so execution is left out (execution.enabled: "
                         "auto); to enable, install docker.io and start dockerd (see docs/sandbox.md)."]
                        if not now else [])
        return
    assert len(said) == 1 and "reprobe=true" in said[0] and "as recorded in" in said[0]
    if now:  # left out by the record, though an engine answers now: it must not say none answers
        assert "left out" in said[0] and "no Docker daemon answers" not in said[0] and "answers now" in said[0]
    else:
        assert f"{len(plan.executions)} execution jobs planned" in said[0] and "none answers now" in said[0]


def test_judges_recorded_with_an_endpoint_that_is_gone_are_said_to_fail_here(demo, models, tmp_path, monkeypatch):
    config = copy.deepcopy(demo)
    config["results"] = str(tmp_path)
    recorded = {"execution": False, "generators": [], "instructor": False, "judges": ["gemini"],
                "absent_sources": {}}
    answers, _notes = resolved_with(tmp_path, monkeypatch, config, models, recorded, dict(recorded, judges=[]))
    plan = Plan.from_config(config, models, answers)
    assert list(plan.judges) == ["gemini"]
    said = lines(plan.notes, "LLM stages:")
    assert len(said) == 1, said  # one line for the stages, generation's left-out reason and the judges' change
    assert "judges with an endpoint: recorded 1 (gemini), this machine now says none" in said[0]


def test_judges_planned_outright_without_an_endpoint_are_reported_at_plan_time(demo, models, monkeypatch):
    config = copy.deepcopy(demo)
    config["judging"]["enabled"] = True
    for key in ("GEMINI_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    plan = Plan.from_config(config, models, {})
    said = resolving.endpoint_notes(config, models, plan)
    assert len(said) == 1 and said[0].startswith("LLM judges: 2 of 2 (gemini, gemma) have no endpoint")
    assert "their judge jobs are planned" in said[0]  # one job per judge, every task and mode in it
    monkeypatch.setenv("GEMINI_API_KEY", "x")  # gemini has one now; gemma (open weights) needs an api_base
    said = resolving.endpoint_notes(config, models, plan)
    assert len(said) == 1 and said[0].startswith("LLM judges: 1 of 2 (gemma) have no endpoint")
