"""Machine counterparts of human programs, written by a served model (the packaged SmolLM2 by
default): what `aicd detect --adapt` fits on beside the user's reference, the machine side of a
collection built from human code, and the rewrites the rewrite distance reads.

Each counterpart is one of the generation stage's protocols applied to one human program, with
the prompts of config/prompts/generation.v2.yaml:

  hybrid_rewrite       the program rewritten "in your own style" (one request)
  inverse_instruction  the instructor states the task the program solves, the generator solves
                       it (two requests)
  docstring            the first documented function implemented from its signature and
                       documentation (one request; a program without one gives none)

Every request goes through the project's request cache (aicd.llm.cache): a rerun sends nothing,
and the server is started only when some request is not cached (aicd.llm.local_server.serving).
A counterpart need not pass Table 3; it must be code: an answer that is empty, the reference
itself, shorter than MIN_LINES lines, or under MIN_PARSE of it parsed by its language's grammar
is left out and counted by reason."""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field

import pandas as pd

from ..common.defaults import schema_default
from ..common.errors import AicdError
from ..common.repo import REPO
from ..generate.answers import cut_repeats, unopened_blocks
from ..generate.protocols import build_requests
from ..generate.run import without_code_block
from ..llm.cache import RequestCache
from ..llm.client import LLMClient, RetryPolicy
from ..llm.local_server import request_params, serving
from ..llm.prompts import PromptSet

log = logging.getLogger("aicd.adapt")

PROTOCOLS = ("hybrid_rewrite", "inverse_instruction", "docstring")
PROMPTS = REPO / "config" / "prompts" / "generation.v2.yaml"
REGISTRY = [REPO / "config" / "models.yaml", REPO / "config" / "models_local.yaml"]
WRITER = "SmolLM2-135M-Instruct"
CACHE = schema_default("llm.cache")  # the workflow's default request cache
# Greedy decoding with a frequency penalty: SmolLM2's greedy answers loop; a penalty of 0.5 about
# doubled the share of its docstring answers that pass Table 3 (24% against 13%, vLLM, float32).
PARAMS = {"temperature": 0, "frequency_penalty": 0.5}
INSTRUCTION_TOKENS = 64            # a task statement in at most three sentences (the full demo's cap)
MAX_TOKENS = 512                   # no answer longer than this
CHARS_PER_TOKEN = 3                # code: ~3 characters a token for SmolLM2's tokenizer
MIN_LINES = 3
MIN_PARSE = 0.8                    # aicd.normalize.langid.parse_quality


def load_writer(name: str = WRITER, registry=None) -> dict:
    """The registry entry of the model that writes counterparts, with PARAMS over its own."""
    from ..generate.registry import load_registry

    models = load_registry([str(p) for p in (registry or REGISTRY)])
    if name not in models:
        raise AicdError(f"--adapt-model {name}: not in the model registry ({', '.join(sorted(models))})")
    entry = models[name]
    return {**entry, "params": {**entry["params"], **PARAMS}}


def answer_tokens(code: str, protocol: str) -> int:
    """The token cap of one answer: a rewrite as long as its program and some, at most MAX_TOKENS."""
    if protocol == "docstring":
        return 256
    return int(min(MAX_TOKENS, len(code) / CHARS_PER_TOKEN * 1.25 + 64))


