"""python -m aicd.judge: one LLM judge on every task and mode (zs, cot) it is planned for.

Judges a stratified sample of each task's test split (by class, language and domain; 5% by
default), and writes predictions that the scoring stage consumes like any detector's, one file
per task and mode. Unparsable answers are abstentions: kept as rows, scored as wrong. Every
request goes out in one batch, so a model served here is started once.

    python -m aicd.judge --model MODEL_JSON --prompts config/prompts/judge.v2.yaml \\
        --runs '[{"task": "binary", "mode": "zs", "test": "results/splits/binary/test.parquet",
                  "labels": ["human", "machine"], "out": "zs.parquet", "report": "zs.report.json"}]'"""

from __future__ import annotations

import argparse
import sys

from ..common.defaults import schema_default
from ..common.errors import AicdError
from ..common.io import write_json, write_parquet
from ..common.stagecli import json_arg, json_list_arg, run
from ..generate.registry import servable
from ..llm.endpoint import require_endpoint
from .run import JudgeRun, judge_runs


def parse_runs(value) -> list[JudgeRun]:
    try:
        return [JudgeRun(**spec) for spec in value]
    except TypeError as err:
        raise AicdError(f"--runs: each run needs task, mode, test, labels, out and report ({err})") from None


def main(argv=None) -> None:
    # allow_abbrev off: an old `--mode` must not be read as `--model`
    parser = argparse.ArgumentParser(prog="python -m aicd.judge", description=__doc__, allow_abbrev=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, type=json_arg, help="the judge's registry entry, as JSON")
    parser.add_argument("--runs", required=True, type=json_list_arg,
                        help="JSON list of {task, mode, test, labels, out, report[, target, params]}")
    parser.add_argument("--prompts", required=True, help="config/prompts/judge.vN.yaml")
    parser.add_argument("--fraction", type=float, default=schema_default("judging.fraction"),
                        help="the share of each test split judged (default: the config's judging.fraction)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--llm", type=json_arg, default={})
    parser.add_argument("--max-rows", type=int, default=None, help="at most this many rows of each stratified sample")
    parser.add_argument("--max-code-chars", type=int, default=None, help="cut each program to this many characters")
    parser.add_argument("--constrained", action="store_true",
                        help="hold every answer to the prompt's form (vLLM's structured outputs)")
    parser.add_argument("--server-log", help="the log of the local server, for a judge served here (serve:)")
    args = parser.parse_args(argv)
    require_endpoint(args.model, "judge", servable=servable)
    runs = parse_runs(args.runs)
    results = judge_runs(args.model, runs, args.prompts, args.fraction, args.seed, args.llm, max_rows=args.max_rows,
                         max_code_chars=args.max_code_chars, constrained=args.constrained,
                         server_log=args.server_log)
    for one, (out, report) in zip(runs, results):
        write_parquet(out, one.out)
        write_json(report, one.report)


if __name__ == "__main__":
    sys.exit(run(main))
