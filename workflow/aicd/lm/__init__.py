"""Causal-LM stage: a small causal code LM (GPT-2 architecture from a `transformers` config,
byte-level BPE from `tokenizers`) trained on the human code of a task's train split. It is the
scoring model of Fast-DetectGPT where no pretrained code LM can be downloaded (the demo and the
tests); on a user's machine the detector takes a Hub id instead."""
