"""One loader for every table the project reads: the Hugging Face Hub or local files,
both through `datasets.load_dataset`, so the Hub path and the offline path share code."""

from __future__ import annotations

import codecs
import logging
import os
import re
from collections import Counter
from pathlib import Path

import pandas as pd

from ..common.errors import AicdError
from ..data.schema import canonical_language

log = logging.getLogger(__name__)

_FORMATS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv"}


def describe(location: dict) -> str:
    if "files" in location:
        return f"local files {location['files']}"
    where = ", ".join(f"{k} {location[k]}" for k in ("name", "data_dir", "split") if location.get(k))
    return f"Hub dataset {location['hub']} ({where + ', ' if where else ''}revision {location.get('revision')})"


def load_table(location: dict, split: str | None = None) -> pd.DataFrame:
    """Load one table.

    location: either {"files": path | [paths]} (parquet, jsonl/json or csv) or
    {"hub": id, "name": config, "revision": sha, "split": name}. `split` overrides
    location["split"] for Hub tables; for local files pass the split's own location."""
    if "files" in location:
        return _load_local(location["files"])
    if "pinned_table" in location:
        from .pinned_table import read_pinned_table

        return read_pinned_table(location["pinned_table"], location.get("code_from"))
    if "hub" in location:
        return _load_hub(location, split or location.get("split", "train"))
    raise AicdError(f"a data location needs 'files', 'pinned_table' or 'hub', got keys {sorted(location)}")


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


HUB_HINT = ("Without network access, download the files elsewhere and point the config at them "
            "with 'files:' (parquet, jsonl or csv), e.g. tasks: {T1: {release: {files: "
            "{train: t1_train.parquet, validation: t1_val.parquet, test: t1_test.parquet}}}}")
_SHA = re.compile(r"^[0-9a-f]{40}$")


def _first_line(err: BaseException) -> str:
    return str(err).splitlines()[0] if str(err) else ""


def _hub_token() -> str | None:
    try:
        from huggingface_hub import get_token

        return get_token()
    except Exception:  # an old huggingface_hub: let the load itself say what is wrong
        return os.environ.get("HF_TOKEN") or None


def _gated_message(location: dict, cause: str = "") -> str:
    hub = location["hub"]
    return (f"{hub} is a gated dataset: loading it needs a Hugging Face token (`hf auth login`, or HF_TOKEN) "
            f"from an account that accepted its terms at https://huggingface.co/datasets/{hub}"
            f"{f' ({cause})' if cause else ''}; or point the source at local copies with files:")


def check_access(location: dict) -> None:
    """A gated dataset without a token stops here, with one line, before any download."""
    if location.get("gated") and _hub_token() is None:
        raise AicdError(_gated_message(location, "no token found"))


def _looks_gated(err: BaseException) -> bool:
    text = f"{type(err).__name__} {err}".lower()
    return "gated" in text or "401" in text or "403" in text or "unauthorized" in text


def _hub_error(location: dict, err: BaseException, what: str) -> AicdError:
    if location.get("gated") and _looks_gated(err):
        return AicdError(_gated_message(location, f"{type(err).__name__}: {_first_line(err)}"))
    return AicdError(f"could not load {what} of {describe(location)} from the Hugging Face Hub: "
                     f"{type(err).__name__}: {_first_line(err)}. {HUB_HINT}")


def resolved_revision(location: dict) -> str | None:
    """The commit a Hub revision points at now (logged, so a run on `main` can be pinned), or
    None when it cannot be read (offline)."""
    revision = location.get("revision") or "main"
    if _SHA.match(revision):
        return revision
    try:
        from huggingface_hub import HfApi

        sha = HfApi().dataset_info(location["hub"], revision=revision).sha
    except Exception:
        return None
    log.warning("%s: revision %r resolves to commit %s; pin it in the config for an exact reproduction",
                location["hub"], revision, sha)
    return sha


def _load_hub(location: dict, split: str) -> pd.DataFrame:
    import datasets

    check_access(location)
    try:
        ds = datasets.load_dataset(
            location["hub"], name=location.get("name"), revision=location.get("revision"),
            data_dir=location.get("data_dir"), split=split,
        )
    except Exception as err:  # offline, unknown id, wrong revision: all end the same way for a user
        raise _hub_error(location, err, f"split '{split}'") from None
    log.info("loaded %d rows of split %s from %s", len(ds), split, describe(location))
    return ds.to_pandas()


# --- sources: one entry may span several configs, data_dirs or splits ---------------------

