"""Parse a judge's answer into a class name. JSON ({"label": ...}) anywhere in the answer wins
(the last one, so a chain of thought may quote examples first); else a bare label word on the
last non-empty line; else the one class named in the answer's first sentence ("This program
was written by a human.", as small models answer; a sentence naming two classes names none).
Anything else is an abstention, which scoring counts as wrong."""

from __future__ import annotations

import json
import re

from ..codetools.codetext import strip_reasoning
from ..data.schema import ABSTAIN

_JSON = re.compile(r"\{[^{}]*\}")


def parse_answer(text: str | None, labels: list[str]) -> str:
    if not text:
        return ABSTAIN
    text = strip_reasoning(text)
    by_lower = {label.lower(): label for label in labels}
    for blob in reversed(_JSON.findall(text)):
        try:
            value = json.loads(blob).get("label")
        except (json.JSONDecodeError, AttributeError):
            continue
        if isinstance(value, str) and value.strip().lower() in by_lower:
            return by_lower[value.strip().lower()]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines:
        last = re.sub(r"^(answer|label|class)\s*[:=-]\s*", "", lines[-1], flags=re.IGNORECASE)
        word = last.strip(" .`*\"'").lower()
        if word in by_lower:
            return by_lower[word]
        named = named_in(first_sentence(lines[0]), by_lower)
        if named:  # "This program was written by a human." names one class, and only one
            return named
    return ABSTAIN


def first_sentence(line: str) -> str:
    return re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]


def named_in(sentence: str, by_lower: dict) -> str | None:
    """The one class named as a word in a prose sentence, else None (none, more than one, or a
    line that reads as code: an echo of the program is not an answer)."""
    if len(sentence.split()) < 3 or re.search(r"[(){};=<>#\[\]]", sentence):
        return None
    found = {label for low, label in by_lower.items() if re.search(rf"(?<![\w-]){re.escape(low)}(?![\w-])",
                                                                    sentence.lower())}
    return found.pop() if len(found) == 1 else None
