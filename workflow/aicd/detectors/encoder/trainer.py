"""The `transformers` Trainer of a fit, set up from the encoder's settings: the batch split into
micro batches and accumulation steps, the TrainingArguments (epochs, schedule, precision,
length-grouped batches, evaluation and checkpoints every epoch or every save_steps), the padding
collator, the validation macro-F1 that chooses the checkpoint, and evaluation and a checkpoint at
every epoch's end even with save_steps. transformers is imported only when a fit runs."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path


def batch_shape(settings: dict, train_rows: int) -> tuple[int, int, int]:
    """(micro batch, accumulation steps, optimizer steps per epoch): micro batches of
    micro_batch_size, accumulated up to batch_size."""
    micro = min(settings["micro_batch_size"], settings["batch_size"])
    accumulation = settings["batch_size"] // micro
    return micro, accumulation, math.ceil(train_rows / (micro * accumulation))


def training_arguments(s: dict, work: Path, seed: int, device: str, precision: str, train_rows: int):
    """The TrainingArguments of a fit writing its checkpoints to `work`."""
    from transformers import TrainingArguments

    micro, accumulation, steps_per_epoch = batch_shape(s, train_rows)
    if not sys.stderr.isatty():  # a job log: one progress line every 10 s, not every 0.1 s
        os.environ.setdefault("TQDM_MININTERVAL", "10")
    save_kwargs = ({"eval_strategy": "epoch", "save_strategy": "epoch"} if not s["save_steps"] else
                   {"eval_strategy": "steps", "save_strategy": "steps",
                    "eval_steps": s["save_steps"], "save_steps": s["save_steps"]})
    return TrainingArguments(
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
        seed=seed,
        data_seed=s["data_seed"] if s["data_seed"] is not None else seed,
        train_sampling_strategy="group_by_length" if s["group_by_length"] else "random",
        length_column_name="length",
        use_cpu=device == "cpu",
        bf16=precision == "bf16",
        fp16=precision == "fp16",
        dataloader_num_workers=0,
        report_to="none",
        disable_tqdm=False,
        **save_kwargs,
    )


def padding_collator(tokenizer, padding: str, window: int, device: str):
    """dynamic: each batch padded to its longest row (to a multiple of 8 on a GPU); window: to
    the window."""
    from transformers import DataCollatorWithPadding

    if padding == "dynamic":
        return DataCollatorWithPadding(tokenizer, pad_to_multiple_of=8 if device != "cpu" else None)
    return DataCollatorWithPadding(tokenizer, padding="max_length", max_length=window)


def macro_f1_metric(n_classes: int):
    """The Trainer's compute_metrics: macro-F1 over every class the fit knows."""

    def compute_metrics(pred):
        from sklearn.metrics import f1_score
        logits = pred.predictions[0] if isinstance(pred.predictions, tuple) else pred.predictions
        return {"macro_f1": f1_score(pred.label_ids, logits.argmax(-1), average="macro",
                                     labels=list(range(n_classes)), zero_division=0)}

    return compute_metrics


def every_epoch_callback():
    """With save_steps, still evaluate and checkpoint at every epoch's end."""
    from transformers import TrainerCallback

    class EveryEpoch(TrainerCallback):
        def on_epoch_end(self, args, state, control, **kwargs):
            control.should_evaluate = True
            control.should_save = True
            return control

    return EveryEpoch()


def make_trainer(model, tokenizer, args, train_ds, val_ds, collator, n_classes: int, callbacks: list):
    from transformers import Trainer

    trainer = Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=val_ds, data_collator=collator,
                      processing_class=tokenizer, compute_metrics=macro_f1_metric(n_classes),
                      callbacks=[every_epoch_callback(), *callbacks])
    # A sequence classifier's loss is a mean over its micro batch, whatever **kwargs its forward
    # takes: have the Trainer divide it by the accumulation steps (else gradients and the
    # logged loss are `accumulation` times too large).
    trainer.model_accepts_loss_kwargs = False
    trainer.loss_is_scaled_for_ga = False
    return trainer
