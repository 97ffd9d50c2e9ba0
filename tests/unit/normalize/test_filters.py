"""The Table 3 filters: each bound at its edges, the order of checks, the English check."""

from __future__ import annotations

import pytest
from aicd.normalize import filters
from aicd.normalize.filters import TABLE3, check, line_stats

BOUNDS = dict(TABLE3)


def py_function(body_lines: int, width: int = 20) -> str:
    lines = ["def f(x):"] + [f"    x = x + {i}  # {'a' * max(0, width - 20)}" for i in range(body_lines)] + ["    return x"]
    return "\n".join(lines) + "\n"


def test_a_plain_function_passes_every_filter():
    reason, metrics = check(py_function(8), "Python", BOUNDS)
    assert reason is None
    assert metrics["lines_of_code"] == 10 and 2 <= metrics["ast_depth"] <= 31


@pytest.mark.parametrize("body, expected", [(3, "lines_of_code"), (4, None), (298, None), (299, "lines_of_code")])
def test_lines_of_code_bounds_are_inclusive(body, expected):
    # def + body + return: body 4 -> 6 lines (lowest allowed), body 298 -> 300 (highest)
    assert check(py_function(body), "Python", BOUNDS)[0] == expected


def test_line_length_bounds():
    long_line = "def f(x):\n    y = '" + "a" * 420 + "'\n" + "    x = 1\n" * 6 + "    return x\n"
    assert check(long_line, "Python", BOUNDS)[0] == "max_line_length"
    short = "a=1\n" * 8  # max line 3 < 12
    assert check(short, "Python", BOUNDS)[0] == "max_line_length"
    assert line_stats("ab\nabcd\n")["avg_line_length"] == pytest.approx(2.0)  # (2 + 4 + 0) / 3


def test_alphanumeric_fraction_bounds():
    noisy = "x = [" + ", ".join(["{}"] * 30) + "]\n"
    code = "def f():\n" + "    " + noisy * 7 + "    return 1\n"
    stats = line_stats(code)
    assert stats["alphanumeric_fraction"] < 0.2
    assert check(code, "Python", BOUNDS)[0] == "alphanumeric_fraction"


def test_unparsable_code_is_removed_before_depth():
    broken = "def f(x:\n" + "    x = x + 1\n" * 8 + "    return x\n"
    assert check(broken, "Python", BOUNDS)[0] == "unparsable"


def test_ast_depth_upper_bound():
    deep = "int main() {\n  int x = 0;\n" + "  if (x) {\n" * 20 + "  x++;\n" + "  }\n" * 20 + "  return x;\n}\n"
    reason, metrics = check(deep, "C", BOUNDS)
    assert reason == "ast_depth" and metrics["ast_depth"] > 31
    shallow = "int main() {\n  int x = 0;\n" + "  if (x) {\n" * 3 + "  x++;\n" + "  }\n" * 3 + "  return x;\n}\n"
    assert check(shallow, "C", BOUNDS)[0] is None


def test_english_comments_pass_and_other_languages_fail():
    body = "    x = x + 1\n" * 6 + "    return x\n"
    english = "def f(x):\n    # Add one to the running total for every element of the input list.\n" + body
    spanish = "def f(x):\n    # Suma uno al total acumulado para cada elemento de la lista de entrada.\n" + body
    russian = 'def f(x):\n    """Прибавляет единицу к итоговой сумме для каждого элемента списка."""\n' + body
    assert check(english, "Python", BOUNDS)[0] is None
    assert check(spanish, "Python", BOUNDS)[0] == "english"
    assert check(russian, "Python", BOUNDS)[0] == "english"


def test_rows_without_enough_natural_language_text_pass():
    code = "def f(x):\n    # TODO\n" + "    x = x + 1\n" * 6 + "    return x\n"
    reason, metrics = check(code, "Python", BOUNDS)
    assert reason is None and metrics["comment_letters"] < BOUNDS["english_min_letters"]
    assert "english_confidence" not in metrics


def test_comment_text_is_read_from_every_grammar():
    from aicd.codetools.treesitter import parse

    samples = {
        "Java": "class A { // first note\n /* second note */ }",
        "Rust": "// first note\nfn main() { /* second note */ }",
        "Go": "package main\n// first note\nfunc main() { /* second note */ }",
        "C#": "class A { // first note\n /* second note */ }",
        "PHP": "<?php\n// first note\n/* second note */\n",
        "JavaScript": "// first note\nfunction f() { /* second note */ }",
        "C++": "// first note\nint main() { /* second note */ }",
    }
    for language, code in samples.items():
        text = filters.natural_text(parse(code, language), code.encode(), language)
        assert "first note" in text and "second note" in text, language
        assert "//" not in text and "/*" not in text, language


def test_the_english_confidence_is_the_same_in_every_process():
    """lingua's confidence varies in its last bits from one process to the next: stored rounded,
    the normalized table is the same bytes on two runs."""
    import subprocess
    import sys

    script = ("from aicd.normalize.filters import english_confidence\n"
              "print([english_confidence(t) for t in ('This function computes the sum of two numbers and returns it',"
              " 'Returns the list sorted in place, or None when empty', 'TODO fix this later maybe',"
              " 'read input parse integers output answer')])\n")
    runs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                           check=True).stdout for _ in range(4)}
    assert len(runs) == 1, runs
