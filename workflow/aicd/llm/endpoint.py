"""The run-time check that a model can be reached from the machine running the job.

The workflow plans LLM jobs from the config alone (the same jobs on every machine); a job
whose model has neither an api_base nor its key in this environment stops here, before any
request, with one line naming what to set."""

from __future__ import annotations

import os

from ..common.errors import AicdError


def require_endpoint(model: dict, role: str, environ=os.environ, servable=None) -> None:
    """servable(entry) -> None or what is missing, for a model served here (`serve:`)."""
    if model.get("api_base"):
        return
    key = model.get("api_key_env")
    if key and environ.get(key):
        return
    name = model.get("name", "?")
    if model.get("serve") and servable is not None:
        missing = servable(model)
        if missing is None:
            return
        raise AicdError(f"{role} {name}: it is served on this machine, but {missing}")
    how = f"set {key} in the environment snakemake runs in" if key else "give it an api_base (a vLLM or Ollama server)"
    raise AicdError(f"{role} {name}: no endpoint on this machine: {how} (config/models.yaml), "
                    f"or switch the stage off in the config (enabled: false, or auto)")
