"""Running a sample table's programs in the sandbox pool: one result row per input row (status,
exit code, times, memory, tests passed, capped output), and the per-table summary (status
counts; built and passed rates per language x generator)."""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
from contextlib import contextmanager

import pandas as pd
from tqdm import tqdm

from ..common.errors import AicdError
from .engine import Engine
from .images import image_exists
from .pool import Limits, SandboxPool

log = logging.getLogger("aicd.sandbox")

EXCERPT = 1000


RESULT_COLUMNS = ["id", "language", "generator", "status", "compiled", "exit_code", "wall_s", "cpu_s", "max_rss_kb",
                  "tests_total", "tests_passed", "stdout", "stderr", "error"]


def execute_table(rows: pd.DataFrame, pool: SandboxPool, progress=None) -> pd.DataFrame:
    items = []
    for r in rows.itertuples(index=False):
        tests = getattr(r, "tests", None)
        tests = json.loads(tests) if isinstance(tests, str) else (list(tests) if tests is not None else None)
        items.append((r.language, r.code, tests))
    results = pool.run_many(items, progress)
    records = []
    for r, res in zip(rows.itertuples(index=False), results):
        runs = res.get("tests") or []
        first = runs[0] if runs else {}
        judged = [t["passed"] for t in runs if t.get("passed") is not None]
        records.append({
            "id": r.id, "language": r.language, "generator": getattr(r, "generator", None),
            "status": res["status"], "compiled": None if res.get("compile") is None else res["compile"]["exit_code"] == 0,
            "exit_code": first.get("exit_code"), "wall_s": sum(t.get("wall_s", 0.0) for t in runs),
            "cpu_s": sum(t.get("cpu_s", 0.0) for t in runs), "max_rss_kb": max((t.get("max_rss_kb", 0) for t in runs), default=0),
            "tests_total": len(judged), "tests_passed": sum(judged),
            "stdout": (first.get("stdout") or "")[:EXCERPT], "stderr": ((res.get("compile") or {}).get("stderr") or first.get("stderr") or "")[:EXCERPT],
            "error": res.get("error"),
        })
    return pd.DataFrame.from_records(records, columns=RESULT_COLUMNS)


BUILT = {"compiled", "ok", "wrong_answer", "runtime_error", "timeout", "memory_limit", "output_limit"}


def summary(results: pd.DataFrame, name: str) -> dict:
    """Status counts, and per language x generator the rate that applies to each program:
    `built` over every program (it compiled, or passed its syntax check), `passed` over the
    programs that ran against tests (status ok)."""
    if results.empty:
        return {"name": name, "rows": 0, "status": {}, "rates": {}}
    tested = results["tests_total"].fillna(0).astype(int) > 0
    frame = results.assign(built=results["status"].isin(BUILT), tested=tested,
                           passed=tested & results["status"].eq("ok"),
                           generator=results["generator"].fillna("(unknown)"))
    rates = {}
    for (lang, gen), g in frame.groupby(["language", "generator"]):
        n_tested = int(g["tested"].sum())
        rates[f"{lang} / {gen}"] = {"programs": len(g), "built": round(float(g["built"].mean()), 4), "tested": n_tested,
                                    "passed": round(float(g["passed"].sum() / n_tested), 4) if n_tested else None}
    return {"name": name, "rows": len(results), "status": results["status"].value_counts().to_dict(), "rates": rates}


def resolve_image(image: str, engine: Engine) -> str:
    """A sandbox image tag, or a file holding one (results/sandbox/image.txt); it must exist."""
    tag = open(image).read().strip() if image.endswith(".txt") else image
    if not image_exists(tag, engine):  # e.g. removed by `images --prune-old` from another checkout
        hint = f"delete {image} so the workflow builds it again, or " if image.endswith(".txt") else ""
        where = "this Docker daemon" if engine.name == "docker" else f"this user's {engine.name}"
        raise AicdError(f"the sandbox image {tag} does not exist on {where}: {hint}"
                        f"run python -m aicd.sandbox images --engine {engine.name}")
    return tag


def execute_file(path: str, name: str, image: str, spec: dict, engine: Engine | str = "auto") -> tuple[pd.DataFrame, dict]:
    """(result rows, report) for every program of the sample table at `path` (or its fixed
    sample: spec "sample"), run in a pool of spec "workers" containers of `image` on `engine`."""
    rows = pd.read_parquet(path)
    rows_in_table = len(rows)
    missing = {"id", "code", "language"} - set(rows.columns)
    if missing:
        raise AicdError(f"{path}: no {', '.join(sorted(missing))} column; execute needs id, code and language "
                        f"(columns found: {', '.join(map(str, rows.columns))})")
    sample = spec.get("sample")
    if sample and len(rows) > sample:
        rows = rows.sort_values("id").head(int(sample))  # ids are content hashes: a fixed sample
    try:
        limits = Limits(**(spec.get("limits") or {}))
    except TypeError as err:
        raise AicdError(f"execution.limits: {err}") from None
    if rows.empty:  # nothing to run is a legitimate, empty result: no container is started
        log.warning("%s: the table has no rows; writing an empty execution table", name)
        results = pd.DataFrame(columns=RESULT_COLUMNS)
        return results, {**summary(results, name), "containers_started": 0, "containers_recycled": 0,
                         "rows_in_table": rows_in_table}
    pool = SandboxPool(image, size=int(spec.get("workers", 1)), recycle_after=int(spec.get("recycle_after", 200)),
                       limits=limits, job=f"execute:{name}", engine=engine)
    # the handler outlives the pool's own close, so a SIGTERM during that close still cleans up
    with stop_on_sigterm(pool), pool, \
            tqdm(total=len(rows), desc=f"execute {name}", unit="prog", mininterval=5, file=sys.stderr) as bar:
        if pool.stale_removed:
            log.warning("removed %d sandbox container(s) left by a killed job", len(pool.stale_removed))
        results = execute_table(rows, pool, bar)
        started, recycled = pool.started, pool.recycled
    assert len(results) == len(rows), "a program lost its row"
    return results, {**summary(results, name), "containers_started": started, "containers_recycled": recycled,
                     "rows_in_table": rows_in_table}


@contextmanager
def stop_on_sigterm(pool: SandboxPool):
    """While the pool runs, SIGTERM (snakemake stopping, a cluster pre-empting the job) removes
    its containers first, then exits; nothing is written, so the job reruns from scratch. The
    previous handler is restored afterwards; outside the main thread (where Python allows no
    signal handlers) the pool's own cleanup on exit is all there is."""
    def handler(signum, _frame):
        log.warning("stopping on signal %d: removing the sandbox containers", signum)
        pool.close()
        raise SystemExit(128 + signum)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
