"""Fine-tuned encoders (the paper's §5.1): `AutoModelForSequenceClassification` trained with
the `transformers` Trainer on a task's train split, the checkpoint chosen on validation
macro-F1, test predicted with per-class scores.

What comes from `transformers` and is not re-written here: the training loop, AdamW and the
warm-up schedule, gradient accumulation, bf16/fp16 autocast, the length-grouped sampler
(`train_sampling_strategy="group_by_length"`), dynamic padding (`DataCollatorWithPadding`),
checkpoints with optimizer, scheduler and RNG state, resuming, best-checkpoint selection and
the progress bar. What is ours: reading the model offline with a one-line error, the token
cache (tokenised in chunks into Arrow, never as one Python list per split), resuming only from
a complete checkpoint of the same run, escaping the literal text of the tokenizer's special
tokens, no fp16 for T5-family models, and a chunked, length-sorted `torch.no_grad()` predict
loop (memory bounded by the chunk, not by the test split).

Training settings (params of a `kind: encoder` config entry) and which are the paper's:
window 512, epochs 3, batch_size 64 are §5.1; every other default is ours (PARAMS).

The package holds EncoderDetector and DEFAULTS. Reading the model and escaping special tokens
come from aicd.models.pretrained; the encoder's own helpers (the public ones re-exported here):

- tokens: row sampling and the token cache;
- runtime: device and precision;
- checkpoints: resuming from a complete checkpoint of the same run;
- trainer: the transformers Trainer set up from the settings."""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path

import numpy as np

from ...common.errors import AicdError
from ...common.params import Param, ParamSpec
from ...models.pretrained import TEXT_PREP_VERSION, offline, resolve_model, special_token_escaper
from ..base import Detector, register
from .checkpoints import checkpoint_step, last_complete_checkpoint, prepare_run_folder, run_fingerprint
from .runtime import choose_device, choose_precision, no_fp16
from .tokens import TokenCache, fit_rows, stratified_cap
from .trainer import batch_shape, make_trainer, padding_collator, training_arguments

__all__ = ["DEFAULTS", "EncoderDetector", "TEXT_PREP_VERSION", "TokenCache", "checkpoint_step",
           "choose_device", "choose_precision", "last_complete_checkpoint", "no_fp16", "offline",
           "resolve_model", "special_token_escaper", "stratified_cap"]

log = logging.getLogger("aicd.detectors.encoder")

PARAMS = ParamSpec("the encoder", (
    Param("model", (str,), None, "ours", "a Hub id, a local folder, or package:NAME (a pip package shipping weights)"),
    Param("window", (int,), 512, "paper", "input window, tokens (special tokens included)", minimum=1),
    Param("epochs", (int,), 3, "paper", "training epochs", minimum=1),
    Param("batch_size", (int,), 64, "paper", "the effective batch (micro batch x accumulation)", minimum=1),
    Param("micro_batch_size", (int,), 16, "ours", "rows per forward/backward; accumulation makes up batch_size",
          minimum=1),
    Param("eval_batch_size", (int,), 64, "ours", "rows per prediction batch", minimum=1),
    Param("learning_rate", (float,), 2e-5, "ours", "AdamW peak rate (the paper gives none)", minimum=0),
    Param("weight_decay", (float,), 0.01, "ours", "AdamW weight decay", minimum=0),
    Param("warmup_ratio", (float,), 0.06, "ours", "linear warm-up share of the steps, then linear decay", minimum=0),
    Param("scheduler", (str,), "linear", "ours", "any transformers lr_scheduler_type"),
    Param("optimizer", (str,), "adamw_torch", "ours", "any transformers `optim`"),
    Param("max_grad_norm", (float,), 1.0, "ours", "gradient clipping", minimum=0),
    Param("save_steps", (int,), None, "ours", "also checkpoint every N optimizer steps (always every epoch)",
          minimum=0),
    Param("save_total_limit", (int,), 2, "ours", "checkpoints kept (the best one always is)", minimum=1),
    Param("logging_steps", (int,), 10, "ours", "optimizer steps between log lines", minimum=1),
    Param("max_steps", (int,), None, "ours", "stop after N optimizer steps (tests, smoke runs)", minimum=0),
    Param("max_train_rows", (int,), None, "ours", "a seeded, class-stratified sample of train (the CPU demo)",
          minimum=0),
    Param("max_validation_rows", (int,), None, "ours", "a sample of validation for choosing the checkpoint",
          minimum=0),
    Param("padding", (str,), "dynamic", "ours", "dynamic (to the batch's longest) or window",
          choices=("dynamic", "window")),
    Param("group_by_length", (bool,), True, "ours", "length-grouped training batches"),
    Param("device", (str,), "auto", "ours", "auto (CUDA when present), cpu or cuda[:N]"),
    Param("precision", (str,), "auto", "ours", "auto (bf16 on GPUs that have it, else fp16; fp32 on CPU; T5-family "
          "models never fp16)", choices=("auto", "fp32", "bf16", "fp16")),
    Param("predict_precision", (str, type(None)), None, "ours", "precision of prediction (the fit's test and "
          "validation scores, extra test sets, aicd detect; not the checkpoint choice) where it differs from training's: null (as precision), auto, fp32, bf16 or fp16; bf16 on a "
          "CPU with AMX or avx512_bf16 predicts ~2.5x faster than fp32 (BENCHMARKS.md)",
          choices=(None, "auto", "fp32", "bf16", "fp16")),
    Param("data_seed", (int,), None, "ours", "data order (null: the workflow seed)", minimum=0),
    Param("keep_checkpoints", (bool,), False, "ours", "keep the checkpoint folder after a successful fit"),
))
DEFAULTS = PARAMS.defaults()


