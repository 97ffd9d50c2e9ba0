"""A job's failed requests: a warning with counts, or a user error once too many failed.

A model whose every request fails (a wrong key, a wrong model name, a dead endpoint) must
stop its job with the reason; a few failures among many are kept as rows with status
"error" and counted. `llm.fail_threshold` (fraction of requests; default 1.0) is where one
becomes the other."""

from __future__ import annotations

import logging
import re
from collections import Counter

from ..common.defaults import schema_default
from ..common.errors import AicdError

log = logging.getLogger(__name__)

DEFAULT_THRESHOLD = schema_default("llm.fail_threshold")  # the config's, for a caller outside a run


def _hint(error: str, model: dict) -> str:
    kind = error.split(":", 1)[0]
    if kind in ("AuthenticationError", "PermissionDeniedError"):
        if model.get("api_key_env"):
            return f"check {model['api_key_env']}"
        return f"check the credentials the endpoint {model.get('api_base')} expects"
    if kind == "NotFoundError":
        return f"check litellm_model '{model.get('litellm_model')}' in the model registry"
    endpoint = model.get("api_base") or "the provider"
    if kind == "APIConnectionError" or "Connection error" in error:  # litellm's words for a refused connection
        return (f"check that the endpoint answers ({endpoint}): start its server, or fix api_base "
                "in the model registry")
    if kind in ("Timeout", "ServiceUnavailableError", "InternalServerError", "BadGatewayError"):
        return f"check that the endpoint answers ({endpoint}), or raise llm.timeout"
    if kind == "ResponseTooLarge":
        return "raise llm.max_response_bytes if such answers are wanted, or lower max_tokens"
    return "see the job's log"


def _shorter(error: str) -> str:
    # litellm repeats the type: "AuthenticationError: litellm.AuthenticationError: AuthenticationError: ..."
    kind, _, rest = error.partition(": ")
    if not rest:
        return error
    repeated = re.compile(rf"^((litellm\.)?{re.escape(kind)}: )+")
    return f"{kind}: {repeated.sub('', rest)}"


def check_failures(results: list[dict], model: dict, what: str, threshold: float | None = None) -> int:
    """Number of failed requests; raises AicdError when they reach `threshold` of all."""
    threshold = DEFAULT_THRESHOLD if threshold is None else float(threshold)
    errors = [r["error"] or "unknown error" for r in results if r["status"] == "error"]
    if not errors:
        return 0
    reason, times = Counter(errors).most_common(1)[0]
    counts = f"{len(errors)} of {len(results)} {what} requests failed"
    detail = _shorter(reason) + (f"; {times} of them" if times < len(errors) else "")
    if len(errors) >= threshold * len(results):
        limit = f" (llm.fail_threshold: {threshold:g})" if threshold < 1 else ""
        raise AicdError(f"model {model['name']}: {counts}{limit} ({detail}); {_hint(reason, model)}")
    log.warning("model %s: %s (%s); they are rows with status 'error'", model["name"], counts, detail)
    return len(errors)
