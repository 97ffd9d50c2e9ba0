"""One loader for every table the project reads: the Hugging Face Hub or local files,
both through `datasets.load_dataset`, so the Hub path and the offline path share code."""

from __future__ import annotations

import codecs
import logging
from pathlib import Path

import pandas as pd

from ..errors import AicdError

log = logging.getLogger(__name__)

_FORMATS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv"}


def describe(location: dict) -> str:
    if "files" in location:
        return f"local files {location['files']}"
    return f"Hub dataset {location['hub']} (config {location.get('name')}, revision {location.get('revision')})"


def load_table(location: dict, split: str | None = None) -> pd.DataFrame:
    """Load one table.

    location: either {"files": path | [paths]} (parquet, jsonl/json or csv) or
    {"hub": id, "name": config, "revision": sha, "split": name}. `split` overrides
    location["split"] for Hub tables; for local files pass the split's own location."""
    if "files" in location:
        return _load_local(location["files"])
    if "hub" in location:
        return _load_hub(location, split or location.get("split", "train"))
    raise AicdError(f"a data location needs 'files' or 'hub', got keys {sorted(location)}")


def _load_local(files: str | list[str]) -> pd.DataFrame:
    import datasets  # imported here: slow to import, and only this loader needs it

    paths = [files] if isinstance(files, str) else list(files)
    if not paths:
        raise AicdError("an empty list of files was given")
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        raise AicdError(
            f"input file not found: {missing[0]} (working directory {Path.cwd()}). "
            "Point the config at the file, e.g. snakemake --config "
            "'sources={trial: {files: /abs/path/file.parquet}}'"
        )
    kinds = {_FORMATS.get(Path(p).suffix.lower()) for p in paths}
    if None in kinds or len(kinds) != 1:
        raise AicdError(f"cannot tell the format of {paths}: use .parquet, .jsonl/.json or .csv files of one kind")
    kind = kinds.pop()
    paths = _without_empty(paths, kind)
    if kind in ("json", "csv"):
        for path in paths:
            _check_utf8(path)
    try:
        ds = datasets.load_dataset(kind, data_files=paths, split="train")
    except UnicodeDecodeError as err:
        raise AicdError(f"{paths}: the file is not valid UTF-8 ({err}); re-encode it or store code as parquet") from None
    except Exception as err:  # datasets wraps reader errors in several types
        cause = err.__cause__ or err
        if "utf" in str(cause).lower() or "utf" in str(err).lower():
            raise AicdError(f"{paths}: the file is not valid UTF-8 ({cause}); re-encode it or store code as parquet") from None
        raise AicdError(f"could not read {paths} as {kind}: {cause}") from None
    log.info("loaded %d rows from %s", len(ds), paths)
    return ds.to_pandas()


def _has_rows(path: str, kind: str) -> bool:
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(path).metadata.num_rows > 0
        except Exception:  # not parquet after all: the reader's own error says so
            return True
    with open(path, "rb") as fh:
        lines = (line for line in fh if line.strip())
        first = next(lines, None)
        # A CSV's first line is its header; a JSON document of an empty list has no rows.
        return first is not None and (kind != "csv" or next(lines, None) is not None) and first.strip() != b"[]"


def _without_empty(paths: list[str], kind: str) -> list[str]:
    """Files without rows left out, with a warning; none left is a user error (the readers
    say only "BatchSize must be greater than 0" or nothing at all)."""
    full = [p for p in paths if _has_rows(p, kind)]
    if not full:
        raise AicdError(f"{', '.join(paths)}: no data rows; "
                        "point the config at a file with data, or remove this entry from the config")
    if len(full) < len(paths):
        log.warning("left out %d empty file(s): %s", len(paths) - len(full), [p for p in paths if p not in full])
    return full


