"""What the generation stage prompts from and keeps: the docstring protocol samples only rows it
can prompt (any documented function, a whole comment block), `by_language` spreads a protocol
over a source's languages, a shortfall is counted, each protocol has its own token cap, an answer
that starts its program over is cut where it does, `n: 0` turns a protocol off, and a layer
whose protocols make rows its task drops is told so when it plans."""

from __future__ import annotations

import copy

import pandas as pd
import pytest
import yaml
from aicd.common.errors import AicdError
from aicd.config import validate_config
from aicd.generate.answers import cut_at_repeat, cut_repeats
from aicd.generate.protocols import protocol_rows, signature_with_doc
from aicd.generate.registry import load_registry
from aicd.generate.run import protocol_params
from aicd.plan import Plan
from snakemake.utils import update_config

UNDOCUMENTED = "def helper(x):\n    y = x + 1\n    return y\n"
DOCUMENTED = 'def area(w, h):\n    """Area of a w x h rectangle."""\n    return w * h\n'


def test_the_first_documented_function_is_found_with_its_whole_comment_block():
    both = UNDOCUMENTED + "\n\n" + DOCUMENTED
    assert signature_with_doc(both, "Python") == 'def area(w, h):\n    """Area of a w x h rectangle."""'
    go = "// Sum adds two numbers\n// and returns their sum.\nfunc Sum(a int, b int) int {\n\treturn a + b\n}\n"
    assert signature_with_doc(go, "Go") == "// Sum adds two numbers\n// and returns their sum.\nfunc Sum(a int, b int) int"
    apart = "// a comment about something else\n\nint x;\n// not this one's\n\nint f(int a) { return a; }\n"
    assert signature_with_doc(apart, "C") is None  # a comment with a blank line before the function is not its doc
    assert signature_with_doc(UNDOCUMENTED, "Python") is None


def _rows(codes_by_language: dict[str, list[str]]) -> pd.DataFrame:
    rows = [(f"{lang[:2]}{i:03d}", code, lang) for lang, codes in codes_by_language.items()
            for i, code in enumerate(codes)]
    return pd.DataFrame(rows, columns=["id", "code", "language"]).assign(label="human", domain="general")


def test_the_docstring_protocol_samples_only_rows_it_can_prompt_spread_over_languages():
    table = _rows({"Python": [DOCUMENTED.replace("area", f"area{i}") for i in range(6)] + [UNDOCUMENTED] * 20,
                   "Go": ["// Id returns x.\nfunc Id(x int) int {\n\treturn x\n}\n"] * 6 + ["func f() {}\n"] * 20})
    rows = protocol_rows({"lib": table}, "docstring", {"n": 8, "by_language": True}, seed=1)
    assert len(rows) == 8 and rows["language"].value_counts().to_dict() == {"Python": 4, "Go": 4}
    assert all(signature_with_doc(c, lang) for c, lang in zip(rows["code"], rows["language"]))
    # more than the documented rows: what there is (the generate stage counts the shortfall)
    assert len(protocol_rows({"lib": table}, "docstring", {"n": 30}, seed=1)) == 12
    # other protocols sample from every row, in the same seeded order for every model
    rewrite = protocol_rows({"lib": table}, "hybrid_rewrite", {"n": 10, "by_language": True}, seed=1)
    assert rewrite["language"].value_counts().to_dict() == {"Python": 5, "Go": 5}


def test_a_protocol_can_keep_to_some_languages():
    table = _rows({"Python": [UNDOCUMENTED] * 6, "Go": ["func f() {}\n"] * 6, "Rust": ["fn f() {}\n"] * 6})
    rows = protocol_rows({"lib": table}, "inverse_instruction",
                         {"n": 12, "by_language": True, "languages": ["Python", "Rust"]}, seed=1)
    assert rows["language"].value_counts().to_dict() == {"Python": 6, "Rust": 6}


def test_a_protocol_gives_its_own_sampling_parameters_over_the_models():
    model = {"params": {"temperature": 0, "max_tokens": 192}}
    spec = {"n": 4, "max_tokens": 96, "params": {"frequency_penalty": 0.5}}
    assert protocol_params(model, spec, seed=3) == {"temperature": 0, "frequency_penalty": 0.5, "max_tokens": 96}
    assert "frequency_penalty" not in protocol_params(model, {"n": 4}, seed=3)


