"""python -m aicd.lm: train the small causal code LM on the human code of a task's train split
(the scoring model of Fast-DetectGPT in the demo) and write it as a save_pretrained folder with
lm.json (settings, loss, held-out loss on the validation split's human and machine code)."""

from __future__ import annotations

import argparse
import logging
import sys

import pandas as pd

from ..common.errors import AicdError
from ..common.stagecli import json_arg, run
from .train import save, settings, train

log = logging.getLogger("aicd.lm")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.lm", description=__doc__)
    parser.add_argument("--train", required=True, help="the task's train.parquet")
    parser.add_argument("--validation", help="the task's validation.parquet (held-out loss per label)")
    parser.add_argument("--params", type=json_arg, default={}, help="settings (aicd.lm.train.DEFAULTS), as JSON")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", required=True, help="output folder")
    args = parser.parse_args(argv)
    try:
        cfg = settings(args.params)
    except ValueError as err:
        raise AicdError(str(err)) from None
    table = pd.read_parquet(args.train)
    human = table.loc[table["label"] == cfg["human_label"], "code"].tolist()
    if not human:
        raise AicdError(f"{args.train}: no rows labelled {cfg['human_label']!r} to train the causal LM on")
    evals = {}
    if args.validation:
        val = pd.read_parquet(args.validation)
        evals = {str(label): group["code"].tolist() for label, group in val.groupby("label")}
    model, tokenizer, report = train(human, args.params, seed=args.seed, threads=args.threads, eval_texts=evals)
    report["trained_on"] = {"table": args.train, "label": cfg["human_label"], "rows": len(human)}
    save(model, tokenizer, report, args.out)
    log.info("causal LM: %d parameters, %d steps, loss %.3f -> %.3f, held-out %s, %.0fs", report["parameters"],
             report["steps"], report["loss_first"], report["loss_last"], report["held_out_loss"], report["train_seconds"])


if __name__ == "__main__":
    sys.exit(run(main))
