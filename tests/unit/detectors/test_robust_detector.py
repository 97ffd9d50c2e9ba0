"""The `robust` detector: learns from code text, deterministic, picklable, never crashes on
odd strings; and its stylometry features are defined for any string."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.detectors import REGISTRY, build
from aicd.detectors.bundle import load_detector
from aicd.features.stylometry import FEATURE_NAMES, normalised_tokens, stylometry, stylometry_matrix
from components import require_extra

ODD = ["", "\n", "   \t  ", "x", "\r\n\r\n", "é∑≈ unicode ☃", "{" * 500, "a\tb\n\tc\r\n  d  \n", "\x00\x01"]


def toy_corpus(n=120, seed=0):
    """Two styles a stylometric detector can tell apart: terse, tab-indented, unspaced code
    vs. commented, 4-space-indented, spaced code with descriptive names."""
    rng = np.random.default_rng(seed)
    codes, labels = [], []
    for k in range(n):
        v = int(rng.integers(100))
        if k % 2:
            codes.append(f"def compute_total_value(input_values):\n    # Sum the values and add an offset.\n"
                         f"    total_value = sum(input_values) + {v}\n\n    return total_value\n")
            labels.append("machine")
        else:
            codes.append(f"int main(){{\n\tint a,b;cin>>a>>b;\n\tcout<<a+b+{v};  \n}}")
            labels.append("human")
    return np.asarray(codes, dtype=object), np.asarray(labels, dtype=object)


def test_registered_and_reads_text():
    assert "robust" in REGISTRY
    det = build("robust", {}, seed=0)
    assert det.inputs == "text"


def test_bad_params_are_named():
    with pytest.raises(AicdError):
        build("robust", {"model": "forest"}, seed=0)
    with pytest.raises(AicdError):
        build("robust", {"depth": 3}, seed=0)


@pytest.mark.parametrize("params", [{}, {"model": "lr", "reweight": True}, {"model": "ensemble", "calibrate": True}])
def test_learns_both_classes_deterministically(params):
    X, y = toy_corpus()
    a = build("robust", dict(params, max_iter=30), seed=3).fit(X[:80], y[:80], X[80:100], y[80:100])
    b = build("robust", dict(params, max_iter=30), seed=3).fit(X[:80], y[:80], X[80:100], y[80:100])
    pred = a.predict(X[100:])
    assert set(pred) == {"human", "machine"}
    assert (pred == y[100:]).mean() == 1.0
    assert (pred == b.predict(X[100:])).all()
    np.testing.assert_array_equal(a.predict_scores(X[100:]), b.predict_scores(X[100:]))
    assert list(a.classes_) == ["human", "machine"]


def test_model_file_round_trip(tmp_path):
    X, y = toy_corpus()
    det = build("robust", {"max_iter": 30}, seed=0).fit(X, y)
    det.save(tmp_path / "robust.skops")
    back = load_detector(tmp_path / "robust.skops")  # a skops file: its types checked, no code run
    np.testing.assert_array_equal(back.predict_scores(X), det.predict_scores(X))


def test_odd_and_empty_strings_do_not_crash():
    X, y = toy_corpus()
    det = build("robust", {"model": "ensemble", "max_iter": 30}, seed=0).fit(X, y)
    odd = np.asarray(ODD + [None], dtype=object)
    pred, scores = det.predict_with_scores(odd)
    assert len(pred) == len(odd) and scores.shape == (len(odd), 2)
    assert np.isfinite(scores).all()
    assert det.predict(np.asarray([], dtype=object)).shape == (0,)
    assert det.predict_scores(np.asarray([], dtype=object)).shape == (0, 2)


def test_one_class_training_data_is_refused():
    with pytest.raises(AicdError):
        build("robust", {}, seed=0).fit(np.asarray(["a", "b"], dtype=object), np.asarray(["human", "human"], dtype=object))


def test_stylometry_is_defined_for_any_string():
    for code in ODD:
        values = stylometry(code)
        assert len(values) == len(FEATURE_NAMES)
        assert not any(math.isinf(v) for v in values)
        normalised_tokens(code)
    assert stylometry_matrix([]).shape == (0, len(FEATURE_NAMES))


def test_stylometry_measures_what_it_names():
    f = dict(zip(FEATURE_NAMES, stylometry("def f(a, b):\n    # Add them.\n    return a + b\n")))
    assert f["final_newline"] == 1 and f["indent_unit_4"] == 1 and f["comma_space_ratio"] == 1
    assert f["comment_capital_ratio"] == 1 and f["comment_period_ratio"] == 1 and f["op_spaced_ratio"] == 1
    g = dict(zip(FEATURE_NAMES, stylometry("int main(){\n\tint a=1;  \n}")))
    assert g["final_newline"] == 0 and g["tab_indent_ratio"] == 1 and g["op_spaced_ratio"] == 0
    assert g["trailing_space_ratio"] > 0 and math.isnan(g["comment_capital_ratio"])


def test_identifiers_are_read_word_by_word():
    # Identifiers come from the code with comments and strings blanked; the space between two
    # words stays, so `int count` is a keyword and one identifier, not the identifier `intcount`.
    f = dict(zip(FEATURE_NAMES, stylometry('int count = 0; // a note\nreturn count + "label";\n')))
    assert f["ident_len_mean"] == 5.0 and f["ident_unique_ratio"] == 0.5 and f["ident_per_line"] == 1.0


def test_character_classes_count_every_character():
    f = dict(zip(FEATURE_NAMES, stylometry("aB1 é!\t")))  # 7 characters: a digit, an upper, a non-ASCII, a "!", a " "
    assert f["digit_ratio"] == 1 / 7 and f["upper_ratio"] == 1 / 7 and f["non_ascii_ratio"] == 1 / 7
    assert f["punct_ratio"] == 1 / 7 and f["space_ratio"] == 1 / 7


def test_stylometry_matrix_reads_the_run_cache(tmp_path, monkeypatch):
    import aicd.features.stylometry as style

    codes = [c for c, _ in zip(*toy_corpus(20))] + ODD + [None]
    computed = stylometry_matrix(codes)
    assert np.array_equal(stylometry_matrix(codes, cache_dir=str(tmp_path)), computed, equal_nan=True)
    assert (tmp_path / "stats.sqlite").is_file()
    monkeypatch.setattr(style, "_rows", lambda _codes: pytest.fail("a cached text was computed again"))
    assert np.array_equal(stylometry_matrix(codes, cache_dir=str(tmp_path)), computed, equal_nan=True)


def test_normalised_tokens_hide_names_and_literals():
    toks = normalised_tokens('for (int i = 0; i < n; i++) { total += "x"; } // note')
    assert "ID1" in toks and "NUM" in toks and "STR" in toks and "COM" in toks and "for" in toks
    assert "total" not in toks


def test_fits_real_trial_rows(trial_path):
    from aicd.splits import ood

    trial = ood.trial_samples(pd.read_parquet(trial_path)).sample(400, random_state=0)
    det = build("robust", {"max_iter": 50}, seed=0).fit(trial["code"].values[:300], trial["label"].values[:300])
    acc = (det.predict(trial["code"].values[300:]) == trial["label"].values[300:]).mean()
    assert acc > 0.75


def test_multiclass_targets_work():
    X, y = toy_corpus(150)
    y = y.copy()
    y[::3] = "hybrid"  # a third class (as T2/T3 have); the model must accept it and score all three
    det = build("robust", {"max_iter": 20, "calibrate": True}, seed=0).fit(X, y, X[:30], y[:30])
    scores = det.predict_scores(X[:10])
    assert scores.shape == (10, 3) and set(det.predict(X)) <= set(y)


def test_runs_through_the_workflow_fit_predict_path(caplog):
    import logging

    from aicd.detectors.fitting import fit_predict

    X, y = toy_corpus()
    tables = {
        "train": pd.DataFrame({"id": [f"t{i}" for i in range(80)], "code": X[:80], "target": y[:80]}),
        "validation": pd.DataFrame({"id": [], "code": [], "target": []}),
        "test": pd.DataFrame({"id": [f"x{i}" for i in range(40)], "code": X[80:], "target": y[80:]}),
    }
    with caplog.at_level(logging.WARNING, logger="aicd.detectors"):
        fitted = fit_predict({"kind": "robust", "params": {"max_iter": 20, "calibrate": True}}, tables, None, seed=0)
    det, out = fitted.detector, fitted.predictions
    assert fitted.validation["source"] != "given" and det.threshold_ is not None  # validation carved from train
    assert "robust tunes on validation rows, but the task has none" in caplog.text  # said, not silent
    assert (out["pred"] == out["gold"]).all() and {"score_human", "score_machine"} <= set(out.columns)


TINY_LM = {"layers": 1, "hidden": 16, "heads": 2, "vocab_size": 300, "window": 64, "max_train_tokens": 3000}


def test_lm_option_adds_token_statistics_deterministically():
    require_extra("encoders", "torch", "transformers")
    X, y = toy_corpus(60)
    a = build("robust", {"max_iter": 20, "lm": TINY_LM}, seed=1).fit(X[:40], y[:40])
    b = build("robust", {"max_iter": 20, "lm": TINY_LM}, seed=1).fit(X[:40], y[:40])
    assert a._features(X[:3]).shape == (3, len(FEATURE_NAMES) + 3)
    np.testing.assert_array_equal(a.predict_scores(X[40:]), b.predict_scores(X[40:]))
    assert (a.predict(X[40:]) == y[40:]).mean() == 1.0
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.predict_scores(X[40:]), c.predict_scores(X[40:]))
    assert a.predict_scores(np.asarray(ODD, dtype=object)).shape == (len(ODD), 2)


def test_lm_features_are_nan_for_too_short_and_finite_otherwise():
    require_extra("encoders", "torch")
    from aicd.detectors.robust_lm import LM_FEATURES, lm_features, train_lm

    X, y = toy_corpus(40)
    model, tok = train_lm(X[y == "human"], TINY_LM, seed=0, threads=1)
    F = lm_features(model, tok, ["", "x", X[0], X[1] * 20])
    assert F.shape == (4, len(LM_FEATURES))
    assert np.isnan(F[0]).all()
    assert np.isfinite(F[2:]).all() and (F[2:, 1] < 0).all() and (F[2:, 2] > 0).all()


def test_lm_option_is_validated():
    with pytest.raises(AicdError):
        build("robust", {"lm": 3}, seed=0)


def test_python_floor_division_is_not_a_comment_but_a_c_comment_is():
    """`//` is read from the code: floor division in Python-style code (colon-ended block
    headers), a comment marker elsewhere; the language tag is never consulted."""
    idx = {name: i for i, name in enumerate(FEATURE_NAMES)}
    python = stylometry("def half(n, arr):\n    return n // 2 + len(arr) // 3\n")
    for name in ("comment_char_ratio", "inline_comment_ratio", "comment_line_ratio"):
        assert python[idx[name]] == 0.0, name
    assert math.isnan(python[idx["comment_words_mean"]]) or python[idx["comment_words_mean"]] == 0.0
    c = stylometry("int half(int n) {\n    return n / 2; // integer half of n\n}\n")
    assert c[idx["comment_char_ratio"]] > 0 and c[idx["inline_comment_ratio"]] > 0
    assert stylometry("x = 1\nif x:\n    y = x // 2  # halve it\n")[idx["inline_comment_ratio"]] > 0  # `#` still counts
    assert stylometry("#ifdef X\n#else\nint a;\n#endif\n")[idx["comment_line_ratio"]] == 0.0  # directives
