# Every rule's threads and resources (common.smk's setup first): from the one table of job
# resources, aicd.plan.resources (`res()`, `rule_threads()`); a detector's and a feature set's
# jobs from what the plan decided of them (their rows, their kinds' needs, their config entries'
# `resources:`); a job that serves a local LLM adds its server's memory (aicd.llm.engines).
# Memory grows with the attempt: a job killed for memory (SLURM's OUT_OF_MEMORY) is retried with
# `retries:` from the profile at 2x, 3x...

from aicd.llm.engines import server_mem_mb
from aicd.plan import resources as job_resources


def _memory(row):
    """mem_mb for a table row: with its inputs' share (input.size_mb: known when the job is
    scheduled) or its threads' where the row has one (reading sizes costs time at planning, so
    only those rows ask)."""
    if row.per_input_mb:
        return lambda w, input, attempt: job_resources.mem_mb(row, input.size_mb, attempt=attempt)
    if row.per_thread_mb:
        return lambda w, threads, attempt: job_resources.mem_mb(row, threads=threads, attempt=attempt)
    return lambda w, attempt: job_resources.mem_mb(row, attempt=attempt)


def res(rule):
    """A rule's resources from its row of the table: memory, runtime (times the attempt) and the
    container-engine slot (`docker`) where it uses one."""
    row = job_resources.for_rule(rule)
    out = {"mem_mb": _memory(row), "runtime": lambda w, attempt: row.runtime * attempt}
    if row.engine_slots:
        out["docker"] = row.engine_slots
    return out


def rule_threads(rule):
    return job_resources.for_rule(rule).threads


def normalize_threads(w):
    """The table's threads, fewer where dataset.resources.threads says so."""
    most = rule_threads("normalize")
    return min(most, int((dataset_spec().get("resources") or {}).get("threads", most)))


def task_split_row(w):
    return job_resources.for_rule("task_split_release" if task(w).mode == "release" else "task_split")


def task_split_threads(w):
    return task_split_row(w).threads


def task_split_res():
    """A release task has no snakemake input (the release is read inside the job): its own row."""
    return {
        "mem_mb": lambda w, input, attempt: job_resources.mem_mb(task_split_row(w), input.size_mb, attempt=attempt),
        "runtime": lambda w, attempt: task_split_row(w).runtime * attempt,
    }


def detector(w):
    return PLAN.detectors[w.detector]


def detector_threads(w):
    return detector(w).threads


def detector_res():
    """Every job that runs a detector (fit, calibration, extra test sets, its causal LM) asks the
    same: the plan's memory, runtime and GPUs for it. Memory is not scaled by the input: reading
    input.size_mb costs milliseconds per job at planning (BENCHMARKS.md, planning); at the paper's
    scale the config's resources.mem_mb states it (BENCHMARKS.md, paper scale)."""
    return {
        "mem_mb": lambda w, attempt: int(detector(w).mem_mb * attempt),
        "runtime": lambda w, attempt: detector(w).runtime * attempt,
        "gpu": lambda w: detector(w).gpu,
    }


def feature_res():
    return {
        "mem_mb": lambda w, input, attempt: feature(w).job_mem_mb(input.size_mb, attempt),
        "runtime": lambda w, attempt: feature(w).runtime * attempt,
        "gpu": lambda w: feature(w).gpu,
    }


def served_here(entry):
    """A registry entry this machine serves for its jobs (serve:, no api_base): they run the server."""
    return bool(entry.get("serve")) and not entry.get("api_base")


def llm_threads(entry):
    """A job that serves its model runs its servers' threads (each replica's)."""
    if not served_here(entry):
        return 1
    return int(entry["serve"].get("threads", 1)) * int(entry["serve"].get("replicas", 1))


def llm_gpu(entry):
    """A job that serves its model on a GPU (serve.device cuda...) asks for one (config/llm_gpu.yaml)."""
    return 1 if served_here(entry) and str(entry["serve"].get("device", "cpu")).startswith("cuda") else 0


def llm_res(rule, entry_of):
    """An LLM job's resources: its row of the table, plus, where it serves its model here, the
    server's memory (aicd.llm.engines, per server) and a GPU where it serves on one. `entry_of`:
    the job's model entry, as the job runs it."""
    row = job_resources.for_rule(rule)

    def server_mb(w):
        entry = entry_of(w)
        return server_mem_mb(entry) * int(entry["serve"].get("replicas", 1)) if served_here(entry) else 0

    return {
        "mem_mb": lambda w, input, attempt: job_resources.mem_mb(row, input.size_mb, attempt=attempt)
        + server_mb(w) * attempt,
        "runtime": lambda w, attempt: row.runtime * attempt,
        "gpu": lambda w: llm_gpu(entry_of(w)),
    }
