"""The sample table shared by every stage (its columns, labels and splits), and canonical names."""

from __future__ import annotations

import hashlib

LABELS = ("human", "machine", "hybrid", "adversarial")
LANGUAGES = ("Python", "Java", "C++", "C", "Go", "PHP", "C#", "JavaScript", "Rust")
DOMAINS = ("algorithmic", "research", "general")
SPLITS = ("train", "validation", "test")
ABSTAIN = "(abstain)"  # a prediction that names no class (an LLM judge's unparsable answer)

SAMPLE_COLUMNS = (
    "id", "code", "label", "language", "domain", "source", "generator",
    "family", "protocol", "problem_id", "subset",
)

# Spellings seen in public datasets -> canonical name. Keys are lower-cased.
_LANGUAGE_ALIASES = {
    "python": "Python", "python3": "Python", "py": "Python",
    "java": "Java",
    "c++": "C++", "cpp": "C++", "cxx": "C++", "cc": "C++",
    "c": "C",
    "go": "Go", "golang": "Go",
    "php": "PHP",
    "c#": "C#", "csharp": "C#", "c-sharp": "C#", "cs": "C#",
    "javascript": "JavaScript", "js": "JavaScript", "node": "JavaScript",
    "rust": "Rust", "rs": "Rust",
}


def canonical_language(name: object) -> str | None:
    """Canonical language name, or None when the value is missing or not one of the nine."""
    if name is None or not isinstance(name, str):
        return None
    return _LANGUAGE_ALIASES.get(name.strip().lower())


def content_id(language: str | None, code: str) -> str:
    """Stable id of a sample: a hash of its language and exact code text."""
    digest = hashlib.sha256(f"{language or ''}\0{code}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]
