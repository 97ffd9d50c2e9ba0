"""Atomic writers and small readers shared by all stages.

Every output is written to a temporary file beside its target and renamed into place, so a
killed job never leaves a half-written file that looks complete."""

from __future__ import annotations

import json
import os
import pickle
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import AicdError


@contextmanager
def atomic_path(target: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path in the target's folder; rename it onto target on success."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{suffix}", dir=target.parent)
    # mkstemp creates 0600; an output gets the mode a plain open() would give under the umask.
    os.fchmod(fd, 0o666 & ~_umask())
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _umask() -> int:
    # Linux reports it without changing it (safe beside other threads creating files);
    # elsewhere it can only be read by setting it and setting it straight back.
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_parquet(df: pd.DataFrame, target: str | os.PathLike) -> None:
    with atomic_path(target) as tmp:
        df.to_parquet(tmp, index=False)


def write_json(obj: Any, target: str | os.PathLike) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n")


def write_text(text: str, target: str | os.PathLike) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text)


def write_pickle(obj: Any, target: str | os.PathLike) -> None:
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)


def write_npz(target: str | os.PathLike, **arrays: np.ndarray) -> None:
    # np.savez appends ".npz" to names without it, so the temp name keeps that suffix.
    with atomic_path(target, suffix=".npz") as tmp:
        np.savez(tmp, **arrays)


def read_json(path: str | os.PathLike) -> Any:
    return json.loads(Path(path).read_text())


def read_trusted_pickle(path: str | os.PathLike, renamed_modules: dict[str, str] | None = None) -> Any:
    """Unpickling runs any code the file names: only for a file the user has said they trust
    (--trust-pickle). Fitted models and featurizers are read by aicd.models.fitted_files.
    renamed_modules: old module name -> new, for types whose module has moved since the file was written."""
    renames = renamed_modules or {}

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            return super().find_class(renames.get(module, module), name)

    with open(path, "rb") as fh:
        return Unpickler(fh).load()


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def read_any(path: str | Path) -> pd.DataFrame:
    """A table from .parquet, .jsonl/.ndjson or .csv/.tsv (CSV cells as text), with an error
    that names the file."""
    path = Path(path)
    if not path.exists():
        raise AicdError(f"{path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            return pd.read_parquet(path)
        if suffix in (".jsonl", ".ndjson"):
            return pd.read_json(path, lines=True, dtype=False)
        if suffix in (".csv", ".tsv"):
            return pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
    except (ValueError, OSError) as err:
        raise AicdError(f"cannot read {path}: {err}") from None
    except Exception as err:  # pyarrow / parser errors do not name the file
        raise AicdError(f"cannot read {path}: {type(err).__name__}: {err}") from None
    raise AicdError(f"{path}: unknown format {suffix or '(no extension)'}; use .csv, .jsonl or .parquet")
