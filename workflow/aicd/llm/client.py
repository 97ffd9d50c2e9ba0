"""An LLM client on litellm.acompletion: bounded concurrency, rpm/tpm limits, retries with
exponential backoff that honour Retry-After (on 429, 5xx, timeouts and dropped connections;
never on auth or context-length errors), a per-request timeout, and the project's request
cache in front of every call. Rows out = requests in: a request that still fails after its
retries, or whose answer is over `max_response_bytes`, comes back as a row with status
"error", never dropped (and never cached).

API keys come from the environment variable a model names (`api_key_env`) and never reach
logs or results."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections import deque
from dataclasses import dataclass, field

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost-map fetch at import
import litellm

from ..codetools.codetext import extract_code
from ..common.defaults import schema_default
from .cache import RequestCache, request_key

log = logging.getLogger(__name__)
litellm.suppress_debug_info = True
# litellm logs a line per request at INFO ("LiteLLM completion() model= ..."): thousands of lines
# in a job's log that say nothing the job's own report does not
logging.getLogger("LiteLLM").setLevel(logging.WARNING)

FATAL = (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError,
         litellm.ContextWindowExceededError, litellm.BadRequestError)
RETRYABLE = (litellm.RateLimitError, litellm.Timeout, litellm.APIConnectionError,
             litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.BadGatewayError)


# The config's `llm:` defaults, for a client made outside a run (client_from_config passes the
# run's). Larger answers than max_response_bytes are failures, never cached: no program in the
# benchmark is near 1 MB, and runaway outputs of 20 MB once filled the request cache.
DEFAULT_MAX_RESPONSE_BYTES = schema_default("llm.max_response_bytes")
CACHE, CONCURRENCY, TIMEOUT = (schema_default(f"llm.{k}") for k in ("cache", "concurrency", "timeout"))
MAX_RETRIES, BACKOFF_BASE, BACKOFF_MAX = (schema_default(f"llm.{k}") for k in ("max_retries", "backoff_base",
                                                                               "backoff_max"))


@dataclass
class RetryPolicy:
    max_retries: int = MAX_RETRIES
    backoff_base: float = BACKOFF_BASE
    backoff_max: float = BACKOFF_MAX

    def delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = min(self.backoff_max, self.backoff_base * 2 ** attempt) * random.uniform(0.5, 1.0)
        return max(backoff, min(retry_after, self.backoff_max)) if retry_after is not None else backoff


class RateLimiter:
    """Requests per minute as a minimum spacing; tokens per minute over a sliding window."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None):
        self.interval = 60.0 / rpm if rpm else 0.0
        self.tpm = tpm
        self._next = 0.0
        self._window: deque[tuple[float, int]] = deque()
        self._lock = asyncio.Lock()

    async def acquire(self, tokens: int) -> None:
        async with self._lock:
            now = time.monotonic()
            wait = max(0.0, self._next - now)
            if self.tpm:
                while self._window and self._window[0][0] <= now - 60:
                    self._window.popleft()
                used = sum(t for _, t in self._window)
                for stamp, spent in list(self._window):
                    if used + tokens <= self.tpm:
                        break
                    wait = max(wait, stamp + 60 - now)
                    used -= spent
            if wait > 0:
                await asyncio.sleep(wait)
            now = time.monotonic()
            self._next = now + self.interval
            if self.tpm:
                self._window.append((now, tokens))


