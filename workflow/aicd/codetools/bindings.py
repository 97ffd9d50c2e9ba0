"""Which names a program binds, from its tree-sitter tree: the variables and parameters that a
consistent renaming may change (never functions, types, fields, keyword-argument names or the
names a macro, a shorthand key or a Python class body makes unsafe to rename). The rename
perturbation (aicd.codetools.perturb) renames exactly these, and the canonical view
(aicd.features.canonical, `identifiers: bound`) hides exactly these, so that view cannot see
the rewrite."""

from __future__ import annotations

import re

# Where a name is bound, per grammar: (parent node type, field holding the binding, or None
# for any child). Identifiers below the binding are collected through PATTERN_PARTS only.
BINDINGS = {
    ("parameters", None), ("default_parameter", "name"), ("typed_parameter", None),
    ("typed_default_parameter", "name"), ("assignment", "left"), ("for_statement", "left"),
    ("for_in_clause", "left"),                                                  # Python
    ("init_declarator", "declarator"), ("parameter_declaration", "declarator"),
    ("declaration", "declarator"), ("for_range_loop", "declarator"),              # C, C++
    ("variable_declarator", "name"), ("formal_parameter", "name"), ("catch_formal_parameter", "name"),
    ("enhanced_for_statement", "name"),                                           # Java, JavaScript
    ("parameter", "name"), ("foreach_statement", "left"),                         # C#
    ("short_var_declaration", "left"), ("var_spec", "name"), ("parameter_declaration", "name"),
    ("range_clause", "left"),                                                     # Go
    ("let_declaration", "pattern"), ("parameter", "pattern"), ("for_expression", "pattern"),  # Rust
    ("formal_parameters", None), ("assignment_pattern", "left"), ("for_in_statement", "left"),  # JavaScript
}
PATTERN_PARTS = ("pattern", "declarator", "expression_list", "tuple", "list", "parenthesized", "typed_parameter",
                 "identifier")
# Name positions that must keep their text: a field or attribute, a keyword argument's name.
KEEP = {("attribute", "attribute"), ("keyword_argument", "name"), ("field_access", "field"),
        ("member_access_expression", "name"), ("named_argument", "name"), ("call", "function"),
        ("call_expression", "function"), ("method_invocation", "name"), ("invocation_expression", "function")}
PHP_KEEP = {"this", "GLOBALS", "_GET", "_POST", "_SERVER", "_COOKIE", "_FILES", "_ENV", "_REQUEST", "_SESSION"}


def walk(node):
    """Every node below `node` (itself first), in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def is_at(node, parent_type: str, field: str | None) -> bool:
    """`node` is the child of a `parent_type` node (in its `field`, where one is named)."""
    p = node.parent
    if p is None or p.type != parent_type:
        return False
    if field is None:
        return True
    child = p.child_by_field_name(field)
    return child is not None and child.start_byte == node.start_byte and child.end_byte == node.end_byte


SHORTHANDS = {"shorthand_property_identifier", "shorthand_property_identifier_pattern", "shorthand_field_identifier"}
PREPROCESSOR = {"preproc_arg", "preproc_def", "preproc_function_def", "preproc_call", "preproc_params"}
WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def _unsafe_names(tree, language: str) -> set[str]:
    """Names that cannot be renamed consistently from the syntax tree alone: a shorthand that
    is also a key (`{ acc }`, `P { x }`), a Go composite-literal key, anything a C/C++ macro
    mentions (its body is raw text), a name inside a Rust format string (`"{x}"`), and Python
    class-level names (fields: renaming them changes the object)."""
    unsafe = set()
    for n in walk(tree.root_node):
        t = n.type
        if t in SHORTHANDS or t == "shorthand_field_initializer":
            unsafe.add(n.text.decode("utf-8", errors="replace"))
        elif t == "keyed_element" and n.child_count:
            unsafe.add(n.children[0].text.decode("utf-8", errors="replace"))
        elif t in PREPROCESSOR:
            unsafe.update(WORD.findall(n.text.decode("utf-8", errors="replace")))
        elif language == "Rust" and t == "string_content":
            unsafe.update(re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)[:}]", n.text.decode("utf-8", errors="replace")))
        elif language == "Python" and t == "class_definition":
            body = n.child_by_field_name("body")
            for statement in (body.children if body is not None else []):
                for m in walk(statement):
                    if m.type == "identifier" and m.parent is not None and m.parent.type == "assignment":
                        unsafe.add(m.text.decode("utf-8", errors="replace"))
                    if m.type in ("function_definition", "class_definition"):
                        break
    return unsafe


def _by_parent(pairs) -> dict[str, tuple]:
    out: dict[str, list] = {}
    for parent_type, field in pairs:
        out.setdefault(parent_type, []).append(field)
    return {k: tuple(v) for k, v in out.items()}


# (parent type, field) pairs by parent type: a node is checked only against its parent's own
KEEP_AT, BINDING_AT = _by_parent(KEEP), _by_parent(BINDINGS)


def _at_any(node, index: dict) -> bool:
    """is_at(node, t, f) for some (t, f) of the pairs `index` was made from."""
    parent = node.parent
    fields = index.get(parent.type) if parent is not None else None
    if not fields:
        return False
    for field in fields:
        if field is None:
            return True
        child = parent.child_by_field_name(field)
        if child is not None and child.start_byte == node.start_byte and child.end_byte == node.end_byte:
            return True
    return False


def _analyse(tree, language: str) -> tuple[list[str], list]:
    """(the bound names in order of first appearance, every identifier node of the tree)."""
    names, kept, nodes = [], _unsafe_names(tree, language), []
    for n in walk(tree.root_node):
        if n.type not in ("identifier", "name"):
            continue
        nodes.append(n)
        text = n.text.decode("utf-8", errors="replace")
        if language == "PHP":
            if n.parent is not None and n.parent.type == "variable_name" and text not in PHP_KEEP:
                names.append(text)
            continue
        if _at_any(n, KEEP_AT):
            kept.add(text)
            continue
        node, bound = n, False
        while node.parent is not None and (node is n or any(part in node.type for part in PATTERN_PARTS)):
            if _at_any(node, BINDING_AT):
                bound = True
                break
            node = node.parent
        if bound:
            names.append(text)
    seen, ordered = set(), []
    for name in names:
        if name not in seen and name not in kept:
            seen.add(name)
            ordered.append(name)
    return ordered, nodes


def bound_names(tree, language: str) -> list[str]:
    """The names the code binds, in order of first appearance (each once)."""
    return _analyse(tree, language)[0]


def bound_occurrences(tree, language: str) -> list:
    """Every identifier node that a consistent renaming of the bound names changes (a bound
    name in a position that keeps its text, such as `obj.name`, is left out)."""
    ordered, nodes = _analyse(tree, language)
    names = set(ordered)
    if not names:
        return []
    out = []
    for n in nodes:
        if n.text.decode("utf-8", errors="replace") not in names:
            continue
        if language == "PHP" and (n.parent is None or n.parent.type != "variable_name"):
            continue
        if _at_any(n, KEEP_AT):
            continue
        out.append(n)
    return out
