"""A canonical view of code, as the feature set `canon_tfidf`: the paper's TF-IDF + SVD over the
tree-sitter token stream instead of whitespace tokens, so that layout never reaches the
features (whitespace is canonical by construction), comments are left out (or one COMMENT
token each, `comments: true`), every identifier becomes the class of its naming style and
length (`snake_mid`, `camel_long`, `single_letter`, ...), and literals are bucketed
(`STR_short`, `NUM_small`, ...). Beside the SVD columns: identifier-vocabulary statistics
computed on the same tokens (share of each naming style, distinct-name ratio, mean length).
`identifiers: anonymous` makes every identifier one ID token and keeps only the identifier
count, so that renaming cannot reach the features.

The paper's `tfidf` stays as it is; this is an additional row family."""

from __future__ import annotations

import re

import numpy as np

from ..params import Param, ParamSpec
from ..schema import canonical_language
from ..treesitter import GRAMMARS, parse
from .rows import codes_of, languages_of
from .tfidf import TfidfSvdFeaturizer

IDENTIFIER_TYPES = {"identifier", "field_identifier", "property_identifier", "type_identifier", "name",
                    "shorthand_property_identifier", "namespace_identifier", "package_identifier",
                    "statement_identifier", "shorthand_field_identifier", "primitive_type_identifier"}
INTERPOLATIONS = {"interpolation", "template_substitution", "string_interpolation"}
STYLES = ("single_letter", "upper", "snake", "camel", "pascal", "lower", "other")
LENGTHS = ((3, "short"), (8, "mid"))


def style_of(name: str) -> str:
    core = name.strip("_$")
    if len(core) == 1:
        return "single_letter"
    if core.isupper():
        return "upper"
    if "_" in core:
        return "snake"
    if core[:1].islower() and any(c.isupper() for c in core):
        return "camel"
    if core[:1].isupper():
        return "pascal"
    if core.isalnum():
        return "lower"
    return "other"


def identifier_class(name: str) -> str:
    style = style_of(name)
    if style == "single_letter":
        return style
    size = next((label for limit, label in LENGTHS if len(name) <= limit), "long")
    return f"{style}_{size}"


def _literal(node) -> str | None:
    t = node.type
    if "comment" in t:
        return "COMMENT"
    if "string" in t or t in ("heredoc_body", "encapsed_string", "template_string"):
        # the length without interpolations (f"{name}", `${name}`): renaming must not move the bucket
        n = len(node.text) - 2 - sum(len(c.text) for c in node.children if c.type in INTERPOLATIONS)
        return "STR_empty" if n <= 0 else "STR_short" if n <= 8 else "STR_long"
    if t in ("char_literal", "character_literal", "rune_literal"):
        return "CHR"
    if any(k in t for k in ("integer", "float", "number", "int_literal", "decimal", "hex")):
        text = node.text.decode("utf-8", errors="replace").lower().rstrip("lfu")
        try:
            value = abs(float(int(text, 0)) if not any(c in text for c in ".e") or text.startswith("0x") else float(text))
        except ValueError:
            return "NUM_other"
        return "NUM_01" if value in (0, 1) else "NUM_small" if value < 100 else "NUM_big"
    return None


def canonical_tokens(code: str, language: str | None, comments: bool = False,
                     delexicalise: bool = True, anonymous: bool = False) -> tuple[list[str], list[str]]:
    """(the canonical token stream, the identifiers it delexicalised). delexicalise=False keeps
    identifiers and literals as written (only layout and comments are canonical); anonymous=True
    makes every identifier one ID token (no naming class, whatever delexicalise says), so that
    a renaming leaves the stream as it was. A language without a grammar (or none) falls back to whitespace
    tokens, identifiers kept."""
    language = canonical_language(language) if language else None
    if language not in GRAMMARS:
        return code.split(), []
    tokens, names = [], []
    stack = [parse(code, language).root_node]
    while stack:
        node = stack.pop()
        literal = _literal(node)
        if literal is not None:
            if literal != "COMMENT" or comments:
                tokens.append(literal if delexicalise or literal == "COMMENT"
                              else node.text.decode("utf-8", errors="replace"))
            continue
        if node.type in IDENTIFIER_TYPES and node.child_count == 0:
            name = node.text.decode("utf-8", errors="replace")
            names.append(name)
            tokens.append("ID" if anonymous else identifier_class(name) if delexicalise else name)
            continue
        if node.child_count == 0:
            text = node.text.decode("utf-8", errors="replace").strip()
            if text:
                tokens.append(re.sub(r"\s+", "_", text))
            continue
        stack.extend(reversed(node.children))
    return tokens, names


