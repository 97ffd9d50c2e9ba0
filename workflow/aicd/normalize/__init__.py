"""Normalization shared by every stage that handles code text (extraction of code from LLM
answers, canonical languages, language identification) and the dataset stage built on it
(Table 3 filters, MinHash deduplication)."""

from ..codetools.codetext import extract_code, strip_reasoning
from ..data.schema import canonical_language
from .langid import identify_language

__all__ = ["canonical_language", "extract_code", "identify_language", "strip_reasoning"]
