"""A data table shipped inside a pinned package file (config/pinned_inputs.yaml, an entry with
`table:`): the member is read from the verified file and checked against its own sha256, so the
rows are the same on every machine. JSON lines, gzipped or not.

A source reads one as `pinned_table: NAME`, with `code_from:` naming the columns whose text,
joined in order, is a row's code (HumanEval: the prompt, a signature with its docstring, followed
by the canonical solution, its body)."""

from __future__ import annotations

import gzip
import hashlib
import json
import zipfile

import pandas as pd

from ..common.errors import AicdError
from ..records.pinned_files import load_manifest, verified_path


def table_entry(name: str, manifest: dict | None = None) -> dict:
    manifest = load_manifest() if manifest is None else manifest
    entry = manifest.get(name)
    if entry is None or not entry.get("table"):
        tables = sorted(n for n, e in manifest.items() if e.get("table"))
        raise AicdError(f"pinned_table: {name!r} is not a pinned table in config/pinned_inputs.yaml "
                        f"(tables: {', '.join(tables) or 'none'})")
    return entry


def read_pinned_table(name: str, code_from: list[str] | None = None, manifest: dict | None = None) -> pd.DataFrame:
    """The rows of the pinned table `name`; with `code_from`, a `code` column joining those columns."""
    entry = table_entry(name, manifest)
    member = entry["table"]["member"]
    with zipfile.ZipFile(verified_path(name, entry)) as archive:
        try:
            data = archive.read(member)
        except KeyError:
            raise AicdError(f"pinned_table {name}: {entry['file']} has no member {member}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry["table"]["member_sha256"]:
        raise AicdError(f"pinned_table {name}: {member} has sha256 {digest}, expected {entry['table']['member_sha256']}")
    if member.endswith(".gz"):
        data = gzip.decompress(data)
    rows = pd.DataFrame([json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()])
    if code_from:
        missing = [c for c in code_from if c not in rows.columns]
        if missing:
            raise AicdError(f"pinned_table {name}: code_from names {missing}, not columns of {member} "
                            f"({', '.join(rows.columns)})")
        rows["code"] = rows[code_from].fillna("").astype(str).agg("".join, axis=1)
    return rows