PART_COLUMN = "__part"
PART_LANGUAGE_COLUMN = "__part_language"


def source_parts(spec: dict) -> list[dict]:
    """The tables one source entry spans: [{"part", "language", "location"}].

    `names:` (configs), `data_dirs:` and `splits:` expand a Hub source into one table per
    combination (CodeNet: one config per language; StarCoderData: one data_dir per language;
    DroidCollection: train/dev/test). `files:` wins over the Hub; as a mapping it gives the
    local files of each part under the part's name (python: [...], cpp: [...]), so a local
    copy keeps the per-part layout. `language` is the part's language when its name is one."""
    files = spec.get("files")
    if files is not None:
        if isinstance(files, dict):
            if not files:
                raise AicdError("files: an empty mapping was given")
            return [{"part": str(k), "language": canonical_language(str(k)), "location": {"files": v}}
                    for k, v in files.items()]
        return [{"part": None, "language": None, "location": {"files": files}}]
    if "pinned_table" in spec:
        return [{"part": None, "language": None,
                 "location": {k: spec[k] for k in ("pinned_table", "code_from") if k in spec}}]
    if "hub" not in spec:
        raise AicdError(f"a source needs 'files', 'pinned_table', 'hub' or 'gather', got keys {sorted(spec)}")
    base = {k: spec[k] for k in ("hub", "revision", "gated") if k in spec}
    names = spec.get("names") or [spec.get("name")]
    dirs = spec.get("data_dirs") or [spec.get("data_dir")]
    splits = spec.get("splits") or [spec.get("split", "train")]
    parts = []
    for name in names:
        for data_dir in dirs:
            for split in splits:
                label = [x for x, many in ((name, "names" in spec), (data_dir, "data_dirs" in spec),
                                           (split, "splits" in spec)) if many and x]
                language = canonical_language(name) or canonical_language(data_dir)
                parts.append({"part": "/".join(label) or None, "language": language,
                              "location": {**base, "name": name, "data_dir": data_dir, "split": split}})
    return parts


def _row_filter(spec: dict):
    """`where: {column: [values]}` keeps rows whose column holds one of the values (CodeNet's
    `status: [Accepted]`); returns (keep(row) -> reason | None, columns it needs)."""
    where = {col: {str(v) for v in (vals if isinstance(vals, list) else [vals])}
             for col, vals in (spec.get("where") or {}).items()}

    def reason(row: dict) -> str | None:
        for col, allowed in where.items():
            if col not in row:
                raise AicdError(f"where: column '{col}' is not in the table; its columns are: "
                                f"{', '.join(map(str, row))}")
            if str(row[col]) not in allowed:
                return f"where_{col}"
        return None

    return reason if where else None


def _part_language(spec: dict, part: dict) -> str | None:
    if not spec.get("part_language"):
        return None
    if part["language"] is None:
        raise AicdError(f"part_language: the part '{part['part']}' does not name one of the nine languages "
                        "(name the parts after languages, e.g. files: {python: ..., cpp: ...})")
    return part["language"]


def read_source(spec: dict, seed: int) -> tuple[pd.DataFrame, dict, dict]:
    """Read every part of a source (whole, or streamed when it has `stream:`).

    Returns (raw rows, report, ingest spec): the ingest spec maps `language` to the part's
    language where `part_language` says so. Rows left out by `where:` are counted by reason."""
    parts = source_parts(spec)
    for part in parts:
        _part_language(spec, part)  # fail before reading anything
    hub = [p["location"] for p in parts if "hub" in p["location"]]
    report: dict = {"parts": [p["part"] for p in parts]}
    if hub:
        check_access(hub[0])
        resolved = resolved_revision(hub[0])
        report["revision"] = {"requested": hub[0].get("revision"), "resolved": resolved}
        log.info("%s: revision %s (resolved: %s)", hub[0]["hub"], hub[0].get("revision"), resolved or "unknown, offline")
    if "stream" in spec:
        raw, stream_report = stream_sample(spec, seed, parts)
        report["stream"] = stream_report
    else:
        keep = _row_filter(spec)
        frames, filtered = [], Counter()
        for part in parts:
            df = _load_part(part["location"])
            if keep is not None and len(df):
                reasons = [keep(r) for r in df.to_dict("records")]
                filtered.update(r for r in reasons if r)
                df = df[[r is None for r in reasons]]
            frames.append(_tag(df, spec, part))
        raw = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        report["filtered_out"] = dict(filtered)
    ingest_spec = dict(spec)
    if spec.get("part_language"):
        ingest_spec["columns"] = {**(spec.get("columns") or {}), "language": PART_LANGUAGE_COLUMN}
    return raw, report, ingest_spec


