"""Constrained decoding for a judge whose server takes vLLM's structured outputs: the answer is
held to the form the prompt asks for, so every answer names one of the task's classes.

zs: exactly `{"label": "<class>"}`. cot: free reasoning of at most `reasoning_chars` characters
without braces, a newline, then that object; the answer's token cap is raised to the reasoning's
characters plus the object's (a token is at least one character), so no answer is cut before it
names a class. The pattern is a regular expression that vLLM's grammar backend (xgrammar)
enforces token by token (`structured_outputs: {regex: ...}` in the request body)."""

from __future__ import annotations

import re

REASONING_CHARS = 240  # a cot answer's reasoning: two or three sentences, ~60-80 tokens of prose


def answer_pattern(labels: list[str], mode: str, reasoning_chars: int = REASONING_CHARS) -> str:
    label = "(" + "|".join(re.escape(label) for label in labels) + ")"
    answer = r'\{"label": "' + label + r'"\}'
    return answer if mode == "zs" else "[^{}]{1," + str(reasoning_chars) + "}\\n" + answer


def constraint_params(labels: list[str], mode: str = "zs", reasoning_chars: int = REASONING_CHARS) -> dict:
    """Request parameters (litellm passes `extra_body` to the server as is) that hold the answer
    to `answer_pattern`, with a token cap that the longest such answer fits in."""
    pattern = answer_pattern(labels, mode, reasoning_chars)
    longest_object = len('{"label": ""}') + max(len(label) for label in labels)
    cap = longest_object + (reasoning_chars + 1 if mode == "cot" else 0)
    return {"extra_body": {"structured_outputs": {"regex": pattern}}, "max_tokens": cap}
