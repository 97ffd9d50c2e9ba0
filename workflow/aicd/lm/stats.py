"""Per-text token statistics of a causal LM, computed once from one forward pass per model and
shared by every zero-shot criterion (the detector panel and the LM feature set read them).

Models: q is the scoring model; p is an optional reference model with the same tokenizer
(p = q by default, one forward pass in all). For the scored positions t (every token predicted
from its prefix; a leading BOS is prepended where the tokenizer has one, so the first code token
is scored; texts are truncated to `window` tokens, BOS included), the columns (STAT_NAMES) are:

    tokens       the number of scored positions n
    loglik       (1/n) sum_t log q(x_t | x_<t)
    logrank      (1/n) sum_t log rank_t, rank_t = 1 + #{v : q_t(v) > q_t(x_t)} (the most likely
                 token has rank 1, log rank 0; ties share the best rank)
    entropy      (1/n) sum_t H(q_t)
    ref_mean     (1/n) sum_t E_{z~p_t}[log q_t(z)]
    ref_var_sum  sum_t Var_{z~p_t}[log q_t(z)]

A text of fewer than two tokens (BOS included) has no scored position: NaN in every column (the
caller counts and reports them).

Criteria (CRITERIA; `criterion(name, stats)`, higher = more machine-like, NaN where undefined):

- loglik: the mean log-likelihood (the Likelihood baseline of Mitchell et al. 2023, "DetectGPT").
- logrank: minus the mean log rank (Mitchell et al. 2023's LogRank; Bao et al.'s baselines
  score the same -mean log rank, their rank from an argsort, which breaks ties arbitrarily).
- entropy: minus the mean entropy of q_t (machine text is the one the model is sure of). Note:
  the DetectGPT and Fast-DetectGPT baseline code score +entropy; the AUROC of one is 1 minus
  that of the other.
- lrr: Su et al. 2023 ("DetectLLM", Findings of EMNLP), the log-likelihood log-rank ratio
  LRR = -(1/n) sum_t log q(x_t|x_<t) / (1/n) sum_t log rank_t = -loglik / logrank (NaN where
  logrank is 0: every token the top one).
- fast_detectgpt: Bao et al. 2024 ("Fast-DetectGPT", ICLR), the analytic sampling discrepancy
  sum_t (log q(x_t) - mu_t) / sqrt(sum_t var_t), mu_t and var_t the mean and variance of
  log q_t(z) for z drawn from the sampling model p_t; q is their scoring model and p their
  reference (sampling) model: n * (loglik - ref_mean) / sqrt(ref_var_sum).
- binoculars: Hans et al. 2024 ("Spotting LLMs With Binoculars", ICML), B = log PPL / log X-PPL,
  where, as in their code, log PPL = -(1/n) sum_t log q(x_t) from the performer's logits and
  log X-PPL = (1/n) sum_t softmax(observer_t) . -log_softmax(performer_t): q is the performer,
  p the observer, so B = loglik / ref_mean. A low B means machine, hence the score -B.

Precision: the backbone runs in `dtype` (bfloat16 where the hardware has it, "auto"); the LM
head runs in float32 on float32 hidden states, and every reduction is float32 per position,
float64 per text. The LM head sees the real (unpadded) positions `chunk_tokens` at a time, so
the (batch, length, vocabulary) logits are never materialised."""

from __future__ import annotations

import logging
import time

import numpy as np

from ..common.errors import AicdError
from ..models.pretrained import choose_device, resolve_model, special_token_escaper

log = logging.getLogger("aicd.lm.stats")

STAT_NAMES = ("tokens", "loglik", "logrank", "entropy", "ref_mean", "ref_var_sum")
CRITERIA = ("loglik", "logrank", "entropy", "lrr", "fast_detectgpt", "binoculars")
DTYPES = ("auto", "float32", "bfloat16")
TEXTS_PER_CHUNK = 1024  # texts tokenised (and logged) at a time; each chunk's batches sorted by length
TERM_ROWS = 4  # positions reduced at a time on a CPU: their (rows, vocabulary) buffers stay in L2


