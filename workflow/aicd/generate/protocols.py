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
    Vault), each source's share by the seeded hash order of sample_rows; with `by_language`,
    each source's share split evenly over its languages too (`languages`: only these). A source
    (or language) with fewer rows than its share gives what it has. `min_chars` / `max_chars` keep to programs of that
    length (a rewrite of a long program is cut at the model's max_tokens; one of a tiny program
    falls under Table 3's lower bounds); the docstring protocol samples only rows it can prompt
    from (a docstring column, or a function with a docstring or leading comment)."""
    names = list(spec.get("sources") or tables)
    unknown = [s for s in names if s not in tables]
    if unknown:
        raise AicdError(f"protocol {protocol}: source(s) {unknown} were not given (given: {', '.join(tables)})")
    n = int(spec["n"])
    shares = _even(n, len(names))
    low, high = spec.get("min_chars") or 0, spec.get("max_chars") or float("inf")
    pool = {name: tables[name][tables[name]["code"].str.len().between(low, high)] for name in names}
    if spec.get("languages"):
        pool = {name: rows[rows["language"].isin(spec["languages"])] for name, rows in pool.items()}
    if protocol == "docstring":
        pool = {name: rows[_documented(rows)] for name, rows in pool.items()}
    parts = []
    for name, share in zip(names, shares):
        if not share:
            continue
        if not spec.get("by_language"):
            parts.append(sample_rows(pool[name], protocol, share, seed))
            continue
        groups = sorted(pool[name].groupby(pool[name]["language"].fillna("?")), key=lambda kv: kv[0])
        for (_, rows), part in zip(groups, _even(share, len(groups))):
            parts.append(sample_rows(rows, protocol, part, seed))
    return pd.concat(parts, ignore_index=True) if parts else tables[names[0]].head(0)


def _even(n: int, k: int) -> list[int]:
    return [n // k + (1 if i < n % k else 0) for i in range(k)] if k else []


def _documented(rows: pd.DataFrame) -> pd.Series:
    """Rows the docstring protocol can prompt from: a docstring column, or a documented function."""
    if rows.empty:
        return pd.Series(False, index=rows.index)
    docs = rows["docstring"] if "docstring" in rows.columns else pd.Series(None, index=rows.index)
    return pd.Series([(isinstance(d, str) and bool(d.strip())) or signature_with_doc(c, lang) is not None
                      for c, lang, d in zip(rows["code"], rows["language"], docs)], index=rows.index)


def _functions(code: str, language: str | None):
    """Each function with a body, breadth first: (node, body, its text up to the body); none in
    a language without a grammar."""
    from ..codetools.treesitter import GRAMMARS, parse

    if language not in GRAMMARS:
        return
    data = code.encode()
    stack = [parse(code, language).root_node]
    while stack:
        node = stack.pop(0)
        body = node.child_by_field_name("body") if node.type in _FUNCTIONS else None
        if body is not None:
            yield node, body, data[node.start_byte:body.start_byte].decode(errors="replace")
        stack.extend(node.named_children)


def _function_head(code: str, language: str | None) -> str | None:
    """The text of the first function with a body, up to its body, or None."""
    return next((head for _, _, head in _functions(code, language)), None)


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
    """The signature of the first function with a docstring or a leading comment (all the
    comment lines right above it: a `///` or `//` block counts whole), with that documentation;
    None when no function has any. Library code documents some functions and not others, so
    every function is looked at, not only the first."""
    for node, body, head in _functions(code, language):
        doc, lead = _docstring(body, language), _leading_comments(node)
        if doc or lead:
            return (lead + head.rstrip() + doc).strip()
    return None


def _docstring(body, language: str) -> str:
    """A Python function's docstring, indented as in its body ("" for none or another language)."""
    first = body.named_children[0] if body.named_children else None
    if language == "Python" and first is not None and first.type == "expression_statement" \
            and first.named_children and first.named_children[0].type == "string":
        return "\n    " + first.text.decode(errors="replace")
    return ""


def _leading_comments(node) -> str:
    """The comments right above a definition (consecutive siblings, no code between), as text."""
    comments, below = [], node
    sibling = node.prev_named_sibling
    while sibling is not None and "comment" in sibling.type and below.start_point[0] - sibling.end_point[0] <= 1:
        comments.insert(0, sibling.text.decode(errors="replace"))
        below, sibling = sibling, sibling.prev_named_sibling
    return "".join(c + "\n" for c in comments)


def prefix_of(code: str) -> str:
    lines = code.splitlines()
    return "\n".join(lines[: max(1, len(lines) // 2)])


def completed(prefix: str, answer_code: str) -> str:
    """A hybrid completion's code when the prompt asked for the continuation only: the human
    beginning followed by the model's continuation, or the answer as it is where the model
    wrote the whole program anyway (its first line is the beginning's)."""
    if not answer_code.strip():
        return answer_code
    first = next((line.strip() for line in prefix.splitlines() if line.strip()), "")
    head = next((line.strip() for line in answer_code.splitlines() if line.strip()), "")
    return answer_code if first and head == first else prefix.rstrip("\n") + "\n" + answer_code


def build_requests(protocol: str, rows: pd.DataFrame, prompts, instructions: dict[str, str] | None = None,
                   examples: dict | None = None):
    """[(row, prompt_id, messages)] and {reason: count} for rows that cannot be prompted; where
    `examples` is given, the first such row of each reason goes in it ({reason: "id: first line"})."""
    out, skipped = [], {}
    name = f"{protocol}/generator"

    def skip(row, reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1
        if examples is not None and reason not in examples:
            first = next((line.strip() for line in str(row.code).splitlines() if line.strip()), "")
            examples[reason] = f"{row.id} ({row.language}): {first[:100]}"

    for row in rows.itertuples(index=False):
        fields = {"language": row.language or "the same language"}
        if protocol in NEEDS_INSTRUCTION:
            instruction = (instructions or {}).get(row.id)
            if not instruction:
                skip(row, "no_instruction")
                continue
            fields["instruction"] = instruction
        elif protocol == "docstring":
            docstring = getattr(row, "docstring", None)
            if isinstance(docstring, str) and docstring.strip():
                signature = signature_from_docstring(row.code, row.language, docstring)
            else:  # no docstring column: the code's own docstring or leading comment
                signature = signature_with_doc(row.code, row.language)
            if signature is None:
                skip(row, "no_signature_with_doc")
                continue
            fields["signature"] = signature
        elif protocol == "hybrid_rewrite":
            fields["code"] = row.code
        elif protocol == "hybrid_complete":
            fields["prefix"] = prefix_of(row.code)
        out.append((row, prompts.prompt_id(name), prompts.messages(name, **fields)))
    return out, skipped
