"""Generator name -> model family: the one mapping table every stage reuses.

The 11 families are those of the paper (Appendix B, Table 9). Matching is on lower-cased
substrings of the generator name, first rule wins, so that Hub ids ("Qwen/Qwen2.5-Coder-7B"),
bare names ("GPT-4o") and typos seen in released data ("Qwen2.5-Codder-14B") all resolve.
An unknown generator maps to None (never a guess)."""

from __future__ import annotations

FAMILIES = (
    "DeepSeek-AI", "Qwen", "01-ai", "BigCode", "Gemma", "Phi",
    "Meta-Llama", "IBM-Granite", "Mistral", "OpenAI", "Gemini",
)
HUMAN = "human"
# A generator outside the paper's 11 families (a model of the registry's own, such as the
# pinned SmolLM2): its code enters Tasks 1 and 3 like any model's, never Task 2, whose classes
# are the 11 families and human (a family-attribution build counts its rows as family_unknown).
OTHER = "other"

# (substring, family), checked in order. "gemini" before "gemma" is not needed (no overlap),
# but "codellama" must hit Meta-Llama and "yi-coder" 01-ai.
FAMILY_RULES: tuple[tuple[str, str], ...] = (
    ("deepseek", "DeepSeek-AI"),
    ("qwen", "Qwen"),
    ("qwq", "Qwen"),
    ("01-ai", "01-ai"),
    ("yi-coder", "01-ai"),
    ("starcoder", "BigCode"),
    ("bigcode", "BigCode"),
    ("gemini", "Gemini"),
    ("gemma", "Gemma"),
    ("microsoft/phi", "Phi"),
    ("phi-", "Phi"),
    ("llama", "Meta-Llama"),
    ("granite", "IBM-Granite"),
    ("mistral", "Mistral"),
    ("mixtral", "Mistral"),
    ("devstral", "Mistral"),
    ("codestral", "Mistral"),
    ("gpt-", "OpenAI"),
    ("openai", "OpenAI"),
)


def is_human(generator: object) -> bool:
    return isinstance(generator, str) and generator.strip().lower() == HUMAN


def family_of(generator: object) -> str | None:
    """Family of a generator name; "human" for human code; None when unknown or missing."""
    if not isinstance(generator, str) or not generator.strip():
        return None
    name = generator.strip().lower()
    if name == HUMAN:
        return HUMAN
    for needle, family in FAMILY_RULES:
        if needle in name:
            return family
    return None
