"""Code-text helpers every stage may import (ground floor: imports no stage).

- clean_code: usable text or the reason it is not (missing, not UTF-8, binary, empty, too large);
- strip_reasoning / extract_code: the program in an LLM answer (reasoning traces removed, the
  longest markdown fence, else the whole answer);
- strip_comments: C-style comments removed (language cues must not read a licence header)."""

from __future__ import annotations

import math
import re

import pandas as pd

MAX_CODE_CHARS = 10 * 1024 * 1024  # a "file" over 10 MB is data, not code


_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_OPEN_THINK = re.compile(r"^.*?</(think|thinking|reasoning)>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def strip_reasoning(text: str) -> str:
    """Remove <think>…</think> blocks (and a closing tag whose opening was cut off)."""
    text = _THINK.sub("", text)
    if re.search(r"</(think|thinking|reasoning)>", text, re.IGNORECASE):
        text = _OPEN_THINK.sub("", text, count=1)
    return text.strip()


# A generation whose answer holds no fenced code block, though every generation prompt asks
# for one: kept as a row with this status (no code), counted and shown by the generate stage.
NO_CODE_BLOCK = "no_code_block"


def has_code_block(text: str | None) -> bool:
    return bool(text) and _FENCE.search(strip_reasoning(text)) is not None


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


_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"(?<![:\\])//.*$", re.M)


def strip_comments(code: str) -> str:
    return _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", code))


def is_missing(value: object) -> bool:
    # pd.NA: a null of a nullable column (Int64, string) read from parquet
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def clean_code(value: object) -> tuple[str | None, str | None]:
    """(code, None) for usable text, else (None, reason)."""
    if is_missing(value):
        return None, "missing_code"
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return None, "invalid_utf8"
    if not isinstance(value, str):
        return None, "code_not_text"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from a lossy decode upstream
        return None, "invalid_utf8"
    if "\x00" in value:
        return None, "binary_content"
    if not value.strip():
        return None, "empty_code"
    if len(value) > MAX_CODE_CHARS:
        return None, "too_large"
    return value, None
