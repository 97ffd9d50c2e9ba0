"""A local model served for one job by an existing OpenAI-compatible server, on loopback.

A registry entry with `serve:` and no `api_base` names a model this machine can serve itself
(config/models_local.yaml: the pinned SmolLM2-135M-Instruct). The job that needs it starts the
entry's server (aicd.llm.engines: vLLM, chosen by measurement, BENCHMARKS.md "Local LLM
server"; `transformers serve` where vLLM does not install) on 127.0.0.1 at a free port, waits
for its health check, sends its requests through litellm like to any OpenAI-compatible
endpoint, and stops it (SIGINT, then SIGKILL). The server dies with the job if the job is killed
(aicd.common.subprocesses; vLLM's own children through aicd.llm.server_guard), and is not
started at all when every request is already in the request cache.

    serve:
      model: package:smollm2-135m-instruct   # a pinned model, a local folder or a Hub id
      server: vllm                           # or transformers
      dtype: float32                         # or bfloat16 / auto: in bfloat16 a batched answer
                                             # depends on what was batched beside it
      batching: true                         # continuous batching (false: one at a time)
      threads: 1                             # each server's threads
      replicas: 1                            # servers per job, each request taking a free one
      max_num_seqs: 64                       # vLLM: sequences decoded together
      kv_cache_gb: 3                         # vLLM on a CPU: its KV cache
      device: cpu                            # cuda: the job asks for a GPU

The served model's folder is a scratch folder of links, read only while the model loads: it is
gone once the server answers, and a job killed before that leaves one that the next server's
start removes (named after the job's pid).

To serve it yourself instead (one command, then give the entry that api_base):

    aicd serve-local SmolLM2-135M-Instruct   # prints the api_base, stops on Ctrl-C"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from ..common.errors import AicdError
from ..common.subprocesses import start, stop
from .engines import Engine, engine_for, settings

log = logging.getLogger("aicd.llm.server")

SCRATCH_PREFIX = "aicd-serve-"  # + the job's pid: a folder of a job that is gone is removed
# how a served model decodes (served_folder): part of its requests' cache key, so answers cached
# before its decoding settings came from the registry entry are not taken for today's
DECODING = "params"


def served_name(model: dict) -> str:
    """The model name requests carry: litellm_model without its provider prefix."""
    return model["litellm_model"].split("/", 1)[1] if "/" in model["litellm_model"] else model["litellm_model"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def check_installed(model: dict) -> None:
    missing = engine_for(settings(model)).missing()
    if missing:
        raise AicdError(f"the local server for {model.get('name')}: {missing}")


class LocalServer:
    """The entry's server (vLLM or transformers serve) for one model on 127.0.0.1; a context manager."""

    def __init__(self, model: dict, log_path: str | os.PathLike | None = None, seed: int = 0,
                 port: int | None = None):
        self.model, self.spec, self.seed, self.asked_port = model, settings(model), seed, port
        self.engine: Engine = engine_for(self.spec)
        self.name = served_name(model)
        self.log_path = Path(log_path) if log_path else None
        self.proc = None

    def command(self, port: int) -> list[str]:
        return self.engine.command(str(self.link), self.name, port, self.seed)

    def __enter__(self) -> LocalServer:
        self.launch()
        return self.ready()

    def launch(self) -> None:
        """Start the server (replicas start side by side: launch each, then wait for each)."""
        from ..models.pretrained import resolve_model

        check_installed(self.model)
        folder = resolve_model(self.spec["model"])
        remove_stale_scratch()
        self.scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
        # the served model's folder: links to the model's files, named as requests name the model
        # (transformers serve is pinned to the name it was started with), with the decoding
        # settings of the registry entry (transformers serve decodes as the folder says, whatever
        # a request asks). It is read only while the server loads the model (before its health
        # check answers)
        self.link = served_folder(Path(folder), self.scratch / self.name, self.model.get("params") or {})
        self.log_path = self.log_path or self.scratch / "server.log"
        self.port = self.asked_port or free_port()
        self.started = time.monotonic()
        self.proc = start(self.command(self.port), self.log_path, env={**os.environ, **self.engine.env()},
                          cwd=str(self.scratch), pdeath=self.engine.pdeath)

    def ready(self) -> LocalServer:
        """Wait for the launched server's health check; stop it on failure."""
        started = self.started
        try:
            self._wait_healthy(started)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self._drop_scratch(keep_log=True)  # the model is loaded: a job killed from now on leaves nothing here
        log.info("%s served by %s at %s (pid %d, ready in %.0f s, log %s)", self.name, self.engine.name,
                 self.api_base, self.proc.pid, time.monotonic() - started, self.log_path)
        return self

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _wait_healthy(self, started: float) -> None:
        deadline = started + float(self.spec["start_timeout_s"])
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AicdError(f"the local server for {self.name} exited with status {self.proc.returncode} before "
                                f"answering: {self._log_tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.5)
        raise AicdError(f"the local server for {self.name} did not answer its health check within "
                        f"{self.spec['start_timeout_s']} s (serve.start_timeout_s): {self._log_tail()}")

    def _log_tail(self, chars: int = 600) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip()
        except OSError:
            return "no log"
        lines = [line for line in text.splitlines() if line.strip()]
        return " | ".join(lines[-6:])[-chars:] or "no output"

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            # SIGINT, not SIGTERM: uvicorn ends on either, then raises the signal again with its
            # previous handler; SIGTERM's default then kills the process before Python's exit
            # handlers run, and the server's multiprocessing folder (pymp-*) stays in /tmp.
            # SIGINT's is a KeyboardInterrupt, which exits through them (status 1, "Aborted!").
            status = stop(self.proc, first=signal.SIGINT)
            log.info("local server for %s stopped (status %s)", self.name, status)
            self.proc = None
        self._drop_scratch(keep_log=False)

    def _drop_scratch(self, keep_log: bool) -> None:
        """The model link, and its folder unless it holds the server's log (no log path was
        given, as for `aicd serve-local`) and `keep_log`."""
        scratch = getattr(self, "scratch", None)
        if scratch is None:
            return
        shutil.rmtree(self.link, ignore_errors=True)
        if keep_log and self.log_path.parent == scratch:
            return
        shutil.rmtree(scratch, ignore_errors=True)
        self.scratch = None


def decoding(params: dict) -> dict:
    """The generation config a served model decodes with, from its registry entry's request
    params: sampling where the temperature is above 0 (its temperature and top_p: a request's
    own then apply, with or without continuous batching), greedy otherwise; frequency_penalty
    as the repetition penalty (honoured one request at a time; continuous batching has none).
    Without it the server decodes as the model's own config says: SmolLM2's says greedy, whatever
    a request asks (measured: benchmarks/notes/llm.md)."""
    temperature = float(params.get("temperature", 0) or 0)
    out = {"do_sample": temperature > 0}
    if temperature > 0:
        out.update(temperature=temperature, top_p=float(params.get("top_p", 1.0)))
    if params.get("frequency_penalty"):
        out["repetition_penalty"] = 1.0 + float(params["frequency_penalty"])
    return out


def served_folder(model_folder: Path, target: Path, params: dict) -> Path:
    """`target`: links to the model folder's files, and its generation_config.json with the
    decoding settings of `params` (aicd's request params) over the model's own."""
    target.mkdir(parents=True)
    for item in model_folder.resolve().iterdir():
        if item.name != "generation_config.json":
            (target / item.name).symlink_to(item)
    own = model_folder / "generation_config.json"
    config = json.loads(own.read_text()) if own.is_file() else {}
    (target / "generation_config.json").write_text(json.dumps({**config, **decoding(params)}, indent=2))
    return target


def remove_stale_scratch(root: str | None = None) -> list[str]:
    """The scratch folders of servers whose job was killed before its server answered (SIGKILL
    leaves no chance to clean up): named after the job's pid, removed once that pid is gone."""
    removed = []
    for path in Path(root or tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*"):
        pid = path.name[len(SCRATCH_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or _alive(int(pid)) or not path.is_dir() or path.owner() != _me():
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(str(path))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _me() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


@contextmanager
def serving(client, requests: list, log_path=None, seed: int = 0):
    """The client, sending to a server started here for the block when its model asks to be
    served locally, has no api_base, and some request is not in the cache yet."""
    model = client.model
    if not model.get("serve") or model.get("api_base") or not client.uncached(requests):
        yield client
        return
    spec = settings(model)
    replicas = int(spec["replicas"])
    logs = [log_path] + [replica_log(log_path, i) for i in range(1, replicas)]
    servers = [LocalServer(model, logs[i], seed) for i in range(replicas)]
    try:
        for server in servers:
            server.launch()
        for server in servers:
            server.ready()
        # each server takes its share of the requests in flight; one request at a time per server
        # without batching (each sampled with its own seed, in order)
        per_server = max(1, client.concurrency // replicas) if spec["batching"] else 1
        saved = client.model, client.concurrency, client.bases
        client.model = {**model, "api_base": servers[0].api_base}
        client.bases = [s.api_base for s in servers for _ in range(per_server)]
        client.concurrency = len(client.bases)
        try:
            yield client
        finally:
            client.model, client.concurrency, client.bases = saved
    finally:
        for server in servers:
            server.__exit__(None, None, None)


def replica_log(log_path, i: int):
    """The log of a job's i-th extra server: server.log -> server.2.log (none where the first has none)."""
    if not log_path:
        return None
    path = Path(log_path)
    return path.with_name(f"{path.stem}.{i + 1}{path.suffix}")


def request_params(model: dict, seed: int) -> dict:
    """A model's sampling parameters, with the run's seed for a model served here (OpenAI's
    `seed`; the server seeds each request with it)."""
    params = model.get("params") or {}  # load_registry fills it; an entry made by hand may not have it
    return {**params, "seed": int(seed)} if model.get("serve") else dict(params)


def model_card(model: dict) -> dict | None:
    """The card of a model served here (aicd.models.local_models' card.json where its folder has one)
    and how it was served; None for a model reached at its own endpoint."""
    serve = model.get("serve")
    if not serve or model.get("api_base"):
        return None
    from ..models.local_models import card_of_folder
    from ..models.pretrained import resolve_model

    spec = settings(model)
    card = card_of_folder(resolve_model(spec["model"])) or {"name": spec["model"]}
    replicas, threads = int(spec["replicas"]), int(spec["threads"])
    how = engine_for(spec).how(int(model.get("concurrency", 1)), replicas) + \
        (f", {replicas} servers" if replicas > 1 else "")
    sampled = decoding(model.get("params") or {})
    decode = f"sampling at temperature {sampled['temperature']:g}" if sampled["do_sample"] else "greedy"
    return {**card, "served_by": f"{how} on 127.0.0.1 ({spec['dtype']}, {decode}, "
                                 f"{threads} thread{'' if threads == 1 else 's'} each)"}