def criterion(name: str, stats) -> np.ndarray:
    """The score of criterion `name` (one of CRITERIA) per row of `stats` (n, len(STAT_NAMES)):
    higher = more machine-like, NaN where undefined (and where the row's statistics are NaN)."""
    s = np.asarray(stats, dtype=np.float64)
    if s.ndim != 2 or s.shape[1] != len(STAT_NAMES):
        raise ValueError(f"token stats must be an (n, {len(STAT_NAMES)}) array of {STAT_NAMES}, got shape {s.shape}")
    tokens, loglik, logrank, entropy, ref_mean, ref_var_sum = s.T
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "loglik":
            return loglik.copy()
        if name == "logrank":
            return -logrank
        if name == "entropy":
            return -entropy
        if name == "lrr":
            return np.where(logrank == 0, np.nan, -loglik / logrank)
        if name == "fast_detectgpt":  # the variance floor is fast_detectgpt.criterion_from_logits's
            return tokens * (loglik - ref_mean) / np.sqrt(np.maximum(ref_var_sum, 1e-12))
        if name == "binoculars":
            return np.where(ref_mean == 0, np.nan, -(loglik / ref_mean))
    raise ValueError(f"unknown zero-shot criterion {name!r}: one of {', '.join(CRITERIA)}")


def cpu_has_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (AMX or AVX512-BF16; Linux /proc/cpuinfo)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return False
    return bool({"amx_bf16", "avx512_bf16"} & set(flags))


def choose_dtype(dtype: str, device: str) -> str:
    """"auto" -> bfloat16 on a CUDA device that supports it or a CPU with native bfloat16, else
    float32; an explicit float32 or bfloat16 stays."""
    if dtype not in DTYPES:
        raise AicdError(f"token stats: dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    if dtype != "auto":
        return dtype
    if device.startswith("cuda"):
        import torch
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    return "bfloat16" if cpu_has_bf16() else "float32"


def backbone_and_head(model):
    """(backbone, LM head) where logits = head(backbone(...).last_hidden_state) exactly and the
    head is a plain linear layer, else None (models that scale or cap their logits after the
    head take the full-logits path)."""
    import torch
    cfg = model.config
    if any(getattr(cfg, k, None) for k in ("final_logit_softcapping", "logit_scale", "logits_scaling")):
        return None
    backbone = getattr(model, "base_model", None)
    head = model.get_output_embeddings()
    if backbone is None or backbone is model or not isinstance(head, torch.nn.Linear):
        return None
    return backbone, head


class _CausalLM:
    """One causal LM: its real positions' states (hidden states, or the logits themselves on the
    full-logits path) and the float32 LM head that turns a chunk of states into logits."""

    def __init__(self, path: str, dtype: str, device: str, full_logits: bool):
        import torch
        from transformers import AutoModelForCausalLM
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype)).to(device).eval()
        parts = None if full_logits else backbone_and_head(self.model)
        self.backbone, self.weight, self.bias = None, None, None
        if parts is not None:
            self.backbone, head = parts
            self.weight = head.weight.detach().float()  # no copy when the model is float32
            self.bias = None if head.bias is None else head.bias.detach().float()
        self.vocab = self.model.get_output_embeddings().weight.shape[0]
        cfg = self.model.config
        limit = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
        self.max_positions = int(limit) if limit else None

    def states(self, input_ids, mask, keep):
        """(N, H) float hidden states of the positions `keep` marks, or (N, V) float32 logits on
        the full-logits path."""
        if self.backbone is None:
            return self.model(input_ids=input_ids, attention_mask=mask).logits[:, :-1][keep].float()
        return self.backbone(input_ids=input_ids, attention_mask=mask).last_hidden_state[:, :-1][keep]

    def logits(self, states):
        import torch
        if self.weight is None:
            return states
        return torch.nn.functional.linear(states.float(), self.weight, self.bias)


def token_terms(z, zp, labels):
    """Per position (n, 5) float64: log q(x_t), log rank_t, H(q_t), E_{p_t}[log q_t], Var_{p_t}[log q_t]
    from float32 logits z of q and zp of p (None: p = q). On a CPU the positions are reduced
    TERM_ROWS at a time in reused buffers, so every pass over the vocabulary stays in cache."""
    import torch
    n = z.shape[0]
    rows = TERM_ROWS if z.device.type == "cpu" else max(n, 1)
    work = torch.empty((2 if zp is None else 3, min(rows, n), z.shape[1]), dtype=torch.float32, device=z.device)
    out = torch.empty((n, 5), dtype=torch.float64, device=z.device)
    for start in range(0, n, rows):
        part = slice(start, start + rows)
        out[part] = _block_terms(z[part], None if zp is None else zp[part], labels[part], work)
    return out


