"""python -m aicd.judge: one LLM judge on one task in one mode (zs or cot).

Judges a stratified sample of the test split (by class, language and domain; 5% by
default), and writes predictions that the scoring stage consumes like any detector's.
Unparsable answers are abstentions: kept as rows, scored as wrong."""

from __future__ import annotations

import argparse
import logging
import sys

import pandas as pd
from tqdm import tqdm

from ..stagecli import json_arg, run
from ..errors import AicdError
from ..io import write_json, write_parquet
from ..llm.client import client_from_config
from ..llm.endpoint import require_endpoint
from ..llm.failures import check_failures
from ..llm.prompts import PromptSet
from ..schema import ABSTAIN
from .parse import parse_answer
from .sample import judge_sample

log = logging.getLogger("aicd.judge")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.judge", description=__doc__)
    parser.add_argument("--model", required=True, type=json_arg, help="the judge's registry entry, as JSON")
    parser.add_argument("--mode", required=True, choices=["zs", "cot"])
    parser.add_argument("--test", required=True, help="the task's test.parquet")
    parser.add_argument("--labels", nargs="+", required=True, help="the task's classes")
    parser.add_argument("--target", default="label", choices=["label", "family"])
    parser.add_argument("--prompts", required=True, help="config/prompts/judge.vN.yaml")
    parser.add_argument("--fraction", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--llm", type=json_arg, default={})
    parser.add_argument("--out", required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args(argv)
    require_endpoint(args.model, "judge")

    test = pd.read_parquet(args.test)
    sample = judge_sample(test, args.fraction, args.seed)
    if sample.empty:
        raise AicdError(f"judge {args.model['name']}: the {args.fraction:g} sample of {len(test)} test rows "
                        f"({args.test}) is empty; raise judging.fraction or give the task more test rows")
    prompts = PromptSet(args.prompts)
    description = prompts.extra["descriptions"][args.target]
    labels = ", ".join(args.labels)
    requests = [(prompts.messages(args.mode, description=description.strip(), language=r.language or "source",
                                  labels=labels, code=r.code), args.model["params"])
                for r in sample.itertuples(index=False)]
    client = client_from_config(args.model, args.llm)
    with tqdm(total=len(requests), desc=f"judge {args.model['name']} {args.mode}", mininterval=5, file=sys.stderr) as bar:
        results = client.run(requests, bar)
    check_failures(results, args.model, f"judge ({args.mode})", args.llm.get("fail_threshold"))
    preds = [parse_answer(r["text"], args.labels) if r["status"] != "error" else ABSTAIN for r in results]
    out = pd.DataFrame({"id": sample["id"].to_numpy(), "gold": sample["target"].to_numpy(), "pred": preds,
                        "answer": [r["text"] for r in results], "status": [r["status"] for r in results]})
    write_parquet(out, args.out)
    report = {"judge": args.model["name"], "mode": args.mode, "prompt_id": prompts.prompt_id(args.mode),
              "test_rows": len(test), "judged": len(out), "abstentions": int((out["pred"] == ABSTAIN).sum()),
              "errors": int((out["status"] == "error").sum()), "requests_sent": client.sent,
              "prompt_tokens": int(sum(r["prompt_tokens"] for r in results)),
              "completion_tokens": int(sum(r["completion_tokens"] for r in results)),
              "cost": float(sum(r["cost"] for r in results))}
    write_json(report, args.report)
    log.info("judged %d of %d test rows; %d abstentions", len(out), len(test), report["abstentions"])


if __name__ == "__main__":
    sys.exit(run(main))
