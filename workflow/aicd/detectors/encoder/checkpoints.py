"""Checkpoints of a fine-tuning run: the global step a checkpoint records, and the newest
checkpoint whose save finished (those cut short by a kill are deleted), so a job resumes only
from a complete checkpoint."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

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
