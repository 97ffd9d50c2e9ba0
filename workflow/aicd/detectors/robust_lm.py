"""Token statistics of a small causal code LM for the `robust` detector (option `lm`).

The LM (aicd.lm.train: byte-level BPE + GPT-2 blocks) is trained at fit time on the HUMAN code
of the training rows only (cheap by default: 2 layers, 150k tokens). Per program, from one
forward pass over its first `window` tokens, three features (chosen on the group splits of the
trial data, BENCHMARKS.md, "Out-of-distribution protocol"):
- `lm_fdg`: Fast-DetectGPT's analytic curvature with the same model as scorer and reference,
  sum(log p - E[log p]) / sqrt(sum Var[log p]), which is normalised per token and so less tied
  to one language's perplexity level than the raw log-probability;
- `lm_logp_mean`: mean log-probability of the observed tokens;
- `lm_entropy_mean`: mean predictive entropy.
NaN for a program of fewer than two tokens."""

from __future__ import annotations

import numpy as np

LM_FEATURES = ("lm_fdg", "lm_logp_mean", "lm_entropy_mean")
LM_DEFAULTS = {"layers": 2, "max_train_tokens": 150_000, "window": 256}


def train_lm(human_codes, params: dict | None, seed: int, threads: int):
    from ..lm.train import train

    model, tokenizer, _ = train(list(human_codes), {**LM_DEFAULTS, **(params or {})}, seed=seed, threads=threads)
    model.eval()
    return model, tokenizer


def lm_features(model, tokenizer, codes, threads: int = 1, batch_size: int = 32) -> np.ndarray:
    """(n, 3) matrix of LM_FEATURES, one forward pass per program (length-sorted batches)."""
    import torch

    torch.set_num_threads(max(1, threads))
    window = int(model.config.n_positions)
    eos = tokenizer.eos_token_id
    ids = [tokenizer(c if isinstance(c, str) else "", add_special_tokens=False)["input_ids"][:window] for c in codes]
    out = np.full((len(ids), len(LM_FEATURES)), np.nan)
    order = np.argsort([len(e) for e in ids], kind="stable")
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            idx = [i for i in order[start:start + batch_size] if len(ids[i]) >= 2]
            if not idx:
                continue
            width = max(len(ids[i]) for i in idx)
            batch = torch.full((len(idx), width), eos, dtype=torch.long)
            mask = torch.zeros((len(idx), width), dtype=torch.bool)
            for r, i in enumerate(idx):
                batch[r, :len(ids[i])] = torch.tensor(ids[i])
                mask[r, :len(ids[i])] = True
            logits = model(input_ids=batch, attention_mask=mask).logits[:, :-1].float()
            labels, m = batch[:, 1:], mask[:, 1:].float()
            lp = torch.log_softmax(logits, dim=-1)
            p = lp.exp()
            ll = lp.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
            ent = -(p * lp).sum(-1)
            var = ((p * lp.square()).sum(-1) - ent.square()).clamp_min(0)
            n = m.sum(-1)
            logp_mean = (ll * m).sum(-1) / n
            ent_mean = (ent * m).sum(-1) / n
            fdg = ((ll + ent) * m).sum(-1) / (var * m).sum(-1).clamp_min(1e-12).sqrt()
            out[idx] = torch.stack([fdg, logp_mean, ent_mean], dim=1).numpy()
    return out
