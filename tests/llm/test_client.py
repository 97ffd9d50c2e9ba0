"""The litellm client against a real local HTTP server with injected faults."""

import logging
import os
import subprocess
import sys
import time

import pytest
from aicd.llm.cache import RequestCache
from aicd.llm.client import LLMClient, RetryPolicy
from llm_server import running_server

FAST = RetryPolicy(max_retries=3, backoff_base=0.01, backoff_max=5)


def client(server, tmp_path, **kw):
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout", 1.5)
    return LLMClient(server.model(**kw.pop("model_extra", {})), RequestCache(tmp_path / "cache.sqlite"), **kw)


def msgs(text):
    return [{"role": "user", "content": text}]


def one(c, text, params=None):
    return c.run([(msgs(text), params or {"temperature": 0})])[0]


def test_rows_out_equal_prompts_in_and_code_is_extracted(server, tmp_path):
    c = client(server, tmp_path, concurrency=16)
    prompts = [(msgs(f"write program {i}"), {"temperature": 0}) for i in range(50)]
    rows = c.run(prompts)
    assert len(rows) == 50 and all(r["status"] == "ok" for r in rows)
    assert len({r["code"] for r in rows}) == 50  # deterministic, distinct per prompt, none duplicated
    assert all(r["code"].startswith("def solve_") and "<think>" not in r["code"] for r in rows)
    assert all(r["prompt_tokens"] == 3 and r["completion_tokens"] > 0 for r in rows)


def test_429_is_retried_after_retry_after(server, tmp_path):
    started = time.perf_counter()
    row = one(client(server, tmp_path), "a [[fault:429:2]]")
    assert row["status"] == "ok" and row["attempts"] == 3
    assert time.perf_counter() - started >= 1.9  # two Retry-After: 1 waits, though backoff is 10 ms


@pytest.mark.parametrize("fault", ["500", "slow", "malformed", "drop"])
def test_transient_faults_are_retried(server, tmp_path, fault):
    row = one(client(server, tmp_path), f"b [[fault:{fault}:1]]")
    assert row["status"] == "ok" and row["attempts"] == 2, row


@pytest.mark.parametrize("fault", ["auth", "context"])
def test_auth_and_context_errors_are_not_retried(server, tmp_path, fault):
    before = server.stats()["requests"]
    row = one(client(server, tmp_path), f"c [[fault:{fault}:5]]")
    assert row["status"] == "error" and row["attempts"] == 1
    assert server.stats()["requests"] == before + 1


def test_persistent_failure_still_gives_a_row(server, tmp_path):
    rows = client(server, tmp_path).run([(msgs("d [[fault:500:99]]"), {}), (msgs("fine"), {})])
    assert [r["status"] for r in rows] == ["error", "ok"]
    assert rows[0]["attempts"] == 4 and "InternalServerError" in rows[0]["error"]


def test_empty_and_truncated_answers_are_flagged_not_retried(server, tmp_path):
    c = client(server, tmp_path)
    empty, cut = c.run([(msgs("e [[fault:empty:1]]"), {}), (msgs("f [[fault:length:1]]"), {})])
    assert empty["status"] == "empty" and empty["attempts"] == 1 and empty["code"] == ""
    assert cut["status"] == "truncated" and cut["finish_reason"] == "length"
    assert cut["code"].startswith("def solve_")  # the unclosed fence runs to the end


def test_second_run_sends_zero_requests(server, tmp_path):
    prompts = [(msgs(f"cache me {i}"), {"temperature": 0.2}) for i in range(20)]
    first = client(server, tmp_path)
    a = first.run(prompts)
    before = server.stats()["requests"]
    second = client(server, tmp_path)
    b = second.run(prompts)
    assert second.sent == 0 and server.stats()["requests"] == before
    assert all(r["cached"] for r in b) and [r["code"] for r in a] == [r["code"] for r in b]
    other = client(server, tmp_path).run([(msgs("cache me 0"), {"temperature": 0.3})])  # params are in the key
    assert not other[0]["cached"]


def test_costs_from_the_registry_add_up(server, tmp_path):
    c = client(server, tmp_path, model_extra={"cost_per_million_tokens": {"input": 1000.0, "output": 2000.0}})
    rows = c.run([(msgs(f"price {i}"), {}) for i in range(5)])
    for r in rows:
        assert r["cost"] == pytest.approx((r["prompt_tokens"] * 1000 + r["completion_tokens"] * 2000) / 1e6)


def test_rpm_limit_spaces_requests(server, tmp_path):
    c = client(server, tmp_path, rpm=600, concurrency=8)  # one request per 0.1 s
    started = time.perf_counter()
    c.run([(msgs(f"rpm {i}"), {}) for i in range(6)])
    assert time.perf_counter() - started >= 0.45


def test_api_key_never_reaches_results_or_logs(server, tmp_path, caplog, monkeypatch):
    secret = "sk-very-secret-4242"
    monkeypatch.setenv("AICD_TEST_KEY", secret)
    caplog.set_level(logging.DEBUG)
    c = client(server, tmp_path, model_extra={"api_key_env": "AICD_TEST_KEY"})
    rows = c.run([(msgs("g [[fault:auth:1]]"), {}), (msgs("g [[fault:500:1]]"), {})])
    assert secret not in repr(rows) and secret not in caplog.text


KILLABLE = """
import sys
from aicd.llm.cache import RequestCache
from aicd.llm.client import LLMClient
model = {"litellm_model": "openai/local-test", "api_base": sys.argv[1]}
c = LLMClient(model, RequestCache(sys.argv[2]), concurrency=2)
c.run([([{"role": "user", "content": f"resume {i} [[fault:slow:1]]"}], {}) for i in range(40)])
"""


