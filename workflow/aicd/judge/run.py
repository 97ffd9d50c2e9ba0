"""One LLM judge on every task and mode (zs, cot) it is planned for, in one job: a stratified
sample of each test split (by class, language and domain), one prompt per row, answers parsed
into predictions that the scoring stage consumes like any detector's. Unparsable answers are
abstentions: kept as rows, scored as wrong. All the job's requests go out together, so a model
served here is started once for them and batches across tasks and modes. `python -m aicd.judge`
is the command line."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass

import pandas as pd
from tqdm import tqdm

from ..common.errors import AicdError
from ..data.schema import ABSTAIN
from ..llm.client import client_from_config
from ..llm.engines import settings
from ..llm.failures import check_failures
from ..llm.local_server import model_card, request_params, serving
from ..llm.prompts import PromptSet
from .constrained import REASONING_CHARS, constraint_params
from .parse import parse_answer
from .sample import judge_sample

log = logging.getLogger("aicd.judge")


@dataclass
class JudgeRun:
    """One (task, mode) of a judge job: where its test split is, its classes, its outputs."""

    task: str
    mode: str
    test: str
    labels: list
    out: str
    report: str
    target: str = "label"
    params: dict | None = None  # sampling parameters over the judge's own, for this mode


def check_constrainable(model: dict) -> None:
    """Constrained decoding is sent as vLLM's structured outputs: a model served here by vLLM,
    or an api_base the user says is a vLLM server."""
    serve = model.get("serve")
    if serve and not model.get("api_base") and settings(model)["server"] != "vllm":
        raise AicdError(f"judge {model.get('name')}: constrained decoding needs a vLLM server (serve.server: vllm); "
                        "set constrained: false on the judge, or serve it with vLLM")
    if not serve and not model.get("api_base"):
        raise AicdError(f"judge {model.get('name')}: constrained decoding is sent as vLLM's structured outputs, which "
                        "a hosted API does not take; set constrained: false on the judge")


def judge_runs(model: dict, runs: list[JudgeRun], prompts_file: str, fraction: float, seed: int, llm: dict,
               max_rows: int | None = None, max_code_chars: int | None = None, constrained: bool = False,
               server_log: str | None = None) -> list[tuple[pd.DataFrame, dict]]:
    """(predictions: id, gold, pred, answer, status; report) for each run, in order. `max_rows`
    caps each stratified sample (seeded), `max_code_chars` cuts each program shown (counted);
    `constrained` holds every answer to the prompt's form (aicd.judge.constrained)."""
    if constrained:
        check_constrainable(model)
    prompts = PromptSet(prompts_file)
    built = [_requests(model, run, prompts, fraction, seed, max_rows, max_code_chars, constrained) for run in runs]
    requests = [r for _, _, reqs in built for r in reqs]
    order = twins_adjacent(runs, [len(reqs) for _, _, reqs in built])
    client = client_from_config(model, llm)
    with serving(client, requests, server_log, seed) as client, \
            tqdm(total=len(requests), desc=f"judge {model['name']}", mininterval=5, file=sys.stderr) as bar:
        sent = client.run([requests[i] for i in order], bar)
    results = [None] * len(requests)
    for position, i in enumerate(order):
        results[i] = sent[position]
    out, start = [], 0
    for run, (sample, cut, reqs) in zip(runs, built):
        mine = results[start:start + len(reqs)]
        start += len(reqs)
        check_failures(mine, model, f"judge ({run.task}, {run.mode})", llm.get("fail_threshold"))
        out.append(_predictions(model, run, sample, cut, reqs, mine, prompts, max_code_chars, constrained))
    return out


def twins_adjacent(runs: list[JudgeRun], sizes: list[int]) -> list[int]:
    """The order to send a job's requests in (indices into the runs' requests, concatenated): a
    row's prompt in each mode of its task one after the other. The modes' prompts share the
    program and everything before the question, so a served model computes that prefix once
    and answers the second mode from its prefix cache (judging is mostly prompt tokens). Runs of
    one task sample the same rows in the same order (aicd.judge.sample, seeded); where sizes
    differ the shorter run's rows simply run out."""
    task_rank, keys = {}, []
    for k, (run, size) in enumerate(zip(runs, sizes)):
        rank = task_rank.setdefault(run.task, len(task_rank))
        keys += [(rank, i, k) for i in range(size)]
    return sorted(range(len(keys)), key=keys.__getitem__)


