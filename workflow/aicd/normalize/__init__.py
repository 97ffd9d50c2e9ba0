"""Normalization shared by every stage that handles code text (extraction of code from LLM
answers, canonical languages, language identification) and the dataset stage built on it
(Table 3 filters, MinHash deduplication) (`python -m aicd.normalize`).

- rows: one input table normalized row by row, each row kept or rejected with its reason;
- langid: language identification for rows that arrive without a language;
- filters: the paper's Table 3 filters;
- minhash: MinHash signatures of code and LSH banding parameters;
- dedup: near-duplicate pairs found with MinHash LSH;
- pool: the deduplicated pool, every normalized table joined."""

from ..codetools.codetext import extract_code, strip_reasoning
from ..data.schema import canonical_language
from .langid import identify_language

__all__ = ["canonical_language", "extract_code", "identify_language", "strip_reasoning"]
