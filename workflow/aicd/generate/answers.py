"""What the generation stage does to an answer before it becomes a row: an answer that starts
over is cut where it starts over, and an answer that opens with bare code and then closes a
fence has that code as its block.

A small model decoding greedily often writes its program, then writes it again (or a block of
it, line for line) until its token cap: the answer is then cut at max_tokens mid-statement, and
seldom parses. The first copy is the program it wrote. So an answer whose lines repeat a block
of `REPEAT_LINES` consecutive lines seen earlier in it (blank lines aside, at least
`REPEAT_CHARS` characters of code) is cut before the repeat: a stop rule applied by the client,
the same on every run (it reads the answer's text only), counted in the generation report."""

from __future__ import annotations

import re

REPEAT_LINES = 3
REPEAT_CHARS = 12  # a block of braces or `else:` lines repeats in any program


def cut_at_repeat(text: str, block: int = REPEAT_LINES) -> tuple[str, bool]:
    """(the answer up to where a block of `block` lines repeats an earlier one, whether it was cut)."""
    lines = text.split("\n")
    stripped = [line.strip() for line in lines]
    seen: dict[tuple, int] = {}
    for i in range(len(lines) - block + 1):
        key = tuple(stripped[i:i + block])
        if not all(key) or sum(map(len, key)) < REPEAT_CHARS:
            continue
        first = seen.setdefault(key, i)
        if first + block <= i:  # a repeat that does not overlap the block it repeats
            return "\n".join(lines[:i]).rstrip(), True
    return text, False


def cut_repeats(results: list[dict]) -> tuple[list[dict], dict]:
    """Every answer (ok or cut at max_tokens) cut where it starts over; ({count, example})."""
    from ..codetools.codetext import extract_code

    out, count, example = [], 0, None
    for res in results:
        if res["status"] in ("ok", "truncated") and res["text"]:
            text, cut = cut_at_repeat(res["text"])
            if cut:
                count += 1
                example = example or text[-160:]
                # the cut answer ends where the model started over: complete, not cut at the cap
                res = {**res, "text": text, "code": extract_code(text), "status": "ok", "cut_at_repeat": True,
                       "raw": res["text"]}
        out.append(res)
    return out, {"count": count, "example": example}


_CLOSING_FENCE = re.compile(r"^```[ \t]*$", re.MULTILINE)


def code_before_closing_fence(text: str) -> str | None:
    """The code of an answer that forgot its opening fence: bare code first, then a line with
    only ``` (and prose after it, often). None for any other answer. Taken as a fenced block
    would be taken: the filters decide whether it is a program."""
    if not text or text.lstrip().startswith("```"):
        return None
    fence = _CLOSING_FENCE.search(text)
    if fence is None or "```" in text[:fence.start()]:
        return None
    before = text[:fence.start()].strip("\n")
    return before if before.strip() else None


def unopened_blocks(results: list[dict]) -> tuple[list[dict], int]:
    """Answers whose code block lost its opening fence get that code (else extraction would take
    the prose after the closing fence for the block); how many."""
    out, count = [], 0
    for res in results:
        code = code_before_closing_fence(res["text"]) if res["status"] in ("ok", "truncated") else None
        if code is not None:
            count += 1
            res = {**res, "code": code}
        out.append(res)
    return out, count
