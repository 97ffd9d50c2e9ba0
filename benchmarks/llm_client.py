"""Throughput of the project's LLM client (litellm.acompletion + request cache + retries)
against the local OpenAI-compatible test server, compared with a bare aiohttp client sending
the same requests in the same run, and the latency of a cache hit.

  python benchmarks/llm_client.py [--requests 2000]

Client overhead per request = (client CPU seconds - bare CPU seconds) / requests, measured in
the benchmark process (the server runs in its own process)."""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def start_server():
    # the test server lives with the tests: it stands in for a frontier LLM only there
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "openai_server.py"), "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline().split()[1])
    return proc, f"http://127.0.0.1:{port}/v1"


def prompts(n: int, tag: str):
    return [([{"role": "user", "content": f"benchmark {tag} {i}"}], {"temperature": 0}) for i in range(n)]


async def bare(api_base: str, requests, concurrency: int) -> None:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(messages, params):
            async with sem:
                async with session.post(f"{api_base}/chat/completions",
                                        json={"model": "local-test", "messages": messages, **params}) as r:
                    body = await r.json()
                    assert body["choices"][0]["message"]["content"]
        await asyncio.gather(*(one(m, p) for m, p in requests))


def measure(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    from aicd.llm.cache import RequestCache
    from aicd.llm.client import LLMClient

    server, api_base = start_server()
    # Priced in the registry, as a user's models are (litellm then prices each response once).
    model = {"litellm_model": "openai/local-test", "api_base": api_base,
             "cost_per_million_tokens": {"input": 1.0, "output": 2.0}}
    print(f"machine: {os.cpu_count()} cores; client and server share them; {args.requests} requests per row")
    print(f"{'concurrency':>11} {'client req/s':>13} {'bare req/s':>11} {'client CPU ms/req':>18} "
          f"{'bare CPU ms/req':>16} {'overhead ms/req':>15}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            warm = LLMClient(model, RequestCache(Path(tmp) / "warm.sqlite"), concurrency=8)
            warm.run(prompts(50, "warmup"))  # imports, connection pools
            for conc in (1, 32, 256):
                n = min(args.requests, 300) if conc == 1 else args.requests
                client = LLMClient(model, RequestCache(Path(tmp) / f"c{conc}.sqlite"), concurrency=conc)
                c_wall, c_cpu = measure(lambda client=client, n=n, conc=conc: client.run(prompts(n, f"c{conc}")))
                b_wall, b_cpu = measure(lambda n=n, conc=conc: asyncio.run(bare(api_base, prompts(n, f"b{conc}"), conc)))
                print(f"{conc:>11} {n / c_wall:>13.0f} {n / b_wall:>11.0f} {1000 * c_cpu / n:>18.2f} "
                      f"{1000 * b_cpu / n:>16.2f} {1000 * (c_cpu - b_cpu) / n:>15.2f}")
            unpriced = LLMClient({"litellm_model": "openai/local-test", "api_base": api_base},
                                 RequestCache(Path(tmp) / "unpriced.sqlite"), concurrency=256)
            u_wall, u_cpu = measure(lambda: unpriced.run(prompts(args.requests, "unpriced")))
            print(f"unpriced model (litellm searches its price map and fails) at concurrency 256: "
                  f"{args.requests / u_wall:.0f} req/s, {1000 * u_cpu / args.requests:.2f} CPU ms/req")
            cached = LLMClient(model, RequestCache(Path(tmp) / "c1.sqlite"), concurrency=1)
            n = min(args.requests, 300)
            wall, _ = measure(lambda: cached.run(prompts(n, "c1")))
            assert cached.sent == 0
            print(f"cache hit: {1000 * wall / n:.3f} ms per request at concurrency 1 ({n} hits, 0 requests sent)")
    finally:
        server.kill()


if __name__ == "__main__":
    main()
