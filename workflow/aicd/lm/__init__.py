"""Causal-LM stage: a small causal code LM (GPT-2 architecture from a `transformers` config,
byte-level BPE from `tokenizers`) trained on the human code of a task's train split. It is the
scoring model of Fast-DetectGPT where no pretrained code LM can be downloaded (the demo and the
tests); on a user's machine the detector takes a Hub id instead (`python -m aicd.lm`).

- train: the tokenizer and the model trained on human code;
- stats: per-text token statistics of a causal LM, shared by every zero-shot criterion;
- stats_cache: those statistics kept once computed, per model, window and precision."""