@dataclass
class Writer:
    """Writes counterparts with one registry model through the request cache."""

    model: dict = field(default_factory=load_writer)
    cache: str = CACHE
    seed: int = 0
    prompts: PromptSet = field(default_factory=lambda: PromptSet(PROMPTS))
    server_log: str | None = None
    concurrency: int | None = None
    sent: int = 0
    seconds: float = 0.0

    def client(self) -> LLMClient:
        return LLMClient(self.model, RequestCache(self.cache), concurrency=self.concurrency or
                         int(self.model.get("concurrency") or schema_default("llm.concurrency")), timeout=float(self.model.get("timeout", 1800)),
                         retry=RetryPolicy(3, 1.0, 30.0))

    def write(self, rows: pd.DataFrame, protocols=("hybrid_rewrite",), progress=None) -> pd.DataFrame:
        """One row per (reference row, protocol) asked: reference_id, protocol, code, kept, why,
        completion_tokens, finish_reason. `rows`: id, code, language (a docstring column is read
        where there is one)."""
        unknown = [p for p in protocols if p not in PROTOCOLS]
        if unknown:
            raise AicdError(f"counterpart protocols {unknown}: use {', '.join(PROTOCOLS)}")
        rows = rows.reset_index(drop=True)
        started, client = time.perf_counter(), self.client()
        with contextlib.ExitStack() as stack:
            served = None
            instructions = {}
            if "inverse_instruction" in protocols:
                requests = self._instruction_requests(rows)
                served = stack.enter_context(serving(client, requests, self.server_log, self.seed))
                answers = served.run(requests, progress)
                instructions = {i: a["text"].strip() for i, a in zip(rows["id"], answers)
                                if a["status"] in ("ok", "truncated") and a["text"].strip()}
            planned = self._planned(rows, protocols, instructions)
            requests = [(messages, params) for _, _, messages, params in planned]
            if served is None or not served.model.get("api_base"):
                served = stack.enter_context(serving(client, requests, self.server_log, self.seed))
            answers = served.run(requests, progress) if requests else []
        self.sent += client.sent
        self.seconds += time.perf_counter() - started
        return self._table(rows, protocols, planned, answers)

    def _instruction_requests(self, rows: pd.DataFrame) -> list:
        params = {**request_params(self.model, self.seed), "max_tokens": INSTRUCTION_TOKENS}
        return [(self.prompts.messages("inverse_instruction/instructor", language=r.language or "", code=r.code),
                 params) for r in rows.itertuples(index=False)]

    def _planned(self, rows: pd.DataFrame, protocols, instructions: dict) -> list:
        """[(protocol, row, messages, params)] of every prompt the rows give."""
        base = request_params(self.model, self.seed)
        planned = []
        for protocol in protocols:
            built = given_signatures(rows, self.prompts) if protocol == "docstring" and "signature" in rows else []
            done = {row.id for row, _, _ in built}
            built += build_requests(protocol, rows[~rows["id"].isin(done)], self.prompts, instructions)[0]
            planned += [(protocol, row, messages, {**base, "max_tokens": answer_tokens(row.code, protocol)})
                        for row, _, messages in built]
        return planned

    def _table(self, rows: pd.DataFrame, protocols, planned: list, answers: list) -> pd.DataFrame:
        answers, _ = cut_repeats(answers)
        answers, _ = unopened_blocks(answers)
        answers, _ = without_code_block(answers, [row.language for _, row, _, _ in planned])
        got = {(protocol, row.id): (row, answer) for (protocol, row, _, _), answer in zip(planned, answers)}
        records = []
        for protocol in protocols:
            for row in rows.itertuples(index=False):
                _, answer = got.get((protocol, row.id), (row, None))
                code = answer["code"] if answer else ""
                why = "no_prompt" if answer is None else counterpart_problem(code, row.code, row.language)
                records.append({"reference_id": row.id, "protocol": protocol, "language": row.language,
                                "code": code, "kept": why is None, "why": why or "",
                                "completion_tokens": int(answer["completion_tokens"]) if answer else 0,
                                "finish_reason": answer["finish_reason"] if answer else None})
        return pd.DataFrame.from_records(records)


def given_signatures(rows: pd.DataFrame, prompts: PromptSet) -> list:
    """The docstring prompts of rows that carry their own `signature` (a HumanEval prompt: the
    signature and docstring as the problem states them), as build_requests gives them."""
    name = "docstring/generator"
    return [(row, prompts.prompt_id(name), prompts.messages(name, language=row.language, signature=row.signature))
            for row in rows.itertuples(index=False) if isinstance(row.signature, str) and row.signature.strip()]


def counterpart_problem(code: str, reference: str, language: str | None) -> str | None:
    """Why an answer is no counterpart (None where it is one): it must be code, and not the
    reference itself."""
    from ..normalize.langid import parse_quality

    text = (code or "").strip()
    if not text:
        return "empty"
    if "".join(text.split()) == "".join((reference or "").split()):
        return "same_as_reference"
    if sum(1 for line in text.splitlines() if line.strip()) < MIN_LINES:
        return "too_short"
    if language and parse_quality(text, language) < MIN_PARSE:
        return "not_parsed"
    return None


def kept_summary(table: pd.DataFrame) -> dict:
    """{protocol: {kept, asked, why: {reason: count}}} of a write()'s table."""
    out = {}
    for protocol, part in table.groupby("protocol"):
        out[protocol] = {"asked": int(len(part)), "kept": int(part["kept"].sum()),
                         "why": part.loc[~part["kept"], "why"].value_counts().to_dict()}
    return out
