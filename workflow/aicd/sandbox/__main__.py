"""python -m aicd.sandbox: the execution sandbox.

  images    build (if missing) the base and sandbox images; prints the sandbox image tag
  execute   compile and run every program of a sample table; one result row per input row"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys

import pandas as pd
from tqdm import tqdm

from ..stagecli import json_arg, run
from ..errors import AicdError
from ..io import write_json, write_parquet, write_text
from .images import ensure_images
from .pool import Limits, SandboxPool, docker_available

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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.sandbox", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    img = sub.add_parser("images", help="build the base and sandbox images if missing")
    img.add_argument("--base", choices=["debootstrap", "registry"], default="debootstrap")
    img.add_argument("--base-image", default="debian:bookworm-slim", help="registry base (with --base registry)")
    img.add_argument("--mirror", default=None, help="Debian mirror for debootstrap")
    img.add_argument("--out", help="write the tag to this file")
    img.add_argument("--keep-old", action="store_true",
                     help="keep aicd-sandbox images of older build contexts (removed by default: ~5 GB each on vfs)")
    ex = sub.add_parser("execute", help="run every program of a table")
    ex.add_argument("--input", required=True, help="sample table (parquet): id, code, language[, generator, tests]")
    ex.add_argument("--name", required=True)
    ex.add_argument("--image", required=True, help="sandbox image tag, or a file holding it")
    ex.add_argument("--spec", type=json_arg, default={}, help='{"workers", "recycle_after", "sample", "limits": {...}}')
    ex.add_argument("--out", required=True)
    ex.add_argument("--report", required=True)
    args = parser.parse_args(argv)
    if not docker_available():
        raise AicdError("no Docker daemon answers: install docker.io and start dockerd (see README, Sandbox)")
    if args.cmd == "images":
        tag = ensure_images(args.base, args.base_image, args.mirror, keep_old=args.keep_old)
        print(tag)
        if args.out:
            write_text(tag + "\n", args.out)
        return
    image = args.image
    if image.endswith(".txt"):
        image = open(image).read().strip()
    rows = pd.read_parquet(args.input)
    rows_in_table = len(rows)
    missing = {"id", "code", "language"} - set(rows.columns)
    if missing:
        raise AicdError(f"{args.input}: no {', '.join(sorted(missing))} column; execute needs id, code and language "
                        f"(columns found: {', '.join(map(str, rows.columns))})")
    sample = args.spec.get("sample")
    if sample and len(rows) > sample:
        rows = rows.sort_values("id").head(int(sample))  # ids are content hashes: a fixed sample
    try:
        limits = Limits(**(args.spec.get("limits") or {}))
    except TypeError as err:
        raise AicdError(f"execution.limits: {err}") from None
    if rows.empty:  # nothing to run is a legitimate, empty result: no container is started
        log.warning("%s: the table has no rows; writing an empty execution table", args.name)
        results = pd.DataFrame(columns=RESULT_COLUMNS)
        write_parquet(results, args.out)
        write_json({**summary(results, args.name), "containers_started": 0, "containers_recycled": 0,
                    "rows_in_table": rows_in_table}, args.report)
        return
    with SandboxPool(image, size=int(args.spec.get("workers", 1)), recycle_after=int(args.spec.get("recycle_after", 200)),
                     limits=limits, job=f"execute:{args.name}") as pool, \
            tqdm(total=len(rows), desc=f"execute {args.name}", unit="prog", mininterval=5, file=sys.stderr) as bar:
        stop_on_sigterm(pool)
        if pool.stale_removed:
            log.warning("removed %d sandbox container(s) left by a killed job", len(pool.stale_removed))
        results = execute_table(rows, pool, bar)
        started, recycled = pool.started, pool.recycled
    assert len(results) == len(rows), "a program lost its row"
    write_parquet(results, args.out)
    write_json({**summary(results, args.name), "containers_started": started, "containers_recycled": recycled,
                "rows_in_table": rows_in_table}, args.report)


def stop_on_sigterm(pool: SandboxPool) -> None:
    """SIGTERM (snakemake stopping, a cluster pre-empting the job) removes the pool's
    containers first, then exits; nothing is written, so the job reruns from scratch."""
    def handler(signum, _frame):
        log.warning("stopping on signal %d: removing the sandbox containers", signum)
        pool.close()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


if __name__ == "__main__":
    sys.exit(run(main))
