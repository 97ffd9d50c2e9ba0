"""python -m aicd.judge: one LLM judge on one task in one mode (zs or cot).

Judges a stratified sample of the test split (by class, language and domain; 5% by
default), and writes predictions that the scoring stage consumes like any detector's.
Unparsable answers are abstentions: kept as rows, scored as wrong."""

from __future__ import annotations

import argparse
import sys

from ..common.io import write_json, write_parquet
from ..common.stagecli import json_arg, run
from ..generate.registry import servable
from ..llm.endpoint import require_endpoint
from .run import judge


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.judge", description=__doc__)
    parser.add_argument("--model", required=True, type=json_arg, help="the judge's registry entry, as JSON")
    parser.add_argument("--mode", required=True, choices=["zs", "cot"])
    parser.add_argument("--test", required=True, help="the task's test.parquet")
    parser.add_argument("--task", default=None, help="the task's name (said in the report)")
    parser.add_argument("--labels", nargs="+", required=True, help="the task's classes")
    parser.add_argument("--target", default="label", choices=["label", "family"])
    parser.add_argument("--prompts", required=True, help="config/prompts/judge.vN.yaml")
    parser.add_argument("--fraction", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--llm", type=json_arg, default={})
    parser.add_argument("--max-rows", type=int, default=None, help="at most this many rows of the stratified sample")
    parser.add_argument("--max-code-chars", type=int, default=None, help="cut each program to this many characters")
    parser.add_argument("--params", type=json_arg, default={}, help="sampling parameters for this mode (JSON)")
    parser.add_argument("--server-log", help="the log of the local server, for a judge served here (serve:)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args(argv)
    require_endpoint(args.model, "judge", servable=servable)
    out, report = judge(args.model, args.mode, args.test, args.labels, args.target, args.prompts, args.fraction,
                        args.seed, args.llm, max_rows=args.max_rows, max_code_chars=args.max_code_chars,
                        params=args.params, server_log=args.server_log)
    write_parquet(out, args.out)
    write_json({"task": args.task, **report}, args.report)


if __name__ == "__main__":
    sys.exit(run(main))
