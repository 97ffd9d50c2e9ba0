"""Parse a judge's answer into a class name. JSON ({"label": ...}) anywhere in the answer wins
(the last one, so a chain of thought may quote examples first); else a bare label word on the
last non-empty line. Anything else is an abstention, which scoring counts as wrong."""

from __future__ import annotations

import json
import re

from ..codetext import strip_reasoning

from ..schema import ABSTAIN
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
    return ABSTAIN
