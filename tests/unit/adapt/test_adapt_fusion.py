"""The adapted fusion's parts and weights (aicd.adapt.fusion), the reference's adapting and
calibrating parts (aicd.adapt.reference), the rewrite distance (aicd.adapt.rewrite_distance) and
what makes an answer a counterpart (aicd.adapt.counterparts), on real trial programs."""

from __future__ import annotations

import numpy as np
import pytest
from aicd.adapt.counterparts import counterpart_problem
from aicd.adapt.fusion import AdaptedFusion, Rows
from aicd.adapt.reference import reference_parts
from aicd.adapt.rewrite_distance import similarity
from aicd.common.errors import AicdError


def _pairs(trial_raw, n=40, seed=0):
    """n human trial programs (the reference) and n machine trial programs standing for their
    counterparts (counterpart j "written from" reference j)."""
    rows = trial_raw.sample(frac=1.0, random_state=seed)
    humans = rows[rows["generator"].str.lower() == "human"].head(n)
    machines = rows[rows["generator"].str.lower() != "human"].head(n)
    return list(humans["code"]), list(machines["code"])


def _rows(code, lm, trained):
    return Rows(np.asarray(lm, float), np.asarray(trained, float), code)


def test_a_part_that_tells_the_pairs_apart_backwards_gets_no_weight(trial_raw):
    human_code, machine_code = _pairs(trial_raw)
    n = len(human_code)
    rng = np.random.default_rng(0)
    # the LM part ranks the counterparts above the reference; the trained part the other way round
    humans = _rows(human_code, rng.normal(0, 1, n), rng.normal(1, 1, n))
    machines = _rows(machine_code, rng.normal(1.5, 1, n), rng.normal(-1, 1, n))
    fusion = AdaptedFusion({"parts": ["lm", "trained", "pair"], "view": "chars"}).fit(humans, machines, np.arange(n))
    assert fusion.separation_["trained"] < 0.5 < fusion.separation_["lm"]
    assert fusion.weights_["trained"] == 0.0 and fusion.weights_["lm"] > 0
    assert sum(fusion.weights_.values()) == pytest.approx(1.0)
    # the score never falls as the LM part rises, whatever the trained part says
    probe = _rows(human_code[:5] * 2, np.r_[np.zeros(5), np.ones(5)], np.r_[np.zeros(5), np.full(5, 9.0)])
    scores = fusion.score(probe)
    assert (scores[5:] >= scores[:5]).all()


def test_the_pair_part_reads_the_code_and_is_weighted_out_of_fold(trial_raw):
    human_code, machine_code = _pairs(trial_raw, 60)
    n = len(human_code)
    flat = np.zeros(n)
    fusion = AdaptedFusion({"parts": ["lm", "pair"], "view": "chars"}).fit(_rows(human_code, flat, flat),
                                                          _rows(machine_code, flat, flat), np.arange(n))
    # trial humans and machines differ in style: the pair part separates them out of fold, the flat LM part not at all
    assert fusion.separation_["pair"] > 0.7 and fusion.separation_["lm"] == 0.5
    assert fusion.weights_ == {"lm": 0.0, "pair": 1.0}
    assert fusion.summary()["rows"] == {"reference": n, "counterparts": n}


def test_the_lm_floor_and_the_fixed_weights():
    code = [f"x = {i}\nprint(x)\n" for i in range(12)]
    lm_h, lm_m = np.linspace(0, 1, 12), np.linspace(0.4, 1.4, 12)   # the LM part separates a little
    tr_h, tr_m = np.zeros(12), np.full(12, 5.0)                       # the trained part perfectly
    humans, machines = _rows(code, lm_h, tr_h), _rows(code, lm_m, tr_m)
    floor = AdaptedFusion({"parts": ["lm", "trained"], "lm_floor": 0.5}).fit(humans, machines, np.arange(12))
    assert floor.weights_["lm"] == pytest.approx(0.5) and floor.weights_["trained"] == pytest.approx(0.5)
    fixed = AdaptedFusion({"parts": ["lm", "trained"], "weights": "fixed", "lm_weight": 0.7}).fit(
        humans, machines, np.arange(12))
    assert fixed.weights_ == {"lm": 0.7, "trained": pytest.approx(0.3)}
    with pytest.raises(AicdError, match="too few to adapt on"):
        AdaptedFusion().fit(_rows(code[:1], [0], [0]), machines, np.arange(1))


def test_the_reference_is_split_per_language_into_disjoint_parts():
    languages = np.array(["Python"] * 41 + ["Java"] * 10 + ["Go"])
    adapting, calibrating = reference_parts(languages, 0.5, seed=3)
    assert set(adapting).isdisjoint(calibrating) and len(adapting) + len(calibrating) == len(languages)
    for language, n in (("Python", 41), ("Java", 10)):
        assert abs((languages[adapting] == language).sum() - n / 2) <= 0.5
    again = reference_parts(languages, 0.5, seed=3)
    assert (again[0] == adapting).all() and not (reference_parts(languages, 0.5, seed=4)[0] == adapting).all()


