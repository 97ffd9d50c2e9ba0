"""Cross-language classes of tree-sitter tokens: what a keyword, operator or name *does*, so
that a Python `for`, a Java `for` and a Rust `loop` are one LOOP token, `+=` and `*=` one AUG,
and a name is its role (a bound variable, the name of a defined function, of a called one, a
field, a type). A token stream in these classes reads the same way in all nine languages;
punctuation stays as written (`(`, `;`, `{`), since it is shared by most of them."""

from __future__ import annotations

_CLASSES = {
    "LOOP": "for while do foreach loop",
    "IN": "in of",
    "COND": "if else elif switch case default match when unless",
    "JUMP": "break continue goto pass",
    "RET": "return yield await",
    "FUNC": "def function fn func lambda",
    "CLASS": "class struct interface enum impl trait record union",
    "MOD": "public private protected static final const abstract virtual override readonly mut let var val "
           "auto extern inline volatile unsigned signed async global nonlocal pub",
    "IMPORT": "import from #include using package namespace require use include export extends implements",
    "TRY": "try catch except finally throw raise throws with assert defer",
    "NEW": "new delete del make",
    "CONST": "true false True False None null nullptr nil NULL this self super",
    "LOGIC": "and or not && || ! not_eq",
    "ASSIGN": "= :=",
    "AUG": "+= -= *= /= %= <<= >>= &= |= ^= **= //= ??= .=",
    "INC": "++ --",
    "CMP": "== != < > <= >= === !== <=> is instanceof",
    "ARITH": "+ - * / % ** //",
    "BIT": "& | ^ ~ << >> >>>",
    "TERN": "? ??",
    "ARROW": "-> => :: .. ... ..=",
    "MACRO": "typedef #define #ifdef #ifndef #endif #if #else #pragma template typename",
}
KEYWORD_CLASS = {word: cls for cls, words in _CLASSES.items() for word in words.split()}
PUNCTUATION = frozenset("( ) [ ] { } , ; . : @ $ #".split())
NAME_ROLES = ("VAR", "DEFNAME", "CALLNAME", "FIELD", "TYPE", "NAME")
TOKEN_CLASSES = (*_CLASSES, "TYPE", "KW", *NAME_ROLES[:-1])

_DEFINITIONS = ("function_definition", "method_declaration", "function_declarator", "function_item",
                "method_definition", "function_declaration", "constructor_declaration", "method_elem",
                "function_signature_item", "local_function_statement")
_CALLS = ("call", "invocation")
_FIELDS = ("attribute", "field", "member", "property", "scoped", "qualified", "selector")


def name_role(node, bound: bool) -> str:
    """The role of an identifier node: VAR where the code binds it (aicd.codetools.bindings), otherwise
    what its parent makes it."""
    if bound:
        return "VAR"
    parent = node.parent.type if node.parent is not None else ""
    if node.type in ("type_identifier", "primitive_type_identifier") or ("type" in parent and "identifier" not in parent):
        return "TYPE"
    if any(k in parent for k in _CALLS):
        return "CALLNAME"
    if any(k in parent for k in _DEFINITIONS):
        return "DEFNAME"
    if node.type in ("field_identifier", "property_identifier") or any(k in parent for k in _FIELDS):
        return "FIELD"
    return "NAME"


def token_class(node, text: str) -> str:
    """The class of a leaf that is neither a name nor a literal: a keyword's or operator's
    class, punctuation as written, a built-in type (`int`, `bool`) TYPE, anything else KW."""
    if text in PUNCTUATION:
        return text
    parent = node.parent.type if node.parent is not None else ""
    if "type" in node.type or ("type" in parent and "typed_" not in parent) or "template_argument" in parent:
        return "TYPE"  # `int`, `bool`; the `<` `>` of `vector<int>`
    return KEYWORD_CLASS.get(text, "KW")
