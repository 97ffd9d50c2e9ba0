"""Semantics-preserving rewrites of code, done with tree-sitter for the nine languages and
seeded: what a detector's label should not depend on.

- reindent_{tabs,2,4}: every line's indentation level kept, its unit changed (a tab, 2 or 4
  spaces); the level is the line's leading width over the file's indentation unit.
- blank_lines: blank lines removed, a seeded blank line inserted after some lines and trailing
  spaces added to others.
- no_comments: every comment node removed (a line left empty goes; one inside a line leaves a
  space), except Go's directives (//go:, //export, build tags); Go with cgo is left as is.
- rename: identifiers the code binds (variables and parameters, never functions, types, fields
  or keyword names) renamed consistently to v1, v2, ... in order of first appearance; a name
  the tree cannot rename safely keeps its text (a shorthand key, a macro's, a Rust format
  string's, a Python class-level name).
- braces (brace-delimited languages but Go): a block's `{` moved to its own line (Allman
  style) where it ends a line.

No rewrite touches the inside of a string: lines that start inside a multi-line string keep their
whitespace, and nothing is inserted there. Code that does not parse cleanly is returned as is
(counted by the caller as unperturbed). The tests check, per language, that every rewrite still
parses and, for Python, that the syntax tree is unchanged (names aside); what a program prints
is not checked for the other languages."""

from __future__ import annotations

import random
import re

from ..data.schema import canonical_language
from .bindings import bound_names, bound_occurrences, walk
from .treesitter import GRAMMARS, parse

PERTURBATIONS = ("reindent_tabs", "reindent_2", "reindent_4", "blank_lines", "no_comments", "rename", "braces")
# Go is left out: its semicolon insertion makes a `{` on its own line a syntax error.
BRACE_LANGUAGES = {"Java", "C++", "C", "PHP", "C#", "JavaScript", "Rust"}
# A `{` that opens a block or a body (never an object literal, where JavaScript's `return {`
# would change meaning).
BRACE_BLOCKS = {"block", "compound_statement", "class_body", "declaration_list", "statement_block",
                "field_declaration_list", "enum_body", "interface_body", "switch_block", "constructor_body",
                "enum_variant_list", "enumerator_list", "switch_body", "match_block"}



def _tree(code: str, language: str):
    tree = parse(code, language)
    return None if tree.root_node.has_error else tree


def _string_lines(tree) -> set[int]:
    """Rows (0-based) that start inside a string or comment spanning lines (a PHP heredoc or
    nowdoc to its closing marker): their leading text is content."""
    rows = set()
    for n in walk(tree.root_node):
        if n.end_point[0] > n.start_point[0] and ("string" in n.type or "comment" in n.type
                                                  or n.type in ("heredoc", "nowdoc", "raw_string_literal")):
            rows.update(range(n.start_point[0] + 1, n.end_point[0] + 1))
    return rows


def reindent(code: str, language: str, unit: str) -> str:
    tree = _tree(code, language)
    if tree is None:
        return code
    inside = _string_lines(tree)
    lines = code.split("\n")
    widths = {}
    for i, line in enumerate(lines):
        if i in inside or not line.strip():
            continue
        widths[i] = len(line[: len(line) - len(line.lstrip(" \t"))].replace("\t", "    "))
    step = min((w for w in widths.values() if w), default=0)  # the first level's width: the file's unit
    if not step:
        return code
    out = []
    for i, line in enumerate(lines):
        if i in widths:  # a continuation line's alignment past whole levels stays as spaces
            level, rest = divmod(widths[i], step)
            out.append(unit * level + " " * rest + line.lstrip(" \t"))
        else:
            out.append(line)
    return "\n".join(out)


def blank_lines(code: str, language: str, seed: int) -> str:
    tree = _tree(code, language)
    if tree is None:
        return code
    inside = _string_lines(tree)
    rng = random.Random(seed)
    out = []
    lines = code.split("\n")
    for i, line in enumerate(lines):
        # a trailing space or a new line there is string content, or would end a `\` continuation
        protected = (i in inside or (i + 1) in inside or line.endswith("\\")
                     or (language in ("C", "C++", "C#") and line.lstrip().startswith("#")))  # a directive
        if not line.strip() and not protected and i < len(lines) - 1:  # the final newline stays
            continue
        out.append(line + (" " * rng.randint(1, 3) if not protected and rng.random() < 0.3 else ""))
        if not protected and rng.random() < 0.2 and i < len(lines) - 1:
            out.append("")
    return "\n".join(out)


def _kept_comment(node, language: str) -> bool:
    """Comments that are code: Go's //go: and //export directives and build tags."""
    text = node.text.decode("utf-8", errors="replace")
    return language == "Go" and text.startswith(("//go:", "//export", "// +build", "//line "))


