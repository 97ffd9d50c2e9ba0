"""`aicd serve-local`: the local model's server started by hand, for a run that should reach a
server of yours (give the registry entry this api_base) or for trying the model with any
OpenAI client. The workflow starts one per job by itself where an entry has no api_base."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_REGISTRY = [str(REPO / "config" / "models.yaml"), str(REPO / "config" / "models_local.yaml")]


def add_parser(sub, raw) -> None:
    p = sub.add_parser("serve-local", help="serve a registry model that has `serve:` (the packaged local LLM)",
                       formatter_class=raw,
                       description="Starts the server of a registry model that this machine serves itself "
                                   "(config/models_local.yaml: vLLM, or transformers serve) on 127.0.0.1, prints its api_base, and "
                                   "stops it on Ctrl-C. Requests name the model as its litellm_model does.",
                       epilog="examples:\n  aicd serve-local SmolLM2-135M-Instruct --port 8000\n"
                              "  # then, in a models file layered on the registry:  api_base: http://127.0.0.1:8000/v1")
    p.add_argument("model", help="the registry name (e.g. SmolLM2-135M-Instruct)")
    p.add_argument("--registry", nargs="+", default=DEFAULT_REGISTRY, help="models files, layered (default: "
                   "config/models.yaml config/models_local.yaml)")
    p.add_argument("--port", type=int, default=None, help="the port on 127.0.0.1 (default: a free one)")
    p.add_argument("--seed", type=int, default=0)


def serve_local_command(args) -> None:
    from .common.errors import AicdError
    from .generate.registry import load_registry
    from .llm import local_server

    models = load_registry(args.registry)
    if args.model not in models:
        raise AicdError(f"{args.model} is not in the registry ({', '.join(args.registry)})")
    entry = models[args.model]
    if not entry.get("serve"):
        raise AicdError(f"{args.model} has no `serve:` entry: it is reached at its own endpoint, not served here")
    received = []
    for sig in STOP_SIGNALS:
        signal.signal(sig, lambda signum, _frame: _stop(signum, received))
    with local_server.LocalServer(entry, seed=args.seed, port=args.port) as server:
        print(f"{args.model} served at {server.api_base} (model name {server.name!r}; log {server.log_path}); "
              "Ctrl-C stops it", flush=True)
        while server.proc.poll() is None:
            time.sleep(1)
        print(f"{args.model}: the server exited by itself (status {server.proc.returncode}; log {server.log_path})",
              file=sys.stderr, flush=True)


# Ctrl-C (SIGINT) and SIGTERM stop the server the same way, whether it is starting or serving: the
# with-block's exit stops its process group and removes its scratch folder. A second signal while
# that runs is ignored, so the stop is never cut short (a server left running, a folder left).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _stop(signum: int, received: list) -> None:
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    received.append(signum)
    print(f"{signal.Signals(signum).name}: stopping the server", file=sys.stderr, flush=True)
    raise SystemExit(0)
