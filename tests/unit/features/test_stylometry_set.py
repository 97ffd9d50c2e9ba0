"""The invariant text (aicd.codetools.perturb.invariant_text) and the `stylometry` feature set:
every rewrite maps a program to the same invariant text, so no rewrite can move a column of
`stylometry` with `text: invariant`; the raw columns are robust's own; the feature set goes
through the features stage and a stored featurizer like the other kinds."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from aicd.codetools.perturb import PERTURBATIONS, invariant_text, perturb, rename
from aicd.features.registry import build, load_featurizer
from aicd.features.stylometry import FEATURE_NAMES, stylometry_matrix
from aicd.features.stylometry_set import StylometryFeaturizer
from fitted_task_helpers import fit_detector, fit_features, task_tables, write_task
from nine_languages import PROGRAMS


def _cases(trial_raw, per_language: int = 60):
    rows = trial_raw.sort_values("row_id")
    rows = rows[rows["language"].isin(["Python", "Java", "C++"])].groupby("language").head(per_language)
    return [*zip(rows["code"], rows["language"]), *((code, lang) for lang, code in PROGRAMS.items())]


def test_every_rewrite_maps_to_the_same_invariant_text(trial_raw):
    changed, different = 0, []
    for code, language in _cases(trial_raw):
        base = invariant_text(code, language)
        for kind in PERTURBATIONS:
            for seed in (0, 1):
                out = perturb(code, language, kind, seed=seed)
                if out == code:
                    continue
                changed += 1
                if invariant_text(out, language) != base:
                    different.append((language, kind, seed))
    assert changed > 1000
    assert not different, different[:10]


def test_what_the_invariant_text_keeps_and_drops():
    java = PROGRAMS["Java"]
    text = invariant_text(java, "Java")
    assert "// entry" not in text and "/* sum */" not in text          # comments go
    assert "total" not in text and "v1" in text                          # bound names renamed
    assert '"  { kept }"' in text                                        # strings as written
    assert "\n{\n" in text                                              # block braces on their own line
    assert not any(line != line.strip() or not line for line in text.split("\n")[:-1])
    assert text.endswith("\n") and "v4 < v2.length; v4++" in text           # spacing inside lines kept
    assert invariant_text(invariant_text(java, "Java"), "Java") == text
    python = invariant_text(PROGRAMS["Python"], "Python")
    assert "def total(v1, v2=2):" in python and "# running" not in python and "os.path.join" in python


def test_renaming_a_renamed_program_changes_nothing():
    code = "def f(v1, a):\n    b = v1 + a\n    return b\n"
    once = rename(code, "Python", canonical=True)
    assert once == "def f(v1, v2):\n    v3 = v1 + v2\n    return v3\n"
    assert rename(once, "Python", canonical=True) == once
    # the rewrite itself never reuses a v-name that is in the code
    assert rename(code, "Python") == "def f(v2, v3):\n    v4 = v2 + v3\n    return v4\n"
    assert rename(rename(code, "Python"), "Python", canonical=True) == once
    # a v-name the renaming cannot reach (in a string) stays taken, before and after the rewrite
    for code, language in (('v1 = 1\nprint("v1", v1)\n', "Python"),
                           ('int main() { int v1 = 3; std::cout << "v1=" << v1; }\n', "C++")):
        assert invariant_text(perturb(code, language, "rename"), language) == invariant_text(code, language)
        assert '"v1' in invariant_text(code, language) and "v2" in invariant_text(code, language)


def test_braces_count_columns_in_bytes():
    code = 'class A {\n  void f(int a) {\n    String s = "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"; if (a > 0) { g(); }\n  }\n}\n'
    moved = perturb(code, "Java", "braces")
    assert 'if (a > 0) { g(); }' in moved and moved.count("{") == code.count("{")
    assert invariant_text(moved, "Java") == invariant_text(code, "Java")


def test_unparsable_code_and_odd_input():
    broken = "def f(:\n    # note\n\n    x = 1   \n"
    assert invariant_text(broken, "Python") == "def f(:\n# note\nx = 1\n"   # only the lines normalised
    assert invariant_text("", "Python") == "" and invariant_text(None, "Python") == ""
    assert invariant_text("SELECT 1;\r\n\r\n", "SQL") == "SELECT 1;\n"
    assert invariant_text("x = 1  # one\n", "python") == "v1 = 1\n"            # the language's spelling
    assert invariant_text("x = 1  # one\n", None) == "x = 1  # one\n"          # no language, no grammar


def test_raw_columns_are_robusts_own_with_an_indicator_each(trial_raw):
    rows = trial_raw.sort_values("row_id").head(40)
    table = pd.DataFrame({"code": rows["code"], "language": rows["language"]})
    featurizer = build("stylometry", {})
    X = featurizer.fit_transform(table)
    raw = stylometry_matrix(table["code"].tolist())
    n = len(FEATURE_NAMES)
    assert X.shape == (40, 2 * n) and len(featurizer.feature_names) == 2 * n
    assert np.array_equal(X[:, :n], np.nan_to_num(raw, nan=0.0).astype(np.float32))
    assert np.array_equal(X[:, n:], np.isnan(raw).astype(np.float32)) and X[:, n:].any()
    # the same width whatever the rows: a column undefined only in new code still has its indicator
    python = featurizer.transform(pd.DataFrame({"code": ["x = 1\n"], "language": ["Python"]}))
    names = featurizer.feature_names
    assert python.shape == (1, 2 * n) and python[0, names.index("stylometry:brace_own_line_ratio_undefined")] == 1


def test_no_rewrite_moves_an_invariant_column(trial_raw):
    cases = _cases(trial_raw, 25)
    table = pd.DataFrame({"code": [c for c, _ in cases], "language": [lang for _, lang in cases]})
    featurizer = build("stylometry", {"text": "invariant"})
    base = featurizer.fit_transform(table)
    assert base.std(axis=0).astype(bool).sum() > 25  # the columns still say something about real code
    for kind in PERTURBATIONS:
        moved = table.assign(code=[perturb(c, lang, kind, seed=3) for c, lang in cases])
        assert np.array_equal(featurizer.transform(moved), base), kind
    raw = build("stylometry", {})
    raw_base = raw.fit_transform(table)
    tabs = table.assign(code=[perturb(c, lang, "reindent_tabs", 0) for c, lang in cases])
    assert not np.array_equal(raw.transform(tabs), raw_base)  # the raw columns do see layout


def test_a_bad_setting_and_a_missing_language_say_so():
    from aicd.common.errors import AicdError

    with pytest.raises(AicdError, match="text"):
        build("stylometry", {"text": "pretty"})
    with pytest.raises(AicdError, match="needs each row's language"):
        build("stylometry", {"text": "invariant"}).transform(pd.DataFrame({"code": ["x = 1\n"]}))
    with pytest.raises(AicdError, match="needs each row's language"):
        build("stylometry", {"text": "invariant"}).transform(["x = 1\n"])
    assert build("stylometry", {}).transform(["x = 1\n"]).shape == (1, 2 * len(FEATURE_NAMES))
    assert build("stylometry", {"text": "invariant"}).feature_names[0] == "stylometry_invariant:log_chars"


def test_through_the_features_stage(trial_raw, tmp_path, monkeypatch):
    monkeypatch.setattr(StylometryFeaturizer, "CHUNK", 16)  # several chunks: two worker processes take them
    tables = task_tables(trial_raw, n_train=60, n_test=30)
    out = fit_features(write_task(tmp_path / "task", tables), tmp_path / "features",
                       {"kind": "stylometry", "params": {"text": "invariant"}}, threads=2)
    report = json.loads((out / "report.json").read_text())
    assert report["text"] == "invariant" and report["rows"] == {"train": 60, "validation": 0, "test": 30}
    featurizer = load_featurizer(out / "featurizer.skops")
    assert isinstance(featurizer, StylometryFeaturizer) and featurizer.threads == 1
    X = featurizer.transform(tables["test"])
    assert X.shape == (30, len(featurizer.feature_names)) and np.isfinite(X).all()
    with np.load(out / "features.npz", allow_pickle=True) as stored:
        assert np.array_equal(stored["X_test"], X)  # two worker processes, the same rows as one
    assert featurizer.transform(tables["test"].iloc[:0]).shape == (0, len(featurizer.feature_names))


def test_aicd_detect_applies_it_and_a_rewrite_moves_no_label(trial_raw, tmp_path):
    from aicd.cli import main as aicd

    tables = task_tables(trial_raw, n_train=200, n_test=40)
    paths = write_task(tmp_path / "task", tables)
    features = fit_features(paths, tmp_path / "features", {"kind": "stylometry", "params": {"text": "invariant"}})
    model, workflow = fit_detector(paths, features, tmp_path / "models")
    ext = {"Python": ".py", "C++": ".cpp", "Java": ".java"}
    for kind in ("none", "reindent_tabs", "rename"):
        folder = tmp_path / kind
        folder.mkdir()
        for _, row in tables["test"].iterrows():
            code = row["code"] if kind == "none" else perturb(row["code"], row["language"], kind, 0)
            (folder / f"{row['id']}{ext[row['language']]}").write_text(code)
        assert aicd(["detect", str(folder), "--model", str(model), "--out", str(tmp_path / f"{kind}.csv")]) == 0
    got = {k: pd.read_csv(tmp_path / f"{k}.csv").sort_values("path") for k in ("none", "reindent_tabs", "rename")}
    ids = [p.rsplit("/", 1)[-1].split(".")[0] for p in got["none"]["path"]]
    expected = pd.read_parquet(workflow).set_index("id").loc[ids, "pred"].to_numpy()
    assert (got["none"]["model_label"].to_numpy() == expected).all()  # the workflow's own predictions
    assert set(expected) == {"human", "machine"}
    for kind in ("reindent_tabs", "rename"):
        assert (got[kind]["model_label"].to_numpy() == got["none"]["model_label"].to_numpy()).all(), kind


def test_a_value_computed_under_a_name_outside_feature_names_is_caught_by_name(monkeypatch):
    from aicd.features import stylometry as module

    def misnamed(program):
        values = module._characters(program)
        values["space_share"] = values.pop("space_ratio")
        return values

    assert module.stylometry_by_name("x = 1\n").keys() == set(FEATURE_NAMES)
    monkeypatch.setattr(module, "_GROUPS", (*module._GROUPS[:-1], misnamed))
    with pytest.raises(AssertionError, match=r"extra \['space_share'\], missing \['space_ratio'\]"):
        module.stylometry("x = 1\n")
