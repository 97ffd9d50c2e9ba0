"""python -m aicd.generate: LLM generation through litellm.

  instructions  the instructor model turns sampled human programs into task statements
                (for the inverse-instruction and adversarial protocols)
  generate      one generator model writes code under every configured protocol

Every request goes through the project's request cache: a rerun sends only what has not
finished before. Rows out = prompts in (failed requests are rows with status "error")."""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from ..stagecli import json_arg, run
from ..errors import AicdError
from ..io import write_json, write_parquet
from ..llm.client import client_from_config
from ..llm.endpoint import require_endpoint
from ..llm.failures import check_failures
from ..llm.prompts import PromptSet
from .protocols import NEEDS_INSTRUCTION, PROTOCOL_LABELS, build_requests, protocol_rows

log = logging.getLogger("aicd.generate")


def human_rows(path: str) -> pd.DataFrame:
    rows = pd.read_parquet(path)
    human = rows[rows["label"] == "human"]
    if human.empty:
        raise AicdError(f"{path} has no human rows to generate from")
    return human


def source_tables(values: list[str]) -> dict[str, pd.DataFrame]:
    """--source NAME=PATH (or a bare PATH, named after its file) -> {name: human rows}."""
    tables = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep:
            name, path = Path(value).stem, value
        tables[name] = human_rows(path)
    return tables


def _progress(total: int, desc: str):
    return tqdm(total=total, desc=desc, unit="req", mininterval=5, file=sys.stderr)


def instructions(args) -> None:
    tables = source_tables(args.source)
    prompts = PromptSet(args.prompts)
    wanted = pd.concat([protocol_rows(tables, p, args.protocols[p], args.seed)
                        for p in NEEDS_INSTRUCTION if p in args.protocols]).drop_duplicates("id")
    name = "inverse_instruction/instructor"
    requests = [(prompts.messages(name, language=r.language or "", code=r.code), args.model["params"])
                for r in wanted.itertuples(index=False)]
    client = client_from_config(args.model, args.llm)
    with _progress(len(requests), "instructions") as bar:
        results = client.run(requests, bar)
    check_failures(results, args.model, "instruction", args.llm.get("fail_threshold"))
    out = pd.DataFrame({"source_sample_id": wanted["id"].to_numpy(),
                        "instruction": [r["text"].strip() if r["status"] == "ok" else None for r in results],
                        "status": [r["status"] for r in results], "error": [r["error"] for r in results],
                        "prompt_id": prompts.prompt_id(name), "instructor": args.model["name"],
                        "prompt_tokens": [r["prompt_tokens"] for r in results],
                        "completion_tokens": [r["completion_tokens"] for r in results],
                        "cost": [r["cost"] for r in results]})
    write_parquet(out, args.out)
    log.info("instructions: %d rows, %d ok, %d requests sent", len(out), (out["status"] == "ok").sum(), client.sent)


def generate(args) -> None:
    tables = source_tables(args.source)
    prompts = PromptSet(args.prompts)
    model = args.model
    instr = {}
    if args.instructions:
        table = pd.read_parquet(args.instructions)
        instr = dict(zip(table["source_sample_id"], table["instruction"]))
    planned, skipped = [], {}
    for protocol, spec in args.protocols.items():
        rows = protocol_rows(tables, protocol, spec, args.seed)
        reqs, why = build_requests(protocol, rows, prompts, instr)
        planned += [(protocol, *r) for r in reqs]
        for reason, n in why.items():
            skipped[f"{protocol}:{reason}"] = n
    params = model["params"]
    client = client_from_config(model, args.llm)
    with _progress(len(planned), model["name"]) as bar:
        results = client.run([(messages, params) for _, _, _, messages in planned], bar)
    failed = check_failures(results, model, "generation", args.llm.get("fail_threshold"))
    records = []
    for (protocol, row, prompt_id, _), res in zip(planned, results):
        rid = hashlib.sha256(f"{model['name']}\0{prompt_id}\0{row.id}".encode()).hexdigest()[:16]
        records.append({
            "id": rid, "code": res["code"], "label": PROTOCOL_LABELS[protocol], "language": row.language,
            "domain": row.domain, "source": row.source, "generator": model["name"], "family": model["family"],
            "protocol": protocol, "problem_id": row.problem_id, "subset": None,
            "prompt_id": prompt_id, "source_sample_id": row.id, "litellm_model": model["litellm_model"],
            "params": json.dumps(params, sort_keys=True), "status": res["status"], "error": res["error"],
            "finish_reason": res["finish_reason"], "prompt_tokens": res["prompt_tokens"],
            "completion_tokens": res["completion_tokens"], "cost": res["cost"], "latency_s": res["latency_s"],
            "attempts": res["attempts"], "cached": res["cached"], "raw": res["text"],
            # the problem's test cases (CodeNet), for the sandbox's `passes` level: a rewrite,
            # completion or solution of the same problem is judged by the same tests
            "tests": _tests_of(row),
        })
    out = pd.DataFrame.from_records(records)
    write_parquet(out, args.out)
    report = {
        "model": model["name"], "family": model["family"], "rows": len(out), "requests_sent": client.sent,
        "failed_requests": failed,
        "skipped_before_prompting": skipped,
        "status": out["status"].value_counts().to_dict() if len(out) else {},
        "by_protocol": out.groupby("protocol").size().to_dict() if len(out) else {},
        "prompt_tokens": int(out["prompt_tokens"].sum()) if len(out) else 0,
        "completion_tokens": int(out["completion_tokens"].sum()) if len(out) else 0,
        "cost": float(out["cost"].sum()) if len(out) else 0.0,
    }
    write_json(report, args.report)
    log.info("%s: %d rows (%s), %d requests sent, cost %.4f", model["name"], len(out), report["status"],
             client.sent, report["cost"])


def _tests_of(row) -> str | None:
    tests = getattr(row, "tests", None)
    return tests if isinstance(tests, str) and tests else None


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.generate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["instructions", "generate"])
    parser.add_argument("--model", required=True, type=json_arg, help="the model's registry entry, as JSON")
    parser.add_argument("--source", required=True, action="append",
                        help="NAME=PATH of a source table with human rows (parquet); repeat for several. "
                             "A protocol prompts from the sources its spec names (all given, by default)")
    parser.add_argument("--prompts", required=True, help="prompt file (config/prompts/generation.vN.yaml)")
    parser.add_argument("--protocols", required=True, type=json_arg, help='{"protocol": {"n": rows, "sources": [names]}}')
    parser.add_argument("--llm", type=json_arg, default={}, help="client settings: cache, concurrency, timeout, retries")
    parser.add_argument("--instructions", help="generate: the instructions table")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--report", help="generate: JSON report (tokens, cost, statuses)")
    args = parser.parse_args(argv)
    require_endpoint(args.model, "generator" if args.mode == "generate" else "instructor")
    unknown = set(args.protocols) - set(PROTOCOL_LABELS)
    if unknown:
        raise AicdError(f"unknown protocol(s) {sorted(unknown)}; use {', '.join(PROTOCOL_LABELS)}")
    if args.mode == "instructions":
        instructions(args)
    else:
        if not args.report:
            parser.error("generate needs --report")
        generate(args)


if __name__ == "__main__":
    sys.exit(run(main))
