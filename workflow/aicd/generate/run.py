"""Generation and instruction writing through litellm: source rows -> prompts -> one model's
answers, with provenance, token and cost totals. `python -m aicd.generate` is the command line.

Every request goes through the project's request cache: a rerun sends only what has not
finished before."""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from ..codetools.codetext import NO_CODE_BLOCK, has_code_block, strip_reasoning
from ..common.errors import AicdError
from ..common.io import write_json, write_parquet
from ..llm.client import client_from_config
from ..llm.failures import check_failures
from ..llm.local_server import model_card, request_params, serving
from ..llm.prompts import PromptSet
from .answers import code_before_closing_fence, cut_repeats, unopened_blocks
from .protocols import NEEDS_INSTRUCTION, PROTOCOL_LABELS, build_requests, completed, prefix_of, protocol_rows

log = logging.getLogger("aicd.generate")
# why a sampled human row gave no prompt, in words (the generation report and the card say it too)
SKIP_REASONS = {
    "no_signature_with_doc": "the docstring protocol needs a function with a docstring or a leading comment; "
                             "prompt it from a source that has them (e.g. sources: [local_code])",
    "no_instruction": "the instructor wrote no task statement for it",
    "too_few_rows": "the protocol's sources hold fewer rows that fit (min_chars, max_chars) than its n",
}


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


def instructions(model: dict, sources: list[str], prompts_file: str, protocols: dict, llm: dict, seed: int,
                 out: str, server_log: str | None = None) -> pd.DataFrame:
    """The instructor model's task statements for the protocols that need one; written to `out`."""
    tables = source_tables(sources)
    prompts = PromptSet(prompts_file)
    wanted = pd.concat([protocol_rows(tables, p, protocols[p], seed)
                        for p in NEEDS_INSTRUCTION if p in protocols]).drop_duplicates("id")
    name = "inverse_instruction/instructor"
    params = request_params(model, seed)
    requests = [(prompts.messages(name, language=r.language or "", code=r.code), params)
                for r in wanted.itertuples(index=False)]
    client = client_from_config(model, llm)
    with serving(client, requests, server_log, seed) as client, _progress(len(requests), "instructions") as bar:
        results = client.run(requests, bar)
    check_failures(results, model, "instruction", llm.get("fail_threshold"))
    table = pd.DataFrame({"source_sample_id": wanted["id"].to_numpy(),
                          # a statement cut at max_tokens still states the task: used, and counted
                          "instruction": [r["text"].strip() if r["status"] in ("ok", "truncated") else None
                                          for r in results],
                          "status": [r["status"] for r in results], "error": [r["error"] for r in results],
                          "prompt_id": prompts.prompt_id(name), "instructor": model["name"],
                          "prompt_tokens": [r["prompt_tokens"] for r in results],
                          "completion_tokens": [r["completion_tokens"] for r in results],
                          "cost": [r["cost"] for r in results]})
    write_parquet(table, out)
    log.info("instructions: %d rows, %d ok, %d cut at max_tokens (used as they are), %d requests sent", len(table),
             (table["status"] == "ok").sum(), (table["status"] == "truncated").sum(), client.sent)
    return table


