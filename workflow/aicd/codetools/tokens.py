"""The canonical token stream of code, read from its tree-sitter tree: layout never reaches it
(whitespace is canonical by construction), comments are left out (or one COMMENT token each),
every identifier becomes the class of its naming style and length (`snake_mid`, `camel_long`,
`single_letter`, ...) or, by mode, one ID token, VAR where the code binds it (the names
aicd.codetools.bindings finds, the ones the rename rewrite changes) or its role (DEFNAME,
CALLNAME, ...); literals are bucketed (`STR_short`, `NUM_small`, ...), and keywords and
operators may be written as their cross-language classes (aicd.codetools.token_classes).
Read by the feature sets canon_tfidf (aicd.features.canonical), structure and the frozen
embedding."""

from __future__ import annotations

from functools import cache

from ..data.schema import canonical_language
from .bindings import bound_occurrences
from .token_classes import name_role, token_class
from .treesitter import GRAMMARS, parse

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


@cache
def _literal_kind(t: str) -> str | None:
    """What a node type is as a literal (by its name, in any of the nine grammars), or None."""
    if "comment" in t:
        return "comment"
    if "string" in t or t in ("heredoc_body", "encapsed_string", "template_string"):
        return "string"
    if t in ("char_literal", "character_literal", "rune_literal"):
        return "char"
    if any(k in t for k in ("integer", "float", "number", "int_literal", "decimal", "hex")):
        return "number"
    return None


def _literal(node) -> str | None:
    kind = _literal_kind(node.type)
    if kind is None:
        return None
    if kind == "comment":
        return "COMMENT"
    if kind == "string":
        # the length without interpolations (f"{name}", `${name}`): renaming must not move the bucket
        n = len(node.text) - 2 - sum(len(c.text) for c in node.children if c.type in INTERPOLATIONS)
        return "STR_empty" if n <= 0 else "STR_short" if n <= 8 else "STR_long"
    if kind == "char":
        return "CHR"
    text = node.text.decode("utf-8", errors="replace").lower().rstrip("lfu")
    try:
        value = abs(float(int(text, 0)) if not any(c in text for c in ".e") or text.startswith("0x") else float(text))
    except ValueError:
        return "NUM_other"
    return "NUM_01" if value in (0, 1) else "NUM_small" if value < 100 else "NUM_big"


def _joined(text: str) -> str:
    """A stripped token with inner whitespace (`else if`, a multi-line operator) as one word."""
    parts = text.split()
    return text if len(parts) == 1 else "_".join(parts)


IDENTIFIER_MODES = ("class", "anonymous", "bound", "role")


def canonical_tokens(code: str, language: str | None, comments: bool = False,
                     delexicalise: bool = True, anonymous: bool = False, identifiers: str | None = None,
                     universal: bool = False) -> tuple[list[str], list[str]]:
    """(the canonical token stream, the identifiers it met; in the bound and role modes, only
    those that are not bound: the VAR tokens count the others). What an identifier becomes:
    - `class` (the default): the class of its naming style and length;
    - `anonymous` (or anonymous=True): one ID token, so that no renaming moves the stream;
    - `bound`: VAR where the code binds it (the names aicd.codetools.bindings finds, the ones a
      consistent renaming changes), every other name (functions, types, fields, library
      calls) as written;
    - `role`: VAR where bound, otherwise its role (DEFNAME, CALLNAME, FIELD, TYPE, NAME).
    universal=True writes keywords and operators as their cross-language classes
    (aicd.codetools.token_classes). delexicalise=False keeps identifiers and literals as written
    (only layout and comments are canonical). A language without a grammar (or none) falls
    back to whitespace tokens, identifiers kept."""
    mode = identifiers or ("anonymous" if anonymous else "class")
    if mode not in IDENTIFIER_MODES:
        raise ValueError(f"identifiers must be one of {', '.join(IDENTIFIER_MODES)}, got {mode!r}")
    language = canonical_language(language) if language else None
    if language not in GRAMMARS:
        return code.split(), []
    return tree_tokens(parse(code, language), language, comments, delexicalise, mode, universal)


LITERAL_CLASSES = {"STR": "STR", "NUM": "NUM", "CHR": "STR"}  # a bucket's class: STR_short -> STR, CHR -> STR


def literal_class(token: str) -> str:
    """A literal bucket as its class (STR_short, STR_empty, CHR -> STR; NUM_small -> NUM); any
    other token as it is."""
    head = token.split("_", 1)[0]
    return LITERAL_CLASSES.get(head, token) if head == token or token[len(head)] == "_" else token


def delexicalised_tokens(code: str, language: str | None) -> list[str]:
    """The delexicalised view of a program: its tree-sitter tokens without comments, every
    identifier ID, every string (and character) literal STR, every number NUM; keywords, operators
    and punctuation as written. A language without a grammar: whitespace tokens, as written."""
    tokens, _ = canonical_tokens(code, language, identifiers="anonymous")
    language = canonical_language(language) if language else None
    return [literal_class(t) for t in tokens] if language in GRAMMARS else tokens


def bound_spans(tree, language: str) -> set[tuple[int, int]]:
    """Byte spans of the bound names' occurrences; none where the tree has errors (the rename
    rewrite leaves such code as it is)."""
    if tree.root_node.has_error:
        return set()
    return {(n.start_byte, n.end_byte) for n in bound_occurrences(tree, language)}


def tree_tokens(tree, language: str, comments: bool = False, delexicalise: bool = True, mode: str = "class",
                universal: bool = False, bound: set | None = None) -> tuple[list[str], list[str]]:
    """canonical_tokens of a tree already parsed (`language` one of the nine); `bound`: the
    bound_spans when the caller has them."""
    if bound is None:
        bound = bound_spans(tree, language) if mode in ("bound", "role") else set()
    tokens, names = [], []
    stack = [tree.root_node]
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
            is_bound = (node.start_byte, node.end_byte) in bound
            if not is_bound:
                names.append(name)
            tokens.append(_identifier_token(node, name, mode, is_bound, delexicalise))
            continue
        if node.child_count == 0:
            text = node.text.decode("utf-8", errors="replace").strip()
            if text:
                tokens.append(token_class(node, text) if universal else _joined(text))
            continue
        stack.extend(reversed(node.children))
    return tokens, names


def _identifier_token(node, name: str, mode: str, bound: bool, delexicalise: bool) -> str:
    if mode == "anonymous":
        return "ID"
    if mode == "role":
        return name_role(node, bound)
    if mode == "bound":
        if bound:
            return "VAR"
        return "NAME_VAR" if name == "VAR" else _joined(name)  # VAR is the bound names' token
    return identifier_class(name) if delexicalise else name