def test_each_protocol_asks_for_its_own_token_cap():
    model = {"params": {"temperature": 0, "max_tokens": 192}, "serve": {"model": "x"}}
    assert protocol_params(model, {"n": 4, "max_tokens": 96}, seed=3) == {"temperature": 0, "max_tokens": 96,
                                                                          "seed": 3}
    assert protocol_params(model, {"n": 4}, seed=3)["max_tokens"] == 192  # the model's own cap


def test_an_answer_that_starts_its_program_over_is_cut_where_it_does():
    program = "n = int(input())\nfor i in range(n):\n    print(i * i)\nprint('done')\n"
    text, cut = cut_at_repeat("```python\n" + program + program + program[:20])
    assert cut and text == "```python\n" + program.rstrip()
    assert cut_at_repeat(program) == (program, False)
    braces = "if (a) {\n}\nelse {\n}\nif (b) {\n}\nelse {\n}\n"  # short lines repeat in any program
    assert cut_at_repeat(braces) == (braces, False)
    answers = [{"status": "truncated", "text": "```python\n" + program + program, "finish_reason": "length"},
               {"status": "ok", "text": "```python\n" + program + "```", "finish_reason": "stop"},
               {"status": "error", "text": "", "finish_reason": None}]
    out, counted = cut_repeats(answers)
    assert counted["count"] == 1 and out[0]["status"] == "ok" and out[0]["code"] == program.rstrip()
    assert out[0]["raw"] == answers[0]["text"]  # the answer as it came stays the row's provenance
    assert out[1] == answers[1] and out[2] == answers[2]


def _merged(repo, *names, extra=None):
    config = {}
    for name in names:
        update_config(config, yaml.safe_load((repo / "config" / name).read_text()))
    if extra:
        update_config(config, extra)
    validate_config(config)
    return config


def test_a_protocol_with_no_rows_is_left_out_and_all_of_them_off_is_refused(repo):
    config = _merged(repo, "demo.yaml", "add_local_model.yaml")
    models = load_registry([repo / p for p in config["registry"]])
    plan = Plan.from_config(config, models, {})
    assert set(plan.gen_protocols) == {"inverse_instruction", "docstring"}
    assert plan.gen_protocols["docstring"]["sources"] == ["local_code"]  # a source with docstrings
    off = copy.deepcopy(config)
    for spec in off["generation"]["protocols"].values():
        spec["n"] = 0
    with pytest.raises(AicdError, match="every protocol has n: 0"):
        validate_config(off)


def test_a_layer_whose_protocols_make_rows_its_test_set_drops_says_so_when_it_plans(repo):
    config = _merged(repo, "demo.yaml", "add_local_model.yaml")
    models = load_registry([repo / p for p in config["registry"]])
    assert not [n for n in Plan.from_config(config, models, {}).notes if n.startswith("Generation:")]
    config = _merged(repo, "demo.yaml", "add_local_model.yaml",
                     extra={"generation": {"protocols": {"hybrid_rewrite": {"n": 5}, "adversarial": {"n": 3}}}})
    said = [n for n in Plan.from_config(config, models, {}).notes if n.startswith("Generation:")]
    assert len(said) == 1, said
    assert "test set smollm2 of task binary drops the adversarial/hybrid rows" in said[0]
    assert "adversarial, hybrid_rewrite prompts (up to 8 rows" in said[0] and "n: 0" in said[0]


def test_class_fractions_send_more_of_a_small_class_to_test():
    from aicd.splits.benchmark import build_task

    n = 400
    pool = pd.DataFrame({"id": [f"r{i:04d}" for i in range(n)], "code": "x", "source": "trial",
                         "label": ["human", "machine", "hybrid", "adversarial"] * (n // 4), "language": "Python",
                         "domain": "algorithmic", "generator": None, "family": None})
    spec = {"kind": "fine_grained", "out_of_domain_sources": [],
            "class_fractions": {"hybrid": {"train": 0.3, "validation": 0.1, "test": 0.6}}}
    tables, info = build_task(pool, spec, seed=5, task="t3")
    test = tables["test"]["target"].value_counts()
    assert test["hybrid"] == 60 and test["human"] == 31 and test["adversarial"] == 31  # 100 rows of each class
    assert info["class_fractions"] == spec["class_fractions"]
    again, _ = build_task(pool, spec, seed=5, task="t3")
    assert again["test"]["id"].tolist() == tables["test"]["id"].tolist()