def generate(model: dict, sources: list[str], prompts_file: str, protocols: dict, llm: dict, seed: int,
             out: str, report_path: str, instructions_file: str | None = None,
             server_log: str | None = None) -> pd.DataFrame:
    """One generator's code under every configured protocol, written to `out`, with its token,
    cost and status totals in `report_path`. Rows out = prompts sent (failures are "error" rows)."""
    tables = source_tables(sources)
    prompts = PromptSet(prompts_file)
    instr = {}
    if instructions_file:
        given = pd.read_parquet(instructions_file)
        instr = dict(zip(given["source_sample_id"], given["instruction"]))
    planned, params, skipped, examples = plan_requests(model, tables, prompts, protocols, instr, seed)
    requests = [(messages, params[protocol]) for protocol, _, _, messages in planned]
    client = client_from_config(model, llm)
    with serving(client, requests, server_log, seed) as client, _progress(len(planned), model["name"]) as bar:
        results = client.run(requests, bar)
    failed = check_failures(results, model, "generation", llm.get("fail_threshold"))
    results, repeats = cut_repeats(results)
    results, unopened = unopened_blocks(results)
    heads = [prefix_of(row.code) if prompts.answer(f"{protocol}/generator") == "continuation" else None
             for protocol, row, _, _ in planned]
    results, no_block = without_code_block(results, [row.language for _, row, _, _ in planned], heads)
    table = pd.DataFrame.from_records([_record(model, protocol, row, prompt_id, res, params[protocol], head)
                                       for (protocol, row, prompt_id, _), res, head in zip(planned, results, heads)])
    write_parquet(table, out)
    report = {
        "model": model["name"], "family": model["family"], "rows": len(table), "requests_sent": client.sent,
        "failed_requests": failed,
        "failed_example": next((r["error"] for r in results if r["status"] == "error"), None),
        "skipped_before_prompting": skipped,
        "skipped_examples": examples,   # the first row of each reason: "id (language): its first line"
        # answers with no fenced code block though the prompt asked for one: rows without code
        "no_code_block": no_block,
        # answers that started their program over, cut where they did (aicd.generate.answers)
        "cut_at_repeat": repeats,
        "unopened_block": unopened,  # bare code, then a closing fence: that code is the block
        "status": table["status"].value_counts().to_dict() if len(table) else {},
        "by_protocol": table.groupby("protocol").size().to_dict() if len(table) else {},
        "prompt_tokens": int(table["prompt_tokens"].sum()) if len(table) else 0,
        "completion_tokens": int(table["completion_tokens"].sum()) if len(table) else 0,
        "cost": float(table["cost"].sum()) if len(table) else 0.0,
        **request_totals(results),
        "model_card": model_card(model),
    }
    write_json(report, report_path)
    log.info("%s: %d rows (%s), %d prompts skipped before prompting (%s), %d requests sent, cost %.4f",
             model["name"], len(table), report["status"], sum(skipped.values()),
             ", ".join(f"{k} {v}" for k, v in skipped.items()) or "none", client.sent, report["cost"])
    return table


def plan_requests(model: dict, tables: dict, prompts: PromptSet, protocols: dict, instr: dict, seed: int):
    """(planned [(protocol, row, prompt_id, messages)], {protocol: params}, {protocol:reason: skipped},
    {protocol:reason: example}): every protocol's prompts, and every sampled row that gave none
    (or was missing: the sources hold fewer rows that fit than its n), logged with an example."""
    planned, params, skipped, examples = [], {}, {}, {}
    for protocol, spec in protocols.items():
        rows = protocol_rows(tables, protocol, spec, seed)
        found: dict[str, str] = {}
        reqs, why = build_requests(protocol, rows, prompts, instr, found)
        short = int(spec["n"]) - len(rows)
        if short > 0:
            reason = "no_signature_with_doc" if protocol == "docstring" else "too_few_rows"
            why[reason] = why.get(reason, 0) + short
            found.setdefault(reason, f"{len(rows)} of the {int(spec['n'])} rows asked for fit "
                                     f"({', '.join(spec.get('sources') or tables)}: {_fit(spec, protocol)})")
        planned += [(protocol, *r) for r in reqs]
        params[protocol] = protocol_params(model, spec, seed)
        for reason, n in why.items():
            skipped[f"{protocol}:{reason}"] = n
            examples[f"{protocol}:{reason}"] = found[reason]
            log.warning("%s: %d of %d %s prompts skipped (%s: %s), e.g. %s", model["name"], n, int(spec["n"]),
                        protocol, reason, SKIP_REASONS.get(reason, reason), found[reason])
    return planned, params, skipped, examples


