"""Which server serves the packaged local model (SmolLM2-135M-Instruct) best on this machine, in
one run: vLLM in the settings given (dtype, threads, sequences per batch, eager or compiled),
`transformers serve` with continuous batching (the full demo's server before vLLM), and the
fixed-batch `generate` reference (plain transformers on batches of 32 prompts, one thread: what
the same weights do on one core with no server at all).

Each server is the workflow's own (aicd.llm.local_server.LocalServer: its command line, its
environment), started on 127.0.0.1 and sent, through litellm, the same generation prompts
(--workload rewrite: rewrites of real human trial programs, as the hybrid_rewrite protocol sends,
long prompts; --workload write: short task statements, the 63 interview questions of
../shared/data/codeaid-interview-answers, to be written in Python, C++ or Java as the
inverse_instruction protocol's generator is asked; both greedy) and judge prompts (zero-shot,
the judge.v2 prompt; on vLLM also constrained to the task's classes).
Printed per server and workload: completion tokens, tokens per second (wall) and per server
CPU-second (every process of the server's process group, sampled each 0.2 s), requests per
server CPU-second, the start-up time and the first answer's time; and whether the generation
answers are the same when the prompts are sent 7 at a time (another batch composition).

    .venv/bin/python benchmarks/local_server.py --generations 64 --judgements 96 [--workload write] \\
        [--variants '[{"dtype": "float32"}, {"dtype": "bfloat16"}]'] [--transformers] [--reference] \\
        [--json FILE]

On a shared machine compare the CPU-second figures (wall figures carry the other load)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))
TRIAL = REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"
QUESTIONS = REPO.parent / "shared" / "data" / "codeaid-interview-answers" / "codeaid_answers.parquet"
DEFAULT_VARIANTS = [{"dtype": "float32"}, {"dtype": "bfloat16"}, {"dtype": "float32", "threads": 2},
                    {"dtype": "float32", "max_num_seqs": 32}, {"dtype": "float32", "max_num_seqs": 128},
                    {"dtype": "float32", "eager": False}]


def write_prompts(gen, generations: int) -> list:
    """Short task statements to write code for: each interview question in Python, then C++, then Java."""
    import pandas as pd

    questions = pd.read_parquet(QUESTIONS).drop_duplicates("problem_id").sort_values("problem_id")["question"]
    pairs = [(lang, q) for lang in ("Python", "C++", "Java") for q in questions][:generations]
    return [gen.messages("inverse_instruction/generator", language=lang, instruction=q.strip()) for lang, q in pairs]


def prompts(generations: int, judgements: int, kind: str = "rewrite") -> tuple[list, list]:
    import pandas as pd
    from aicd.llm.prompts import PromptSet

    rows = pd.read_parquet(TRIAL).sort_values("row_id")
    gen = PromptSet(REPO / "config" / "prompts" / "generation.v2.yaml")
    judge = PromptSet(REPO / "config" / "prompts" / "judge.v2.yaml")
    if kind == "write":
        gen_msgs = write_prompts(gen, generations)
    else:
        human = rows[rows["generator"].eq("Human") & rows["code"].str.len().between(250, 900)].head(generations)
        gen_msgs = [gen.messages("hybrid_rewrite/generator", language=r.language, code=r.code)
                    for r in human.itertuples()]
    sample = rows.groupby("generator").head(3).head(judgements)
    desc = judge.extra["descriptions"]["label"].strip()
    judge_msgs = [judge.messages("zs", description=desc, language=r.language, labels="human, machine",
                                 code=r.code[:1000]) for r in sample.itertuples()]
    return gen_msgs, judge_msgs


def group_cpu(pgid: int) -> dict[tuple[str, str], float]:
    """user + system CPU seconds (with reaped children's) of each live process of a process group,
    by (pid, process name: vLLM names its engine core's process VLLM::EngineCore)."""
    tick, seen = os.sysconf("SC_CLK_TCK"), {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            name, fields = Path(f"/proc/{pid}/stat").read_text().split(" (", 1)[1].rsplit(")", 1)
        except (OSError, IndexError, ValueError):
            continue
        fields = fields.split()
        if int(fields[2]) == pgid:
            seen[(pid, name)] = sum(int(f) for f in fields[11:15]) / tick
    return seen


class GroupCpu:
    """CPU seconds of every process in a process group, sampled in a thread (a process that
    ends between samples keeps what it had at the last one)."""

    def __init__(self, pgid: int):
        self.pgid, self.seen, self.stop = pgid, {}, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            time.sleep(0.2)

    def sample(self) -> None:
        self.seen.update(group_cpu(self.pgid))

    def total(self) -> float:
        self.sample()
        return sum(self.seen.values())

    def by_name(self) -> dict[str, float]:
        """CPU seconds so far summed by process name."""
        self.sample()
        named: dict[str, float] = {}
        for (_, name), seconds in self.seen.items():
            named[name] = named.get(name, 0.0) + seconds
        return named


async def send(base: str, model: str, messages: list, params: dict, concurrency: int) -> list[tuple[int, str, float]]:
    import litellm

    sem = asyncio.Semaphore(concurrency)
    started = time.perf_counter()

    async def one(m):
        async with sem:
            r = await litellm.acompletion(model=f"openai/{model}", api_base=base, api_key="x", messages=m,
                                          timeout=3600, **params)
            return int(r.usage.completion_tokens or 0), r.choices[0].message.content or "", \
                time.perf_counter() - started

    return list(await asyncio.gather(*(one(m) for m in messages)))


def workload(server, cpu: GroupCpu, name: str, messages: list, params: dict, concurrency: int) -> dict:
    named0, wall0 = cpu.by_name(), time.perf_counter()
    answers = asyncio.run(send(server.api_base, server.name, messages, params, concurrency))
    wall, named = time.perf_counter() - wall0, cpu.by_name()
    by_process = {k: v - named0.get(k, 0.0) for k, v in named.items()}
    used, tokens = sum(by_process.values()), sum(a[0] for a in answers)
    by_process = {k: round(v, 1) for k, v in sorted(by_process.items(), key=lambda kv: -kv[1]) if v >= 0.05}
    return {"workload": name, "requests": len(messages), "tokens": tokens, "wall_s": wall, "cpu_s": used,
            "cpu_s_by_process": by_process,
            "tokens_per_s": tokens / wall, "tokens_per_cpu_s": tokens / max(used, 1e-9),
            "requests_per_cpu_s": len(messages) / max(used, 1e-9), "first_s": min(a[2] for a in answers),
            "answers": [a[1] for a in answers]}


def serve_variant(serve: dict, gen: list, judge: list, max_tokens: int, concurrency: int,
                  gen_params: dict | None = None) -> dict:
    from aicd.generate.registry import load_registry
    from aicd.judge.constrained import constraint_params
    from aicd.llm.local_server import LocalServer

    entry = load_registry([REPO / "config" / "models.yaml", REPO / "config" / "models_local.yaml"])[
        "SmolLM2-135M-Instruct"]
    base = {k: v for k, v in entry["serve"].items() if k in ("model",)}
    model = {**entry, "serve": {**base, "replicas": 1, **serve}}
    gen_params = {"max_tokens": max_tokens, "temperature": 0, "seed": 1, **(gen_params or {})}
    judge_params = {"max_tokens": 16, "temperature": 0, "seed": 1}
    started = time.perf_counter()
    with LocalServer(model, seed=1) as server:
        startup = time.perf_counter() - started
        cpu = GroupCpu(os.getpgid(server.proc.pid))
        try:
            runs = [workload(server, cpu, "generation", gen, gen_params, concurrency),
                    workload(server, cpu, "generation, 7 at a time", gen, gen_params, 7),
                    workload(server, cpu, "judge (zs)", judge, judge_params, concurrency)]
            if model["serve"].get("server", "vllm") == "vllm":
                runs.append(workload(server, cpu, "judge (zs), constrained", judge,
                                     {**judge_params, **constraint_params(["human", "machine"])}, concurrency))
        finally:
            cpu.stop.set()
    same = sum(a == b for a, b in zip(runs[0]["answers"], runs[1]["answers"]))
    return {"serve": model["serve"], "startup_s": startup, "same_answers_7_at_a_time": f"{same} of {len(gen)}",
            "runs": runs}


def reference(gen: list, max_tokens: int, batch: int, dtype: str) -> dict:
    """Plain `generate` on fixed batches of `batch` prompts (left-padded), one thread, greedy."""
    import torch
    from aicd.models.local_models import model_folder
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    folder = model_folder("smollm2-135m-instruct")
    tok = AutoTokenizer.from_pretrained(folder, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype)).eval()
    texts = [tok.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in gen]
    cpu0, wall0, tokens = time.process_time(), time.perf_counter(), 0
    with torch.inference_mode():
        for i in range(0, len(texts), batch):
            enc = tok(texts[i:i + batch], return_tensors="pt", padding=True)
            out = model.generate(**enc, max_new_tokens=max_tokens, do_sample=False, pad_token_id=tok.eos_token_id)
            new = out[:, enc["input_ids"].shape[1]:]
            tokens += int((new != tok.eos_token_id).sum())
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {"serve": {"server": f"generate, batch {batch}", "dtype": dtype, "threads": 1}, "startup_s": 0.0,
            "same_answers_7_at_a_time": "–",
            "runs": [{"workload": "generation", "requests": len(gen), "tokens": tokens, "wall_s": wall, "cpu_s": cpu,
                      "tokens_per_s": tokens / wall, "tokens_per_cpu_s": tokens / cpu,
                      "requests_per_cpu_s": len(gen) / cpu, "first_s": float("nan"), "answers": []}]}


def table(results: list[dict]) -> str:
    lines = ["| server | settings | start s | workload | requests | tokens | tokens/s | tokens per server CPU-s | "
             "requests per server CPU-s | first answer s | same answers 7 at a time | server CPU-s by process |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in results:
        settings = ", ".join(f"{k} {v}" for k, v in sorted(r["serve"].items()) if k not in ("model", "server"))
        for i, run in enumerate(r["runs"]):
            lines.append(f"| {r['serve'].get('server', 'vllm')} | {settings if i == 0 else ''} | "
                         f"{r['startup_s']:.0f} | {run['workload']} | {run['requests']} | {run['tokens']:,} | "
                         f"{run['tokens_per_s']:.1f} | {run['tokens_per_cpu_s']:.1f} | "
                         f"{run['requests_per_cpu_s']:.2f} | {run['first_s']:.1f} | "
                         f"{r['same_answers_7_at_a_time'] if i == 0 else ''} | "
                         + ", ".join(f"{name} {s}" for name, s in run.get("cpu_s_by_process", {}).items()) + " |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--generations", type=int, default=64)
    p.add_argument("--workload", choices=("rewrite", "write"), default="rewrite",
                   help="rewrite: the demo's rewrites of human programs (long prompts); write: short task "
                        "statements to write code for (the issue's reference workload)")
    p.add_argument("--judgements", type=int, default=96)
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--gen-params", type=json.loads, default={},
                   help="generation request parameters over greedy (e.g. {\"frequency_penalty\": 0.5})")
    p.add_argument("--variants", type=json.loads, default=DEFAULT_VARIANTS,
                   help="a JSON list of vLLM serve settings, each over the registry entry's")
    p.add_argument("--transformers", action="store_true", help="also transformers serve (float32, batching)")
    p.add_argument("--transformers-generations", type=int, default=24,
                   help="its share of the prompts (it runs at a tenth of vLLM's rate)")
    p.add_argument("--reference", action="store_true", help="also the fixed-batch generate reference")
    p.add_argument("--json", default=None, help="append every figure, as JSON lines, to this file")
    args = p.parse_args()

    gen, judge = prompts(args.generations, args.judgements, args.workload)
    results = []
    for variant in args.variants:
        results.append(serve_variant({"server": "vllm", **variant}, gen, judge, args.max_tokens, args.concurrency,
                                     args.gen_params))
        print(table(results[-1:]), flush=True)
    if args.transformers:
        few = args.transformers_generations
        results.append(serve_variant({"server": "transformers", "dtype": "float32", "batching": True,
                                      "batch_tokens": 256}, gen[:few], judge[:few], args.max_tokens, 32,
                                     args.gen_params))
        print(table(results[-1:]), flush=True)
    if args.reference:
        for dtype in ("float32", "bfloat16"):
            results.append(reference(gen, args.max_tokens, 32, dtype))
            print(table(results[-1:]), flush=True)
    print(f"\n{table(results)}\n\n{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at the end; "
          f"peak RSS of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if args.json:
        with open(args.json, "a") as fh:
            for r in results:
                fh.write(json.dumps({**r, "workload": args.workload, "runs": [{k: v for k, v in run.items() if k != "answers"}
                                                   for run in r["runs"]], "load": os.getloadavg()[0]}) + "\n")


if __name__ == "__main__":
    main()
