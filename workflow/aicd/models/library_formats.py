"""Library objects inside a fitted-model file, each stored in its library's own format, so that
reading the file back runs no code from it:

- a CatBoost model as the bytes of its .cbm file (CatBoost's save_model / load_model);
- a transformers model or tokenizer (the robust detector's small causal LM) as the files of
  save_pretrained: safetensors weights and JSON, read back with use_safetensors.

`portable(obj)` returns obj with every such object swapped for its stand-in (a copy where
something changed: the caller's objects stay as they are); `restored(obj)` swaps the stand-ins
back after reading. Both walk only the package's own objects and plain containers: a library
object held inside another library's object (or a user's) is not looked for."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from ..common.errors import AicdError

CATBOOST_CLASSES = ("CatBoostClassifier", "CatBoostRegressor", "CatBoost")


def _cbm(model) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.cbm"
        model.save_model(str(path), format="cbm")
        return path.read_bytes()


def same_bytes_cbm(model) -> bytes:
    """The model's .cbm bytes, the same for the same fit on every run: CatBoost stamps each fit
    with a random model_guid and its finish time. A copy gets a fixed time and, as its guid, a
    digest of the model saved with a blank one (still one guid per distinct model)."""
    import hashlib

    copy = model.copy()
    metadata = copy.get_metadata()
    metadata["train_finish_time"] = "1970-01-01T00:00:00Z"
    metadata["model_guid"] = "00000000-00000000-00000000-00000000"
    digest = hashlib.sha256(_cbm(copy)).hexdigest()
    metadata["model_guid"] = "-".join(digest[i:i + 8] for i in range(0, 32, 8))
    return _cbm(copy)


class CatBoostFile:
    """A fitted CatBoost model as its .cbm bytes and its constructor parameters."""

    def __init__(self, model) -> None:
        self.cls = type(model).__name__
        self.params = model.get_params()  # thread_count and the other settings predict keeps
        self.cbm = same_bytes_cbm(model)

    def restore(self):
        import catboost

        if self.cls not in CATBOOST_CLASSES:
            raise AicdError(f"a CatBoost model of unknown class {self.cls!r}")
        return getattr(catboost, self.cls)(**self.params).load_model(blob=self.cbm)


class TransformersFiles:
    """A transformers model or tokenizer as the files save_pretrained writes (safetensors, JSON)."""

    def __init__(self, obj) -> None:
        from transformers import PreTrainedModel

        self.role = "model" if isinstance(obj, PreTrainedModel) else "tokenizer"
        self.cls = type(obj).__name__
        with tempfile.TemporaryDirectory() as tmp:
            obj.save_pretrained(tmp)
            self.files = {p.relative_to(tmp).as_posix(): p.read_bytes() for p in sorted(Path(tmp).rglob("*"))
                          if p.is_file()}
        if self.role == "model" and not any(name.endswith(".safetensors") for name in self.files):
            raise AicdError(f"{self.cls}.save_pretrained wrote no safetensors file: it cannot be stored safely")

    def restore(self):
        import transformers

        with tempfile.TemporaryDirectory() as tmp:
            for name, data in self.files.items():
                target = (Path(tmp) / name).resolve()
                if Path(tmp).resolve() not in target.parents:  # a name like ../x from a crafted file
                    raise AicdError(f"a stored transformers file has an unsafe name: {name!r}")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            if self.role == "tokenizer":
                return transformers.AutoTokenizer.from_pretrained(tmp)
            cls = getattr(transformers, self.cls, None)
            if not (isinstance(cls, type) and issubclass(cls, transformers.PreTrainedModel)):
                raise AicdError(f"a stored transformers model of unknown class {self.cls!r}")
            return cls.from_pretrained(tmp, use_safetensors=True).eval()


STAND_INS = (CatBoostFile, TransformersFiles)


def _stand_in(obj):
    module = type(obj).__module__
    if module.startswith("catboost.") and type(obj).__name__ in CATBOOST_CLASSES:
        return CatBoostFile(obj)
    if module.startswith("transformers.") and "transformers" in sys.modules:
        from transformers import PreTrainedModel, PreTrainedTokenizerBase

        if isinstance(obj, (PreTrainedModel, PreTrainedTokenizerBase)):
            return TransformersFiles(obj)
    return None


def _ours(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "aicd" and hasattr(obj, "__dict__")


def _state(obj) -> dict:
    """What the file will hold of one of our objects: its own __getstate__ where it has one (which
    leaves out what is never stored, e.g. Fast-DetectGPT's scoring LM), else its attributes."""
    if getattr(type(obj), "__getstate__", None) is not getattr(object, "__getstate__", None):
        return dict(obj.__getstate__())
    return dict(vars(obj))


def portable(obj, _memo: dict | None = None):
    """obj with CatBoost and transformers objects swapped for their stand-ins."""
    memo = {} if _memo is None else _memo
    if id(obj) in memo:
        return memo[id(obj)]
    out = _stand_in(obj)
    if out is None:
        out = obj
        if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
            items = [portable(x, memo) for x in obj]
            if any(a is not b for a, b in zip(items, obj)):
                out = type(obj)(items)
        elif type(obj) is dict:
            items = {k: portable(v, memo) for k, v in obj.items()}
            if any(items[k] is not obj[k] for k in obj):
                out = items
        elif _ours(obj):
            held = _state(obj)
            state = {k: portable(v, memo) for k, v in held.items()}
            if any(state[k] is not v for k, v in held.items()):
                out = object.__new__(type(obj))
                out.__dict__.update(state)
    memo[id(obj)] = out
    return out


def restored(obj, _memo: dict | None = None):
    """obj, read back, with each stand-in replaced by the library object it stores."""
    memo = {} if _memo is None else _memo
    if id(obj) in memo:
        return memo[id(obj)]
    memo[id(obj)] = obj
    if isinstance(obj, STAND_INS):
        memo[id(obj)] = obj.restore()
    elif type(obj) is list:
        obj[:] = [restored(x, memo) for x in obj]
    elif type(obj) is tuple:
        memo[id(obj)] = tuple(restored(x, memo) for x in obj)
    elif type(obj) is dict:
        for k in list(obj):
            obj[k] = restored(obj[k], memo)
    elif _ours(obj):
        for k, v in list(vars(obj).items()):
            obj.__dict__[k] = restored(v, memo)
    return memo[id(obj)]
