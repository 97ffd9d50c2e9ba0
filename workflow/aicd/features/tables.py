"""Reading a task's split tables for the features and detectors stages: a folder with
{train,validation,test}.parquet (--tasks-dir), or explicit files (--train/--validation/--test).

Validation is optional: an absent flag, an absent file in a tasks folder, a zero-byte file or a
table without rows all give an empty validation table (a detector that needs one carves it from
train; aicd.detectors.validation)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import AicdError
from ..schema import SPLITS


def read_table(path: str | Path, split: str) -> pd.DataFrame:
    path = Path(path)
    if not path.exists():
        raise AicdError(f"the {split} file {path} does not exist")
    if path.stat().st_size == 0:
        return pd.DataFrame(columns=["id", "code", "language", "target"])
    try:
        table = pd.read_parquet(path)
    except Exception as err:  # pyarrow's own messages do not name the file
        raise AicdError(f"cannot read the {split} file {path} as parquet: {err}") from None
    if table.empty and not {"id", "code"} <= set(table.columns):
        table = pd.DataFrame(columns=["id", "code", "language", "target"])
    return table


def add_arguments(parser, test_required: bool = True) -> None:
    parser.add_argument("--tasks-dir", help="folder with {train,validation,test}.parquet")
    parser.add_argument("--train", help="the train split (parquet); instead of --tasks-dir")
    parser.add_argument("--validation", help="the validation split (parquet; optional, may be empty)")
    parser.add_argument("--test", help="the test split (parquet)" + ("" if test_required else "; optional"))


def read_splits(args, test_required: bool = True) -> dict[str, pd.DataFrame]:
    """The three split tables named by --tasks-dir or by --train/--validation/--test."""
    explicit = {s: getattr(args, s) for s in SPLITS}
    if args.tasks_dir and any(explicit.values()):
        raise AicdError("give either --tasks-dir or --train/--validation/--test, not both")
    if args.tasks_dir:
        folder = Path(args.tasks_dir)
        explicit = {s: folder / f"{s}.parquet" for s in SPLITS}
        if not explicit["validation"].exists():
            explicit["validation"] = None
    if not explicit["train"]:
        raise AicdError("name the training rows: --tasks-dir FOLDER or --train FILE")
    if test_required and not explicit["test"]:
        raise AicdError("name the test rows: --test FILE (or --tasks-dir FOLDER)")
    tables = {}
    for split in SPLITS:
        path = explicit[split]
        tables[split] = read_table(path, split) if path else pd.DataFrame(columns=["id", "code", "language", "target"])
    return tables
