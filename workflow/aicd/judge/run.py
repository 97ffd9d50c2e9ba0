"""One LLM judge on one task in one mode (zs or cot): a stratified sample of the test split
(by class, language and domain), one prompt per row, answers parsed into predictions that the
scoring stage consumes like any detector's. Unparsable answers are abstentions: kept as rows,
scored as wrong. `python -m aicd.judge` is the command line."""

from __future__ import annotations

import logging
import sys

import pandas as pd
from tqdm import tqdm

from ..common.errors import AicdError
from ..data.schema import ABSTAIN
from ..llm.client import client_from_config
from ..llm.failures import check_failures
from ..llm.local_server import model_card, request_params, serving
from ..llm.prompts import PromptSet
from .parse import parse_answer
from .sample import judge_sample

log = logging.getLogger("aicd.judge")


def judge(model: dict, mode: str, test_path: str, labels: list[str], target: str, prompts_file: str,
          fraction: float, seed: int, llm: dict, max_rows: int | None = None, max_code_chars: int | None = None,
          params: dict | None = None, server_log: str | None = None) -> tuple[pd.DataFrame, dict]:
    """(predictions: id, gold, pred, answer, status; report: counts, tokens, cost). `max_rows`
    caps the stratified sample (seeded), `max_code_chars` cuts each program shown (counted),
    `params` override the judge's sampling parameters for this mode."""
    test = pd.read_parquet(test_path)
    sample = judge_sample(test, fraction, seed, max_rows)
    if sample.empty:
        raise AicdError(f"judge {model['name']}: the {fraction:g} sample of {len(test)} test rows "
                        f"({test_path}) is empty; raise judging.fraction or give the task more test rows")
    prompts = PromptSet(prompts_file)
    description = prompts.extra["descriptions"][target]
    label_list = ", ".join(labels)
    codes, cut = shown_code(sample["code"], max_code_chars)
    request_args = {**request_params(model, seed), **(params or {})}
    requests = [(prompts.messages(mode, description=description.strip(), language=r.language or "source",
                                  labels=label_list, code=code), request_args)
                for r, code in zip(sample.itertuples(index=False), codes)]
    client = client_from_config(model, llm)
    with serving(client, requests, server_log, seed) as client, \
            tqdm(total=len(requests), desc=f"judge {model['name']} {mode}", mininterval=5, file=sys.stderr) as bar:
        results = client.run(requests, bar)
    check_failures(results, model, f"judge ({mode})", llm.get("fail_threshold"))
    preds = [parse_answer(r["text"], labels) if r["status"] != "error" else ABSTAIN for r in results]
    out = pd.DataFrame({"id": sample["id"].to_numpy(), "gold": sample["target"].to_numpy(), "pred": preds,
                        "answer": [r["text"] for r in results], "status": [r["status"] for r in results]})
    report = {"judge": model["name"], "mode": mode, "prompt_id": prompts.prompt_id(mode),
              "test_rows": len(test), "judged": len(out), "abstentions": int((out["pred"] == ABSTAIN).sum()),
              "abstention_example": next((r["text"][:300] for r, p in zip(results, preds)
                                          if p == ABSTAIN and r["status"] != "error"), None),
              "code_cut_to_chars": max_code_chars, "programs_cut": cut, "params": request_args,
              "errors": int((out["status"] == "error").sum()), "requests_sent": client.sent,
              "prompt_tokens": int(sum(r["prompt_tokens"] for r in results)),
              "completion_tokens": int(sum(r["completion_tokens"] for r in results)),
              "cost": float(sum(r["cost"] for r in results)), "model_card": model_card(model)}
    log.info("judged %d of %d test rows; %d abstentions (unparseable answers, scored as wrong)", len(out), len(test),
             report["abstentions"])
    return out, report


def shown_code(codes: pd.Series, max_chars: int | None) -> tuple[list[str], int]:
    """The programs as the judge sees them: cut to `max_chars` (a small model's context and
    the run's time), with how many were cut."""
    codes = [str(c) for c in codes]
    if not max_chars:
        return codes, 0
    return [c[:max_chars] for c in codes], sum(len(c) > max_chars for c in codes)
