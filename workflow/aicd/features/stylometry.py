"""Language-agnostic stylometry of source code, and identifier/literal-normalised tokens.

Nearly every feature is a ratio, a rate or a log-size (the exceptions: mean/std of line length
and indentation, longest blank run, mean words per comment), so that a program in a language
the training data lacks (JavaScript, PHP, Go ...) lands on a comparable scale: layout (line lengths,
blank-line rhythm, indentation unit and consistency, trailing spaces, final newline), spacing
around operators and commas, comments (density, sentence style), identifiers (length, entropy,
naming style) and characters. Pure Python and regexes, no parser: thousands of rows per second.

`normalised_tokens` maps a program to a token stream where identifiers, numbers, strings and
comments become class tokens and keywords/punctuation stay, so n-grams over it describe
structure and habits rather than the names of one problem set (measured: they transfer no
better than TF-IDF across languages, so the `robust` detector does not use them; kept for
ablations, BENCHMARKS.md, "Out-of-distribution protocol")."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import NamedTuple

import numpy as np

from ..common.parallel import chunked, map_chunks

# Keywords of the nine languages (union): kept as themselves in the normalised tokens and
# not counted as identifiers.
KEYWORDS = frozenset("""
abstract and as assert async await auto bool boolean break byte case catch char chan class const
constexpr continue def default defer del delete do double elif else enum except explicit export
extends extern false final finally float fn for foreach from func function global go goto if impl
implements import in include inline instanceof int interface is lambda let long loop match mod
module mut namespace new nil None nonlocal not null nullptr operator or package pass private
protected pub public raise range readonly ref return self Self short signed sizeof static struct
super switch template this throw throws trait true True False try type typedef typename union
unsigned unsafe use using var virtual void volatile where while with yield string String echo
println printf print cout cin endl std vector map set main len list dict
""".split())

# `#` starts a comment except in C/C#/Objective-C preprocessor directives.
_DIRECTIVE = r"(?!include|define|if|endif|else|elif|undef|error|pragma|import|region|endregion)"


def _token_regex(slash_comments: bool) -> re.Pattern:
    return re.compile(
        r"(?P<comment>" + (r"//[^\n]*|" if slash_comments else "") + r"/\*.*?\*/|#" + _DIRECTIVE + r"[^\n]*)"
        r"|(?P<string>\"\"\".*?\"\"\"|'''.*?'''|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|`[^`]*`)"
        r"|(?P<number>\b\d[\w.]*)"
        r"|(?P<word>[A-Za-z_$][\w$]*)"
        r"|(?P<newline>\n)"
        r"|(?P<punct>[^\s\w])",
        re.S,
    )


# `//` is a comment marker in the C family, JavaScript, Go, Rust, PHP ... but floor division in
# Python. Which one a program means is read from the code itself (never a language tag): a
# colon-ended block header (`def f(x):`, `else:`, `for i in r:`) marks Python-style code.
_PY_BLOCK = re.compile(r"^[ \t]*(def|class|if|elif|else|for|while|try|except|finally|with)\b[^\n]*:[ \t]*(#[^\n]*)?$",
                       re.M)
_TOKEN = {True: _token_regex(True), False: _token_regex(False)}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMENT_LINE = {slash: re.compile(r"^\s*(" + (r"//|" if slash else "") + r"#" + _DIRECTIVE + r"|/\*|\*|\"\"\"|''')")
                 for slash in (True, False)}
_INLINE_COMMENT = {True: re.compile(r"\S.*?\s(//|#)\s"), False: re.compile(r"\S.*?\s#\s")}
_BINOP_SPACED = re.compile(r"\s(==|!=|<=|>=|\+=|-=|\*=|/=|&&|\|\||[=+\-*/<>%])\s")
_BINOP_TIGHT = re.compile(r"[\w)\]](==|!=|<=|>=|\+=|-=|\*=|/=|&&|\|\||[=+*/%<>])[\w(\[]")
_COMMA = re.compile(r",(\S|\s)")
_KEYWORD_PAREN = re.compile(r"\b(if|for|while|switch|catch)(\s?)\(")
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")
_CAMEL = re.compile(r"^[a-z][a-z0-9]*([A-Z][a-z0-9]*)+$")
_PASCAL = re.compile(r"^[A-Z][a-z0-9]+([A-Z][a-z0-9]*)+$")
_UPPER = re.compile(r"^[A-Z][A-Z0-9_]+$")


def slash_comments(text: str) -> bool:
    """Whether `//` starts a comment in this program (False for Python-style code)."""
    return _PY_BLOCK.search(text) is None


# The column order (fitted models depend on it). Each value is computed under its name by one
# of the groups below; stylometry_by_name checks those names against these.
FEATURE_NAMES = (
    "log_chars", "log_lines", "line_len_mean", "line_len_std", "line_len_max", "line_len_cv",
    "long_line_80", "line_len_entropy",
    "blank_ratio", "blank_run_max", "double_blank_ratio", "blank_gap_cv",
    "trailing_space_ratio", "final_newline", "leading_blank", "crlf",
    "tab_indent_ratio", "mixed_indent", "indent_unit_2", "indent_unit_4", "indent_unit_other",
    "indent_consistency", "indent_mean", "indent_max_level", "indented_ratio",
    "op_spaced_ratio", "comma_space_ratio", "keyword_paren_space_ratio", "double_space_inline",
    "brace_own_line_ratio", "semicolon_line_ratio",
    "comment_line_ratio", "inline_comment_ratio", "comment_char_ratio", "comment_capital_ratio",
    "comment_period_ratio", "comment_words_mean", "has_docstring", "comment_space_after_marker",
    "ident_len_mean", "ident_len_std", "ident_single_char", "ident_long_8", "ident_unique_ratio",
    "ident_char_entropy", "ident_snake", "ident_camel", "ident_pascal", "ident_upper",
    "ident_digit", "ident_per_line",
    "non_ascii_ratio", "digit_ratio", "upper_ratio", "punct_ratio", "space_ratio",
    "double_quote_ratio", "empty_code",
)


def _entropy(counts) -> float:
    total = sum(counts)
    if total <= 0:
        return 0.0
    return -sum(c / total * math.log2(c / total) for c in counts if c)


def _ratio(a: float, b: float) -> float:
    # Undefined (no comments, no commas, no braces ...) is NaN, not 0: "no braces" in Python
    # must not look like "never puts a brace on its own line" in C++.
    return a / b if b else math.nan


class _Program(NamedTuple):
    """One non-empty program split the ways the feature groups read it."""

    text: str  # line breaks normalised to \n
    lines: list[str]  # without the final newline's empty line
    lengths: np.ndarray  # characters per line
    blank: np.ndarray  # whether each line is blank
    code_lines: list[str]  # the non-blank lines
    n_code: int  # non-blank lines, at least 1 (a denominator)
    slash: bool  # whether `//` starts a comment
    comments: list[str]  # each comment as written
    code_only: str  # the text with each comment and string literal a space

    @classmethod
    def of(cls, text: str, final_newline: bool) -> _Program:
        lines = text.split("\n")
        if final_newline:
            lines = lines[:-1]
        n = len(lines)
        lengths = np.fromiter((len(line) for line in lines), dtype=float, count=n)
        blank = np.fromiter((not line.strip() for line in lines), dtype=bool, count=n)
        code_lines = [line for line, b in zip(lines, blank) if not b]
        slash = slash_comments(text)
        comments, code_only = _comments_and_code(text, slash)
        return cls(text, lines, lengths, blank, code_lines, max(len(code_lines), 1), slash, comments, code_only)


def _comments_and_code(text: str, slash: bool) -> tuple[list[str], str]:
    """(the comments, the text with comments and string literals blanked), in one pass of the
    tokenizer (the comment and identifier groups both need it). The space between tokens stays:
    identifiers are read from this text, and `int count` is two words, not `intcount`."""
    comments: list[str] = []

    def blank(m: re.Match) -> str:
        kind = m.lastgroup
        if kind == "comment":
            comments.append(m.group(0))
            return " "
        return " " if kind == "string" else m.group(0)

    return comments, _TOKEN[slash].sub(blank, text)


def _size_and_lines(p: _Program) -> dict[str, float]:
    """Sizes, line lengths and trailing spaces."""
    lengths, n = p.lengths, len(p.lines)
    return {
        "log_chars": math.log1p(len(p.text)),
        "log_lines": math.log1p(n),
        "line_len_mean": lengths.mean(),
        "line_len_std": lengths.std(),
        "line_len_max": min(lengths.max(), 400) / 100,
        "line_len_cv": _ratio(lengths.std(), lengths.mean()),
        "long_line_80": float((lengths > 80).mean()),
        "line_len_entropy": _entropy(np.bincount(np.minimum(lengths.astype(int) // 10, 15))),
        "trailing_space_ratio": _ratio(sum(line != line.rstrip() for line in p.lines), n),
    }


def _blank_lines(p: _Program) -> dict[str, float]:
    """Blank-line rhythm: runs of blanks and the gaps between them."""
    runs, run, gaps, gap = [], 0, [], 0
    for b in p.blank:
        if b:
            run += 1
            if gap:
                gaps.append(gap)
            gap = 0
        else:
            if run:
                runs.append(run)
            run = 0
            gap += 1
    if run:
        runs.append(run)
    gaps_arr = np.asarray(gaps, dtype=float)
    return {
        "blank_ratio": float(p.blank.mean()),
        "blank_run_max": float(max(runs, default=0)),
        "double_blank_ratio": _ratio(sum(r >= 2 for r in runs), len(runs)),
        "blank_gap_cv": _ratio(gaps_arr.std(), gaps_arr.mean()) if len(gaps_arr) > 1 else 0.0,
        "leading_blank": float(p.blank[0]),
    }


def _indentation(p: _Program) -> dict[str, float]:
    """Indentation: unit (gcd-like), consistency with it, tabs vs spaces."""
    indents = []
    tabs = spaces = mixed = 0
    for line in p.code_lines:
        stripped = line.lstrip(" \t")
        lead = line[: len(line) - len(stripped)]
        if lead:
            has_tab, has_space = "\t" in lead, " " in lead
            tabs += has_tab and not has_space
            spaces += has_space and not has_tab
            mixed += has_tab and has_space
        indents.append(len(lead.replace("\t", "    ")))
    positive = [i for i in indents if i > 0]
    unit = 0
    if positive:
        unit = 4 if all(i % 4 == 0 for i in positive) else (2 if all(i % 2 == 0 for i in positive) else 1)
        base = min(positive)
    consistency = _ratio(sum(i % (base if positive else 1) == 0 for i in positive), len(positive)) if positive else 1.0
    return {
        "tab_indent_ratio": _ratio(tabs, tabs + spaces + mixed),
        "mixed_indent": _ratio(mixed, p.n_code),
        "indent_unit_2": float(unit == 2),
        "indent_unit_4": float(unit == 4),
        "indent_unit_other": float(unit == 1),
        "indent_consistency": consistency,
        "indent_mean": float(np.mean(indents)) if indents else 0.0,
        "indent_max_level": _ratio(max(positive, default=0), (base if positive else 1)),
        "indented_ratio": _ratio(len(positive), p.n_code),
    }


def _spacing(p: _Program) -> dict[str, float]:
    """Spacing habits: around operators, after commas and keywords; braces and semicolons."""
    body = "\n".join(p.code_lines)
    spaced = len(_BINOP_SPACED.findall(body))
    tight = len(_BINOP_TIGHT.findall(body))
    commas = _COMMA.findall(body)
    kw = _KEYWORD_PAREN.findall(body)
    semicolon = sum(line.rstrip().endswith(";") for line in p.code_lines)
    return {
        "op_spaced_ratio": _ratio(spaced, spaced + tight),
        "comma_space_ratio": _ratio(sum(1 for c in commas if c.isspace()), len(commas)),
        "keyword_paren_space_ratio": _ratio(sum(1 for _, s in kw if s), len(kw)),
        "double_space_inline": _ratio(sum("  " in line.strip() for line in p.code_lines), p.n_code),
        "brace_own_line_ratio": _ratio(sum(line.strip() == "{" for line in p.code_lines),
                                       sum("{" in line for line in p.code_lines)),
        "semicolon_line_ratio": _ratio(semicolon, p.n_code if semicolon else 0),
    }


def _comments(p: _Program) -> dict[str, float]:
    """Comments and docstrings: how much, where, and in what style."""
    text, slash, comments = p.text, p.slash, p.comments
    docstrings = re.findall(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', text, re.S)
    comment_texts = [re.sub(r"^[/#*\s]+|[*/\s]+$", "", c) for c in comments]
    comment_texts += [a or b for a, b in docstrings]
    comment_texts = [c.strip() for c in comment_texts if c.strip()]
    comment_chars = sum(len(c) for c in comments) + sum(len(a or b) for a, b in docstrings)
    words = [len(c.split()) for c in comment_texts]
    return {
        "comment_line_ratio": _ratio(sum(bool(_COMMENT_LINE[slash].match(line)) for line in p.code_lines), p.n_code),
        "inline_comment_ratio": _ratio(sum(bool(_INLINE_COMMENT[slash].search(line)) for line in p.code_lines),
                                       p.n_code),
        "comment_char_ratio": _ratio(comment_chars, len(text)),
        "comment_capital_ratio": _ratio(sum(c[0].isupper() for c in comment_texts), len(comment_texts)),
        "comment_period_ratio": _ratio(sum(c.rstrip().endswith(".") for c in comment_texts), len(comment_texts)),
        "comment_words_mean": float(np.mean(words)) if words else 0.0,
        "has_docstring": float(bool(docstrings)),
        "comment_space_after_marker": _ratio(sum(bool(re.match(r"(//|#)\s", c)) for c in comments),
                                             sum(bool(re.match(r"(//|#)", c)) for c in comments)),
    }


def _identifiers(p: _Program) -> dict[str, float]:
    """Identifiers (keywords out): length, variety, character entropy, naming style."""
    idents = [t for t in _IDENT.findall(p.code_only) if t not in KEYWORDS]
    n_id = len(idents)
    id_len = np.fromiter((len(t) for t in idents), dtype=float, count=n_id) if n_id else np.zeros(1)

    def share(pattern: re.Pattern) -> float:
        return _ratio(sum(bool(pattern.match(t)) for t in idents), n_id)

    return {
        "ident_len_mean": float(id_len.mean()),
        "ident_len_std": float(id_len.std()),
        "ident_single_char": _ratio(int((id_len == 1).sum()) if n_id else 0, n_id),
        "ident_long_8": _ratio(int((id_len >= 8).sum()) if n_id else 0, n_id),
        "ident_unique_ratio": _ratio(len(set(idents)), n_id),
        "ident_char_entropy": _entropy(Counter("".join(idents)).values()),
        "ident_snake": share(_SNAKE),
        "ident_camel": share(_CAMEL),
        "ident_pascal": share(_PASCAL),
        "ident_upper": share(_UPPER),
        "ident_digit": _ratio(sum(any(ch.isdigit() for ch in t) for t in idents), n_id),
        "ident_per_line": _ratio(n_id, p.n_code),
    }


def _characters(p: _Program) -> dict[str, float]:
    """Character classes over the whole text (counted with str methods mapped over the text: a
    generator expression per character was a third of the stylometry's time)."""
    text, n_chars = p.text, len(p.text)
    alnum, spaces = sum(map(str.isalnum, text)), sum(map(str.isspace, text))  # no character is both
    return {
        "non_ascii_ratio": _ratio(n_chars - len(text.encode("ascii", "ignore")), n_chars),
        "digit_ratio": _ratio(sum(map(str.isdigit, text)), n_chars),
        "upper_ratio": _ratio(sum(map(str.isupper, text)), n_chars),
        "punct_ratio": _ratio(n_chars - alnum - spaces, n_chars),
        "space_ratio": _ratio(text.count(" "), n_chars),
        "double_quote_ratio": _ratio(text.count('"'), text.count('"') + text.count("'")),
    }


_GROUPS = (_size_and_lines, _blank_lines, _indentation, _spacing, _comments, _identifiers, _characters)
_NAMES = frozenset(FEATURE_NAMES)
_EMPTY = {**dict.fromkeys(FEATURE_NAMES, 0.0), "empty_code": 1.0}


def stylometry_by_name(code: str) -> dict[str, float]:
    """The FEATURE_NAMES values of one program (any string, empty included), by name."""
    if not isinstance(code, str):
        code = ""
    crlf = float("\r\n" in code)
    text = code.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return dict(_EMPTY)
    final_newline = float(text.endswith("\n"))
    program = _Program.of(text, bool(final_newline))
    values = {"final_newline": final_newline, "crlf": crlf, "empty_code": 0.0}
    for group in _GROUPS:
        values.update(group(program))
    if values.keys() != _NAMES:  # a feature computed under a name FEATURE_NAMES lacks, or never computed
        raise AssertionError(f"stylometry names differ from FEATURE_NAMES: extra {sorted(values.keys() - _NAMES)}, "
                             f"missing {sorted(_NAMES - values.keys())}")
    return values


def stylometry(code: str) -> list[float]:
    """The FEATURE_NAMES values of one program (any string, empty included), in their order."""
    values = stylometry_by_name(code)
    return [float(values[name]) for name in FEATURE_NAMES]


def _rows(codes) -> np.ndarray:
    return np.asarray([stylometry(c) for c in codes], dtype=np.float64).reshape(len(codes), len(FEATURE_NAMES))


def stylometry_matrix(codes, threads: int = 1, cache_dir: str | None = None) -> np.ndarray:
    """One row of FEATURE_NAMES per program, computed over `threads` processes; with `cache_dir`,
    each text's row is read from the run's cache where a job computed it before
    (aicd.common.text_cache), and the others are computed and kept there."""
    codes = [c if isinstance(c, str) else "" for c in codes]  # stylometry() reads any non-string as ""
    if not codes:
        return _rows(codes)
    if not cache_dir:
        return _computed(codes, threads)
    from ..common.text_cache import TextCache, source_identity

    with TextCache(cache_dir, {"kind": "stylometry", "source": source_identity(__name__)}) as cache:
        return cache.rows(codes, len(FEATURE_NAMES), lambda todo: _computed(todo, threads))


def _computed(codes: list[str], threads: int) -> np.ndarray:
    return np.vstack(list(map_chunks(_rows, chunked(codes, 2_000), threads)))


def normalised_tokens(code: str) -> list[str]:
    """Keywords and punctuation as themselves; identifiers by length class, literals and
    comments by kind; line breaks and the indentation that follows them as tokens."""
    if not isinstance(code, str):
        return []
    out = []
    text = code.replace("\r\n", "\n")
    for m in _TOKEN[slash_comments(text)].finditer(text):
        kind, tok = m.lastgroup, m.group(0)
        if kind == "word":
            out.append(tok if tok in KEYWORDS else ("ID1" if len(tok) == 1 else "IDs" if len(tok) <= 3 else "IDl"))
        elif kind == "newline":
            # The indentation of the next line, in steps, carries layout habits.
            j = m.end()
            k = j
            while k < len(text) and text[k] in " \t":
                k += 1
            lead = text[j:k]
            out.append("NL" + ("T" if "\t" in lead else str(min(len(lead), 16))))
        elif kind == "comment":
            out.append("COM")
        elif kind == "string":
            out.append("STR")
        elif kind == "number":
            out.append("NUM")
        else:
            out.append(tok)
    return out
