"""The semantics-preserving rewrites (aicd.codetools.perturb): on real trial code and on a program
in each of the nine languages, every rewrite still parses, Python's syntax tree is unchanged
(names aside for `rename`), strings are never touched, and the seeded ones are seeded."""

from __future__ import annotations

import ast

import pytest
from aicd.codetools.perturb import PERTURBATIONS, perturb
from aicd.codetools.treesitter import parse
from nine_languages import PROGRAMS


def names_blanked(code: str) -> str:
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = "_"
        elif isinstance(node, ast.arg):
            node.arg = "_"
    return ast.dump(tree)


@pytest.mark.parametrize("language", sorted(PROGRAMS))
@pytest.mark.parametrize("kind", PERTURBATIONS)
def test_every_rewrite_of_every_language_still_parses(language, kind):
    code = PROGRAMS[language]
    assert not parse(code, language).root_node.has_error
    out = perturb(code, language, kind, seed=1)
    assert not parse(out, language).root_node.has_error, out
    if kind == "no_comments" and language != "Python":
        assert "//" not in out.replace('"//"', "") and "/*" not in out
    if kind == "rename" and language in ("Python", "Java", "C++", "Go", "Rust", "PHP"):
        assert out != code and "v1" in out


def test_python_trees_are_unchanged(trial_raw):
    rows = trial_raw[trial_raw["language"] == "Python"]["code"].head(80)
    checked = 0
    for code in rows:
        try:
            original = ast.dump(ast.parse(code))
        except SyntaxError:
            continue
        for kind in PERTURBATIONS:
            out = perturb(code, "Python", kind, seed=3)
            if kind == "rename":
                assert names_blanked(out) == names_blanked(code), kind
            else:
                assert ast.dump(ast.parse(out)) == original, (kind, code[:200])
        checked += 1
    assert checked > 50


def test_real_java_and_cpp_still_parse(trial_raw):
    for language in ("Java", "C++"):
        rows = [c for c in trial_raw[trial_raw["language"] == language]["code"].head(60)
                if not parse(c, language).root_node.has_error]
        assert len(rows) > 20
        for code in rows:
            for kind in PERTURBATIONS:
                out = perturb(code, language, kind, seed=0)
                assert not parse(out, language).root_node.has_error, (language, kind, out[:300])


def test_strings_are_left_alone_and_rewrites_change_the_layout():
    code = PROGRAMS["Python"]
    for kind in PERTURBATIONS:
        out = perturb(code, "Python", kind, seed=2)
        assert '"""Sum.\n    # not a comment\n"""' in out, kind
    assert "\t" in perturb(code, "Python", "reindent_tabs") and "  acc" in perturb(code, "Python", "reindent_2")
    assert "# running" not in perturb(code, "Python", "no_comments")
    renamed = perturb(code, "Python", "rename")
    assert "def total(" in renamed and "os.path.join" in renamed and "sep=" in renamed  # calls, attributes, keywords
    assert "acc" not in renamed and "v3 = 0" in renamed  # values, scale, acc: v1, v2, v3
    assert "{\n" in perturb(PROGRAMS["Java"], "Java", "braces").split("class Main")[1][:4]
    assert perturb(PROGRAMS["Go"], "Go", "braces") == PROGRAMS["Go"]  # a `{` on its own line breaks Go


def test_perturbations_are_seeded():
    code = PROGRAMS["Java"]
    assert perturb(code, "Java", "blank_lines", seed=5) == perturb(code, "Java", "blank_lines", seed=5)
    assert perturb(code, "Java", "blank_lines", seed=5) != perturb(code, "Java", "blank_lines", seed=6)


def test_unparsable_code_is_returned_as_is():
    broken = "def f(:\n    return"
    assert perturb(broken, "Python", "rename") == broken


def test_an_unknown_perturbation_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown perturbation"):
        perturb(PROGRAMS["Java"], "Java", "shuffle")


def test_a_perturbed_test_set_keeps_ids_and_reports_its_rewrite():
    import pandas as pd
    from aicd.splits.perturbed_sets import perturbed_test_set

    test = pd.DataFrame({"id": ["a", "b", "c"], "code": [PROGRAMS["Python"], PROGRAMS["Go"], "x = 1\n"],
                         "language": ["Python", "Go", "Python"], "target": ["human", "machine", "human"]})
    table, report = perturbed_test_set(test, "rename", 0, "T", "p_rename")
    assert list(table["id"]) == ["a", "b", "c"] and table["code"].iloc[0] != test["code"].iloc[0]
    assert report["perturbation"] == "rename" and report["rows"] == 3 and 0 <= report["unchanged_rows"] < 3


def test_a_flip_is_counted_over_all_rows_and_over_the_changed_ones():
    import pandas as pd
    from aicd.scoring.scorer import flip_rate

    flips = flip_rate(pd.DataFrame({"id": ["a", "b", "c"], "pred": ["human", "human", "machine"]}),
                      pd.DataFrame({"id": ["c", "b", "a"], "pred": ["machine", "machine", "human"]}), ["a", "b"])
    assert flips == {"rate": 1 / 3, "flipped": 1, "rows": 3, "changed_rows": 2, "rate_changed": 0.5}