def _json_label(label):
    """A class label as JSON keeps it: numpy scalars as Python ones (an int stays an int after
    save/load); anything JSON has no type for as its str."""
    if isinstance(label, np.generic):
        label = label.item()
    return label if isinstance(label, (str, int, float, bool)) else str(label)


@register("encoder")
class EncoderDetector(Detector):
    inputs = "text"
    storage = "folder"  # a save_pretrained folder
    environment = "neural"
    max_threads = 8
    mem_mb = 8000
    PARAMS = PARAMS
    uses_validation = True  # chooses its checkpoint on validation (carved from train when none is given)

    def __init__(self, seed: int = 0, threads: int = 1, **params):
        super().__init__(seed=seed, threads=threads, **params)
        self.settings = {**DEFAULTS, **params}
        self.callbacks: list = []   # extra transformers TrainerCallbacks (tests, monitoring)
        self.model_ = None
        self.tokenizer_ = None
        self.fit_report_: dict = {}

    def check_params(self) -> None:
        super().check_params()
        s = self.settings
        if not isinstance(s["model"], str) or not s["model"]:
            raise ValueError("params.model must name the encoder: a Hub id or a local folder")
        if not isinstance(s["device"], str) or not (s["device"] in ("auto", "cpu") or s["device"].startswith("cuda")):
            raise ValueError(f"device must be auto, cpu or cuda[:N], not {s['device']!r}")
        if s["batch_size"] % min(s["micro_batch_size"], s["batch_size"]):
            raise ValueError(f"batch_size {s['batch_size']} is not a multiple of micro_batch_size {s['micro_batch_size']}")

    # -- loading -----------------------------------------------------------------------------

    def _load(self, source: str, classes: list[str] | None = None, safetensors_only: bool = False):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer, set_seed
        from transformers.utils import logging as hf_logging
        if self.device_ == "cpu":
            torch.set_num_threads(max(1, int(self.threads)))
        set_seed(self.seed)  # the classification head's initialisation
        path = resolve_model(source)
        hf_logging.set_verbosity_error()  # "newly initialized weights" is the point of fine-tuning
        try:
            self.tokenizer_ = AutoTokenizer.from_pretrained(path)
            # a fitted model folder is read from its safetensors only: a pytorch_model.bin put
            # beside it is a pickle (transformers reads one with weights_only, but never here)
            kwargs = {"use_safetensors": True} if safetensors_only else {}
            if classes is not None:
                kwargs.update({"num_labels": len(classes), "id2label": dict(enumerate(classes)),
                               "label2id": {c: i for i, c in enumerate(classes)}})
            self.model_ = AutoModelForSequenceClassification.from_pretrained(path, **kwargs)
        except (OSError, ValueError, KeyError) as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise AicdError(f"encoder model {source} could not be loaded as a sequence classifier: {first}") from None
        finally:
            hf_logging.set_verbosity_warning()
        if self.tokenizer_.pad_token is None:
            self.tokenizer_.pad_token = self.tokenizer_.eos_token
            self.model_.config.pad_token_id = self.tokenizer_.pad_token_id
        # T5-family models never in fp16 (explicit fp16 is an error; auto falls back to fp32)
        model_type = getattr(self.model_.config, "model_type", None)
        self.precision_ = choose_precision(self.settings["precision"], self.device_, model_type)
        self.predict_precision_ = choose_precision(self.settings.get("predict_precision") or self.settings["precision"],
                                                   self.device_, model_type)
        self._escape = special_token_escaper(self.tokenizer_)
        self.model_.to(self.device_)

    def _setup_device(self) -> None:
        self.device_ = choose_device(self.settings["device"])
        self.precision_ = choose_precision(self.settings["precision"], self.device_)

    # -- fitting -----------------------------------------------------------------------------

    def fit(self, X, y, X_val=None, y_val=None) -> EncoderDetector:
        import torch
        s = self.settings
        self._setup_device()
        X, y, X_val, y_val = fit_rows(X, y, X_val, y_val, s["max_train_rows"], s["max_validation_rows"], self.seed)
        self.classes_ = np.unique(y)
        self._load(s["model"], list(map(str, self.classes_)))
        train_ds, val_ds = self._datasets(X, y, X_val, y_val)
        work = Path(self.work_dir) if self.work_dir else Path.cwd() / ".aicd-encoder"
        resume = prepare_run_folder(work, run_fingerprint(s, self.seed, X, y, X_val, y_val), s["model"])
        args = training_arguments(s, work, self.seed, self.device_, self.precision_, len(train_ds))
        trainer = make_trainer(self.model_, self.tokenizer_, args, train_ds, val_ds,
                               padding_collator(self.tokenizer_, s["padding"], s["window"], self.device_),
                               len(self.classes_), self.callbacks)
        self._train(trainer, resume, train_ds, val_ds)
        if not s["keep_checkpoints"]:
            self._discard_work = work
        del trainer
        if self.device_.startswith("cuda"):
            torch.cuda.empty_cache()
        return self

    def _datasets(self, X, y, X_val, y_val):
        """(train, validation) tokenised through the token cache, with class ids as `labels`; a
        validation row of a class train lacks is left out (it cannot be predicted)."""
        label2id = {c: i for i, c in enumerate(self.classes_)}
        known = np.isin(y_val, self.classes_)
        y_val_ids = np.array([label2id.get(v, -1) for v in y_val])
        cache, window = TokenCache(self.cache_dir), self.settings["window"]
        train_ds = cache.tokenize(self.tokenizer_, X, window).add_column("labels", [label2id[v] for v in y])
        val_ds = cache.tokenize(self.tokenizer_, X_val[known], window).add_column("labels", list(y_val_ids[known]))
        return train_ds, val_ds.sort("length")  # evaluation order is free: length-homogeneous batches pad less

    def _train(self, trainer, resume: Path | None, train_ds, val_ds) -> None:
        """Train (resuming from `resume`), keep the best checkpoint's model and report the fit."""
        s = self.settings
        micro, accumulation, steps_per_epoch = batch_shape(s, len(train_ds))
        log.info("fine-tuning %s on %s: %d train rows, %d validation rows, %d classes; micro batch %d x %d "
                 "accumulation = %d; %d steps/epoch; %s, %s%s", s["model"], self.device_, len(train_ds), len(val_ds),
                 len(self.classes_), micro, accumulation, micro * accumulation, steps_per_epoch, self.device_,
                 self.precision_, f"; resuming from {resume.name}" if resume else "")
        started = time.perf_counter()
        resumed_step = checkpoint_step(resume) if resume else 0
        result = trainer.train(resume_from_checkpoint=str(resume) if resume else None)
        self.model_ = trainer.model
        self.model_.eval()
        state = trainer.state
        self.fit_report_ = {
            "train_rows": len(train_ds), "validation_rows": len(val_ds), "steps": state.global_step,
            "resumed_from_step": resumed_step, "train_loss": result.training_loss,
            "best_checkpoint": Path(state.best_model_checkpoint).name if state.best_model_checkpoint else None,
            "best_validation_macro_f1": state.best_metric, "fit_seconds": round(time.perf_counter() - started, 1),
            "device": self.device_, "precision": self.precision_, "micro_batch_size": micro,
            "gradient_accumulation_steps": accumulation,
            "mean_train_tokens": float(np.mean(train_ds["length"])),
            "log_history": state.log_history,
        }
        self.trainer_state_ = state

    # -- prediction --------------------------------------------------------------------------

    predict_chunk_rows = 8192  # texts tokenised and held at a time by predict

    def iter_batches(self, X, batch_size: int | None = None, chunk_rows: int | None = None):
        """Yields (positions in X, padded batch): X tokenised `chunk_rows` texts at a time, each
        chunk sorted by length into batches of `batch_size`; only one chunk's tokens are held."""
        s = self.settings
        X = np.asarray(X, dtype=object)
        size = batch_size or s["eval_batch_size"]
        chunk = chunk_rows or self.predict_chunk_rows
        escape = getattr(self, "_escape", None) or special_token_escaper(self.tokenizer_)
        for start in range(0, len(X), chunk):
            ids = self.tokenizer_(escape(X[start:start + chunk]), truncation=True, max_length=s["window"])["input_ids"]
            order = np.argsort([len(x) for x in ids], kind="stable")
            for b in range(0, len(order), size):
                sel = order[b:b + size]
                yield start + sel, self.tokenizer_.pad({"input_ids": [ids[i] for i in sel]}, return_tensors="pt")

    def batches(self, X, batch_size: int | None = None):
        """(order, padded batches) of all of X sorted by length, materialised (benchmarks; predict
        streams `iter_batches` instead)."""
        pairs = list(self.iter_batches(X, batch_size, chunk_rows=max(1, len(X))))
        order = np.concatenate([p for p, _ in pairs]) if pairs else np.array([], dtype=int)
        return order, [b for _, b in pairs]

    def predict_scores(self, X, chunk_rows: int | None = None) -> np.ndarray:
        import torch
        if self.model_ is None:
            raise AicdError("the encoder is not fitted")
        self.model_.eval()
        precision = getattr(self, "predict_precision_", None) or self.precision_
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
        scores = np.empty((len(X), len(self.classes_)), dtype=np.float32)
        with torch.no_grad():
            for positions, batch in self.iter_batches(X, chunk_rows=chunk_rows):
                batch = {k: v.to(self.device_) for k, v in batch.items()}
                with torch.autocast(device_type=self.device_.split(":")[0], dtype=dtype, enabled=dtype is not None):
                    logits = self.model_(**batch).logits
                scores[positions] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
        return scores

    def predict(self, X) -> np.ndarray:
        return self.predict_with_scores(X)[0]

    def predict_with_scores(self, X):
        scores = self.predict_scores(X)
        return self.classes_[scores.argmax(1)] if len(scores) else np.array([], dtype=object), scores

    # -- persistence -------------------------------------------------------------------------

    def save(self, path) -> None:
        """save_pretrained (model + tokenizer) and detector.json into `path`, atomically; then
        drop the checkpoints unless keep_checkpoints."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        self.model_.save_pretrained(tmp)
        self.tokenizer_.save_pretrained(tmp)
        meta = {"kind": self.kind, "seed": self.seed, "settings": self.settings,
                "classes": [_json_label(c) for c in self.classes_],
                "fit": {k: v for k, v in self.fit_report_.items() if k != "log_history"}}
        (tmp / "detector.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
        (tmp / "log_history.json").write_text(json.dumps(self.fit_report_.get("log_history", []), indent=1,
                                                         default=str) + "\n")
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
        work = getattr(self, "_discard_work", None)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)

    @classmethod
    def load(cls, path, device: str = "auto", threads: int = 1) -> EncoderDetector:
        meta = json.loads((Path(path) / "detector.json").read_text())
        settings = {**meta["settings"], "device": device}
        det = cls(seed=meta["seed"], threads=threads, **settings)
        det._setup_device()
        det._load(str(Path(path).resolve()), safetensors_only=True)
        det.classes_ = np.array(meta["classes"], dtype=object)  # JSON keeps int / float / bool / str labels
        det.model_.eval()
        return det
