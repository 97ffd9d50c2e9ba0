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

The package holds EncoderDetector and DEFAULTS; its helpers live in model (reading the model,
escaping special tokens), tokens (row sampling and the token cache), runtime (device and
precision) and checkpoints (resuming from a complete checkpoint), re-exported here."""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from ...errors import AicdError
from ...params import Param, ParamSpec
from ...pretrained import TEXT_PREP_VERSION, offline, resolve_model, special_token_escaper
from ..base import Detector, register
from .checkpoints import checkpoint_step, last_complete_checkpoint
from .runtime import choose_device, choose_precision, no_fp16
from .tokens import TokenCache, _stable_hash, _text_key, stratified_cap

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
        from transformers import DataCollatorWithPadding, Trainer, TrainerCallback, TrainingArguments
        s = self.settings
        self._setup_device()
        X, y = np.asarray(X, dtype=object), np.asarray(y, dtype=object)
        train_idx = stratified_cap(y, s["max_train_rows"], self.seed)
        X, y = X[train_idx], y[train_idx]
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise AicdError("the train split has fewer than two classes: nothing to learn")
        if X_val is None or len(X_val) == 0:
            raise AicdError("an encoder needs a validation split to choose its checkpoint")
        X_val, y_val = np.asarray(X_val, dtype=object), np.asarray(y_val, dtype=object)
        val_idx = stratified_cap(y_val, s["max_validation_rows"], self.seed)
        X_val, y_val = X_val[val_idx], y_val[val_idx]
        label2id = {c: i for i, c in enumerate(self.classes_)}
        known = np.isin(y_val, self.classes_)  # a validation class unseen in train cannot be predicted
        y_val_ids = np.array([label2id.get(v, -1) for v in y_val])

        self._load(s["model"], list(map(str, self.classes_)))
        cache = TokenCache(self.cache_dir)
        train_ds = cache.tokenize(self.tokenizer_, X, s["window"]).add_column("labels", [label2id[v] for v in y])
        val_ds = cache.tokenize(self.tokenizer_, X_val[known], s["window"]).add_column("labels", list(y_val_ids[known]))
        val_ds = val_ds.sort("length")  # evaluation order is free: length-homogeneous batches pad less

        micro = min(s["micro_batch_size"], s["batch_size"])
        accumulation = s["batch_size"] // micro
        steps_per_epoch = math.ceil(len(train_ds) / (micro * accumulation))
        work = Path(self.work_dir) if self.work_dir else Path.cwd() / ".aicd-encoder"
        fingerprint = _stable_hash(json.dumps({k: v for k, v in s.items() if k != "keep_checkpoints"},
                                              sort_keys=True, default=str), self.seed,
                                   _text_key(X, y), _text_key(X_val, y_val))
        stamp = work / "fingerprint.json"
        try:
            stamped = json.loads(stamp.read_text()).get("fingerprint")
        except (OSError, ValueError, AttributeError):  # missing, or cut short by a kill
            stamped = None
        if work.is_dir() and stamped != fingerprint:
            log.info("checkpoints in %s belong to another run (settings or data changed): starting afresh", work)
            shutil.rmtree(work)
        work.mkdir(parents=True, exist_ok=True)
        stamp.write_text(json.dumps({"fingerprint": fingerprint, "model": s["model"]}) + "\n")
        resume = last_complete_checkpoint(work)

        if not sys.stderr.isatty():  # a job log: one progress line every 10 s, not every 0.1 s
            os.environ.setdefault("TQDM_MININTERVAL", "10")
        save_kwargs = ({"eval_strategy": "epoch", "save_strategy": "epoch"} if not s["save_steps"] else
                       {"eval_strategy": "steps", "save_strategy": "steps",
                        "eval_steps": s["save_steps"], "save_steps": s["save_steps"]})
        args = TrainingArguments(
            output_dir=str(work),
            num_train_epochs=s["epochs"],
            max_steps=s["max_steps"] if s["max_steps"] else -1,
            per_device_train_batch_size=micro,
            per_device_eval_batch_size=s["eval_batch_size"],
            gradient_accumulation_steps=accumulation,
            learning_rate=s["learning_rate"],
            weight_decay=s["weight_decay"],
            warmup_steps=math.ceil(s["warmup_ratio"] * (s["max_steps"] or steps_per_epoch * s["epochs"])),
            lr_scheduler_type=s["scheduler"],
            optim=s["optimizer"],
            max_grad_norm=s["max_grad_norm"],
            logging_steps=s["logging_steps"],
            logging_first_step=True,
            save_total_limit=s["save_total_limit"],
            load_best_model_at_end=True,
            metric_for_best_model="macro_f1",
            greater_is_better=True,
            seed=self.seed,
            data_seed=s["data_seed"] if s["data_seed"] is not None else self.seed,
            train_sampling_strategy="group_by_length" if s["group_by_length"] else "random",
            length_column_name="length",
            use_cpu=self.device_ == "cpu",
            bf16=self.precision_ == "bf16",
            fp16=self.precision_ == "fp16",
            dataloader_num_workers=0,
            report_to="none",
            disable_tqdm=False,
            **save_kwargs,
        )
        collator = (DataCollatorWithPadding(self.tokenizer_, pad_to_multiple_of=8 if self.device_ != "cpu" else None)
                    if s["padding"] == "dynamic" else
                    DataCollatorWithPadding(self.tokenizer_, padding="max_length", max_length=s["window"]))

        def compute_metrics(pred):
            from sklearn.metrics import f1_score
            logits = pred.predictions[0] if isinstance(pred.predictions, tuple) else pred.predictions
            return {"macro_f1": f1_score(pred.label_ids, logits.argmax(-1), average="macro",
                                         labels=list(range(len(self.classes_))), zero_division=0)}

        class EveryEpoch(TrainerCallback):
            """With save_steps, still evaluate and checkpoint at every epoch's end."""
            def on_epoch_end(self, args, state, control, **kwargs):
                control.should_evaluate = True
                control.should_save = True
                return control

        trainer = Trainer(model=self.model_, args=args, train_dataset=train_ds, eval_dataset=val_ds,
                          data_collator=collator, processing_class=self.tokenizer_, compute_metrics=compute_metrics,
                          callbacks=[EveryEpoch(), *self.callbacks])
        # A sequence classifier's loss is a mean over its micro batch, whatever **kwargs its forward
        # takes: have the Trainer divide it by the accumulation steps (else gradients and the
        # logged loss are `accumulation` times too large).
        trainer.model_accepts_loss_kwargs = False
        trainer.loss_is_scaled_for_ga = False
        log.info("fine-tuning %s on %s: %d train rows, %d validation rows, %d classes; micro batch %d x %d "
                 "accumulation = %d; %d steps/epoch; %s, %s%s", s["model"], self.device_, len(train_ds), len(val_ds),
                 len(self.classes_), micro, accumulation, micro * accumulation, steps_per_epoch, self.device_,
                 self.precision_, f"; resuming from {resume.name}" if resume else "")
        started = time.perf_counter()
        resumed_step = checkpoint_step(resume) if resume else 0
        result = trainer.train(resume_from_checkpoint=str(resume) if resume else None)
        self.model_ = trainer.model
        self.model_.eval()
        self.fit_report_ = {
            "train_rows": len(train_ds), "validation_rows": len(val_ds), "steps": trainer.state.global_step,
            "resumed_from_step": resumed_step, "train_loss": result.training_loss,
            "best_checkpoint": Path(trainer.state.best_model_checkpoint).name if trainer.state.best_model_checkpoint else None,
            "best_validation_macro_f1": trainer.state.best_metric, "fit_seconds": round(time.perf_counter() - started, 1),
            "device": self.device_, "precision": self.precision_, "micro_batch_size": micro,
            "gradient_accumulation_steps": accumulation,
            "mean_train_tokens": float(np.mean(train_ds["length"])),
            "log_history": trainer.state.log_history,
        }
        self.trainer_state_ = trainer.state
        if not s["keep_checkpoints"]:
            self._discard_work = work
        del trainer
        if self.device_.startswith("cuda"):
            torch.cuda.empty_cache()
        return self

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
