"""Judging stage: zero-shot LLM detectors (Table 8), zs and cot prompting, through litellm
(`python -m aicd.judge`).

- sample: the stratified sample of a task's test split a judge sees;
- run: one judge on every task and mode of its job, answers parsed into predictions;
- constrained: the answer held to the prompt's form (vLLM's structured outputs);
- parse: a judge's answer into a class name."""

# The version of the judging method (prompts' use, sampling, answer parsing), written into every
# judge's score file: raise it when a change makes a judge label the same rows differently.
VERSION = 2
