"""The fused detector's parts: the delexicalised view (tree-sitter, every language), stylometry
standardised per language on human training code, and the fused kind's direction constraint (a
planted collection that leans the other way cannot turn an LM coefficient negative)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from aicd.codetools.tokens import delexicalised_tokens
from aicd.common.errors import AicdError
from aicd.detectors import build
from aicd.features.registry import build as build_features

# one program per language: a comment saying SECRET, a name myCounter, a string "hello", a number 42
PROGRAMS = {
    "Python": 'def bump(myCounter):\n    # SECRET note\n    print("hello")\n    return myCounter + 42\n',
    "Java": 'class A {\n  // SECRET note\n  int bump(int myCounter) { System.out.println("hello"); return myCounter + 42; }\n}\n',
    "C++": '#include <cstdio>\n/* SECRET note */\nint bump(int myCounter) { puts("hello"); return myCounter + 42; }\n',
    "C": '#include <stdio.h>\n// SECRET note\nint bump(int myCounter) { puts("hello"); return myCounter + 42; }\n',
    "Go": 'package main\n// SECRET note\nfunc bump(myCounter int) int { println("hello"); return myCounter + 42 }\n',
    "PHP": '<?php\n# SECRET note\nfunction bump($myCounter) { echo "hello"; return $myCounter + 42; }\n',
    "C#": 'class A {\n  // SECRET note\n  int Bump(int myCounter) { System.Console.WriteLine("hello"); return myCounter + 42; }\n}\n',
    "JavaScript": 'function bump(myCounter) {\n  // SECRET note\n  console.log("hello");\n  return myCounter + 42;\n}\n',
    "Rust": 'fn bump(myCounter: i32) -> i32 {\n    // SECRET note\n    println!("hello");\n    myCounter + 42\n}\n',
}


@pytest.mark.parametrize("language", sorted(PROGRAMS))
def test_the_delexicalised_view_drops_comments_and_classes_names_and_literals(language):
    tokens = delexicalised_tokens(PROGRAMS[language], language)
    text = " ".join(tokens)
    assert "SECRET" not in text and "note" not in text  # comments removed
    assert "myCounter" not in text and "bump" not in text.lower()  # every name is ID
    assert "hello" not in text and "42" not in text
    assert "STR" in tokens and "NUM" in tokens and "ID" in tokens
    assert not any(t.startswith(("STR_", "NUM_")) or t == "CHR" for t in tokens)  # classes, not buckets
    assert "+" in tokens  # operators and keywords stay as written
    assert tokens == delexicalised_tokens(PROGRAMS[language].replace("myCounter", "n"), language)


def test_the_delexicalised_feature_set_reads_only_classes(trial_raw):
    rows = trial_raw.sample(120, random_state=0)
    featurizer = build_features("canon_tfidf", {"identifiers": "anonymous", "literals": "class", "max_features": 500,
                                                "svd_components": 20})
    X = featurizer.fit_transform(rows)
    vocabulary = set(featurizer.tfidf.vocabulary)
    words = {w for gram in vocabulary for w in gram.split()}
    assert X.shape == (120, len(featurizer.feature_names)) and {"ID", "STR", "NUM"} <= {w.upper() for w in words}
    assert not any(w.lower().startswith(("str_", "num_")) for w in words)
    assert featurizer.report_fields({})["literals"] == "class"


def _stylometry_rows(trial_raw):
    from aicd.splits.ood import trial_samples

    rows = trial_samples(trial_raw)
    return pd.concat([g.head(60) for _, g in rows.groupby(["language", "label"])], ignore_index=True)


def test_stylometry_standardised_per_language_on_human_rows(trial_raw):
    rows = _stylometry_rows(trial_raw)
    featurizer = build_features("stylometry", {"standardise": "language"})
    X = featurizer.fit_transform(rows)
    width = X.shape[1] // 2  # value columns, then one indicator each
    humans = (rows["label"] == "human").to_numpy()
    for language in ("Python", "Java", "C++"):
        mask = humans & (rows["language"] == language).to_numpy()
        assert np.abs(X[mask, :width].mean(axis=0)).max() < 1e-4, language  # a language's typical human is 0
    assert featurizer.report_fields({})["standardised_on_humans"]["pooled"] == []
    # machine rows never set the statistics
    moved = rows.copy()
    moved.loc[moved["label"] == "machine", "code"] = "x=1\n" * 40
    again = build_features("stylometry", {"standardise": "language"})
    again.fit_transform(moved)
    assert np.allclose(again.transform(rows), featurizer.transform(rows), atol=1e-5)


def test_a_language_with_few_human_rows_takes_the_pooled_statistics(trial_raw):
    rows = _stylometry_rows(trial_raw)
    few = rows[~((rows["language"] == "Java") & (rows["label"] == "human"))].copy()
    few = pd.concat([few, rows[(rows["language"] == "Java") & (rows["label"] == "human")].head(5)])
    featurizer = build_features("stylometry", {"standardise": "language", "min_humans": 20})
    featurizer.fit_transform(few)
    assert featurizer.report_fields({})["standardised_on_humans"]["pooled"] == ["Java"]
    go = pd.DataFrame({"code": [PROGRAMS["Go"]], "language": ["Go"]})  # a language the training rows lack
    mean, std = featurizer.standardiser.pooled_
    raw = build_features("stylometry").transform(go)
    width = raw.shape[1] // 2
    undefined = raw[:, width:].astype(bool)
    expected = np.where(undefined, 0.0, (raw[:, :width] - mean) / std)
    assert np.allclose(featurizer.transform(go)[:, :width], expected, atol=1e-3)
    with pytest.raises(AicdError, match="'label'"):
        build_features("stylometry", {"standardise": "language"}).fit_transform(few.drop(columns=["label", "target"],
                                                                                         errors="ignore"))


def planted(seed: int = 0, n: int = 600) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Two training collections: in the first the LM criterion leans as it should (machine code the
    more likely), in the second, larger one it leans the other way, and a trained column separates
    both; pooled, an unconstrained model learns a negative LM coefficient."""
    rng = np.random.default_rng(seed)
    y = np.array(["human", "machine"] * n, dtype=object)
    machine = y == "machine"
    collection = np.arange(2 * n) < n // 2  # the first quarter: the collection that leans as it should
    lm = np.where(collection, 1.0, -1.5) * machine + rng.normal(size=2 * n)
    trained = 2.0 * machine + rng.normal(size=2 * n)
    return np.column_stack([lm, trained]), y, ["lm:loglik", "stylometry:line_length"]