def _record(model: dict, protocol: str, row, prompt_id: str, res: dict, params: dict, head: str | None) -> dict:
    """One generated row: its code (a continuation after the human beginning it continues) and
    provenance. What varies between two runs of the same requests (how long an answer took, how
    many tries, whether the cache gave it) is the run's, not the row's: it goes to the report
    (request_totals), so that the table, an input that results/inputs.json fingerprints, is the
    same bytes on two fresh runs and on a rerun from the request cache."""
    code = completed(head, res["code"]) if head is not None and res["status"] in ("ok", "truncated") else res["code"]
    return {
        "id": hashlib.sha256(f"{model['name']}\0{prompt_id}\0{row.id}".encode()).hexdigest()[:16],
        "code": code, "label": PROTOCOL_LABELS[protocol], "language": row.language,
        "domain": row.domain, "source": row.source, "generator": model["name"], "family": model["family"],
        "protocol": protocol, "problem_id": row.problem_id, "subset": None,
        "prompt_id": prompt_id, "source_sample_id": row.id, "litellm_model": model["litellm_model"],
        "params": json.dumps(params, sort_keys=True), "status": res["status"], "error": res["error"],
        "finish_reason": res["finish_reason"], "prompt_tokens": res["prompt_tokens"],
        "completion_tokens": res["completion_tokens"], "cost": res["cost"], "raw": res.get("raw", res["text"]),
        "cut_at_repeat": bool(res.get("cut_at_repeat")),
        # the problem's test cases (CodeNet), for the sandbox's `passes` level: a rewrite,
        # completion or solution of the same problem is judged by the same tests
        "tests": _tests_of(row),
    }


def request_totals(results: list[dict]) -> dict:
    """The run's measurements of its requests (kept out of the rows: _record)."""
    live = [r for r in results if not r.get("cached")]
    return {"answered_from_cache": len(results) - len(live),
            "request_seconds": round(sum(float(r.get("latency_s") or 0) for r in live), 3),
            "retried_requests": sum(int(r.get("attempts") or 1) > 1 for r in results)}


def _fit(spec: dict, protocol: str) -> str:
    """What a protocol's rows must be, in words (for a shortfall's example)."""
    parts = [f"{spec['min_chars']}+ characters"] if spec.get("min_chars") else []
    parts += [f"at most {spec['max_chars']} characters"] if spec.get("max_chars") else []
    parts += ["a documented function"] if protocol == "docstring" else []
    parts += [f"in {', '.join(spec['languages'])}"] if spec.get("languages") else []
    return ", ".join(parts) or "any human row"


def protocol_params(model: dict, spec: dict, seed: int) -> dict:
    """A protocol's request parameters: the model's, with the protocol's own sampling parameters
    and token cap over them where it gives them (a completion needs fewer tokens than a rewrite
    of the same program)."""
    params = {**request_params(model, seed), **(spec.get("params") or {})}
    return {**params, "max_tokens": int(spec["max_tokens"])} if spec.get("max_tokens") else params


def without_code_block(results: list[dict], languages: list, heads: list | None = None) -> tuple[list[dict], dict]:
    """Every generation prompt asks for one fenced code block. An answer without one is taken
    as code when the whole of it parses in the row's language with no error (small models
    often answer with bare code; counted as bare_code); otherwise it becomes a row with status
    no_code_block and no code, not prose taken for code. ({count, example, bare_code}).
    heads: per answer, the beginning it continues (a continuation parses only after it), or None."""
    out, count, bare, example = [], 0, 0, None
    for res, language, head in zip(results, languages, heads or [None] * len(results)):
        if res["status"] in ("ok", "truncated") and not has_code_block(res["text"]) \
                and code_before_closing_fence(res["text"]) is None:
            if parses_cleanly(completed(head, res["text"]) if head else res["text"], language):
                bare += 1
            else:
                count += 1
                example = example or res["text"].strip()[:300]
                res = {**res, "status": NO_CODE_BLOCK, "code": ""}
        out.append(res)
    if count:
        log.warning("%d answers hold no code block and do not parse as code (status %s); e.g. %r", count,
                    NO_CODE_BLOCK, example[:120])
    return out, {"count": count, "example": example, "bare_code": bare}


def parses_cleanly(text: str, language) -> bool:
    from ..codetools.treesitter import GRAMMARS, parse

    text = strip_reasoning(text or "")
    if not text.strip() or language not in GRAMMARS:
        return False
    return not parse(text, language).root_node.has_error


def _tests_of(row) -> str | None:
    tests = getattr(row, "tests", None)
    return tests if isinstance(tests, str) and tests else None
