"""One LLM judge on one task in one mode (zs or cot): a stratified sample of the test split
(by class, language and domain), one prompt per row, answers parsed into predictions that the
scoring stage consumes like any detector's. Unparsable answers are abstentions: kept as rows,
scored as wrong. `python -m aicd.judge` is the command line."""

from __future__ import annotations

import logging
import sys

import pandas as pd
from tqdm import tqdm

from ..errors import AicdError
from ..llm.client import client_from_config
from ..llm.failures import check_failures
from ..llm.prompts import PromptSet
from ..schema import ABSTAIN
from .parse import parse_answer
from .sample import judge_sample

log = logging.getLogger("aicd.judge")


def judge(model: dict, mode: str, test_path: str, labels: list[str], target: str, prompts_file: str,
          fraction: float, seed: int, llm: dict) -> tuple[pd.DataFrame, dict]:
    """(predictions: id, gold, pred, answer, status; report: counts, tokens, cost)."""
    test = pd.read_parquet(test_path)
    sample = judge_sample(test, fraction, seed)
    if sample.empty:
        raise AicdError(f"judge {model['name']}: the {fraction:g} sample of {len(test)} test rows "
                        f"({test_path}) is empty; raise judging.fraction or give the task more test rows")
    prompts = PromptSet(prompts_file)
    description = prompts.extra["descriptions"][target]
    label_list = ", ".join(labels)
    requests = [(prompts.messages(mode, description=description.strip(), language=r.language or "source",
                                  labels=label_list, code=r.code), model["params"])
                for r in sample.itertuples(index=False)]
    client = client_from_config(model, llm)
    with tqdm(total=len(requests), desc=f"judge {model['name']} {mode}", mininterval=5, file=sys.stderr) as bar:
        results = client.run(requests, bar)
    check_failures(results, model, f"judge ({mode})", llm.get("fail_threshold"))
    preds = [parse_answer(r["text"], labels) if r["status"] != "error" else ABSTAIN for r in results]
    out = pd.DataFrame({"id": sample["id"].to_numpy(), "gold": sample["target"].to_numpy(), "pred": preds,
                        "answer": [r["text"] for r in results], "status": [r["status"] for r in results]})
    report = {"judge": model["name"], "mode": mode, "prompt_id": prompts.prompt_id(mode),
              "test_rows": len(test), "judged": len(out), "abstentions": int((out["pred"] == ABSTAIN).sum()),
              "errors": int((out["status"] == "error").sum()), "requests_sent": client.sent,
              "prompt_tokens": int(sum(r["prompt_tokens"] for r in results)),
              "completion_tokens": int(sum(r["completion_tokens"] for r in results)),
              "cost": float(sum(r["cost"] for r in results))}
    log.info("judged %d of %d test rows; %d abstentions", len(out), len(test), report["abstentions"])
    return out, report