@pytest.mark.parametrize("model", ["constrained", "average"])
def test_a_planted_collection_cannot_turn_the_lm_coefficient_negative(model):
    from sklearn.linear_model import LogisticRegression

    X, y, names = planted()
    free = LogisticRegression().fit(X, y)
    assert free.coef_[0][0] < -0.1  # unconstrained, the LM column is read backwards
    detector = build("fused", {"model": model}, seed=0)
    detector.feature_names = names
    detector.fit(X, y)
    assert detector.lm_coefficients()["lm:loglik"] >= 0.0
    assert detector.summary()["lm_coefficients"]["lm:loglik"] == detector.lm_coefficients()["lm:loglik"]
    # the score never falls as the LM criterion rises, whatever the trained column says
    grid = np.column_stack([np.linspace(-3, 3, 50), np.zeros(50)])
    assert (np.diff(detector.fused_score(grid)) >= -1e-12).all()


def test_on_a_collection_that_leans_as_it_should_the_lm_part_ranks_it():
    X, y, names = planted()
    detector = build("fused", {"model": "average"}, seed=0)
    detector.feature_names = names
    detector.fit(X, y)
    rng = np.random.default_rng(1)
    machine = rng.random(400) < 0.5
    test = np.column_stack([machine + rng.normal(size=400), -3.0 * machine + rng.normal(size=400)])  # style flips
    from sklearn.metrics import roc_auc_score

    free = build("logistic_regression", {}, seed=0).fit(X, y)
    assert roc_auc_score(machine, free.predict_scores(test)[:, 1]) < 0.2  # the trained column turns it round
    assert detector.lm_coefficients()["lm:loglik"] >= 0.0
    assert roc_auc_score(machine, detector.parts(test)["lm"]) >= 0.5


def test_the_fused_kind_needs_named_lm_columns():
    X, y, _ = planted()
    detector = build("fused", {}, seed=0)
    with pytest.raises(AicdError, match="column names"):
        detector.fit(X, y)
    detector.feature_names = ["a", "b"]
    with pytest.raises(AicdError, match="lm_criteria"):
        detector.fit(X, y)


def test_a_concat_with_an_lm_part_reverifies_no_stored_row():
    """The detect job's check re-featurizes a few stored rows; an LM part would load the model and
    differ in bfloat16 from the batch that made them: a concat is as costly as its costliest part."""
    from aicd.features.registry import ConcatFeaturizer

    lm = build_features("lm_criteria", {"model": "package:smollm2-135m-instruct"})  # not loaded until used
    style = build_features("stylometry", {})
    assert ConcatFeaturizer([style, lm]).verify_rows == 0
    assert ConcatFeaturizer([style, build_features("structure", {})]).verify_rows == style.verify_rows
