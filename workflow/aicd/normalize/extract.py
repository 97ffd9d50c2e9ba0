"""Code text helpers shared by every stage that handles LLM output: strip reasoning traces
and pull the program out of markdown fences and surrounding prose."""

from __future__ import annotations

import re

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_OPEN_THINK = re.compile(r"^.*?</(think|thinking|reasoning)>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def strip_reasoning(text: str) -> str:
    """Remove <think>…</think> blocks (and a closing tag whose opening was cut off)."""
    text = _THINK.sub("", text)
    if re.search(r"</(think|thinking|reasoning)>", text, re.IGNORECASE):
        text = _OPEN_THINK.sub("", text, count=1)
    return text.strip()


def extract_code(text: str | None) -> str:
    """The code in an LLM answer: the longest fenced block if there is one (an unclosed
    fence, as in a truncated answer, runs to the end), else the whole answer, trimmed."""
    if not text:
        return ""
    text = strip_reasoning(text)
    blocks = [m.group(2) for m in _FENCE.finditer(text)]
    if blocks:
        return max(blocks, key=len).strip("\n")
    return text.strip()