def test_the_perturbation_table_shows_the_worst_flip_rate_and_the_largest_drop():
    from aicd.report.ood import perturbation_table

    records = [("LR", "in_distribution", 0.90, None), ("LR", "codeaid", 0.70, None)]
    perturbed = [("LR", "in_distribution", "rename", 0.85, 0.04), ("LR", "codeaid", "rename", 0.69, 0.10)]
    table_md = perturbation_table(records, perturbed)
    assert "| LR | 10.0 / +5.0 | 10.0 |" in table_md  # worst flip rate over splits / largest drop


def test_perturbed_sets_in_the_config_and_the_plan(repo):
    import copy

    import yaml
    from aicd.common.errors import AicdError
    from aicd.config import validate_config
    from aicd.generate.registry import load_registry
    from aicd.plan import Plan
    from aicd.report.layouts import ood_layout, report_layout

    config = yaml.safe_load((repo / "config" / "ood.yaml").read_text())
    validated = copy.deepcopy(config)
    validate_config(validated)
    plan = Plan.from_config(validated, load_registry(repo / validated["registry"]), {})
    assert "p_rename" in plan.perturbed_sets() and len(plan.perturbed_sets()) == 7
    assert not [s for _, s, _ in report_layout(plan)["test_sets"] if s.startswith("p_")]  # not Table 4 columns
    assert ood_layout(plan)["perturbations"]["ood_codeaid"]["p_tabs"] == "reindent_tabs"
    # every split x perturbation x detector that applies to new code (every one of ood.yaml)
    assert len(plan.ood_perturbed_scores()) == 11 * 7 * len(config["detectors"])
    bad = copy.deepcopy(config)
    bad["tasks"]["ood_codeaid"]["test_sets"] = {"x": {"perturbation": "rename", "source": "trial"}}
    with pytest.raises(AicdError, match="is valid under each of"):  # a source or a perturbation, not both
        validate_config(bad)


@pytest.mark.parametrize("language, code, kind, expected", [
    # a shorthand is also a key: renaming it would change the object (JavaScript) or the field (Rust)
    ("JavaScript", "function f(a){ let acc = a; let z = 2; return { acc, z: z }; }", "rename",
     "function f(v1){ let acc = v1; let v2 = 2; return { acc, z: v2 }; }"),
    ("Rust", 'fn main(){ let x = 1; let y = 2; let p = P { x }; println!("{y}"); }', "rename",
     'fn main(){ let x = 1; let y = 2; let v1 = P { x }; println!("{y}"); }'),
    ("Go", "package main\nfunc f() { x := 1; y := 2; _ = P{x: x}; _ = y }\n", "rename",
     "package main\nfunc f() { x := 1; v1 := 2; _ = P{x: x}; _ = v1 }\n"),
    # a macro body is raw text: a name it mentions keeps its text
    ("C", "#define SQ(x) ((x)*(x))\nint main(){ int x = 2; int y = 3; return SQ(x) + y; }\n", "rename",
     "#define SQ(x) ((x)*(x))\nint main(){ int x = 2; int v1 = 3; return SQ(x) + v1; }\n"),
    # a class-level name is a field
    ("Python", "class A:\n    total = 0\n    def f(self, n):\n        return n\n", "rename",
     "class A:\n    total = 0\n    def f(v1, v2):\n        return v2\n"),
    # a heredoc's body and closing marker keep their indentation
    ("PHP", "<?php\nfunction f() {\n    $a = <<<EOT\n      hi\n      EOT;\n    return $a;\n}\n", "reindent_tabs",
     "<?php\nfunction f() {\n\t$a = <<<EOT\n      hi\n      EOT;\n\treturn $a;\n}\n"),
    # a comment inside a line leaves a space: `return 0`, not `return0`
    ("C", "int main(){ return/**/0; }\n", "no_comments", "int main(){ return 0; }\n"),
    # Go directives are code
    ("Go", "package main\n\n//go:generate echo hi\n// doc\nfunc main() {}\n", "no_comments",
     "package main\n\n//go:generate echo hi\nfunc main() {}\n"),
])
def test_what_a_rewrite_must_leave_alone(language, code, kind, expected):
    assert perturb(code, language, kind) == expected


def test_one_set_name_cannot_be_a_perturbation_and_a_source(repo):
    import copy

    import yaml
    from aicd.common.errors import AicdError
    from aicd.config import validate_config

    config = yaml.safe_load((repo / "config" / "ood.yaml").read_text())
    bad = copy.deepcopy(config)
    bad["tasks"]["ood_in_distribution"]["test_sets"] = {"extra": {"source": "codeaid"}}
    bad["tasks"]["ood_codeaid"]["test_sets"] = {"extra": {"perturbation": "rename"}}
    with pytest.raises(AicdError, match="'extra' is a perturbation in one task and a source in another"):
        validate_config(bad)
