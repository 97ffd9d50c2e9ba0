"""Train a small causal code LM: byte-level BPE tokenizer + GPT-2 (few layers), on human code.

Our choices (nothing in the paper): GPT-2 blocks (learned positions, the window as the context
length), byte-level BPE so any code is tokenizable, AdamW with linear warm-up and cosine decay,
training blocks of `window` tokens cut from the concatenated code (EOS between samples), a
token budget (`max_train_tokens`) so the demo's cost is bounded. Held-out mean token loss on
the validation split's human and machine code is written to `lm.json`: the gap between them is
what Fast-DetectGPT can use."""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import time
from pathlib import Path

import numpy as np

from ..common.params import Param, ParamSpec
from ..outputs import beside

log = logging.getLogger("aicd.lm")

EOS = "<|endoftext|>"
PARAMS = ParamSpec("the causal LM", (
    Param("vocab_size", (int,), 4096, "ours", "byte-level BPE vocabulary", minimum=256),
    Param("layers", (int,), 4, "ours", "GPT-2 blocks", minimum=1),
    Param("hidden", (int,), 128, "ours", "hidden size", minimum=8),
    Param("heads", (int,), 4, "ours", "attention heads", minimum=1),
    Param("window", (int,), 256, "ours", "context length, tokens", minimum=8),
    Param("batch_size", (int,), 16, "ours", "blocks per step", minimum=1),
    Param("learning_rate", (float,), 2.0e-3, "ours", "AdamW peak rate", minimum=0, exclusive_minimum=True),
    Param("warmup_ratio", (float,), 0.05, "ours", "linear warm-up share of the steps", minimum=0),
    Param("weight_decay", (float,), 0.01, "ours", "AdamW weight decay", minimum=0),
    Param("epochs", (int,), 1, "ours", "passes over the training tokens", minimum=1),
    Param("max_train_tokens", (int,), 400_000, "ours", "cap on training tokens per epoch (the demo's budget)",
          minimum=1),
    Param("max_eval_rows", (int,), 200, "ours", "validation rows per class for the held-out loss", minimum=1),
    Param("human_label", (str,), "human", "ours", "the class whose code it is trained on"),
    Param("task", (str,), None, "ours", "the task whose train split it is trained on (read by the workflow)"),
))
DEFAULTS = {k: v for k, v in PARAMS.defaults().items() if k != "task"}


def settings(params: dict | None) -> dict:
    params = {k: v for k, v in (params or {}).items() if k != "task"}
    try:
        PARAMS.check(params)
    except TypeError as err:
        raise ValueError(f"unknown causal-LM settings: {err}") from None
    return {**DEFAULTS, **params}


def train_tokenizer(texts, vocab_size: int):
    """Byte-level BPE trained on `texts`, wrapped as a transformers fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS], min_frequency=2,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(list(texts), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOS, eos_token=EOS, unk_token=EOS, pad_token=EOS)


def build_model(cfg: dict, vocab_size: int, eos_id: int, seed: int):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=vocab_size, n_positions=cfg["window"], n_embd=cfg["hidden"], n_layer=cfg["layers"],
                        n_head=cfg["heads"], bos_token_id=eos_id, eos_token_id=eos_id, pad_token_id=eos_id,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2LMHeadModel(config)


def blocks(tokenizer, texts, window: int, max_tokens: int, seed: int) -> np.ndarray:
    """Concatenate tokenised texts (EOS after each, shuffled order), cut into rows of `window` tokens."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(texts))
    ids: list[int] = []
    eos = tokenizer.eos_token_id
    for i in order:
        ids.extend(tokenizer(texts[i], add_special_tokens=False)["input_ids"][: 4 * window])
        ids.append(eos)
        if len(ids) >= max_tokens:
            break
    n = len(ids) // window
    if n == 0:
        raise ValueError(f"too little training text: {len(ids)} tokens for one window of {window}")
    return np.asarray(ids[: n * window], dtype=np.int64).reshape(n, window)


def mean_token_loss(model, tokenizer, texts, window: int, batch_size: int = 16) -> float | None:
    """Mean next-token loss (nats) over `texts`, each truncated to the window."""
    import torch
    if not len(texts):
        return None
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            enc = tokenizer(list(texts[start:start + batch_size]), truncation=True, max_length=window,
                            padding=True, return_tensors="pt")
            logits = model(**enc).logits[:, :-1].float()
            labels = enc["input_ids"][:, 1:]
            mask = enc["attention_mask"][:, 1:].bool()
            nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels, reduction="none")
            total += float(nll[mask].sum())
            count += int(mask.sum())
    return total / count if count else None


def train(train_texts, params: dict | None = None, seed: int = 0, threads: int = 1,
          eval_texts: dict[str, list] | None = None) -> tuple[object, object, dict]:
    """Train tokenizer + model on `train_texts`; returns (model, tokenizer, report)."""
    import torch

    cfg = settings(params)
    torch.set_num_threads(max(1, threads))
    started = time.perf_counter()
    texts = [t for t in train_texts if isinstance(t, str) and t.strip()]
    tokenizer = train_tokenizer(texts, cfg["vocab_size"])
    data = blocks(tokenizer, texts, cfg["window"], cfg["max_train_tokens"], seed)
    model = build_model(cfg, len(tokenizer), tokenizer.eos_token_id, seed)
    steps_per_epoch = math.ceil(len(data) / cfg["batch_size"])
    total_steps = steps_per_epoch * cfg["epochs"]
    warmup = max(1, int(cfg["warmup_ratio"] * total_steps))
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["learning_rate"], weight_decay=cfg["weight_decay"])

    def lr_at(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total_steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_at)
    rng = np.random.default_rng(seed)
    losses = []
    step = 0
    model.train()
    for _epoch in range(cfg["epochs"]):
        order = rng.permutation(len(data))
        for start in range(0, len(order), cfg["batch_size"]):
            batch = torch.from_numpy(data[order[start:start + cfg["batch_size"]]])
            loss = model(input_ids=batch, labels=batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(float(loss.detach()))
            step += 1
            if step % 20 == 0 or step == total_steps:
                log.info("step %d/%d loss %.3f", step, total_steps, float(np.mean(losses[-20:])))
    model.eval()
    report = {
        "settings": cfg, "seed": seed,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "train_texts": len(texts), "train_tokens": int(data.size), "steps": step,
        "loss_first": losses[0], "loss_last": float(np.mean(losses[-10:])),
        "train_seconds": round(time.perf_counter() - started, 1),
        "held_out_loss": {name: mean_token_loss(model, tokenizer, list(t)[: cfg["max_eval_rows"]], cfg["window"])
                          for name, t in (eval_texts or {}).items()},
    }
    return model, tokenizer, report


def save(model, tokenizer, report: dict, path) -> None:
    """save_pretrained (model + tokenizer) and lm.json into `path`, renamed into place when complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    Path(beside(tmp, "lm_report")).write_text(json.dumps(report, indent=2, default=str) + "\n")
    if path.exists():
        shutil.rmtree(path)
    os.replace(tmp, path)
