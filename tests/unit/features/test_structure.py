"""The language-agnostic structure statistics (`structure`): fixed named columns, blind to the
project's rewrites, the same meaning in every language, and usable through the features stage."""

from __future__ import annotations

import json

import numpy as np
from aicd.codetools.perturb import PERTURBATIONS, perturb
from aicd.features.__main__ import main as features_main
from aicd.features.registry import load_featurizer
from aicd.features.structure import FEATURE_NAMES, StructureFeaturizer, extract
from fitted_task_helpers import task_tables, write_task
from nine_languages import PROGRAMS


def test_no_rewrite_moves_the_statistics(trial_raw):
    rows = trial_raw.sort_values("row_id")
    rows = rows[rows["language"].isin(["Python", "Java", "C++"])].groupby("language").head(40)
    cases = [*zip(rows["code"], rows["language"]), *((code, lang) for lang, code in PROGRAMS.items())]
    changed, moved = 0, []
    for code, language in cases:
        base = extract(code, language)
        for kind in PERTURBATIONS:
            out = perturb(code, language, kind, seed=1)
            if out == code:
                continue
            changed += 1
            after = extract(out, language)
            if after != base:
                moved.append((language, kind, [n for n, a, b in zip(FEATURE_NAMES, after, base) if a != b]))
    assert changed > 400
    # a file indented as a whole can parse into another tree once re-indented (its comments then
    # sit elsewhere): at most a leaf-depth mean moves, on a rare row
    assert len(moved) <= changed // 100, moved
    assert all(names == ["structure:mean_leaf_depth"] for _, _, names in moved), moved


def test_columns_mean_the_same_in_every_language():
    row = dict(zip(FEATURE_NAMES, extract(PROGRAMS["Java"], "Java")))
    assert row["structure:share_LOOP"] > 0 and row["structure:share_AUG"] > 0 and row["structure:functions"] > 0
    for language, code in PROGRAMS.items():
        values = dict(zip(FEATURE_NAMES, extract(code, language)))
        assert values["structure:share_LOOP"] > 0, language  # every program has one loop
        assert values["structure:no_grammar"] == 0 and values["structure:parse_error"] == 0, language
        assert values["structure:bound_distinct_per_token"] > 0, language
    unknown = extract("SELECT 1;", "SQL")
    assert unknown[-1] == 1.0 and not any(unknown[:-1])  # no grammar: one flag, nothing else


def test_through_the_features_stage(trial_raw, tmp_path):
    tables = task_tables(trial_raw, n_train=60, n_test=30)
    write_task(tmp_path, tables)
    features_main(["--spec", json.dumps({"kind": "structure"}), "--train", str(tmp_path / "train.parquet"),
                   "--test", str(tmp_path / "test.parquet"), "--out", str(tmp_path / "features.npz"),
                   "--model", str(tmp_path / "featurizer.skops"), "--report", str(tmp_path / "report.json")])
    report = json.loads((tmp_path / "report.json").read_text())
    assert set(report["no_grammar"].values()) == {0} and {"train", "test"} <= set(report["no_grammar"])
    featurizer = load_featurizer(tmp_path / "featurizer.skops")
    assert isinstance(featurizer, StructureFeaturizer) and featurizer.feature_names == FEATURE_NAMES
    X = featurizer.transform(tables["test"])
    assert X.shape == (30, len(FEATURE_NAMES)) and np.isfinite(X).all()
    assert X.std(axis=0).astype(bool).sum() > 30  # most columns vary over real programs
    assert featurizer.transform(tables["test"].iloc[:0]).shape == (0, len(FEATURE_NAMES))
