"""Judging stage: zero-shot LLM detectors (Table 8), zs and cot prompting, through litellm."""