def no_comments(code: str, language: str) -> str:
    tree = _tree(code, language)
    if tree is None or (language == "Go" and 'import "C"' in code):  # cgo: the preamble comment is C code
        return code
    comments = [n for n in walk(tree.root_node) if "comment" in n.type and not _kept_comment(n, language)]
    if not comments:
        return code
    raw = code.encode("utf-8")
    out, last = [], 0
    for n in sorted(comments, key=lambda c: c.start_byte):
        if n.start_byte < last:
            continue
        text = raw[n.start_byte:n.end_byte]
        # a comment's newlines stay (rows keep their numbers); one inside a line becomes a space,
        # so `return/**/0` stays two tokens
        out += [raw[last:n.start_byte], b"\n" * text.count(b"\n") if b"\n" in text else b" "]
        last = n.end_byte
    out.append(raw[last:])
    before = code.split("\n")
    after = b"".join(out).decode("utf-8", errors="replace").split("\n")
    touched = {r for n in comments for r in range(n.start_point[0], n.end_point[0] + 1)}
    return "\n".join(line.rstrip() if i in touched else line for i, line in enumerate(after)
                     if i not in touched or line.strip() or not before[i].strip())


def rename(code: str, language: str, canonical: bool = False) -> str:
    """`canonical`: only the v-names outside the bound occurrences are taken (a bound name may
    take a v-name another bound name had), so that renaming a renamed program changes nothing."""
    tree = _tree(code, language)
    if tree is None:
        return code
    order = bound_names(tree, language)
    occurrences = bound_occurrences(tree, language)
    raw = code.encode("utf-8")
    outside = bytearray(raw)
    if canonical:  # the v-names of bound occurrences are free to take
        for n in occurrences:
            outside[n.start_byte:n.end_byte] = b" " * (n.end_byte - n.start_byte)
    taken = set(re.findall(r"\bv\d+\b", outside.decode("utf-8", errors="replace")))
    mapping, k = {}, 0
    for name in order:
        k += 1
        while f"v{k}" in taken:
            k += 1
        mapping[name] = f"v{k}"
    if not mapping:
        return code
    edits = [(n.start_byte, n.end_byte, mapping[n.text.decode("utf-8", errors="replace")]) for n in occurrences]
    out, last = [], 0
    for start, end, new in sorted(edits):
        out.append(raw[last:start])
        out.append(new.encode())
        last = end
    out.append(raw[last:])
    return b"".join(out).decode("utf-8", errors="replace")


def braces(code: str, language: str) -> str:
    """Allman style: a `{` that ends a line (outside strings and comments) goes to its own line."""
    if language not in BRACE_LANGUAGES:
        return code
    tree = _tree(code, language)
    if tree is None:
        return code
    lines = code.split("\n")
    raw_lines = code.encode("utf-8").split(b"\n")  # tree-sitter's columns count bytes
    moves = set()
    for n in walk(tree.root_node):
        if n.type == "{" and n.parent is not None and n.parent.type in BRACE_BLOCKS:
            row, col = n.start_point
            if raw_lines[row][:col].strip() and not raw_lines[row][col + 1:].strip():
                moves.add(row)
    out = []
    for i, line in enumerate(lines):
        if i in moves:
            body = line.rstrip()[:-1].rstrip()
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            out += [body, indent + "{"]
        else:
            out.append(line)
    return "\n".join(out)


def invariant_text(code: str, language: str) -> str:
    """The one text every rewrite of PERTURBATIONS maps to: comments removed, bound names
    renamed canonically, every line-ending block `{` on its own line, every line stripped of its
    indentation and trailing spaces, blank lines removed. Features computed on it cannot see
    what the rewrites change (the tests check invariant_text(perturb(x)) == invariant_text(x));
    code that does not parse, or in a language without a grammar, keeps its comments and names."""
    if not isinstance(code, str):
        return ""
    language = canonical_language(language) if language else language
    text = code
    if language in GRAMMARS:
        text = braces(rename(no_comments(code, language), language, canonical=True), language)
    lines = (line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return "".join(line + "\n" for line in lines if line)


def perturb(code: str, language: str, kind: str, seed: int = 0) -> str:
    """One rewrite of PERTURBATIONS; the code unchanged where it does not parse or does not apply."""
    if kind == "reindent_tabs":
        return reindent(code, language, "\t")
    if kind in ("reindent_2", "reindent_4"):
        return reindent(code, language, " " * int(kind[-1]))
    if kind == "blank_lines":
        return blank_lines(code, language, seed)
    if kind == "no_comments":
        return no_comments(code, language)
    if kind == "rename":
        return rename(code, language)
    if kind == "braces":
        return braces(code, language)
    raise ValueError(f"unknown perturbation {kind!r}; known: {', '.join(PERTURBATIONS)}")
