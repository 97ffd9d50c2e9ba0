"""The paper's Table 3 filters, one measurement pass per row.

Bounds (inclusive) come from config; the defaults are Table 3's. A row is rejected by the
first filter it fails, in FILTER_ORDER (cheap line statistics first, so most rejected rows
are never parsed, nor language-identified when they came without a language); the report
counts rejections per filter in that order.

Definitions (the paper gives only names, so they are fixed here):
- lines_of_code: non-blank lines;
- max_line_length / avg_line_length: characters per line, over all lines;
- alphanumeric_fraction: letters and digits (regex [^\\W_]) / all characters;
- unparsable: the tree-sitter parse contains an ERROR or MISSING node;
- ast_depth: edges from the root to the deepest node of the tree-sitter tree;
- english: English confidence of the row's comments and docstrings together (lingua, all
  its languages), required only when they hold at least `english_min_letters` letters:
  rows without natural-language text pass."""

from __future__ import annotations

import re
from functools import cache, lru_cache

import tree_sitter

from ..codetools.treesitter import parser_for

TABLE3 = {
    "ast_depth": [2, 31],
    "max_line_length": [12, 400],
    "avg_line_length": [5, 140],
    "lines_of_code": [6, 300],
    "alphanumeric_fraction": [0.2, 0.75],
    "english_confidence": 0.99,
    "english_min_letters": 40,
}
FILTER_ORDER = ("lines_of_code", "max_line_length", "avg_line_length", "alphanumeric_fraction",
                "unparsable", "ast_depth", "english")
LINE_FILTERS = FILTER_ORDER[:4]

# Comment and docstring nodes per grammar (Python docstrings are bare string statements).
_COMMENT_QUERIES = {
    "Python": "(comment) @c (expression_statement (string) @c)",
    "Java": "(line_comment) @c (block_comment) @c",
    "Rust": "(line_comment) @c (block_comment) @c",
}
_COMMENT_MARKS = re.compile(r"^\s*(///?|/\*+|\*+/?|#+|\"\"\"|'''|--)|\*/\s*$|(\"\"\"|''')\s*$", re.MULTILINE)
_LETTER = re.compile(r"[^\W\d_]")
_ALNUM_RUN = re.compile(r"[^\W_]+")  # letters and digits; what is left after removing them is the rest
ENGLISH_SAMPLE_CHARS = 600  # confidence settles long before this; lingua's cost grows with length


def line_stats(code: str) -> dict[str, float]:
    lines = code.split("\n")
    lengths = [len(line) for line in lines]
    return {
        "lines_of_code": sum(1 for line in lines if line.strip()),
        "max_line_length": max(lengths),
        "avg_line_length": sum(lengths) / len(lengths),
        "alphanumeric_fraction": (len(code) - len(_ALNUM_RUN.sub("", code))) / max(1, len(code)) if code else 0.0,
    }


def tree_depth(tree: tree_sitter.Tree, stop_above: int = 1 << 30) -> int:
    """Depth of the deepest node (root = 0); stops early once it exceeds `stop_above`."""
    cursor = tree.walk()
    depth = deepest = 0
    while True:
        if cursor.goto_first_child():
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_above:
                    return deepest
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return deepest
            depth -= 1


@cache
def _comment_query(language: str) -> tree_sitter.Query:
    return tree_sitter.Query(parser_for(language).language, _COMMENT_QUERIES.get(language, "(comment) @c"))


def natural_text(tree: tree_sitter.Tree, data: bytes, language: str) -> str:
    """Comments and docstrings of a parsed program, comment markers removed."""
    nodes = tree_sitter.QueryCursor(_comment_query(language)).captures(tree.root_node).get("c", [])
    parts = [data[n.start_byte:n.end_byte].decode("utf-8", "replace") for n in sorted(nodes, key=lambda n: n.start_byte)]
    return _COMMENT_MARKS.sub(" ", "\n".join(parts))


@lru_cache(maxsize=1)
def english_detector():
    from lingua import LanguageDetectorBuilder  # loaded once per process, only when needed

    # Low-accuracy mode: the n-gram models a filter over millions of rows can afford
    # (~0.1 ms per text); see BENCHMARKS.md.
    return LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode().build()


# lingua's confidence differs in its last bits between two processes on the same text (measured:
# 3 of 61 rows of two fresh full demos; its sums run in an order that varies per process).
# Rounded, the stored measurement and the filter's decision are the same bytes on every run.
ENGLISH_DIGITS = 9


def english_confidence(text: str) -> float:
    from lingua import Language

    return round(english_detector().compute_language_confidence(text, Language.ENGLISH), ENGLISH_DIGITS)


def in_bounds(value: float, bounds) -> bool:
    low, high = bounds
    return low <= value <= high


def check_lines(code: str, bounds: dict) -> tuple[str | None, dict]:
    """(first failed line filter or None, measurements): the cheap filters, which need no
    language, so a row they reject is never parsed or language-identified."""
    metrics: dict = line_stats(code)
    for name in LINE_FILTERS:
        if not in_bounds(metrics[name], bounds[name]):
            return name, metrics
    return None, metrics


def check(code: str, language: str, bounds: dict, metrics: dict | None = None) -> tuple[str | None, dict]:
    """(first failed filter or None, measurements). `language` is a canonical name;
    `metrics`: check_lines' measurements of a row that passed it (not measured again)."""
    if metrics is None:
        reason, metrics = check_lines(code, bounds)
        if reason:
            return reason, metrics
    data = code.encode("utf-8")
    tree = parser_for(language).parse(data)
    if tree.root_node.has_error:
        return "unparsable", metrics
    metrics["ast_depth"] = tree_depth(tree, stop_above=bounds["ast_depth"][1])
    if not in_bounds(metrics["ast_depth"], bounds["ast_depth"]):
        return "ast_depth", metrics
    text = natural_text(tree, data, language)
    letters = len(_LETTER.findall(text))
    metrics["comment_letters"] = letters
    if letters >= bounds["english_min_letters"]:
        metrics["english_confidence"] = conf = english_confidence(text[:ENGLISH_SAMPLE_CHARS])
        if conf < bounds["english_confidence"]:
            return "english", metrics
    return None, metrics