def _load_part(location: dict) -> pd.DataFrame:
    if "files" in location or "pinned_table" in location:
        return load_table(location)
    return _load_hub(location, location.get("split", "train"))


def _tag(df: pd.DataFrame, spec: dict, part: dict) -> pd.DataFrame:
    df = df.assign(**{PART_COLUMN: part["part"]})
    if spec.get("part_language"):
        df[PART_LANGUAGE_COLUMN] = part["language"]
    return df


def _open_stream(location: dict):
    import datasets

    if "files" in location:
        paths = [location["files"]] if isinstance(location["files"], str) else list(location["files"])
        missing = [p for p in paths if not Path(p).is_file()]
        if missing:
            raise AicdError(f"input file not found: {missing[0]} (working directory {Path.cwd()})")
        kind = _FORMATS.get(Path(paths[0]).suffix.lower())
        if kind is None:
            raise AicdError(f"cannot tell the format of {paths}: use .parquet, .jsonl/.json or .csv files")
        paths = _without_empty(paths, kind)
        return datasets.load_dataset(kind, data_files=paths, split="train", streaming=True)
    check_access(location)
    return datasets.load_dataset(location["hub"], name=location.get("name"), revision=location.get("revision"),
                                 data_dir=location.get("data_dir"), split=location.get("split", "train"),
                                 streaming=True)


def stream_sample(spec: dict, seed: int, parts: list[dict] | None = None) -> tuple[pd.DataFrame, dict]:
    """Read a (possibly huge) source as a stream and keep at most `per_language` rows per
    language, so memory is bounded by the sample, not the source. Hub and local files go
    through the same `datasets` streaming reader, part by part; a seeded shuffle buffer varies
    which rows are kept without reading everything. Returns (rows, stream report):
    rows_scanned == kept + filtered_out + not_sampled."""
    parts = parts if parts is not None else source_parts(spec)
    stream_spec = spec.get("stream") or {}
    per_language = int(stream_spec.get("per_language", 1000))
    max_scanned = stream_spec.get("max_rows_scanned")
    lang_col = (spec.get("columns") or {}).get("language", "language")
    fixed_language = (spec.get("defaults") or {}).get("language")
    keep = _row_filter(spec)
    kept: dict[str, list[dict]] = {}
    filtered: Counter[str] = Counter()
    scanned = 0
    per_part: dict[str, int] = {}
    for part in parts:
        location = part["location"]
        part_lang = _part_language(spec, part)
        fixed = part_lang or fixed_language
        part_scanned = 0
        try:
            ds = _open_stream(location)
            if int(stream_spec.get("shuffle_buffer", 0)) > 0:
                ds = ds.shuffle(seed=seed, buffer_size=int(stream_spec["shuffle_buffer"]))
            for row in ds:
                scanned += 1
                part_scanned += 1
                why = keep(row) if keep is not None else None
                if why:
                    filtered[why] += 1
                else:
                    lang = str(fixed if fixed else row.get(lang_col))
                    bucket = kept.setdefault(lang, [])
                    if len(bucket) < per_language:
                        row[PART_COLUMN] = part["part"]
                        if spec.get("part_language"):
                            row[PART_LANGUAGE_COLUMN] = part_lang
                        bucket.append(row)
                    if fixed and len(bucket) >= per_language:
                        break
                if max_scanned and scanned >= int(max_scanned):
                    break
        except AicdError:
            raise
        except Exception as err:
            if "hub" in location and location.get("gated") and _looks_gated(err):
                raise AicdError(_gated_message(location, f"{type(err).__name__}: {_first_line(err)}")) from None
            raise AicdError(f"could not stream {describe(location)}: {type(err).__name__}: {_first_line(err)}") from None
        per_part[str(part["part"])] = part_scanned
        if max_scanned and scanned >= int(max_scanned):
            break
    rows = [r for lang in sorted(kept) for r in kept[lang]]
    report = {"rows_scanned": scanned, "per_language": per_language,
              "kept_per_language": {k: len(v) for k, v in sorted(kept.items())},
              "scanned_per_part": per_part, "filtered_out": dict(filtered),
              "not_sampled": scanned - len(rows) - sum(filtered.values())}
    log.info("streamed %d rows of %d part(s), kept %d", scanned, len(parts), len(rows))
    return pd.DataFrame(rows), report
