"""The on-disk form of a feature set: one uncompressed .npz holding X_{split}, ids_{split} and
feature_names, as np.savez writes it, so np.load reads it as ever.

At the paper's scale a split's matrix is gigabytes (T3's test: 1M rows x 1,100 float32
columns = 4.4 GB), so it is written a block of rows at a time (Writer) and read back as a
memory map (matrix): a detector holds its training rows in memory and walks the test rows in
chunks, never all of a feature set at once."""

from __future__ import annotations

import mmap
import zipfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..common.errors import AicdError
from ..common.io import atomic_path
from ..data.schema import SPLITS

CHUNK_ROWS = 65_536  # rows per block written or read


class Writer:
    """Writes the members of a features.npz one after another; a matrix as blocks of rows.
    The file appears at `path` (atomically) when the `with` block ends without an error."""

    def __init__(self, zf: zipfile.ZipFile):
        self._zf = zf

    def array(self, name: str, value: np.ndarray) -> None:
        with self._zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
            np.lib.format.write_array(fh, np.asanyarray(value), allow_pickle=False)

    def matrix(self, name: str, rows: int, columns: int, blocks) -> None:
        """X of shape (rows, columns), float32, from an iterable of row blocks."""
        header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)), "fortran_order": False,
                  "shape": (int(rows), int(columns))}
        written = 0
        with self._zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
            np.lib.format.write_array_header_2_0(fh, header)
            for block in blocks:
                block = np.ascontiguousarray(block, dtype=np.float32)
                if block.ndim != 2 or block.shape[1] != columns:
                    raise AicdError(f"{name}: a block of shape {block.shape} in a matrix of {columns} columns")
                fh.write(block.tobytes())
                written += len(block)
        if written != rows:
            raise AicdError(f"{name}: {written} rows written, {rows} announced")


@contextmanager
def writer(path: str | Path):
    with atomic_path(path, suffix=".npz") as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            yield Writer(zf)


def save(path: str | Path, matrices: dict[str, np.ndarray], ids: dict[str, np.ndarray], names: list[str]) -> None:
    """A feature set held in memory, in one go."""
    with writer(path) as out:
        for split in SPLITS:
            matrix = np.asarray(matrices[split], dtype=np.float32).reshape(len(ids[split]), len(names))
            out.matrix(f"X_{split}", matrix.shape[0], len(names), [matrix])
            out.array(f"ids_{split}", np.asarray(ids[split], dtype=str))
        out.array("feature_names", np.asarray(names, dtype=str))


def _member_offset(zf: zipfile.ZipFile, path: Path, member: str) -> tuple[int, tuple, np.dtype]:
    info = zf.getinfo(member)
    if info.compress_type != zipfile.ZIP_STORED:
        raise AicdError(f"{path}: {member} is compressed; rebuild the feature set (features are stored uncompressed)")
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        local = fh.read(30)
        name_len, extra_len = int.from_bytes(local[26:28], "little"), int.from_bytes(local[28:30], "little")
        fh.seek(info.header_offset + 30 + name_len + extra_len)
        version = np.lib.format.read_magic(fh)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(fh)
        if fortran:
            raise AicdError(f"{path}: {member} is in Fortran order; rebuild the feature set")
        return fh.tell(), shape, dtype


def matrix(path: str | Path, split: str) -> np.ndarray:
    """X_{split} as a read-only memory map (no rows are read until used)."""
    path = Path(path)
    with zipfile.ZipFile(path) as zf:
        offset, shape, dtype = _member_offset(zf, path, f"X_{split}.npy")
    if 0 in shape:
        return np.zeros(shape, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape)


def ids_and_names(path: str | Path) -> tuple[dict[str, np.ndarray], list[str]]:
    with np.load(path, allow_pickle=False) as data:
        return {s: data[f"ids_{s}"] for s in SPLITS}, data["feature_names"].tolist()


def load(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], list[str]]:
    """Every split's matrix (memory maps), ids and names."""
    ids, names = ids_and_names(path)
    return {s: matrix(path, s) for s in SPLITS}, ids, names


def release(X) -> None:
    """Drop the pages of memory map X that were read from this process's resident set (they
    stay in the page cache, and a later read takes them from there). The resident set counts
    the mapped pages of a file as they are read, and Snakemake's benchmark files and SLURM's
    memory accounting count the resident set: walking a 6 GB test matrix would otherwise read
    as a 6 GB job."""
    mapping = getattr(X, "_mmap", None)
    if mapping is not None and hasattr(mapping, "madvise"):
        mapping.madvise(mmap.MADV_DONTNEED)


def read(X, rows=slice(None)) -> np.ndarray:
    """X[rows] as an array of its own (read into memory), leaving no pages of a memory map
    resident."""
    out = np.array(X[rows])
    release(X)
    return out


def blocks(X: np.ndarray, size: int = CHUNK_ROWS):
    """Row blocks of X, each read into memory as it comes (see read)."""
    for start in range(0, len(X), size):
        yield read(X, slice(start, start + size))


def concat(parts: list[tuple[dict, dict, list]]) -> tuple[dict, dict, list]:
    """Column-wise concatenation of feature sets computed on the same rows (held in memory)."""
    first_ids = parts[0][1]
    for _, ids, _ in parts[1:]:
        for s in SPLITS:
            if not np.array_equal(ids[s], first_ids[s]):
                raise AicdError(f"cannot concatenate feature sets: row ids differ in split {s}")
    matrices = {s: np.hstack([m[s] for m, _, _ in parts]).astype(np.float32) for s in SPLITS}
    names = [n for _, _, part_names in parts for n in part_names]
    return matrices, first_ids, names
