"""The canonical view (`canon_tfidf`): layout and comments never reach it, identifiers become
naming classes, and the featurizer runs through the features stage like the paper's TF-IDF."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from aicd.codetools.perturb import PERTURBATIONS, perturb
from aicd.codetools.tokens import canonical_tokens, identifier_class
from aicd.codetools.treesitter import parse
from aicd.features.__main__ import main as features_main
from aicd.features.canonical import STAT_NAMES, CanonicalTfidfFeaturizer
from aicd.features.registry import load_featurizer
from fitted_task_helpers import task_tables, write_task


@pytest.mark.parametrize("name, cls", [("i", "single_letter"), ("MAX_N", "upper_mid"), ("row_count", "snake_long"),
                                       ("getValue", "camel_mid"), ("Solution", "pascal_mid"), ("arr", "lower_short"),
                                       ("numberofelements", "lower_long")])
def test_identifier_classes(name, cls):
    assert identifier_class(name) == cls


def test_layout_and_comments_never_reach_the_tokens(trial_raw):
    checked = 0
    for language in ("Python", "Java", "C++"):
        rows = trial_raw[trial_raw["language"] == language]["code"].head(40)
        for code in rows:
            if parse(code, language).root_node.has_error:
                continue
            base = canonical_tokens(code, language)[0]
            for kind in ("reindent_tabs", "reindent_2", "blank_lines", "no_comments", "braces"):
                assert canonical_tokens(perturb(code, language, kind, seed=1), language)[0] == base, (language, kind)
            checked += 1
    assert checked > 80


# The featurizers below keep fewer n-grams than the default 5,000 where a test's property does
# not depend on the cap: the exact SVD eigendecomposes a (kept n-grams)^2 matrix, which at
# 5,000 took most of a minute per fit here, whatever the number of components asked for.


@pytest.fixture(scope="module")
def trial_rows_to_rename(trial_raw):
    rows = trial_raw.sort_values("row_id")
    return rows[rows["language"].isin(["Python", "Java", "C++"])].head(120)


def test_anonymous_identifiers_make_renaming_invisible(trial_rows_to_rename):
    renamed_somewhere, class_view_moved = 0, 0
    for code, language in zip(trial_rows_to_rename["code"], trial_rows_to_rename["language"]):
        if parse(code, language).root_node.has_error:
            continue
        renamed = perturb(code, language, "rename", seed=1)
        renamed_somewhere += renamed != code
        class_view_moved += canonical_tokens(renamed, language)[0] != canonical_tokens(code, language)[0]
        assert canonical_tokens(renamed, language, anonymous=True)[0] == canonical_tokens(code, language, anonymous=True)[0]
    assert renamed_somewhere > 60 and class_view_moved > 10  # the naming classes do see the renaming


def test_names_inside_interpolated_strings_are_renamed_without_moving_the_anonymous_view():
    # names inside interpolated strings are renamed too: the string's length bucket must not move
    for language, code in (("Python", 'def f(count_value):\n    return f"{count_value} items"\n'),
                           ("JavaScript", "function f(countValue) {\n  return `${countValue} items`;\n}\n")):
        renamed = perturb(code, language, "rename", seed=1)
        assert renamed != code
        assert canonical_tokens(renamed, language, anonymous=True)[0] == canonical_tokens(code, language, anonymous=True)[0]


@pytest.fixture(scope="module")
def anonymous_featurizer(trial_rows_to_rename):
    # 1,000 n-grams of the 120 rows' ~3,300: renaming moves no token, so no n-gram, kept or not
    table = trial_rows_to_rename[["code", "language"]]
    featurizer = CanonicalTfidfFeaturizer(max_features=1000, svd_components=8, identifiers="anonymous")
    return table, featurizer, featurizer.fit_transform(table)


def test_the_anonymous_featurizer_does_not_see_renaming(anonymous_featurizer):
    table, featurizer, X = anonymous_featurizer
    assert X.shape == (len(table), 8 + 1) and featurizer.feature_names[-1] == "ident_count"
    renamed_table = table.assign(code=[perturb(c, lang, "rename", seed=1) for c, lang in zip(table["code"], table["language"])])
    assert np.allclose(featurizer.transform(renamed_table), featurizer.transform(table), atol=1e-5)


def test_an_unknown_identifiers_mode_is_refused():
    with pytest.raises(ValueError, match="identifiers"):
        CanonicalTfidfFeaturizer.PARAMS.check({"identifiers": "hashed"})
    with pytest.raises(ValueError, match="identifiers"):
        CanonicalTfidfFeaturizer(identifiers="anon")


def test_a_featurizer_pickled_before_the_identifiers_option_uses_the_naming_classes(anonymous_featurizer):
    table, fitted, _ = anonymous_featurizer
    featurizer = copy.deepcopy(fitted)  # the module's fixture stays as it was fitted
    del featurizer.identifiers  # pickled before the option: the naming classes, every statistic
    assert featurizer.transform(table).shape[1] == 8 + len(STAT_NAMES) == len(featurizer.feature_names)


def test_comments_can_be_kept_as_one_token_each():
    code = "int f() { // a\n  return 0; /* b */ }\n"
    assert canonical_tokens(code, "C")[0].count("COMMENT") == 0
    assert canonical_tokens(code, "C", comments=True)[0].count("COMMENT") == 2
    assert canonical_tokens("x y", None)[0] == ["x", "y"]  # no grammar: whitespace tokens


def test_the_featurizer_through_the_features_stage(trial_raw, tmp_path):
    tables = task_tables(trial_raw, n_train=120, n_test=40)
    write_task(tmp_path, tables)
    # 1,000 n-grams: the stage, the report and the fitted file do not depend on how many are kept
    features_main(["--spec", json.dumps({"kind": "canon_tfidf", "params": {"svd_components": 16, "max_features": 1000}}),
                   "--train", str(tmp_path / "train.parquet"), "--test", str(tmp_path / "test.parquet"),
                   "--out", str(tmp_path / "features.npz"), "--model", str(tmp_path / "featurizer.skops"),
                   "--report", str(tmp_path / "report.json")])
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["canonical_features"] > 100 and report["identifier_statistics"] == len(STAT_NAMES)
    featurizer = load_featurizer(tmp_path / "featurizer.skops")
    X = featurizer.transform(tables["test"])
    assert X.shape == (40, 16 + len(STAT_NAMES)) and len(featurizer.feature_names) == X.shape[1]
    assert np.isfinite(X).all()
    test = tables["test"]
    retabbed = test.assign(code=[perturb(c, lang, "reindent_tabs") for c, lang in zip(test["code"], test["language"])])
    assert np.allclose(featurizer.transform(retabbed), X)  # the same features, whatever the indentation


def test_a_fresh_featurizer_is_deterministic(trial_raw):
    rows = trial_raw.sort_values("row_id").head(80)[["code", "language"]]
    # 500 of the 80 rows' ~4,700 n-grams: a cut inside ties, where an order could leak in
    a = CanonicalTfidfFeaturizer(max_features=500, svd_components=8).fit_transform(rows)
    b = CanonicalTfidfFeaturizer(max_features=500, svd_components=8).fit_transform(rows)
    assert np.array_equal(a, b)


HIDDEN_VIEWS = (("bound", False), ("role", True), ("anonymous", True))


def test_bound_and_role_views_cannot_see_any_rewrite(trial_raw):
    """Hiding only the bound names (functions, types, fields and library calls stay) is enough
    for all seven rewrites, in the nine languages and on real trial code."""
    from nine_languages import PROGRAMS

    rows = trial_raw.sort_values("row_id")
    rows = rows[rows["language"].isin(["Python", "Java", "C++"])].groupby("language").head(40)
    cases = [*zip(rows["code"], rows["language"]), *((code, lang) for lang, code in PROGRAMS.items())]
    changed = 0
    for code, language in cases:
        base = {view: canonical_tokens(code, language, identifiers=view, universal=u)[0] for view, u in HIDDEN_VIEWS}
        for kind in PERTURBATIONS:
            out = perturb(code, language, kind, seed=1)
            changed += out != code
            for view, universal in HIDDEN_VIEWS:
                assert canonical_tokens(out, language, identifiers=view, universal=universal)[0] == base[view], \
                    (language, kind, view)
    assert changed > 400
    tokens = canonical_tokens(PROGRAMS["Python"], "Python", identifiers="bound")[0]
    assert "total" in tokens and "join" in tokens and "VAR" in tokens  # the function and the call keep their names
    assert "acc" not in tokens and "values" not in tokens  # the bound ones do not


def test_universal_tokens_read_alike_across_languages():
    loops = {"Python": "def f(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n",
             "Java": "class A { int f(int[] xs) { int s = 0; for (int x : xs) { s += x; } return s; } }\n",
             "C++": "int f(std::vector<int> xs) { int s = 0; for (int x : xs) { s += x; } return s; }\n",
             "Go": "package m\nfunc f(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}\n",
             "Rust": "fn f(xs: Vec<i32>) -> i32 { let mut s = 0; for x in xs { s += x; } s }\n",
             "JavaScript": "function f(xs) { let s = 0; for (const x of xs) { s += x; } return s; }\n"}
    for language, code in loops.items():
        tokens = canonical_tokens(code, language, identifiers="role", universal=True)[0]
        assert {"LOOP", "AUG", "DEFNAME", "VAR"} <= set(tokens), (language, tokens)
        assert "for" not in tokens and "+=" not in tokens and "s" not in tokens
    java = canonical_tokens(loops["Java"], "Java", identifiers="role", universal=True)[0]
    assert java.count("TYPE") >= 3  # int, int[], int
    call = canonical_tokens("print(len(xs))\n", "Python", identifiers="role", universal=True)[0]
    assert call.count("CALLNAME") == 2


def test_the_bound_view_as_a_featurizer(trial_raw):
    from aicd.features.canonical import BOUND_STAT_NAMES

    # 40 rows and 2,000 n-grams: the bound view's ~3,900 n-grams fill the cap, the universal
    # tokens' ~1,600 do not, so "fewer n-grams" is seen below the cap as at the default 5,000
    rows = trial_raw.sort_values("row_id").head(40)[["code", "language"]]
    featurizer = CanonicalTfidfFeaturizer(max_features=2000, svd_components=8, identifiers="bound")
    X = featurizer.fit_transform(rows)
    assert X.shape == (len(rows), 8 + len(BOUND_STAT_NAMES)) == (len(rows), len(featurizer.feature_names))
    bound_share = X[:, featurizer.feature_names.index("ident_bound_share")]
    assert 0.2 < bound_share.mean() < 0.9  # most programs bind some of their names, none binds all
    renamed = rows.assign(code=[perturb(c, lang, "rename", seed=1) for c, lang in zip(rows["code"], rows["language"])])
    assert np.allclose(featurizer.transform(renamed), X, atol=1e-5)
    universal = CanonicalTfidfFeaturizer(max_features=2000, svd_components=8, identifiers="role", tokens="universal")
    assert universal.fit_transform(rows).shape == X.shape
    assert len(universal.tfidf.vocabulary) < len(featurizer.tfidf.vocabulary)  # classes, not words
    assert featurizer.transform(rows.iloc[:0]).shape == (0, X.shape[1])
    with pytest.raises(ValueError, match="tokens"):
        CanonicalTfidfFeaturizer(tokens="classes")
