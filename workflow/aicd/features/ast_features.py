"""Structural features from tree-sitter, as in the paper (Section 5.1): AST depth, counts of
node types, layout/style indicators and complexity proxies.

Each program becomes a dict of named values; a DictVectorizer fitted on the training split
fixes the dimensionality (the number of attributes seen in training, as the paper's 543 /
1,030). Code that cannot be parsed yields a row with `parse_failed = 1`, never an exception."""

from __future__ import annotations

import functools
import logging
import statistics
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from sklearn.feature_extraction import DictVectorizer

from ..codetools.treesitter import GRAMMARS, parse
from ..common.errors import AicdError
from ..common.parallel import chunked, map_chunks
from ..common.params import ParamSpec
from .base import Featurizer, register
from .rows import JobThreads, codes_of, languages_of

if TYPE_CHECKING:
    import scipy.sparse as sp

log = logging.getLogger(__name__)

# Substrings of node type names that mark branching or looping constructs in the nine
# grammars (if_statement, for_expression, while_statement, case_clause, catch_clause, ...).
_BRANCH_WORDS = frozenset({"if", "elif", "else_if", "for", "foreach", "while", "do", "loop", "case",
                           "catch", "except", "conditional", "ternary", "switch", "arm"})
_FUNCTION_MARKERS = ("function_definition", "function_declaration", "method_declaration",
                     "method_definition", "function_item", "constructor_declaration",
                     "lambda", "arrow_function", "func_literal", "anonymous_function")
_BLOCK_MARKERS = ("block", "compound_statement", "statement_block", "declaration_list", "body")


def _is_branch(kind: str) -> bool:
    # Whole words of the type name: "if_statement" branches, "identifier" does not.
    words = kind.split("_")
    return words[-1] not in ("keyword", "clause_list") and not _BRANCH_WORDS.isdisjoint(words)


class _Kind(NamedTuple):
    """What the walk needs to know of a node type; worked out once per type name (a grammar has a
    few hundred), not once per node (a program has thousands)."""
    key: str  # "node:<type>"
    branch: bool
    function: bool
    comment: bool
    identifier: bool  # an identifier type: a leaf of it counts as one identifier
    block: bool


@functools.cache
def _kind(kind: str) -> _Kind:
    return _Kind("node:" + kind, _is_branch(kind), kind in _FUNCTION_MARKERS or kind.endswith("function_definition"),
                 "comment" in kind, "comment" not in kind and kind.endswith("identifier"),
                 any(m in kind for m in _BLOCK_MARKERS))


def layout_features(code: str) -> dict[str, float]:
    lines = code.split("\n")
    n = len(lines)
    lengths = [len(line) for line in lines]
    nonempty = [line for line in lines if line.strip()]
    indents = [len(line) - len(line.lstrip(" \t")) for line in nonempty]
    return {
        "layout:lines": float(n),
        "layout:empty_line_ratio": (n - len(nonempty)) / n,
        "layout:mean_line_length": sum(lengths) / n,
        "layout:max_line_length": float(max(lengths)),
        "layout:mean_indent": (sum(indents) / len(indents)) if indents else 0.0,
        "layout:max_indent": float(max(indents)) if indents else 0.0,
        "layout:tab_indent_ratio": sum(line.startswith("\t") for line in nonempty) / max(len(nonempty), 1),
        "layout:trailing_space_ratio": sum(line != line.rstrip() for line in lines) / n,
        "layout:chars": float(len(code)),
    }


def extract(code: str, language: str | None) -> dict[str, float]:
    """Named features of one program."""
    feats = layout_features(code)
    tree = _parse(code, language)
    if tree is None:
        feats["parse_failed"] = 1.0
        return feats
    stats = _walk(tree)
    feats.update(stats.counts)
    feats.update(_tree_features(stats, feats["layout:lines"], tree.root_node.has_error))
    return feats


def _parse(code: str, language: str | None):
    """The program's tree, or None when its language has no grammar or it cannot be parsed."""
    if language not in GRAMMARS:
        return None
    try:
        return parse(code, language)
    except (AicdError, ValueError, UnicodeEncodeError) as err:  # missing grammar, odd text
        log.debug("parse failed: %s", err)
        return None