def test_killed_run_resumes_without_resending_finished_requests(tmp_path):
    with running_server(slow=0.3) as server:
        _kill_and_resume(server, tmp_path)


def _kill_and_resume(server, tmp_path):
    cache_path = tmp_path / "cache.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # Each request waits 0.3 s at the server; kill the job part-way through.
    proc = subprocess.Popen([sys.executable, "-c", KILLABLE, server.api_base, str(cache_path)], env=env)
    cache = RequestCache(cache_path)
    deadline = time.time() + 60
    while len(cache) < 10 and time.time() < deadline:
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    finished = len(cache)
    assert 10 <= finished < 40
    c = LLMClient({"litellm_model": "openai/local-test", "api_base": server.api_base}, cache, concurrency=2)
    rows = c.run([(msgs(f"resume {i} [[fault:slow:1]]"), {}) for i in range(40)])
    assert c.sent == 40 - finished            # not one finished request was sent again
    assert sum(r["cached"] for r in rows) == finished and len(rows) == 40


def test_an_answer_over_the_size_cap_is_a_failure_and_never_cached(server, tmp_path):
    c = client(server, tmp_path)
    assert c.max_response_bytes == 1_000_000  # the default cap
    before = server.stats()["requests"]
    rows = c.run([(msgs("h [[fault:huge:99]]"), {}), (msgs("small"), {})])
    assert [r["status"] for r in rows] == ["error", "ok"]
    assert rows[0]["error"].startswith("ResponseTooLarge: 2,0") and "llm.max_response_bytes (1,000,000)" in rows[0]["error"]
    assert rows[0]["text"] == "" and rows[0]["attempts"] == 1  # not retried
    assert len(c.cache) == 1  # only the small answer
    again = client(server, tmp_path).run([(msgs("h [[fault:huge:99]]"), {})])[0]
    assert again["status"] == "error" and server.stats()["requests"] == before + 3  # sent again: not cached
    big = client(server, tmp_path, max_response_bytes=3_000_000).run([(msgs("h [[fault:huge:99]]"), {})])[0]
    assert big["status"] == "ok" and len(big["text"]) > 2_000_000


def test_an_oversized_answer_cached_before_the_cap_is_not_served(server, tmp_path):
    from aicd.llm.cache import request_key

    c = client(server, tmp_path, max_response_bytes=100)
    key = request_key(c.model["litellm_model"], msgs("cached"), {})
    c.cache.put(key, c.model["litellm_model"], {"text": "x" * 200, "reasoning": None, "finish_reason": "stop",
                                                "prompt_tokens": 1, "completion_tokens": 1, "cost": 0.0, "latency_s": 0.1})
    row = c.run([(msgs("cached"), {})])[0]
    assert row["status"] == "error" and "ResponseTooLarge: 200 bytes" in row["error"]


def _generate(server, tmp_path, repo, codes, llm=None):
    """python -m aicd.generate against the test server, as the generate rule runs it."""
    import json

    import pandas as pd

    src = tmp_path / "source.parquet"
    pd.DataFrame({"id": [f"h{i}" for i in range(len(codes))], "code": codes, "label": "human", "language": "Python",
                  "domain": "algorithmic", "source": "s", "problem_id": None}).to_parquet(src)
    model = {**server.model(), "name": "X", "api_key_env": "AICD_TEST_KEY", "params": {"temperature": 0}}
    cmd = [sys.executable, "-m", "aicd.generate", "generate", "--model", json.dumps(model), "--source", str(src),
           "--prompts", str(repo / "config" / "prompts" / "generation.v1.yaml"),
           "--protocols", json.dumps({"hybrid_rewrite": {"n": len(codes)}}),
           "--llm", json.dumps({"cache": str(tmp_path / "cache.sqlite"), "max_retries": 0, **(llm or {})}),
           "--out", str(tmp_path / "X.parquet"), "--report", str(tmp_path / "X.report.json")]
    env = {**os.environ, "PYTHONPATH": str(repo / "workflow")}
    env.pop("AICD_TEST_KEY", None)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


def test_a_model_whose_every_request_fails_fails_its_job_with_the_reason(server, tmp_path, repo):
    proc = _generate(server, tmp_path, repo, [f"x = {i}  # [[fault:auth:99]]\n" for i in range(4)])
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: model X: 4 of 4 generation requests failed (AuthenticationError")
    assert "check AICD_TEST_KEY" in last
    assert not (tmp_path / "X.parquet").exists()


def test_an_endpoint_with_nothing_listening_fails_its_job_in_one_line(server, tmp_path, repo):
    """A user's api_base where no server runs: the job stops with one line naming the address."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"  # closed again before the job starts

    class Dead:
        def model(self):
            return {**server.model(), "api_base": dead}

    proc = _generate(Dead(), tmp_path, repo, ["x = 1\n", "x = 2\n"], {"timeout": 5})
    assert proc.returncode == 2, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: model X: 2 of 2 generation requests failed ("), last
    assert f"check that the endpoint answers ({dead}): start its server, or fix api_base" in last
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "X.parquet").exists()


def test_partial_failure_warns_with_counts_below_the_threshold(server, tmp_path, repo):
    codes = ["x = 0  # [[fault:auth:99]]\n", "x = 1\n", "x = 2\n", "x = 3\n"]
    proc = _generate(server, tmp_path, repo, codes)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "model X: 1 of 4 generation requests failed" in proc.stderr
    import json

    assert json.loads((tmp_path / "X.report.json").read_text())["failed_requests"] == 1
    strict = _generate(server, tmp_path, repo, codes, {"fail_threshold": 0.25})
    assert strict.returncode == 2 and "1 of 4 generation requests failed" in strict.stderr