def _check_utf8(path: str) -> None:
    """Text readers replace bad bytes silently; refuse the file instead, naming the line."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            try:
                decoder.decode(line)
            except UnicodeDecodeError as err:
                raise AicdError(
                    f"{path}, line {lineno}: not valid UTF-8 ({err.reason} at byte {err.start} of the line); "
                    "re-encode the file as UTF-8, or store code as parquet"
                ) from None


def _load_hub(location: dict, split: str) -> pd.DataFrame:
    import datasets

    try:
        ds = datasets.load_dataset(
            location["hub"], name=location.get("name"), revision=location.get("revision"),
            data_dir=location.get("data_dir"), split=split,
        )
    except Exception as err:  # offline, unknown id, wrong revision: all end the same way for a user
        raise AicdError(
            f"could not load split '{split}' of {describe(location)} from the Hugging Face Hub: "
            f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}. "
            "Without network access, download the files elsewhere and point the config at them "
            "with 'files:' (parquet, jsonl or csv), e.g. tasks: {T1: {release: {files: "
            "{train: t1_train.parquet, validation: t1_val.parquet, test: t1_test.parquet}}}}"
        ) from None
    log.info("loaded %d rows of split %s from %s", len(ds), split, describe(location))
    return ds.to_pandas()


def stream_sample(spec: dict, seed: int) -> tuple[pd.DataFrame, dict]:
    """Read a (possibly huge) table as a stream and keep at most `per_language` rows per
    language, so memory is bounded by the sample, not the source. Hub and local files go
    through the same `datasets` streaming reader; a seeded shuffle buffer varies which rows
    are kept without reading everything. Returns (rows, stream report)."""
    import datasets

    location = spec  # a source's config entry names where it is (files or hub) and how to sample it
    stream_spec = spec.get("stream") or {}
    per_language = int(stream_spec.get("per_language", 1000))
    max_scanned = stream_spec.get("max_rows_scanned")
    lang_col = (spec.get("columns") or {}).get("language", "language")
    fixed_language = (spec.get("defaults") or {}).get("language")
    try:
        if "files" in location:
            paths = [location["files"]] if isinstance(location["files"], str) else list(location["files"])
            missing = [p for p in paths if not Path(p).is_file()]
            if missing:
                raise AicdError(f"input file not found: {missing[0]} (working directory {Path.cwd()})")
            kind = _FORMATS.get(Path(paths[0]).suffix.lower())
            if kind is None:
                raise AicdError(f"cannot tell the format of {paths}: use .parquet, .jsonl/.json or .csv files")
            paths = _without_empty(paths, kind)
            ds = datasets.load_dataset(kind, data_files=paths, split="train", streaming=True)
        else:
            ds = datasets.load_dataset(location["hub"], name=location.get("name"), revision=location.get("revision"),
                                       data_dir=location.get("data_dir"), split=location.get("split", "train"),
                                       streaming=True)
        if int(stream_spec.get("shuffle_buffer", 0)) > 0:
            ds = ds.shuffle(seed=seed, buffer_size=int(stream_spec["shuffle_buffer"]))
        kept: dict[str, list[dict]] = {}
        scanned = 0
        for row in ds:
            scanned += 1
            lang = str(row.get(lang_col, fixed_language))
            bucket = kept.setdefault(lang, [])
            if len(bucket) < per_language:
                bucket.append(row)
            if max_scanned and scanned >= int(max_scanned):
                break
            if fixed_language and len(bucket) >= per_language:
                break
    except AicdError:
        raise
    except Exception as err:
        raise AicdError(f"could not stream {describe(location)}: {type(err).__name__}: "
                        f"{str(err).splitlines()[0] if str(err) else ''}") from None
    rows = [r for lang in sorted(kept) for r in kept[lang]]
    report = {"rows_scanned": scanned, "per_language": per_language,
              "kept_per_language": {k: len(v) for k, v in sorted(kept.items())},
              "not_sampled": scanned - len(rows)}
    log.info("streamed %d rows of %s, kept %d", scanned, describe(location), len(rows))
    return pd.DataFrame(rows), report