class _TreeStats(NamedTuple):
    counts: dict[str, float]  # "node:<type>" -> named nodes of that type
    max_depth: int
    nodes: int
    named: int
    errors: int  # error and missing nodes
    branches: int
    functions: int
    max_block_depth: int
    comment_rows: set[int]  # rows a comment covers
    ident_lengths: list[int]  # of every identifier leaf
    identifiers: set[bytes]  # the distinct identifiers


def _walk(tree) -> _TreeStats:
    """One depth-first pass over the tree with a cursor (no recursion: deep trees are common)."""
    counts: dict[str, float] = {}
    depth = max_depth = 0
    n_nodes = n_named = n_errors = branches = functions = 0
    block_depth = max_block_depth = 0
    comment_rows: set[int] = set()
    ident_lengths: list[int] = []
    identifiers: set[bytes] = set()
    block_stack: list[int] = []
    cursor = tree.walk()
    while True:
        node = cursor.node
        kind = _kind(node.type)
        n_nodes += 1
        if node.is_named:
            n_named += 1
            counts[kind.key] = counts.get(kind.key, 0.0) + 1.0
            branches += kind.branch
            functions += kind.function
            if kind.comment:
                comment_rows.update(range(node.start_point[0], node.end_point[0] + 1))
            elif kind.identifier and node.child_count == 0:
                text = node.text or b""
                ident_lengths.append(len(text))
                identifiers.add(text)
        if node.is_error or node.is_missing:
            n_errors += 1
        is_block = kind.block
        if cursor.goto_first_child():
            depth += 1
            max_depth = max(max_depth, depth)
            if is_block:
                block_depth += 1
                max_block_depth = max(max_block_depth, block_depth)
                block_stack.append(depth)
            continue
        # No children: climb until a next sibling exists; the root means we are done.
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                break
            if block_stack and block_stack[-1] == depth:
                block_stack.pop()
                block_depth -= 1
            depth -= 1
        else:
            continue
        break  # climbed past the root
    return _TreeStats(counts, max_depth, n_nodes, n_named, n_errors, branches, functions, max_block_depth,
                      comment_rows, ident_lengths, identifiers)


def _tree_features(stats: _TreeStats, n_lines: float, has_error: bool) -> dict[str, float]:
    ident_lengths = stats.ident_lengths
    return {
        "ast:depth": float(stats.max_depth),
        "ast:nodes": float(stats.nodes),
        "ast:named_nodes": float(stats.named),
        "ast:error_nodes": float(stats.errors),
        "ast:has_error": float(has_error),
        "ast:branching_factor": (stats.nodes - 1) / max(stats.named, 1),
        "complexity:cyclomatic": 1.0 + stats.branches,
        "complexity:branches_per_line": stats.branches / n_lines,
        "complexity:functions": float(stats.functions),
        "complexity:max_block_nesting": float(stats.max_block_depth),
        "style:comment_line_ratio": len(stats.comment_rows) / n_lines,
        "style:mean_identifier_length": statistics.fmean(ident_lengths) if ident_lengths else 0.0,
        "style:unique_identifier_ratio": len(stats.identifiers) / len(ident_lengths) if ident_lengths else 0.0,
        "parse_failed": 0.0,
    }


def _extracted(pairs: list, cache_dir: str | None) -> list[dict[str, float]]:
    """extract() of each (code, language) pair; with `cache_dir`, read from the run's per-text
    cache where a job computed it before (aicd.common.text_cache), the others computed and kept."""
    if not cache_dir:
        return [extract(code, language) for code, language in pairs]
    import json

    from ..common.text_cache import TextCache, source_identity

    keys = [f"{language}\0{code}" for code, language in pairs]  # the language picks the grammar
    settings = {"kind": "ast", "source": source_identity(__name__, "aicd.codetools.treesitter",
                                                         packages=("tree-sitter", *_GRAMMAR_PACKAGES))}
    with TextCache(cache_dir, settings) as cache:
        return cache.values(keys, lambda todo: [extract(*pairs[i]) for i in todo],
                            lambda values: json.dumps(values).encode(), json.loads)


