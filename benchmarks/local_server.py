"""Which server serves the packaged local model (SmolLM2-135M-Instruct) best on this machine:
`transformers serve` with continuous batching, the same one request at a time, and llama.cpp's
own `llama-server` where a binary is given (it compiles from source: llama-cpp-python's sdist
vendors llama.cpp; `--llama-server PATH`). Each server is started on 127.0.0.1, sent the same
generation prompts (rewrites of real human trial programs, as the hybrid_rewrite protocol
sends) and judge prompts (zero-shot, one JSON label), through litellm, with the same sampling
parameters; printed: completion tokens per second (wall), per CPU-second of the server
process, requests per second, the server's peak memory and its start-up time.

    .venv/bin/python benchmarks/local_server.py --generations 16 --judgements 24 \\
        [--llama-server /path/to/llama-server] [--threads 1]

On a shared machine compare the CPU-second figures (wall figures carry the other load)."""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))
TRIAL = REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"


def prompts(generations: int, judgements: int) -> tuple[list, list]:
    import pandas as pd
    from aicd.llm.prompts import PromptSet

    rows = pd.read_parquet(TRIAL).sort_values("row_id")
    human = rows[rows["generator"].eq("Human") & rows["code"].str.len().between(400, 1200)].head(generations)
    gen = PromptSet(REPO / "config" / "prompts" / "generation.v1.yaml")
    judge = PromptSet(REPO / "config" / "prompts" / "judge.v1.yaml")
    gen_msgs = [gen.messages("hybrid_rewrite/generator", language=r.language, code=r.code)
                for r in human.itertuples()]
    sample = rows.groupby("generator").head(3).head(judgements)
    desc = judge.extra["descriptions"]["label"].strip()
    judge_msgs = [judge.messages("zs", description=desc, language=r.language, labels="human, machine",
                                 code=r.code[:1500]) for r in sample.itertuples()]
    return gen_msgs, judge_msgs


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_healthy(port: int, proc, timeout: float = 600) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit("server did not answer its health check")


async def send(base: str, model: str, messages: list, params: dict, concurrency: int) -> tuple[int, float]:
    import litellm

    sem = asyncio.Semaphore(concurrency)

    async def one(m):
        async with sem:
            r = await litellm.acompletion(model=f"openai/{model}", api_base=base, api_key="x", messages=m,
                                          timeout=3600, **params)
            return int(r.usage.completion_tokens or 0)

    started = time.perf_counter()
    tokens = await asyncio.gather(*(one(m) for m in messages))
    return sum(tokens), time.perf_counter() - started


def measure(name: str, command: list, port: int, model: str, workload: dict, env: dict, cwd: str) -> list[str]:
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(port, proc)
        startup = time.perf_counter() - started
        lines = []
        for kind, (messages, params, concurrency) in workload.items():
            before = cpu_seconds(proc.pid)
            tokens, wall = asyncio.run(send(f"http://127.0.0.1:{port}/v1", model, messages, params, concurrency))
            cpu = cpu_seconds(proc.pid) - before
            lines.append(f"| {name} | {kind} | {len(messages)} | {tokens:,} | {tokens / wall:.1f} | "
                         f"{tokens / cpu:.1f} | {len(messages) / wall:.3f} | {cpu:.0f} |")
        lines[0] += f" start {startup:.0f} s, peak {peak_mb(proc.pid):,.0f} MB"
        return lines
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--generations", type=int, default=16)
    p.add_argument("--judgements", type=int, default=24)
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--llama-server", default=None, help="a llama-server binary (llama.cpp) to measure too")
    p.add_argument("--only", nargs="*", default=None, help="servers to run: cb, sequential, llama")
    args = p.parse_args()

    from aicd.llm.local_server import LocalServer, free_port  # noqa: F401  (the workflow's own command line)
    from aicd.models.local_models import model_folder, pinned_models
    from aicd.records.pinned_files import verified_path

    name = "smollm2-135m-instruct"
    folder = model_folder(name)
    gen, judge = prompts(args.generations, args.judgements)
    gen_params = {"max_tokens": args.max_tokens, "temperature": 0.7, "top_p": 0.95, "seed": 1}
    judge_params = {"max_tokens": 16, "temperature": 0.0, "seed": 1}
    scratch = tempfile.mkdtemp(prefix="aicd-bench-serve-")
    os.symlink(folder, Path(scratch) / name)
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "HF_HUB_OFFLINE": "1"}
    rows = ["| server | workload | requests | completion tokens | tokens/s | tokens per server CPU-s | requests/s | "
            "server CPU s |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    only = set(args.only or ["cb", "sequential", "llama"])
    base = [sys.executable, "-m", "transformers.cli.transformers", "serve", name, "--host", "127.0.0.1",
            "--dtype", "bfloat16", "--device", "cpu", "--log-level", "warning"]
    for label, extra, concurrency in (("transformers serve, continuous batching", ["--continuous-batching",
                                       "--cb-num-blocks", "96", "--cb-max-batch-tokens", "256"], args.concurrency),
                                      ("transformers serve, one at a time", [], 1)):
        if ("cb" if "batching" in label else "sequential") not in only:
            continue
        port = free_port()
        workload = {"generation": (gen, gen_params, concurrency), "judge (zs)": (judge, judge_params, concurrency)}
        rows += measure(label, base + ["--port", str(port)] + extra, port, name, workload, env, scratch)
        print("\n".join(rows), flush=True)
    if args.llama_server and "llama" in only:
        entry = pinned_models()[name]
        gguf = Path(scratch) / Path(entry["model"]["member"]).name
        with zipfile.ZipFile(verified_path(name, entry)) as z, z.open(entry["model"]["member"]) as src:
            gguf.write_bytes(src.read())
        port = free_port()
        command = [args.llama_server, "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port),
                   "--threads", str(args.threads), "--parallel", str(args.concurrency), "--ctx-size",
                   str(args.concurrency * 2048), "--alias", name, "--no-webui"]
        workload = {"generation": (gen, gen_params, args.concurrency), "judge (zs)": (judge, judge_params,
                                                                                       args.concurrency)}
        rows += measure(f"llama.cpp llama-server, {args.concurrency} slots", command, port, name, workload, env, scratch)
    print("\n".join(rows))
    print(f"\nthreads {args.threads}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
