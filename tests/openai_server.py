"""A local OpenAI-compatible chat-completions server for tests and benchmarks.

It stands in for a frontier LLM, which cannot run on the build machine, and speaks the real
protocol over real HTTP. Completions are deterministic (a hash of the messages). Faults are
requested by markers in the last message, `[[fault:KIND:N]]`, which make the first N
attempts at that exact prompt fail; KIND is one of
  429 (with Retry-After), 500, slow (answers after --slow seconds), malformed (invalid JSON),
  empty (empty content), length (finish_reason "length"), drop (connection closed),
  auth (401), context (400 context_length_exceeded), huge (a 2 MB answer: HUGE_BYTES),
  prose (an answer in words with no code block and no label: what a small model may say).
A judge prompt containing "Answer with one of: a, b, c" gets {"label": <one of them>}.

  python tests/openai_server.py [--port 0] [--slow 5]     prints "PORT <n>" when ready
GET /stats returns request counts; POST /reset clears them."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import sys
from collections import Counter

from aiohttp import web

FAULT = re.compile(r"\[\[fault:(\w+):(\d+)\]\]")
OPTIONS = re.compile(r"Answer with one of: ([^\n.]+)")
HUGE_BYTES = 2_000_000


def _digest(messages) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()


def completion_text(messages) -> str:
    """The deterministic reply to a conversation."""
    digest = _digest(messages)
    last = messages[-1]["content"] if messages else ""
    options = OPTIONS.search(last)
    if options:
        labels = [o.strip() for o in options.group(1).split(",") if o.strip()]
        label = labels[int(digest[:8], 16) % len(labels)]
        return json.dumps({"label": label})
    n, k = int(digest[:6], 16) % 1000, 2 + int(digest[6:8], 16) % 9
    # A short program that passes the paper's Table 3 filters (six lines at least), so
    # generated rows survive normalization the way a real model's do.
    program = (f"def solve_{digest[:6]}(values):\n"
               f"    total_{digest[8:12]} = {n}\n"
               f"    for item in values:\n"
               f"        if item % {k} == 0:\n"
               f"            total_{digest[8:12]} += item * {n}\n"
               f"    return total_{digest[8:12]}\n")
    return (f"<think>Plan the solution {digest[:8]}.</think>\nHere is the code:\n"
            f"```python\n{program}```\nIt multiplies.")


class FakeLLM:
    def __init__(self, slow_seconds: float = 5.0):
        self.slow_seconds = slow_seconds
        self.attempts: Counter[str] = Counter()
        self.requests = 0
        self.completed = 0

    async def stats(self, request: web.Request) -> web.Response:
        return web.json_response({"requests": self.requests, "completed": self.completed,
                                  "distinct_prompts": len(self.attempts)})

    async def reset(self, request: web.Request) -> web.Response:
        self.attempts.clear()
        self.requests = self.completed = 0
        return web.json_response({"ok": True})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        messages = body.get("messages", [])
        self.requests += 1
        key = _digest(messages)
        self.attempts[key] += 1
        last = messages[-1]["content"] if messages else ""
        fault = FAULT.search(last)
        if fault and self.attempts[key] <= int(fault.group(2)):
            kind = fault.group(1)
            if kind == "429":
                return web.json_response({"error": {"message": "rate limited", "type": "rate_limit_error"}},
                                         status=429, headers={"Retry-After": "1"})
            if kind == "500":
                return web.json_response({"error": {"message": "boom", "type": "server_error"}}, status=500)
            if kind == "slow":
                await asyncio.sleep(self.slow_seconds)
            if kind == "malformed":
                return web.Response(text='{"id": "x", "choices": [', content_type="application/json")
            if kind == "drop":
                request.transport.close()
                raise ConnectionResetError("dropped on purpose")
            if kind == "auth":
                return web.json_response({"error": {"message": "bad key", "type": "invalid_request_error",
                                                    "code": "invalid_api_key"}}, status=401)
            if kind == "context":
                return web.json_response({"error": {"message": "This model's maximum context length is 10 tokens",
                                                    "type": "invalid_request_error",
                                                    "code": "context_length_exceeded"}}, status=400)
        content = completion_text(messages)
        finish = "stop"
        if fault and fault.group(1) == "empty":
            content = ""
        if fault and fault.group(1) == "prose":
            content = "Sure! This looks like a nice piece of work. Let me know if you need anything else."
        if fault and fault.group(1) == "huge":
            line = "    x = x + 1  # padding\n"
            content = "```python\ndef f(x):\n" + line * (HUGE_BYTES // len(line)) + "    return x\n```"
        if fault and fault.group(1) == "length":
            cut = content.find("return")  # mid-program, inside the open code fence
            content, finish = content[: cut if cut > 0 else len(content) // 2], "length"
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        completion_tokens = len(content.split())
        self.completed += 1
        return web.json_response({
            "id": f"chatcmpl-{key[:12]}", "object": "chat.completion", "created": 0,
            "model": body.get("model", "test-model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        })

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/chat/completions", self.chat)
        app.router.add_get("/stats", self.stats)
        app.router.add_post("/reset", self.reset)
        return app


async def serve(port: int, slow: float) -> None:
    runner = web.AppRunner(FakeLLM(slow).app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]  # port 0 -> the one the OS chose
    print(f"PORT {bound}", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python tests/openai_server.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--slow", type=float, default=5.0, help="seconds a 'slow' fault waits")
    args = parser.parse_args()
    try:
        asyncio.run(serve(args.port, args.slow))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
