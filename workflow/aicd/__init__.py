"""AICD Bench reproduction: one subpackage per workflow stage, each run as `python -m aicd.<stage>`.

Stages, in pipeline order (a stage imports only the ground floor and the stages before it):
sources -> llm -> generate -> sandbox -> normalize -> splits -> lm -> features -> detectors
-> judge -> scoring -> report.

Ground floor, which every stage may use (each imports only those before it, never a stage):
common (errors, io, params, registry, stage plumbing), data (the tables' shape), codetools
(reading and rewriting code), records (a run's records), models (pretrained and fitted models);
and published (the paper's numbers) and site_profile (`aicd site-profile`).

Above every stage: cli, submission_cli and serve_cli (the `aicd` command), config (config
validation), plan (the jobs, a pure function of the config) and resolve (the machine, probed
once per run). tests/unit/project/test_layering.py checks this order.
"""

__version__ = "0.1.0"
