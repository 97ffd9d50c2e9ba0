"""tree-sitter parsers for the nine languages, from the per-language grammar packages
(which ship compiled grammars; nothing is downloaded at run time)."""

from __future__ import annotations

import importlib
from functools import cache

import tree_sitter

from ..common.errors import AicdError

# language -> (module, function returning the grammar pointer)
GRAMMARS = {
    "Python": ("tree_sitter_python", "language"),
    "Java": ("tree_sitter_java", "language"),
    "C++": ("tree_sitter_cpp", "language"),
    "C": ("tree_sitter_c", "language"),
    "Go": ("tree_sitter_go", "language"),
    "PHP": ("tree_sitter_php", "language_php"),
    "C#": ("tree_sitter_c_sharp", "language"),
    "JavaScript": ("tree_sitter_javascript", "language"),
    "Rust": ("tree_sitter_rust", "language"),
}


@cache
def parser_for(language: str) -> tree_sitter.Parser:
    """A parser for one of the nine canonical language names."""
    if language not in GRAMMARS:
        raise AicdError(f"no tree-sitter grammar for language {language!r}; supported: {', '.join(GRAMMARS)}")
    module, func = GRAMMARS[language]
    try:
        grammar = getattr(importlib.import_module(module), func)()
    except ImportError:
        raise AicdError(f"grammar package {module} is not installed: pip install {module.replace('_', '-')}") from None
    return tree_sitter.Parser(tree_sitter.Language(grammar))


def parse(code: str, language: str) -> tree_sitter.Tree:
    return parser_for(language).parse(code.encode("utf-8"))
