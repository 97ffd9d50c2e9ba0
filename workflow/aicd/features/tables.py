"""Reading a task's split tables for the features and detectors stages: a folder with
{train,validation,test}.parquet (--tasks-dir), or explicit files (--train/--validation/--test).

Validation is optional: an absent flag, an absent file in a tasks folder, a zero-byte file or a
table without rows all give an empty validation table (a detector that needs one carves it from
train; aicd.detectors.validation).

A job that does not read the code (a detector over a feature set) reads the tables without
their `code` column (`skip`), and the code of a split or of its first rows only where it turns
out to be needed (read_code): at the paper's scale the code is most of a table's memory."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..common.errors import AicdError
from ..data.schema import SPLITS

EMPTY_COLUMNS = ["id", "code", "language", "target"]


def _empty(skip: tuple[str, ...] = ()) -> pd.DataFrame:
    return pd.DataFrame(columns=[c for c in EMPTY_COLUMNS if c not in skip])


def read_table(path: str | Path, split: str, skip: tuple[str, ...] = ()) -> pd.DataFrame:
    """One split's table; the columns in `skip` are not read."""
    path = Path(path)
    if not path.exists():
        raise AicdError(f"the {split} file {path} does not exist")
    if path.stat().st_size == 0:
        return _empty(skip)
    try:
        columns = None
        if skip:
            import pyarrow.parquet as pq

            columns = [c for c in pq.read_schema(path).names if c not in skip and not c.startswith("__index_level_")]
        table = pd.read_parquet(path, columns=columns)
    except Exception as err:  # pyarrow's own messages do not name the file
        raise AicdError(f"cannot read the {split} file {path} as parquet: {err}") from None
    if table.empty and not {"id", "code"} - set(skip) <= set(table.columns):
        table = _empty(skip)
    return table


def read_code(path: str | Path | None, split: str, rows: int | None = None):
    """The `code` column of a split's file as an object array (its first `rows` rows only when
    given); empty for an absent split."""
    import numpy as np
    import pyarrow.parquet as pq

    if path is None or Path(path).stat().st_size == 0:
        return np.empty(0, dtype=object)
    try:
        if rows is None:
            column = pq.read_table(path, columns=["code"]).column("code")
        else:
            first = next(pq.ParquetFile(path).iter_batches(batch_size=max(1, rows), columns=["code"]), None)
            column = first.column(0) if first is not None else []
    except Exception as err:
        raise AicdError(f"cannot read the code of the {split} file {path}: {err}") from None
    return np.asarray(column.to_pylist() if hasattr(column, "to_pylist") else list(column), dtype=object)


def add_arguments(parser, test_required: bool = True) -> None:
    parser.add_argument("--tasks-dir", help="folder with {train,validation,test}.parquet")
    parser.add_argument("--train", help="the train split (parquet); instead of --tasks-dir")
    parser.add_argument("--validation", help="the validation split (parquet; optional, may be empty)")
    parser.add_argument("--test", help="the test split (parquet)" + ("" if test_required else "; optional"))


def split_paths(args, test_required: bool = True) -> dict[str, Path | None]:
    """The file of each split named by --tasks-dir or by --train/--validation/--test (None: no
    such split)."""
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
    return {s: Path(p) if p else None for s, p in explicit.items()}


def read_splits(args, test_required: bool = True, skip: tuple[str, ...] = ()) -> dict[str, pd.DataFrame]:
    """The three split tables named by --tasks-dir or by --train/--validation/--test, without
    the columns in `skip`."""
    paths = split_paths(args, test_required)
    return {split: read_table(path, split, skip) if path else _empty(skip) for split, path in paths.items()}
