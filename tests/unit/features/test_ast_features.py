import numpy as np
import pytest
from aicd.codetools.treesitter import GRAMMARS, parse
from aicd.features.ast_features import AstFeaturizer, extract

# A small real program per language, each with a function and a loop.
PROGRAMS = {
    "Python": ("def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n", "for_statement"),
    "Java": ("class A {\n  int total(int[] xs) {\n    int s = 0;\n    for (int x : xs) { s += x; }\n    return s;\n  }\n}\n",
             "enhanced_for_statement"),
    "C++": ("#include <vector>\nint total(const std::vector<int>& xs) {\n  int s = 0;\n  for (int x : xs) s += x;\n  return s;\n}\n",
            "for_range_loop"),
    "C": ("int total(int *xs, int n) {\n  int s = 0;\n  for (int i = 0; i < n; i++) s += xs[i];\n  return s;\n}\n",
          "for_statement"),
    "Go": ("package main\n\nfunc total(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}\n",
           "for_statement"),
    "PHP": ("<?php\nfunction total($xs) {\n  $s = 0;\n  foreach ($xs as $x) { $s += $x; }\n  return $s;\n}\n",
            "foreach_statement"),
    "C#": ("class A {\n  int Total(int[] xs) {\n    int s = 0;\n    foreach (var x in xs) { s += x; }\n    return s;\n  }\n}\n",
           "foreach_statement"),
    "JavaScript": ("function total(xs) {\n  let s = 0;\n  for (const x of xs) { s += x; }\n  return s;\n}\n",
                   "for_in_statement"),
    "Rust": ("fn total(xs: &[i32]) -> i32 {\n    let mut s = 0;\n    for x in xs {\n        s += x;\n    }\n    s\n}\n",
             "for_expression"),
}


def test_all_nine_languages_have_grammars():
    assert set(GRAMMARS) == set(PROGRAMS)


@pytest.mark.parametrize("language", sorted(PROGRAMS))
def test_parse_each_language(language):
    code, loop_node = PROGRAMS[language]
    tree = parse(code, language)
    assert not tree.root_node.has_error
    feats = extract(code, language)
    assert feats["parse_failed"] == 0.0 and feats["ast:has_error"] == 0.0
    assert feats[f"node:{loop_node}"] == 1.0
    assert feats["ast:depth"] >= 4
    assert feats["complexity:cyclomatic"] >= 2  # one loop
    assert feats["complexity:functions"] >= 1


def test_layout_and_style_indicators():
    code = "def f(x):\n\n    # comment\n    return x\n"
    feats = extract(code, "Python")
    assert feats["layout:lines"] == 5  # trailing newline gives an empty last line
    assert feats["layout:empty_line_ratio"] == pytest.approx(2 / 5)
    assert feats["style:comment_line_ratio"] == pytest.approx(1 / 5)
    assert feats["layout:mean_indent"] == pytest.approx((0 + 4 + 4) / 3)


def test_unparsable_or_unknown_language_is_flagged_not_raised():
    broken = extract("def (:\n  ))) return", "Python")
    assert broken["ast:has_error"] == 1.0 and broken["ast:error_nodes"] >= 1
    unknown = extract("IDENTIFICATION DIVISION.", None)
    assert unknown["parse_failed"] == 1.0


def test_dimensionality_is_fixed_by_the_training_rows():
    featurizer = AstFeaturizer()
    train = featurizer.fit_transform([PROGRAMS["Python"][0]], ["Python"])
    names = featurizer.feature_names
    assert train.shape == (1, len(names))
    assert not any("enhanced_for" in n for n in names)
    test = featurizer.transform([PROGRAMS["Java"][0], "garbage ((("], ["Java", "Python"])
    assert test.shape == (2, len(names))  # Java-only node types are dropped
    assert test[1, names.index("ast:has_error")] == 1.0
    assert np.isfinite(test).all()


def test_the_run_cache_gives_the_computed_features(tmp_path, monkeypatch):
    import aicd.features.ast_features as ast_features

    codes = [code for code, _ in PROGRAMS.values()] + ["garbage (((", "x = 1\n"]
    languages = list(PROGRAMS) + ["Python", "Kotlin"]
    plain = AstFeaturizer()
    expected = plain.fit_transform(codes, languages)
    expected_new = plain.transform(codes[:3], languages[:3])
    cached = AstFeaturizer()
    cached.cache_dir = str(tmp_path)
    assert np.array_equal(cached.fit_transform(codes, languages), expected)
    state = cached.__getstate__()
    assert state["cache_dir"] is None and "threads" not in state  # what is saved names no run's folder or cores
    # every text now comes from the cache: computing one again would fail
    monkeypatch.setattr(ast_features, "extract", lambda *_: pytest.fail("a cached text was parsed again"))
    again = AstFeaturizer()
    again.cache_dir = str(tmp_path)
    assert np.array_equal(again.fit_transform(codes, languages), expected)
    assert again.feature_names == plain.feature_names
    assert np.array_equal(again.transform(codes[:3], languages[:3]), expected_new)


def test_the_language_is_part_of_the_cache_key(tmp_path):
    code = "class A { public: int x; };\n"  # C++; read as C, a tree with errors
    plain = AstFeaturizer()
    plain.fit_transform([code, code], ["C", "C++"])
    as_c, as_cpp = plain.transform([code], ["C"]), plain.transform([code], ["C++"])
    assert not np.array_equal(as_c, as_cpp)
    cached = AstFeaturizer()
    cached.vectorizer, cached.cache_dir = plain.vectorizer, str(tmp_path)
    assert np.array_equal(cached.transform([code], ["C"]), as_c)
    assert np.array_equal(cached.transform([code], ["C++"]), as_cpp)  # not the C tree's values, read back
