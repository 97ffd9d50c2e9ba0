"""python -m aicd.generate: LLM generation through litellm.

  instructions  the instructor model turns sampled human programs into task statements
                (for the inverse-instruction and adversarial protocols)
  generate      one generator model writes code under every configured protocol

Every request goes through the project's request cache: a rerun sends only what has not
finished before. Rows out = prompts in (failed requests are rows with status "error")."""

from __future__ import annotations

import argparse
import sys

from ..common.errors import AicdError
from ..common.stagecli import json_arg, run
from ..llm.endpoint import require_endpoint
from .protocols import PROTOCOL_LABELS
from .registry import servable
from .run import generate, instructions


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
    parser.add_argument("--server-log", help="the log of the local server, for a model served here (serve:)")
    args = parser.parse_args(argv)
    require_endpoint(args.model, "generator" if args.mode == "generate" else "instructor", servable=servable)
    unknown = set(args.protocols) - set(PROTOCOL_LABELS)
    if unknown:
        raise AicdError(f"unknown protocol(s) {sorted(unknown)}; use {', '.join(PROTOCOL_LABELS)}")
    common = {"model": args.model, "sources": args.source, "prompts_file": args.prompts, "protocols": args.protocols,
                  "llm": args.llm, "seed": args.seed, "out": args.out, "server_log": args.server_log}
    if args.mode == "instructions":
        instructions(**common)
    else:
        if not args.report:
            parser.error("generate needs --report")
        generate(**common, report_path=args.report, instructions_file=args.instructions)


if __name__ == "__main__":
    sys.exit(run(main))
