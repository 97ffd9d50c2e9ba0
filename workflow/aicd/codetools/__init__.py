"""Reading and rewriting code, for every stage that handles it (ground floor: imports no stage).

- treesitter: tree-sitter parsers for the nine languages;
- bindings: the names a program binds (what a consistent renaming may change);
- codetext: code text checked and cleaned (missing, binary, too large), code out of an LLM answer;
- token_classes: cross-language classes of keywords, operators and names;
- tokens: the canonical token stream (layout and comments gone, identifiers as classes or roles);
- perturb: semantics-preserving rewrites (indentation, blank lines, comments, renaming, braces)
  and the invariant text they all map to."""