@dataclass
class LLMClient:
    model: dict                      # a registry entry: litellm_model, api_base?, api_key_env?, costs?
    cache: RequestCache
    concurrency: int = CONCURRENCY
    timeout: float = float(TIMEOUT)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    rpm: float | None = None
    tpm: float | None = None
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    # several servers of one model (a local model's serve.replicas): each request takes one that
    # is free, and gives it back when answered; None: the model's own api_base
    bases: list | None = None

    def __post_init__(self):
        self._limiter = RateLimiter(self.rpm, self.tpm)
        self._key = os.environ.get(self.model["api_key_env"]) if self.model.get("api_key_env") else None
        self.sent = 0  # HTTP requests actually sent (retries included)

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def _pricing(self) -> dict:
        """Registry prices as litellm's per-call custom pricing, so litellm prices the
        response once (computing it again here cost ~0.7 ms of CPU per request)."""
        price = self.model.get("cost_per_million_tokens")
        if not price:
            return {}
        return {"input_cost_per_token": price["input"] / 1e6, "output_cost_per_token": price["output"] / 1e6}

    async def _send(self, messages: list, params: dict) -> dict:
        if self.bases:
            base = await self._free_bases.get()
            try:
                return await self._send_to(messages, params, base)
            finally:
                self._free_bases.put_nowait(base)
        return await self._send_to(messages, params, self.model.get("api_base"))

    async def _send_to(self, messages: list, params: dict, api_base: str | None) -> dict:
        kwargs = dict(params)
        if api_base:
            kwargs["api_base"] = api_base
        kwargs["api_key"] = self._key or ("not-needed" if api_base else None)
        kwargs.update(self._pricing())
        estimate = sum(len(str(m.get("content", ""))) for m in messages) // 4 + int(params.get("max_tokens") or 0)
        await self._limiter.acquire(estimate)
        self.sent += 1
        started = time.perf_counter()
        response = await litellm.acompletion(model=self.model["litellm_model"], messages=messages,
                                             timeout=self.timeout, max_retries=0, num_retries=0, **kwargs)
        latency = time.perf_counter() - started
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        return {
            "text": choice.message.content or "",
            "reasoning": getattr(choice.message, "reasoning_content", None),
            "finish_reason": choice.finish_reason,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            # None where neither the registry nor litellm's price map knows the model: counted as 0.
            "cost": float((getattr(response, "_hidden_params", None) or {}).get("response_cost") or 0.0),
            "latency_s": latency,
        }

    async def complete(self, messages: list, params: dict, semaphore: asyncio.Semaphore | None = None) -> dict:
        key = request_key(self.cache_model, messages, params)
        hit = self.cache.get(key)
        if hit is not None:
            too_large = self._too_large(hit)  # cached before the cap existed
            return _error_row(too_large, 0) if too_large else _row(hit, attempts=0, cached=True)
        attempts, last_error = 0, None
        while True:
            attempts += 1
            try:
                if semaphore is None:
                    result = await self._send(messages, params)
                else:
                    async with semaphore:
                        result = await self._send(messages, params)
            except FATAL as err:
                last_error = err
                break
            except RETRYABLE as err:
                last_error = err
                if attempts > self.retry.max_retries:
                    break
                delay = self.retry.delay(attempts - 1, _retry_after(err))
                log.info("retry %d after %.2fs: %s", attempts, delay, type(err).__name__)
                await asyncio.sleep(delay)
                continue
            too_large = self._too_large(result)
            if too_large:  # never cached, never retried: the same prompt would likely do it again
                log.warning("%s", too_large)
                return _error_row(too_large, attempts, result)
            self.cache.put(key, self.cache_model, result)
            return _row(result, attempts=attempts, cached=False)
        message = self._redact(f"{type(last_error).__name__}: {str(last_error).splitlines()[0][:300]}")
        return _error_row(message, attempts)

    def uncached(self, requests: list[tuple[list, dict]]) -> int:
        """How many of the requests the cache cannot answer (a rerun that needs none sends nothing)."""
        return sum(self.cache.get(request_key(self.cache_model, m, p)) is None for m, p in requests)

    @property
    def cache_model(self) -> str:
        """What names the model in the cache key: its litellm string, and for a model served
        here how it is served (another server, dtype or batching gives other answers)."""
        if not self.model.get("serve"):
            return self.model["litellm_model"]
        from .engines import cache_identity, settings
        from .local_server import DECODING

        return f"{self.model['litellm_model']}#serve={cache_identity(settings(self.model))}#decoding={DECODING}"

    def _too_large(self, result: dict) -> str | None:
        size = len(result["text"].encode("utf-8")) + len((result.get("reasoning") or "").encode("utf-8"))
        if size <= self.max_response_bytes:
            return None
        return (f"ResponseTooLarge: {size:,} bytes of content exceed llm.max_response_bytes "
                f"({self.max_response_bytes:,}); the answer was dropped")

    async def run_async(self, requests: list[tuple[list, dict]], progress=None) -> list[dict]:
        semaphore = asyncio.Semaphore(self.concurrency)
        self._free_bases = asyncio.Queue()
        for base in self.bases or []:
            self._free_bases.put_nowait(base)
        results: list[dict | None] = [None] * len(requests)

        async def one(i: int, messages: list, params: dict) -> None:
            results[i] = await self.complete(messages, params, semaphore)
            if progress:
                progress.update(1)

        await asyncio.gather(*(one(i, m, p) for i, (m, p) in enumerate(requests)))
        return results  # type: ignore[return-value]

    def run(self, requests: list[tuple[list, dict]], progress=None) -> list[dict]:
        return asyncio.run(self.run_async(requests, progress))


def client_from_config(model: dict, llm: dict) -> LLMClient:
    """A client for one registry entry with the workflow's `llm:` settings."""
    return LLMClient(
        model, RequestCache(llm.get("cache", CACHE)),
        concurrency=model.get("concurrency", llm.get("concurrency", CONCURRENCY)),
        timeout=model.get("timeout", llm.get("timeout", TIMEOUT)),
        retry=RetryPolicy(llm.get("max_retries", MAX_RETRIES), llm.get("backoff_base", BACKOFF_BASE),
                          llm.get("backoff_max", BACKOFF_MAX)),
        rpm=model.get("rpm"), tpm=model.get("tpm"),
        max_response_bytes=int(llm.get("max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES)),
    )


def _error_row(message: str, attempts: int, result: dict | None = None) -> dict:
    """A failed request: no text; tokens and cost kept where the provider charged them."""
    spent = {k: (result or {}).get(k, d) for k, d in (("prompt_tokens", 0), ("completion_tokens", 0), ("cost", 0.0))}
    return {"text": "", "code": "", "reasoning": None, "finish_reason": None, **spent,
            "latency_s": (result or {}).get("latency_s"), "attempts": attempts, "cached": False,
            "status": "error", "error": message}


def _row(result: dict, attempts: int, cached: bool) -> dict:
    text = result["text"]
    if not text.strip():
        status = "empty"
    elif result["finish_reason"] == "length":
        status = "truncated"
    else:
        status = "ok"
    return {**result, "code": extract_code(text), "attempts": attempts, "cached": cached,
            "status": status, "error": None}


def _retry_after(err: Exception) -> float | None:
    response = getattr(err, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