def _block_terms(z, zp, labels, work):
    """token_terms of a few positions. With y = z - max z, log q = y - lse(y), so the moments of
    log q are those of y shifted by lse (centred y keeps them well conditioned)."""
    import torch
    k = z.shape[0]
    y, e = work[0, :k], work[1, :k]
    z_label = z.gather(-1, labels.unsqueeze(-1))
    # #{v: z_v > z_label} as a float sum of signs: exact (z_v - z_label is 0 only when equal, and
    # float32 counts exactly to 2^24) and much cheaper on CPU than summing a boolean tensor
    rank = torch.sub(z, z_label, out=y).clamp_(min=0).sign_().sum(-1) + 1
    zmax = z.amax(-1, keepdim=True)
    torch.sub(z, zmax, out=y)
    total = torch.exp(y, out=e).sum(-1)
    mean_q = e.mul_(y).sum(-1) / total                       # e now holds e * y
    if zp is None:
        m1, m2 = mean_q, e.mul_(y).sum(-1) / total
    else:
        w = torch.sub(zp, zp.amax(-1, keepdim=True), out=work[2, :k]).exp_()
        w_total = w.sum(-1)
        m1 = w.mul_(y).sum(-1) / w_total
        m2 = w.mul_(y).sum(-1) / w_total
    lse = total.double().log()
    m1 = m1.double()
    y_label = (z_label - zmax).squeeze(-1).double()
    return torch.stack([y_label - lse, rank.double().log(), lse - mean_q.double(), m1 - lse,
                        (m2.double() - m1 * m1).clamp_min(0.0)], dim=1)


