"""GPU rates of the language-model stages, for the paper-scale projection (BENCHMARKS.md,
"Causal-LM token statistics"; benchmarks/notes/llm.md): the zero-shot panel's token statistics (aicd.lm.stats.TokenStats,
one and two models) in rows/s, and generation with `transformers` in tokens/s, on one GPU.

The models are the architectures of the pinned SmolLM2-135M-Instruct (its own config.json) and of
Qwen2.5-Coder-1.5B (config/config.yaml's Fast-DetectGPT scoring model) and -7B, with random
weights: a GPU node here reaches no Hub, and what a forward pass or a decoding step costs depends
on the architecture and the token counts, not on the weights' values. The texts are real trial
rows tokenised by SmolLM2's tokenizer (the 1.5B model then sees ids below 49,152 of its 151,936:
the same work per position). Generation decodes exactly `--new-tokens` tokens per prompt
(min_new_tokens), so a random model's early end of text cannot shorten it.

  python benchmarks/lm_gpu.py --assets DIR [--rows 2048] [--out results.json]
  python benchmarks/lm_gpu.py --assets DIR --smoke      # tiny configs on the CPU: the script runs

DIR holds config.json and the tokenizer files of SmolLM2 and texts.json (a list of code strings).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json")
# Qwen2.5-Coder's published configs (hidden size, layers, heads, KV heads, MLP width, vocabulary)
QWEN_1_5B = {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
             "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768,
             "tie_word_embeddings": True, "rope_theta": 1000000.0}
QWEN_7B = {"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
           "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768,
           "tie_word_embeddings": False, "rope_theta": 1000000.0}
TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": 49152, "max_position_embeddings": 2048, "tie_word_embeddings": True}


def architectures(assets: Path, smoke: bool) -> dict:
    from transformers import LlamaConfig, Qwen2Config

    if smoke:
        return {"tiny-llama": LlamaConfig(**TINY), "tiny-qwen2": Qwen2Config(**TINY)}
    return {"SmolLM2-135M": LlamaConfig.from_dict(json.loads((assets / "config.json").read_text())),
            "Qwen2.5-Coder-1.5B": Qwen2Config(**QWEN_1_5B), "Qwen2.5-Coder-7B": Qwen2Config(**QWEN_7B)}


def random_model(config, device: str, dtype):
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    with torch.device(device):
        return AutoModelForCausalLM.from_config(config, dtype=dtype).eval()


def saved_folder(model, assets: Path, root: Path, name: str) -> Path:
    """The model beside SmolLM2's tokenizer: a folder TokenStats loads like any local model."""
    folder = root / name
    model.save_pretrained(folder)
    for f in TOKENIZER_FILES:
        if (assets / f).is_file():
            shutil.copy(assets / f, folder / f)
    return folder


def sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def token_stats_rates(folder: Path, texts: list[str], device: str, windows, batches, pair: bool) -> list[dict]:
    from aicd.lm.stats import TokenStats

    out = []
    for window in windows:
        for batch in batches:
            stats = TokenStats(str(folder), reference_path=str(folder) + "-ref" if pair else None, window=window,
                               batch_size=batch, device=device, dtype="bfloat16" if device == "cuda" else "float32")
            stats.compute(texts[:batch])  # warm-up: kernels, allocator
            sync()
            started = time.perf_counter()
            values = stats.compute(texts)
            sync()
            wall = time.perf_counter() - started
            out.append({"window": window, "batch": batch, "models": 2 if pair else 1, "rows": len(texts),
                        "tokens_scored": float(values[:, 0].sum()), "seconds": wall, "rows_per_s": len(texts) / wall})
            print(f"  token stats, {'two models' if pair else 'one model'}, window {window}, batch {batch}: "
                  f"{len(texts) / wall:,.0f} rows/s ({values[:, 0].sum() / wall:,.0f} tokens/s)", flush=True)
            del stats
    return out


def generation_rates(model, tokenizer, texts: list[str], device: str, batches, prompt_tokens: int,
                     new_tokens: int) -> list[dict]:
    import torch

    out = []
    for batch in batches:
        enc = tokenizer(texts[:batch], return_tensors="pt", padding="max_length", truncation=True,
                        max_length=prompt_tokens).to(device)
        kwargs = {"max_new_tokens": new_tokens, "min_new_tokens": new_tokens, "do_sample": False,
                  "pad_token_id": tokenizer.pad_token_id}
        with torch.inference_mode():
            model.generate(**enc, **{**kwargs, "max_new_tokens": 4, "min_new_tokens": 4})  # warm-up
            sync()
            started = time.perf_counter()
            model.generate(**enc, **kwargs)
            sync()
        wall = time.perf_counter() - started
        out.append({"batch": batch, "prompt_tokens": prompt_tokens, "new_tokens": new_tokens, "seconds": wall,
                    "tokens_per_s": batch * new_tokens / wall})
        print(f"  generation, batch {batch}, {prompt_tokens}+{new_tokens} tokens: "
              f"{batch * new_tokens / wall:,.0f} new tokens/s", flush=True)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--assets", required=True, type=Path)
    ap.add_argument("--rows", type=int, default=2048)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    import torch
    from transformers import AutoTokenizer

    device = "cpu" if args.smoke else "cuda"
    dtype = torch.float32 if args.smoke else torch.bfloat16
    texts = json.loads((args.assets / "texts.json").read_text())[: (16 if args.smoke else args.rows)]
    tokenizer = AutoTokenizer.from_pretrained(args.assets)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    tokenizer.padding_side = "left"
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    report = {"gpu": gpu, "torch": torch.__version__, "rows": len(texts), "models": {}}
    print(f"GPU: {gpu}; torch {torch.__version__}; {len(texts)} trial texts", flush=True)
    small = args.smoke
    with tempfile.TemporaryDirectory() as tmp:
        for name, config in architectures(args.assets, args.smoke).items():
            model = random_model(config, device, dtype)
            params = sum(p.numel() for p in model.parameters())
            print(f"{name}: {params / 1e6:,.0f}M parameters (random weights)", flush=True)
            entry = report["models"][name] = {"parameters": params}
            entry["generation"] = generation_rates(model, tokenizer, texts, device, (1, 8) if small else (1, 64, 256),
                                                   64 if small else 256, 8 if small else 256)
            if "7B" not in name:  # the panel's models: config.yaml scores with the 1.5B
                folder = saved_folder(model, args.assets, Path(tmp), name)
                shutil.copytree(folder, str(folder) + "-ref")  # Binoculars' observer / Fast-DetectGPT's reference
                windows, batches = ((32,), (4,)) if small else ((256, 512), (32, 128))
                entry["token_stats"] = token_stats_rates(folder, texts, device, windows, batches, pair=False)
                entry["token_stats"] += token_stats_rates(folder, texts, device, windows[-1:], batches[-1:], pair=True)
                shutil.rmtree(folder)
                shutil.rmtree(str(folder) + "-ref")
            del model
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