def judge(model: dict, mode: str, test_path: str, labels: list[str], target: str, prompts_file: str,
          fraction: float, seed: int, llm: dict, max_rows: int | None = None, max_code_chars: int | None = None,
          params: dict | None = None, server_log: str | None = None,
          constrained: bool = False) -> tuple[pd.DataFrame, dict]:
    """One task in one mode (a library call; the workflow's job runs every task and mode at once)."""
    run = JudgeRun(task="", mode=mode, test=test_path, labels=list(labels), out="", report="", target=target,
                   params=params)
    return judge_runs(model, [run], prompts_file, fraction, seed, llm, max_rows, max_code_chars, constrained,
                      server_log)[0]


def _requests(model, run: JudgeRun, prompts: PromptSet, fraction, seed, max_rows, max_code_chars, constrained):
    test = pd.read_parquet(run.test)
    sample = judge_sample(test, fraction, seed, max_rows)
    if sample.empty:
        raise AicdError(f"judge {model['name']}: the {fraction:g} sample of {len(test)} test rows "
                        f"({run.test}) is empty; raise judging.fraction or give the task more test rows")
    sample.attrs["test_rows"] = len(test)
    description = prompts.extra["descriptions"][run.target]
    codes, cut = shown_code(sample["code"], max_code_chars)
    args = {**request_params(model, seed), **(run.params or {})}
    if constrained:
        args.update(constraint_params(list(run.labels), run.mode))
    label_list = ", ".join(run.labels)
    requests = [(prompts.messages(run.mode, description=description.strip(), language=r.language or "source",
                                  labels=label_list, code=code), args)
                for r, code in zip(sample.itertuples(index=False), codes)]
    return sample, cut, requests


def _predictions(model, run: JudgeRun, sample, cut, requests, results, prompts, max_code_chars, constrained):
    preds = [parse_answer(r["text"], list(run.labels)) if r["status"] != "error" else ABSTAIN for r in results]
    out = pd.DataFrame({"id": sample["id"].to_numpy(), "gold": sample["target"].to_numpy(), "pred": preds,
                        "answer": [r["text"] for r in results], "status": [r["status"] for r in results]})
    abstentions = int((out["pred"] == ABSTAIN).sum())
    params = requests[0][1] if requests else {}
    report = {"task": run.task, "judge": model["name"], "mode": run.mode, "prompt_id": prompts.prompt_id(run.mode),
              "test_rows": sample.attrs["test_rows"], "judged": len(out), "abstentions": abstentions,
              "parsed": len(out) - abstentions, "parse_rate": (len(out) - abstentions) / max(1, len(out)),
              "constrained": bool(constrained),
              "reasoning_chars": REASONING_CHARS if constrained and run.mode == "cot" else None,
              "abstention_example": next((r["text"][:300] for r, p in zip(results, preds)
                                          if p == ABSTAIN and r["status"] != "error"), None),
              "code_cut_to_chars": max_code_chars, "programs_cut": cut, "params": params,
              "errors": int((out["status"] == "error").sum()),
              "requests_sent": int(sum(r.get("attempts") or 0 for r in results)),
              "prompt_tokens": int(sum(r["prompt_tokens"] for r in results)),
              "completion_tokens": int(sum(r["completion_tokens"] for r in results)),
              "cost": float(sum(r["cost"] for r in results)), "model_card": model_card(model)}
    log.info("%s %s: judged %d of %d test rows; %d abstentions (unparseable answers, scored as wrong)", run.task,
             run.mode, len(out), report["test_rows"], abstentions)
    return out, report


def shown_code(codes: pd.Series, max_chars: int | None) -> tuple[list[str], int]:
    """The programs as the judge sees them: cut to `max_chars` (a small model's context and
    the run's time), with how many were cut."""
    codes = [str(c) for c in codes]
    if not max_chars:
        return codes, 0
    return [c[:max_chars] for c in codes], sum(len(c) > max_chars for c in codes)
