"""The four generation protocols: which human rows each uses and the prompt each sends.

inverse_instruction  an instructor model turns human code into a task; the generator solves it
docstring            the generator completes a function from its signature plus docstring/comment
                     (The Vault's `docstring` column where the source carries it)
hybrid_rewrite       the generator rewrites a human program           (label: hybrid)
hybrid_complete      the generator completes a truncated human prefix  (label: hybrid)
adversarial          the generator solves the task, asked to look human (label: adversarial)"""

from __future__ import annotations

import hashlib

import pandas as pd

from ..common.errors import AicdError

PROTOCOL_LABELS = {
    "inverse_instruction": "machine",
    "docstring": "machine",
    "hybrid_rewrite": "hybrid",
    "hybrid_complete": "hybrid",
    "adversarial": "adversarial",
}
NEEDS_INSTRUCTION = ("inverse_instruction", "adversarial")
_FUNCTIONS = ("function_definition", "function_declaration", "method_declaration", "function_item",
              "method_definition", "constructor_declaration")


def sample_rows(human: pd.DataFrame, protocol: str, n: int, seed: int) -> pd.DataFrame:
    """n human rows for a protocol: the same rows for every model (a seeded hash order)."""
    if protocol not in PROTOCOL_LABELS:
        raise AicdError(f"unknown protocol {protocol!r}; use one of {', '.join(PROTOCOL_LABELS)}")
    order = human["id"].map(lambda i: hashlib.sha256(f"{seed}:{protocol}:{i}".encode()).hexdigest())
    return human.assign(_order=order).sort_values("_order").head(n).drop(columns="_order")


def protocol_rows(tables: dict[str, pd.DataFrame], protocol: str, spec: dict, seed: int) -> pd.DataFrame:
    """The human rows a protocol prompts from: n rows split evenly over its sources (the
    paper's inverse-instruction on StarCoderData and CodeNet, docstring-conditioned on The
    Vault), each source's share by the seeded hash order of sample_rows. A source with fewer
    rows than its share gives what it has. `min_chars` / `max_chars` keep to programs of that
    length (a rewrite of a long program is cut at the model's max_tokens; one of a tiny program
    falls under Table 3's lower bounds)."""
    names = list(spec.get("sources") or tables)
    unknown = [s for s in names if s not in tables]
    if unknown:
        raise AicdError(f"protocol {protocol}: source(s) {unknown} were not given (given: {', '.join(tables)})")
    n = int(spec["n"])
    shares = [n // len(names) + (1 if i < n % len(names) else 0) for i in range(len(names))]
    low, high = spec.get("min_chars") or 0, spec.get("max_chars") or float("inf")
    pool = {name: tables[name][tables[name]["code"].str.len().between(low, high)] for name in names}
    parts = [sample_rows(pool[name], protocol, share, seed) for name, share in zip(names, shares) if share]
    return pd.concat(parts, ignore_index=True) if parts else tables[names[0]].head(0)


def _function_head(code: str, language: str | None) -> str | None:
    """The text of the first function with a body, up to its body, or None."""
    from ..codetools.treesitter import GRAMMARS, parse

    if language not in GRAMMARS:
        return None
    data = code.encode()
    stack = [parse(code, language).root_node]
    while stack:
        node = stack.pop(0)
        body = node.child_by_field_name("body") if node.type in _FUNCTIONS else None
        if body is not None:
            return data[node.start_byte:body.start_byte].decode(errors="replace")
        stack.extend(node.named_children)
    return None


def signature_from_docstring(code: str, language: str | None, docstring: str) -> str | None:
    """The first function's signature with the dataset's docstring (The Vault's `docstring`
    column) written the way the language documents a function: a Python docstring, `///` in
    Rust, `//` in Go, a `/** */` block elsewhere. None without a function or a docstring."""
    doc = (docstring or "").strip()
    head = _function_head(code, language) if doc else None
    if head is None:
        return None
    head = head.rstrip()
    lines = doc.replace('"' * 3, "'" * 3).splitlines()
    if language == "Python":
        return head + "\n    " + '"' * 3 + "\n    ".join(lines) + '"' * 3
    if language in ("Rust", "Go"):
        mark = "///" if language == "Rust" else "//"
        return "\n".join(f"{mark} {line}".rstrip() for line in lines) + "\n" + head
    return "/**\n" + "\n".join(f" * {line}".rstrip() for line in lines) + "\n */\n" + head


def signature_with_doc(code: str, language: str | None) -> str | None:
    """The first function's signature with its docstring or leading comment, or None."""
    from ..codetools.treesitter import GRAMMARS, parse

    if language not in GRAMMARS:
        return None
    root = parse(code, language).root_node
    stack = [root]
    while stack:
        node = stack.pop(0)
        if node.type in _FUNCTIONS and node.child_by_field_name("body") is not None:
            body = node.child_by_field_name("body")
            head = code.encode()[node.start_byte:body.start_byte].decode(errors="replace")
            doc = ""
            first = body.named_children[0] if body.named_children else None
            if language == "Python" and first is not None and first.type == "expression_statement" \
                    and first.named_children and first.named_children[0].type == "string":
                doc = "\n    " + first.text.decode(errors="replace")
            comment = node.prev_named_sibling
            lead = comment.text.decode(errors="replace") + "\n" if comment is not None and "comment" in comment.type else ""
            if not doc and not lead:
                return None
            return (lead + head.rstrip() + doc).strip()
        stack.extend(node.named_children)
    return None


def prefix_of(code: str) -> str:
    lines = code.splitlines()
    return "\n".join(lines[: max(1, len(lines) // 2)])


def build_requests(protocol: str, rows: pd.DataFrame, prompts, instructions: dict[str, str] | None = None):
    """[(row, prompt_id, messages)] and {reason: count} for rows that cannot be prompted."""
    out, skipped = [], {}
    name = f"{protocol}/generator"
    for row in rows.itertuples(index=False):
        fields = {"language": row.language or "the same language"}
        if protocol in NEEDS_INSTRUCTION:
            instruction = (instructions or {}).get(row.id)
            if not instruction:
                skipped["no_instruction"] = skipped.get("no_instruction", 0) + 1
                continue
            fields["instruction"] = instruction
        elif protocol == "docstring":
            docstring = getattr(row, "docstring", None)
            if isinstance(docstring, str) and docstring.strip():
                signature = signature_from_docstring(row.code, row.language, docstring)
            else:  # no docstring column: the code's own docstring or leading comment
                signature = signature_with_doc(row.code, row.language)
            if signature is None:
                skipped["no_signature_with_doc"] = skipped.get("no_signature_with_doc", 0) + 1
                continue
            fields["signature"] = signature
        elif protocol == "hybrid_rewrite":
            fields["code"] = row.code
        elif protocol == "hybrid_complete":
            fields["prefix"] = prefix_of(row.code)
        out.append((row, prompts.prompt_id(name), prompts.messages(name, **fields)))
    return out, skipped