class TokenStats:
    """The token statistics (STAT_NAMES) of scoring model `model_path` (and reference model
    `reference_path`, default the same) per text: `compute(texts) -> (n, 6) float64`.

    window: tokens per text, BOS included (longer code is truncated); batch_size: texts per
    forward pass (sorted by length, right padding with an attention mask); device: cpu, auto
    (CUDA when present) or cuda; dtype: auto, float32 or bfloat16 (of the backbone; the head is
    float32); threads: torch CPU threads; chunk_tokens: positions per LM-head chunk (0: the
    model's own full logits)."""

    def __init__(self, model_path: str, reference_path: str | None = None, window: int = 256, batch_size: int = 8,
                 device: str = "cpu", dtype: str = "auto", threads: int = 1, chunk_tokens: int = 128):
        import torch
        from transformers import AutoTokenizer
        for name, value, low in (("window", window, 2), ("batch_size", batch_size, 1), ("threads", threads, 1),
                                 ("chunk_tokens", chunk_tokens, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise AicdError(f"token stats: {name} must be an integer >= {low}, got {value!r}")
        self.window, self.batch_size, self.chunk_tokens = window, batch_size, chunk_tokens
        torch.set_num_threads(threads)
        self.device = choose_device(device)
        self.dtype = choose_dtype(dtype, self.device)
        path = resolve_model(model_path)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.escape = special_token_escaper(self.tokenizer)
        self.q = _CausalLM(path, self.dtype, self.device, full_logits=not chunk_tokens)
        self.p = None
        if reference_path and reference_path != model_path:
            ref_path = resolve_model(reference_path)
            if AutoTokenizer.from_pretrained(ref_path).get_vocab() != self.tokenizer.get_vocab():
                raise AicdError(f"token stats: reference model {reference_path} does not share the tokenizer of "
                                f"{model_path}; the two-model terms compare their distributions token by token")
            self.p = _CausalLM(ref_path, self.dtype, self.device, full_logits=not chunk_tokens)
        self.vocab = self.q.vocab if self.p is None else min(self.q.vocab, self.p.vocab)  # padded rows differ
        for lm, name in ((self.q, model_path), (self.p, reference_path)):
            if lm is not None and lm.max_positions and window > lm.max_positions:
                raise AicdError(f"token stats: window {window} exceeds the {lm.max_positions} positions of {name}")
        self.pad_id = next((i for i in (self.tokenizer.pad_token_id, self.tokenizer.eos_token_id) if i is not None), 0)

    def encode(self, texts) -> list[list[int]]:
        """Token ids per text (special-token text escaped), a leading BOS where the tokenizer has
        one, truncated to the window."""
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise AicdError(f"token stats: text {i} is a {type(t).__name__}, not a string")
        bos = [self.tokenizer.bos_token_id] if self.tokenizer.bos_token_id is not None else []
        ids = self.tokenizer(self.escape(texts), add_special_tokens=False, truncation=True,
                             max_length=self.window - len(bos))["input_ids"]
        return [bos + x for x in ids]

    def compute(self, texts) -> np.ndarray:
        """(len(texts), len(STAT_NAMES)) float64; for a text under two tokens, tokens 0 and NaN elsewhere."""
        texts = list(texts)
        out = np.full((len(texts), len(STAT_NAMES)), np.nan, dtype=np.float64)
        started = time.perf_counter()
        for start in range(0, len(texts), TEXTS_PER_CHUNK):
            part = texts[start:start + TEXTS_PER_CHUNK]
            out[start:start + len(part)] = self.compute_ids(self.encode(part))
            if len(texts) > TEXTS_PER_CHUNK:
                done = start + len(part)
                log.info("token stats of %d of %d texts (%.1f texts/s)", done, len(texts),
                         done / max(time.perf_counter() - started, 1e-9))
        return out

    def compute_ids(self, ids: list[list[int]]) -> np.ndarray:
        """The statistics per token sequence (already truncated). Below two tokens nothing is
        scored: `tokens` is 0 and every other column NaN (a row with a count and no statistic is
        a text too short to score, not one left out)."""
        import torch
        out = np.full((len(ids), len(STAT_NAMES)), np.nan, dtype=np.float64)
        out[:, STAT_NAMES.index("tokens")] = [max(len(x) - 1, 0) for x in ids]
        with torch.inference_mode():
            for pos, input_ids, mask in self.batches(ids):
                out[pos] = self.batch_stats(input_ids, mask)
        return out

    def batches(self, ids: list[list[int]]):
        """(positions in `ids`, input_ids, attention_mask) of the sequences of two or more tokens,
        sorted by (length, ids): the batches depend on the set of texts, not on their order."""
        import torch
        scored = sorted((i for i, x in enumerate(ids) if len(x) >= 2), key=lambda i: (len(ids[i]), ids[i]))
        for start in range(0, len(scored), self.batch_size):
            pos = np.asarray(scored[start:start + self.batch_size], dtype=np.int64)
            width = max(len(ids[i]) for i in pos)
            input_ids = torch.full((len(pos), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(pos), width), dtype=torch.long)
            for k, i in enumerate(pos):
                input_ids[k, :len(ids[i])] = torch.tensor(ids[i], dtype=torch.long)
                mask[k, :len(ids[i])] = 1
            yield pos, input_ids.to(self.device), mask.to(self.device)

    def batch_stats(self, input_ids, mask) -> np.ndarray:
        """(B, len(STAT_NAMES)) float64 of one right-padded batch (every row two tokens or more)."""
        import torch
        keep = mask[:, 1:].bool()
        labels = input_ids[:, 1:][keep]
        owner = torch.arange(input_ids.shape[0], device=keep.device).unsqueeze(1).expand_as(keep)[keep]
        states_q = self.q.states(input_ids, mask, keep)
        states_p = None if self.p is None else self.p.states(input_ids, mask, keep)
        sums = torch.zeros((input_ids.shape[0], len(STAT_NAMES) - 1), dtype=torch.float64, device=keep.device)
        step = self.chunk_tokens or labels.shape[0]
        for start in range(0, labels.shape[0], step):
            part = slice(start, start + step)
            z = self.q.logits(states_q[part])[:, :self.vocab]
            zp = None if self.p is None else self.p.logits(states_p[part])[:, :self.vocab]
            sums.index_add_(0, owner[part], token_terms(z, zp, labels[part]))
        tokens = keep.sum(1).double()
        means = sums / tokens.unsqueeze(1)
        means[:, -1] = sums[:, -1]  # ref_var_sum is a sum over positions
        return torch.cat([tokens.unsqueeze(1), means], dim=1).cpu().numpy()
