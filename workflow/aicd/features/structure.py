"""`structure`: language-agnostic statistics of a program's syntax, blind to layout, comments
and the names the code binds, so that none of the project's perturbations (aicd.codetools.perturb)
can move them and the same column means the same thing in all nine languages.

Computed on the canonical token stream in cross-language classes (identifiers by role,
keywords and operators by class: aicd.features.canonical, `identifiers: role, tokens:
universal`) and on the tree-sitter tree: the share of each token class, how often bound names
are reused, the length and style of the names the code defines, nesting depth, statements and
functions per token, the variety of token pairs. No vocabulary is learnt: the columns are fixed,
so a fitted featurizer is the class itself."""

from __future__ import annotations

import math

import numpy as np

from ..codetools.bindings import walk
from ..codetools.token_classes import TOKEN_CLASSES, name_role
from ..codetools.tokens import IDENTIFIER_TYPES, STYLES, bound_spans, style_of, tree_tokens
from ..codetools.treesitter import GRAMMARS, parse
from ..common.parallel import chunked, map_chunks
from ..common.params import ParamSpec
from ..data.schema import canonical_language
from .base import Featurizer, register
from .rows import JobThreads, codes_of, languages_of

LITERALS = ("STR_empty", "STR_short", "STR_long", "CHR", "NUM_01", "NUM_small", "NUM_big", "NUM_other")
SHARED_PUNCTUATION = ("(", "[", "{", ",", ";", ".", ":")
COUNTED = (*TOKEN_CLASSES, *LITERALS, *SHARED_PUNCTUATION)
FUNCTIONS = ("function_definition", "method_declaration", "function_item", "function_declaration",
             "method_definition", "constructor_declaration", "arrow_function", "lambda", "func_literal")
FEATURE_NAMES = (["structure:log_tokens"] + [f"structure:share_{c}" for c in COUNTED] + [
    "structure:bound_distinct_per_token", "structure:bound_reuse", "structure:defined_names",
    "structure:defined_name_length"] + [f"structure:defined_{s}" for s in STYLES] + [
    "structure:called_distinct_per_token", "structure:max_depth", "structure:mean_leaf_depth",
    "structure:statements_per_token", "structure:functions", "structure:tokens_per_function",
    "structure:distinct_pairs", "structure:parse_error", "structure:no_grammar"])


def extract(code: str, language: str | None) -> list[float]:
    """One row of FEATURE_NAMES; 0 where a value is undefined (no defined names: `defined_names`
    is 0 then; no grammar: every column 0 but `no_grammar`)."""
    language = canonical_language(language) if language else None
    if language not in GRAMMARS or not isinstance(code, str):
        return [0.0] * (len(FEATURE_NAMES) - 1) + [1.0]
    tree = parse(code, language)
    bound = bound_spans(tree, language)
    tokens, _ = tree_tokens(tree, language, mode="role", universal=True, bound=bound)
    n = max(len(tokens), 1)
    counts: dict[str, int] = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    defined, called, bound_names = [], set(), set()
    for node in walk(tree.root_node):
        if node.type in IDENTIFIER_TYPES and node.child_count == 0:
            text = node.text.decode("utf-8", errors="replace")
            if (node.start_byte, node.end_byte) in bound:
                bound_names.add(text)
                continue
            role = name_role(node, False)
            if role == "DEFNAME":
                defined.append(text)
            elif role == "CALLNAME":
                called.add(text)
    n_bound, distinct_bound = counts.get("VAR", 0), len(bound_names)
    depths, statements, functions = _shape(tree)
    pairs = list(zip(tokens, tokens[1:]))
    styles = [style_of(d) for d in defined]
    return ([math.log1p(len(tokens))] + [counts.get(c, 0) / n for c in COUNTED] + [
        distinct_bound / n, n_bound / distinct_bound / 10 if distinct_bound else 0.0, math.log1p(len(defined)),
        float(np.mean([len(d) for d in defined])) / 20 if defined else 0.0]
        + [styles.count(s) / len(styles) if styles else 0.0 for s in STYLES]
        + [len(called) / n, max(depths) / 50, float(np.mean(depths)) / 50, statements / n, math.log1p(functions),
           n / max(functions, 1) / 500, len(set(pairs)) / max(len(pairs), 1), float(tree.root_node.has_error), 0.0])


def _shape(tree) -> tuple[list[int], int, int]:
    """Leaf depths, statement count and function count of the tree."""
    depths, statements, functions = [], 0, 0
    stack = [(tree.root_node, 0)]
    while stack:
        node, depth = stack.pop()
        kind = node.type
        if "comment" in kind:
            continue
        if node.child_count == 0:
            if node.text.strip():  # zero-width leaves (Python's indents, JavaScript's inserted `;`) follow layout
                depths.append(depth)
            continue
        statements += kind.endswith(("statement", "declaration"))
        functions += kind in FUNCTIONS
        stack.extend((child, depth + 1) for child in node.children)
    return depths or [0], statements, functions


def _rows(pairs: list) -> np.ndarray:
    return np.asarray([extract(code, language) for code, language in pairs], dtype=np.float32).reshape(
        len(pairs), len(FEATURE_NAMES))


@register("structure")
class StructureFeaturizer(JobThreads, Featurizer):
    """fit_transform(rows) / transform(rows): rows is a table with `code` and `language`; the
    columns are fixed (nothing is learnt), parsing runs over `threads` processes."""

    CHUNK = 2_000
    max_threads = 8
    named_columns = True
    PARAMS = ParamSpec("the language-agnostic structure statistics")

    def __init__(self) -> None:
        self.threads = 1

    def transform(self, rows) -> np.ndarray:
        pairs = list(zip(codes_of(rows), languages_of(rows)))
        if not pairs:
            return np.zeros((0, len(FEATURE_NAMES)), dtype=np.float32)
        return np.vstack(list(map_chunks(_rows, chunked(pairs, self.CHUNK), self.threads)))

    fit_transform = transform

    @property
    def feature_names(self) -> list[str]:
        return list(FEATURE_NAMES)

    def report_fields(self, column_sums: dict) -> dict:
        index = FEATURE_NAMES.index("structure:no_grammar")
        return {"no_grammar": {s: int(sums[index]) for s, sums in column_sums.items()}}