def vocabulary_stats(names: list[str]) -> list[float]:
    """Shares of each naming style, distinct-name ratio, mean and max length (/ 20), count (log)."""
    if not names:
        return [0.0] * (len(STYLES) + 4)
    styles = [style_of(n) for n in names]
    lengths = np.array([len(n) for n in names], dtype=float)
    return [styles.count(s) / len(names) for s in STYLES] + [
        len(set(names)) / len(names), float(lengths.mean()) / 20, float(lengths.max()) / 20, np.log1p(len(names)) / 10]


STAT_NAMES = [f"ident_{s}" for s in STYLES] + ["ident_distinct", "ident_mean_len", "ident_max_len", "ident_count"]
# what any renaming keeps: how many names (not how many distinct: a renamer that follows scopes
# gives one name two new ones)
RENAME_INVARIANT_STATS = ["ident_count"]


class CanonicalTfidfFeaturizer:
    """fit_transform(rows) / transform(rows): rows is a table with `code` and `language`."""

    kind = "canon_tfidf"
    max_threads = 1
    back_projects = False
    named_columns = False
    PARAMS = ParamSpec("the canonical-view TF-IDF features", (
        Param("max_features", (int,), 5000, "ours", "canonical n-grams kept (as the paper's TF-IDF)", minimum=1),
        Param("ngram_max", (int,), 3, "ours", "longest n-gram, in canonical tokens", minimum=1, maximum=5),
        Param("svd_components", (int,), 500, "ours", "truncated SVD dimensions", minimum=1),
        Param("comments", (bool,), False, "ours", "keep one COMMENT token per comment (default: none)"),
        Param("identifiers", (str,), "class", "ours",
              "what an identifier becomes: the class of its naming style and length (`class`), or one ID "
              "token (`anonymous`: renaming cannot change the features; of the identifier statistics only "
              "the count is kept)", choices=("class", "anonymous")),
    ))

    def __init__(self, max_features: int = 5000, ngram_max: int = 3, svd_components: int = 500,
                 comments: bool = False, identifiers: str = "class", seed: int = 0):
        if identifiers not in ("class", "anonymous"):
            raise ValueError(f"identifiers must be 'class' or 'anonymous', got {identifiers!r}")
        self.comments = comments
        self.identifiers = identifiers
        self.tfidf = TfidfSvdFeaturizer(max_features=max_features, ngram_max=ngram_max,
                                        svd_components=svd_components, seed=seed)
        self.threads = 1

    def _views(self, rows) -> tuple[list[str], np.ndarray]:
        codes = codes_of(rows)
        languages = languages_of(rows)
        streams, stats = [], []
        for code, language in zip(codes, languages):
            tokens, names = canonical_tokens(code, language, self.comments, anonymous=self.anonymous)
            streams.append(" ".join(tokens))
            stats.append(vocabulary_stats(names))
        stats = np.asarray(stats, dtype=np.float32).reshape(len(codes), len(STAT_NAMES))
        if self.anonymous:
            stats = stats[:, [STAT_NAMES.index(n) for n in RENAME_INVARIANT_STATS]]
        return streams, stats

    @property
    def anonymous(self) -> bool:
        return getattr(self, "identifiers", "class") == "anonymous"  # featurizers pickled before the option: class

    def fit_transform(self, rows) -> np.ndarray:
        streams, stats = self._views(rows)
        self.tfidf.threads = self.threads
        return np.hstack([self.tfidf.fit_transform(streams), stats]).astype(np.float32)

    def transform(self, rows) -> np.ndarray:
        streams, stats = self._views(rows)
        return np.hstack([self.tfidf.transform(streams), stats]).astype(np.float32)

    @property
    def feature_names(self) -> list[str]:
        return [f"canon_{n}" for n in self.tfidf.feature_names] + (RENAME_INVARIANT_STATS if self.anonymous else STAT_NAMES)

    def report_fields(self, column_sums: dict) -> dict:
        return {"canonical_features": len(self.tfidf.vocabulary), "svd_components": int(self.tfidf.components_.shape[0]),
                "identifier_statistics": len(RENAME_INVARIANT_STATS if self.anonymous else STAT_NAMES),
                "comments": self.comments, "identifiers": "anonymous" if self.anonymous else "class"}
