"""How much kept code the packaged local model (SmolLM2-135M-Instruct) writes per second and per
CPU-second, protocol by protocol: the workflow's own server (aicd.llm.local_server), client,
prompts and generation code (aicd.generate), then the dataset stage's code checks and Table 3
filters (aicd.normalize.rows.normalize_table) on what it wrote. One server serves every protocol
in turn, so each protocol's figures are its own; its CPU is every process of the server's
process group (transformers serve runs the model in a child process).

    .venv/bin/python benchmarks/local_generation.py \\
        --source trial=results/demo_llm/sources/trial.parquet \\
        --source local_code=results/demo_llm/sources/local_code.parquet \\
        --protocols '{"hybrid_rewrite": {"n": 16, "min_chars": 250, "max_chars": 700}}' \\
        [--serve '{"batching": true, "batch_tokens": 256}'] [--params '{"max_tokens": 192}'] \\
        [--concurrency 16] [--prompts config/prompts/generation.v1.yaml] [--label NAME] [--json FILE]

Printed, per protocol (and the task statements the instruction-based protocols need): requests,
completion tokens, wall and server CPU seconds, tokens per second and per server CPU-second,
requests per second, rows kept by the filters, the keep rate, and kept rows per minute (wall)
and per server CPU-minute (what an idle core would give). On a shared machine compare the CPU
figures; the wall ones carry the other load. The sources are the demo's (snakemake
--configfile config/demo.yaml config/demo_llm.yaml -- results/demo_llm/sources/trial.parquet ...)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "benchmarks"))
from local_server import group_cpu  # noqa: E402

NEEDS_STATEMENT = ("inverse_instruction", "adversarial")


def group_cpu_seconds(pgid: int) -> float:
    """user + system CPU of every live process in the process group (and their reaped children)."""
    return sum(group_cpu(pgid).values())


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def local_model(serve: dict, params: dict, concurrency: int) -> dict:
    from aicd.generate.registry import load_registry

    models = load_registry([REPO / "config" / "models.yaml", REPO / "config" / "models_local.yaml"])
    entry = models["SmolLM2-135M-Instruct"]
    return {**entry, "serve": {**entry["serve"], **serve}, "params": {**entry["params"], **params},
            "concurrency": concurrency}


def kept_by_protocol(table_path: str) -> tuple[Counter, Counter, dict]:
    """Rows the code checks and Table 3 filters keep, per protocol; reject reasons; an example of each."""
    import pandas as pd
    from aicd.normalize.rows import normalize_table

    table = pd.read_parquet(table_path)
    normalized, report = normalize_table(table, "bench", threads=1, progress=False)
    kept = Counter(table.loc[normalized["reject"].isna(), "protocol"])
    return kept, Counter(normalized["reject"].dropna()), report.get("examples", {})


def measure(label: str, run, pgid: int) -> dict:
    cpu0, own0, wall0 = group_cpu_seconds(pgid), own_cpu_seconds(), time.perf_counter()
    table = run()
    return {"label": label, "wall_s": time.perf_counter() - wall0, "server_cpu_s": group_cpu_seconds(pgid) - cpu0,
            "client_cpu_s": own_cpu_seconds() - own0, "requests": len(table),
            "completion_tokens": int(table["completion_tokens"].sum()),
            "status": dict(Counter(table["status"])) if "status" in table else {},
            "finish": dict(Counter(table["finish_reason"].astype(str))) if "finish_reason" in table else {}}


def row_of(m: dict) -> str:
    tokens, wall, cpu = m["completion_tokens"], m["wall_s"], max(m["server_cpu_s"], 1e-9)
    kept = m.get("kept")
    keep = "" if kept is None else f"{kept} | {kept / max(1, m['requests']):.0%} | {60 * kept / wall:.1f} | {60 * kept / cpu:.1f}"
    return (f"| {m['label']} | {m['requests']} | {tokens:,} | {wall:.0f} | {cpu:.0f} | {tokens / wall:.1f} | "
            f"{tokens / cpu:.1f} | {m['requests'] / wall:.3f} | {keep or '– | – | – | –'} | "
            f"{', '.join(f'{k} {v}' for k, v in sorted(m['status'].items()))} |")


HEADER = ("| protocol | requests | completion tokens | wall s | server CPU s | tokens/s | tokens per server CPU-s | "
          "requests/s | kept | keep rate | kept/min | kept per server CPU-min | statuses |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", action="append", required=True, help="NAME=PATH of a source table (repeat)")
    p.add_argument("--protocols", required=True, type=json.loads, help="as generation.protocols")
    p.add_argument("--prompts", default=str(REPO / "config" / "prompts" / "generation.v1.yaml"))
    p.add_argument("--serve", type=json.loads, default={}, help="serve settings over the registry entry's")
    p.add_argument("--params", type=json.loads, default={}, help="request params over the registry entry's")
    p.add_argument("--instruction-max-tokens", type=int, default=96)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--label", default="")
    p.add_argument("--json", default=None, help="append the figures, as one JSON line, to this file")
    p.add_argument("--keep", default=None, help="keep the generated tables in this folder")
    args = p.parse_args()

    from aicd.generate.registry import with_max_tokens
    from aicd.generate.run import generate, instructions
    from aicd.llm.local_server import LocalServer
    from aicd.outputs import beside

    model = local_model(args.serve, args.params, args.concurrency)
    work = Path(args.keep or tempfile.mkdtemp(prefix="aicd-bench-gen-"))
    work.mkdir(parents=True, exist_ok=True)
    llm = {"cache": str(work / f"cache-{time.time_ns()}.sqlite"), "max_retries": 1}
    results = []
    with LocalServer(model, work / "server.log", args.seed) as server:
        pgid = os.getpgid(server.proc.pid)
        served = {**model, "api_base": server.api_base}
        needing = {k: v for k, v in args.protocols.items() if k in NEEDS_STATEMENT}
        statements = None
        if needing:
            statements = beside(work, "instructions")
            instructor = with_max_tokens(served, args.instruction_max_tokens)
            m = measure("task statements", lambda: instructions(instructor, args.source, args.prompts, needing, llm,
                                                                args.seed, statements), pgid)
            results.append(m)
            print(row_of(m), flush=True)
        for protocol, spec in args.protocols.items():
            out = str(work / f"{protocol}.parquet")
            run = functools.partial(generate, served, args.source, args.prompts, {protocol: spec}, llm, args.seed,
                                    out, str(work / f"{protocol}.report.json"),
                                    instructions_file=statements if protocol in NEEDS_STATEMENT else None)
            m = measure(protocol, run, pgid)
            kept, rejects, examples = kept_by_protocol(out)
            m.update(kept=kept.get(protocol, 0), rejects=dict(rejects), reject_examples=examples,
                     skipped=json.loads(Path(work / f"{protocol}.report.json").read_text())["skipped_before_prompting"])
            results.append(m)
            print(row_of(m), flush=True)
    print(f"\n### {args.label or 'run'}\n\nserve {json.dumps(model['serve'], sort_keys=True)}; params "
          f"{json.dumps(model['params'], sort_keys=True)}; concurrency {args.concurrency}; load average "
          f"{os.getloadavg()[0]:.1f} at the end\n\n{HEADER}")
    for m in results:
        print(row_of(m))
    total = {k: sum(m[k] for m in results) for k in ("wall_s", "server_cpu_s", "requests", "completion_tokens")}
    kept = sum(m.get("kept") or 0 for m in results)
    print(f"\nall: {total['requests']} requests, {total['completion_tokens']:,} tokens, {kept} kept, "
          f"{total['wall_s']:.0f} s wall, {total['server_cpu_s']:.0f} server CPU-s "
          f"({60 * kept / max(1e-9, total['server_cpu_s']):.1f} kept per server CPU-minute)")
    for m in results:
        if m.get("rejects"):
            print(f"  {m['label']}: rejected {m['rejects']}; skipped before prompting {m.get('skipped')}")
    if args.json:
        with open(args.json, "a") as fh:
            fh.write(json.dumps({"label": args.label, "serve": model["serve"], "params": model["params"],
                                 "concurrency": args.concurrency, "load": os.getloadavg()[0], "results": results})
                     + "\n")


if __name__ == "__main__":
    main()