def test_the_rewrite_similarity_reads_tokens_not_layout():
    program = "def add(a, b):\n    return a + b\n"
    assert similarity(program, "def add(a,b):  return a+b") == 1.0
    assert similarity(program, "def total(x, y):\n    return x + y\n") < 1.0
    # a rewrite cut at its cap is compared with the program's beginning
    long = "\n".join(f"v{i} = {i}" for i in range(100))
    assert similarity(long, "v0 = 0\nv1 = 1", cut=True) == 1.0 > similarity(long, "v0 = 0\nv1 = 1")
    assert np.isnan(similarity(program, ""))


def test_an_answer_is_a_counterpart_only_when_it_is_code_and_not_the_reference():
    reference = "def add(a, b):\n    total = a + b\n    return total\n"
    assert counterpart_problem("", reference, "Python") == "empty"
    assert counterpart_problem(reference.replace("    ", "\t"), reference, "Python") == "same_as_reference"
    assert counterpart_problem("x = 1", reference, "Python") == "too_short"
    assert counterpart_problem("This function adds\ntwo numbers and\nreturns the sum of them.", reference,
                               "Python") == "not_parsed"
    assert counterpart_problem("def add(x, y):\n    s = x + y\n    return s\n", reference, "Python") is None


def test_the_gate_takes_the_weight_of_a_pair_part_that_ranks_the_input_against_the_detector(trial_raw):
    human_code, machine_code = _pairs(trial_raw, 40)
    n = len(human_code)
    flat = np.zeros(n)
    settings = {"parts": ["lm", "pair"], "gate": True, "view": "chars"}
    fitted = AdaptedFusion(settings).fit(_rows(human_code, flat, flat), _rows(machine_code, flat + 0.1, flat),
                                         np.arange(n))
    assert fitted.weights_["pair"] > 0
    inputs = human_code + machine_code
    pair = fitted.part_scores(Rows(np.zeros(2 * n), None, inputs))["pair"]
    against = Rows(np.zeros(2 * n), None, inputs, fused=-pair)       # the detector ranks the files the other way
    assert AdaptedFusion(settings).fit(_rows(human_code, flat, flat), _rows(machine_code, flat + 0.1, flat),
                                       np.arange(n)).gate(against).weights_["pair"] == 0.0
    along = Rows(np.zeros(2 * n), None, inputs, fused=pair)
    gated = fitted.gate(along)
    assert gated.agreement_ == pytest.approx(1.0) and gated.weights_["pair"] > 0
    few = Rows(np.zeros(5), None, inputs[:5], fused=pair[:5])         # too few files to read an agreement
    assert AdaptedFusion(settings).fit(_rows(human_code, flat, flat), _rows(machine_code, flat + 0.1, flat),
                                       np.arange(n)).gate(few).weights_ == {"lm": 1.0, "pair": 0.0}


def test_the_delexicalised_pair_view_reads_neither_comments_nor_names(trial_raw):
    rows = Rows(np.zeros(2), None, ["def f(total):\n    # SECRET\n    return total + 1\n",
                                     "int g(int count) { /* SECRET */ return count + 1; }"], ["Python", "C++"])
    text = rows.text("delex")
    assert all("SECRET" not in t and "total" not in t and "count" not in t for t in text)
    assert "ID" in text[0].split() and "NUM" in text[1].split()
    assert rows.text("chars") == rows.code


def test_detect_adapt_says_what_the_adaptation_did(monkeypatch, capsys):
    """`aicd detect --adapt`'s one line on stderr is read from the adapted model's report (the
    adaptation itself stubbed: tests/llm/test_adapt_detect.py runs it with the local model)."""
    from types import SimpleNamespace

    import aicd.adapt.counterparts as counterparts
    import aicd.adapt.detect as adapt_detect
    import aicd.detect_cli as detect_cli
    import pandas as pd

    report = {"adapting": 20, "calibrating": 20, "counterparts": {"hybrid_rewrite": {"kept": 11, "asked": 20}},
              "requests_sent": 60, "seconds": 149.0, "weights": {"lm": 0.4, "trained": 0.6, "pair": 0.0},
              "separation_auroc": {"lm": 0.9, "trained": 0.98, "pair": 0.95}, "agreement": 0.0}
    adapted = adapt_detect.AdaptedModel(object(), None, report)
    monkeypatch.setattr(adapt_detect, "check_adaptable", lambda model: None)
    monkeypatch.setattr(adapt_detect, "adapt", lambda *args, **kwargs: (adapted, pd.DataFrame()))
    monkeypatch.setattr(adapt_detect, "gate", lambda model, to_label: model)
    monkeypatch.setattr(counterparts, "Writer", lambda **kwargs: None)
    monkeypatch.setattr(detect_cli, "reference_files", lambda *args: pd.DataFrame())
    got, _ = detect_cli.adapt_now(SimpleNamespace(adapt_cache="cache.sqlite", seed=0), object(), None, pd.DataFrame())
    assert got is adapted
    err = capsys.readouterr().err
    assert "adapted on 20 reference files and their counterparts (hybrid_rewrite 11/20 kept; 60 requests sent" in err
    assert "lm 0.40 (AUROC 90), trained 0.60 (AUROC 98), pair 0.00 (AUROC 95)" in err