_GRAMMAR_PACKAGES = tuple(module.replace("_", "-") for module, _ in GRAMMARS.values())


def _sparse_rows(pairs: list, cache_dir: str | None = None) -> tuple[list[str], sp.csr_matrix]:
    """(names, CSR float32 over those names) of one chunk of (code, language) pairs: what a
    worker sends back while the training split's attribute set is not known yet."""
    import scipy.sparse as sp

    names: dict[str, int] = {}
    indptr, indices, data = [0], [], []
    for values in _extracted(pairs, cache_dir):
        for name, value in values.items():
            indices.append(names.setdefault(name, len(names)))
            data.append(value)
        indptr.append(len(indices))
    matrix = sp.csr_matrix((np.asarray(data, dtype=np.float32), np.asarray(indices, dtype=np.int64), indptr),
                           shape=(len(pairs), len(names)))
    return list(names), matrix


def _dense_rows(pairs: list, vectorizer: DictVectorizer, cache_dir: str | None = None) -> np.ndarray:
    return vectorizer.transform(_extracted(pairs, cache_dir))


@register("ast")
class AstFeaturizer(JobThreads, Featurizer):
    """fit_transform(rows) learns the attribute set from training rows; transform(rows) maps
    any rows onto it (attributes unseen in training are dropped). rows: a table with `code` and
    `language` columns, or (older style) a list of codes with a list of languages. Parsing runs
    over `threads` processes (set by the features stage); the training rows are held sparse
    until their attribute set is known, so memory follows the attributes each row has."""

    CHUNK = 2_000
    max_threads = 8
    named_columns = True  # each column is a named attribute (what SHAP values are read against)
    PARAMS = ParamSpec("the AST features")

    def __init__(self) -> None:
        self.vectorizer = DictVectorizer(sparse=False, dtype=np.float32, sort=True)
        self.threads = 1
        self.cache_dir = None  # the run's per-text cache, set by the job (aicd.features.compute)

    def __getstate__(self):  # a fitted featurizer holds no path into one run's results (nor threads)
        return {**super().__getstate__(), "cache_dir": None}

    def _cache(self) -> str | None:
        return getattr(self, "cache_dir", None)  # a featurizer saved before the cache has none

    def _pairs(self, rows, languages=None) -> list:
        return list(zip(codes_of(rows), languages_of(rows, languages)))

    def fit_transform(self, rows, languages=None, progress=None) -> np.ndarray:
        pairs = self._pairs(rows, languages)
        parts = list(map_chunks(_sparse_rows, chunked(pairs, self.CHUNK), self.threads, self._cache()))
        names = sorted({name for chunk_names, _ in parts for name in chunk_names})
        self.vectorizer.feature_names_ = names
        self.vectorizer.vocabulary_ = {name: i for i, name in enumerate(names)}
        out = np.zeros((len(pairs), len(names)), dtype=np.float32)
        row = 0
        for chunk_names, matrix in parts:  # each chunk's own columns, mapped onto the sorted set
            columns = np.array([self.vectorizer.vocabulary_[n] for n in chunk_names], dtype=np.int64)
            coo = matrix.tocoo()
            out[row + coo.row, columns[coo.col]] = coo.data
            row += matrix.shape[0]
        return out

    def transform(self, rows, languages=None, progress=None) -> np.ndarray:
        pairs = self._pairs(rows, languages)
        if not pairs:  # an empty split: zero rows of the fitted width
            return np.zeros((0, len(self.vectorizer.feature_names_)), dtype=np.float32)
        return np.vstack(list(map_chunks(_dense_rows, chunked(pairs, self.CHUNK), self.threads, self.vectorizer,
                                         self._cache())))

    @property
    def feature_names(self) -> list[str]:
        return list(self.vectorizer.feature_names_)

    def report_fields(self, column_sums: dict) -> dict:
        names = self.feature_names

        def column_sum(name):
            return {s: int(sums[names.index(name)]) if name in names else 0 for s, sums in column_sums.items()}

        return {"parse_failed": column_sum("parse_failed"), "parse_error_trees": column_sum("ast:has_error")}
