"""Checkpoints of a fine-tuning run: the global step a checkpoint records, the newest checkpoint
whose save finished (those cut short by a kill are deleted), and the run's folder, stamped with a
fingerprint of its settings and rows, so a job resumes only from a complete checkpoint of the
same run."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

from .tokens import _stable_hash, _text_key

log = logging.getLogger("aicd.detectors.encoder")


def checkpoint_step(ckpt: Path) -> int | None:
    """The global step a checkpoint's trainer_state.json records; None when the file is missing,
    cut short or not a trainer state (a save that did not finish)."""
    try:
        state = json.loads((ckpt / "trainer_state.json").read_text())
        step = state["global_step"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return step if isinstance(step, int) and not isinstance(step, bool) else None


def last_complete_checkpoint(folder: Path) -> Path | None:
    """The newest checkpoint whose save finished (trainer_state.json is written last and parses);
    a checkpoint cut short by a kill (no state, or a truncated one) is deleted."""
    if not folder.is_dir():
        return None
    found = sorted((p for p in folder.glob("checkpoint-*") if p.is_dir() and p.name.split("-")[-1].isdigit()),
                   key=lambda p: int(p.name.split("-")[-1]), reverse=True)
    for ckpt in found:
        if checkpoint_step(ckpt) is not None:
            return ckpt
        log.warning("removing incomplete checkpoint %s", ckpt)
        shutil.rmtree(ckpt, ignore_errors=True)
    return None


def run_fingerprint(settings: dict, seed: int, X, y, X_val, y_val) -> str:
    """What makes two fits the same run: the settings (bar keep_checkpoints), the seed and the
    rows of train and validation."""
    return _stable_hash(json.dumps({k: v for k, v in settings.items() if k != "keep_checkpoints"},
                                   sort_keys=True, default=str), seed, _text_key(X, y), _text_key(X_val, y_val))


def prepare_run_folder(work: Path, fingerprint: str, model: str) -> Path | None:
    """Make `work` the checkpoint folder of the run `fingerprint` names (emptied when it holds
    another run's checkpoints) and return the checkpoint to resume from, if any."""
    stamp = work / "fingerprint.json"
    try:
        stamped = json.loads(stamp.read_text()).get("fingerprint")
    except (OSError, ValueError, AttributeError):  # missing, or cut short by a kill
        stamped = None
    if work.is_dir() and stamped != fingerprint:
        log.info("checkpoints in %s belong to another run (settings or data changed): starting afresh", work)
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({"fingerprint": fingerprint, "model": model}) + "\n")
    return last_complete_checkpoint(work)
