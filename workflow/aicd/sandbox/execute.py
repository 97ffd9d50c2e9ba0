"""Running a sample table's programs in the sandbox pool: one result row per input row (status,
exit code, times, memory, tests passed, capped output), and the per-table summary (status
counts; built and passed rates per language x generator)."""

from __future__ import annotations

import json

import pandas as pd

from .pool import SandboxPool

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
