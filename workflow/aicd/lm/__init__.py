"""Causal-LM stage: a small causal code LM (GPT-2 architecture from a `transformers` config,
byte-level BPE from `tokenizers`) trained on the human code of a task's train split. It is the
scoring model of a curvature detector only where a config asks for it (the workflow tests'
slice); the demos score with the pinned SmolLM2 and a full run with a Hub id (`python -m aicd.lm`).

- train: the tokenizer and the model trained on human code;
- stats: per-text token statistics of a causal LM, shared by every zero-shot criterion;
- stats_cache: what names a model's weights in the key of those statistics, kept once computed
  per text (aicd.common.text_cache)."""
