"""What each rule's jobs ask of the machine: the one table of job resources. Every rule reads its
row (workflow/rules/common.smk, `res()` and `rule_threads()`); a detector's and a feature set's
jobs start from theirs and take what their config entry's `resources:` or their kind declares
(aicd.plan.jobs: a kind's memory, GPUs and threads are the kind's own needs); a job that serves a
local LLM adds its server's memory (aicd.llm.engines). Memory grows with the job's inputs where a
row says so (MB per MB of input files: a job that reads whole tables) and with the attempt (a
job killed for memory is retried with `retries:` from the profile at 2x, 3x...)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JobResources:
    mem_mb: int = 2000           # MB, before its inputs' share
    per_input_mb: float = 0      # MB more per MB of the job's input files
    per_thread_mb: int = 0       # MB more per thread (one sandbox container per worker)
    runtime: int = 60            # minutes (SLURM's time limit)
    threads: int = 1             # lowered to --cores locally; a profile's --set-threads changes them per site
    engine_slots: int = 0        # container-engine slots (resource `docker`, bounded by the profile)


DEFAULT = JobResources()  # the report rules and every rule without a row of its own

RULES: dict[str, JobResources] = {
    "source": JobResources(mem_mb=4000, runtime=120),
    "normalize": JobResources(per_input_mb=6, runtime=240, threads=8),       # dataset.resources.threads lowers it
    "dataset_pool": JobResources(mem_mb=4000, per_input_mb=6, runtime=480),
    "sandbox_image": JobResources(mem_mb=4000, runtime=120, engine_slots=1),
    "execute": JobResources(per_thread_mb=1000, runtime=240, engine_slots=1),  # threads: execution.workers
    "instructions": JobResources(runtime=240),                                 # + the served model's server
    "generate": JobResources(runtime=240),
    "judge": JobResources(per_input_mb=4, runtime=240),
    "task_split": JobResources(per_input_mb=6, runtime=120),
    # a release task has no snakemake input (the release is read inside the job): its memory
    # follows the paper's sizes instead (BENCHMARKS.md, paper scale)
    "task_split_release": JobResources(mem_mb=32000, runtime=120, threads=16),
    "calibration_reference": JobResources(per_input_mb=4),
    "test_set": JobResources(per_input_mb=4, runtime=30),
    "perturbed_test_set": JobResources(per_input_mb=4, runtime=30),
    "ood_split": JobResources(per_input_mb=6, runtime=30),
    "analyses": JobResources(per_input_mb=8),
    "score": JobResources(runtime=30),
    "score_test_set": JobResources(runtime=30),
    # a detector's jobs (detect, calibrate, predict_test_set, train_causal_lm): the runtime where
    # its config entry gives none; its memory, threads and GPUs are its kind's
    "detector": JobResources(runtime=120),
    # a feature set's job where its config entry's resources give no memory or runtime
    "features": JobResources(per_input_mb=8, runtime=120),
}


def for_rule(rule: str) -> JobResources:
    """The rule's row, or DEFAULT."""
    return RULES.get(rule, DEFAULT)


def mem_mb(row: JobResources, input_mb: float = 0.0, threads: int = 1, attempt: int = 1) -> int:
    """What a job of the row asks: its memory, its inputs' and threads' shares, times the attempt."""
    return int((row.mem_mb + row.per_input_mb * input_mb + row.per_thread_mb * threads) * attempt)
