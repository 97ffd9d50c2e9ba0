"""Input fingerprints: what a result tree was made from, in one short hash.

Every source report lists the inputs it read under `inputs` ({key: record}): a local file
(name and sha256), a Hub dataset (id, config, split and revision, resolved to a commit where
the Hub answered), a pinned package (name, version, registry, sha256) or a folder of files
on this machine (one digest over the files read). `collect` joins them, with any release
task inputs and generator tables, into results/inputs.json:

    {"fingerprint": "3f9c0a1b2c4d", "code": "v0.1-12-gabc1234", "inputs": {...}, "warnings": [...]}

The fingerprint is a hash of every input's identity and content hash; `code` is
`git describe` of the checkout. Tables, the report and the dataset card carry both
(`stamp`). Ground floor: imports no stage."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from ..outputs import SHOWN, Outputs, folder_of, relative, wildcards_of

FINGERPRINT_CHARS = 12
# What identifies an input's content, per kind (everything else in a record is description).
CONTENT_KEYS = ("sha256", "revision", "resolved", "version")


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_input(path: str | os.PathLike) -> tuple[str, dict]:
    """(key, record) of a local input file: keyed by its name, so a copy elsewhere is the same input."""
    p = Path(path)
    return f"file:{p.name}", {"kind": "file", "path": str(path), "bytes": p.stat().st_size, "sha256": sha256_file(p)}


def dir_input(path: str | os.PathLike) -> tuple[str, dict]:
    """(key, record) of a folder of input files: one digest over (relative path, sha256), sorted."""
    root = Path(path)
    h, n = hashlib.sha256(), 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath) / name
            h.update(f"{full.relative_to(root).as_posix()}\0{sha256_file(full)}\n".encode())
            n += 1
    return f"dir:{root.name}", {"kind": "dir", "path": str(path), "files": n, "sha256": h.hexdigest()}


def hub_input(location: dict, resolved: str | None = None) -> tuple[str, dict]:
    parts = [location["hub"], location.get("name"), location.get("data_dir"), location.get("split")]
    key = "hub:" + "/".join(str(p) for p in parts if p)
    record = {"kind": "hub", **{k: location[k] for k in ("hub", "name", "data_dir", "split") if location.get(k)},
              "revision": location.get("revision") or "main"}
    if resolved:
        record["resolved"] = resolved
    return key, record


def content(record: dict) -> dict:
    return {k: record[k] for k in CONTENT_KEYS if k in record}


def digest(inputs: dict[str, dict]) -> str:
    """The short fingerprint of a set of inputs: their keys and content hashes, not their paths."""
    canonical = json.dumps({k: content(v) for k, v in sorted(inputs.items())}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:FINGERPRINT_CHARS]


def code_version(repo: str | os.PathLike) -> str:
    """`git describe --tags --always --dirty` of the checkout, or the package version without git."""
    try:
        out = subprocess.run(["git", "-C", str(repo), "describe", "--tags", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        from importlib.metadata import version

        return f"aicd-bench {version('aicd-bench')} (no git)"
    except Exception:
        return "unknown"


def source_warnings(name: str, report: dict) -> list[str]:
    """Shortfalls a user must see: a gathered language with fewer rows than asked for, or
    inputs read from the machine rather than pinned."""
    out = []
    gather = report.get("gather") or {}
    asked = gather.get("per_language")
    short = gather.get("languages_short") or {}
    if short:
        parts = ", ".join(f"{lang} {n}" for lang, n in sorted(short.items()))
        out.append(f"source {name}: fewer rows than asked for ({asked} per language): {parts}")
    for key, rec in sorted((report.get("inputs") or {}).items()):
        if rec.get("kind") == "installed":
            out.append(f"source {name}: {key} was read from files on this machine ({', '.join(rec['roots'])}), "
                       "not from pinned inputs: another machine may gather other rows")
    return out


def collect(sources: dict[str, dict], extra: dict[str, dict] | None = None, code: str = "unknown") -> dict:
    """results/inputs.json from the source reports ({name: report}) and other inputs
    ({key: record}: release task files, generator tables)."""
    inputs: dict[str, dict] = {}
    warnings: list[str] = []
    for name, report in sorted(sources.items()):
        for key, record in (report.get("inputs") or {}).items():
            inputs[f"source:{name}/{key}"] = record
        warnings += source_warnings(name, report)
    inputs.update(extra or {})
    inputs = dict(sorted(inputs.items()))
    return {"fingerprint": digest(inputs), "code": code, "inputs": inputs, "warnings": warnings}


def stamp(info: dict) -> str:
    """One line naming the inputs and the code: `inputs 3f9c0a1b2c4d, code v0.1-12-gabc1234`."""
    return f"inputs {info['fingerprint']}, code {info['code']}"


def describe_input(key: str, record: dict) -> str:
    shown = {k: v for k, v in record.items() if k in ("version", "registry", "revision", "resolved", "files")}
    sha = record.get("sha256")
    extra = ", ".join(f"{k} {v}" for k, v in shown.items())
    return f"{key} ({extra + ', ' if extra else ''}sha256 {sha[:12] if sha else '–'})"


def diff_inputs(a: dict, b: dict) -> list[str]:
    """Lines naming each input that differs between two inputs.json files (and the code)."""
    lines = []
    ia, ib = a.get("inputs", {}), b.get("inputs", {})
    for key in sorted(set(ia) | set(ib)):
        if key not in ib:
            lines.append(f"only in A: {describe_input(key, ia[key])}")
        elif key not in ia:
            lines.append(f"only in B: {describe_input(key, ib[key])}")
        elif content(ia[key]) != content(ib[key]):
            lines.append(f"differs: A {describe_input(key, ia[key])} / B {describe_input(key, ib[key])}")
    if a.get("code") != b.get("code"):
        lines.append(f"code differs: A {a.get('code')} / B {b.get('code')}")
    return lines


# What must be byte-identical between two runs on the same inputs and code: every table, score
# file, figure (PDFs written without a creation date: aicd.report.figures.write_figure), analysis
# and the report itself.
COMPARED = (relative("tab", "*", "*", glob=True), relative("scores", glob=True), relative("test_set_scores", glob=True),
            relative("figure", "*", "*", glob=True), relative("analysis", "*", "*", glob=True), relative("report"),
            relative("paper_results"), relative("dataset_counts"), relative("dataset_card"))
# What is not compared, and why (printed by `aicd verify`).
SKIPPED = (f"{folder_of('log', 'x')} and {folder_of('benchmark', 'x')} (job logs and times), {relative('run_record')} "
           f"and {relative('resolved')} (the config files' paths and what the machine offered), and the intermediate "
           "files whose numbers reach the compared ones: " + ", ".join(map(folder_of, (Outputs.source, Outputs.pool)))
           + " beyond its card and counts, " + ", ".join(map(folder_of, (
               Outputs.split, Outputs.features, Outputs.predictions, Outputs.validation_scores, Outputs.model, Outputs.lm,
               Outputs.checkpoints, Outputs.features_cache, Outputs.generations, Outputs.judge_report,
               Outputs.execution))))


def results_dir(path: str | os.PathLike) -> Path:
    """A results tree: the folder holding its input fingerprint (given it, or the working directory
    above the default root)."""
    p = Path(path)
    below = p / SHOWN.root
    return below if not Path(Outputs(p).inputs()).is_file() and Path(Outputs(below).inputs()).is_file() else p


def verify(a: str | os.PathLike, b: str | os.PathLike) -> tuple[bool, list[str]]:
    """Compare two result trees: (identical, lines to print). Same fingerprint and code: every
    file COMPARED names must be byte-identical, and those that are not are named; the last line
    says what is not compared (SKIPPED). Otherwise the inputs that differ are named."""
    from ..common.errors import AicdError

    ra, rb = results_dir(a), results_dir(b)
    info = []
    for r in (ra, rb):
        path = Path(Outputs(r).inputs())
        if not path.is_file():
            raise AicdError(f"{r}: no {relative('inputs')} (not a results tree of this workflow, or made before fingerprints)")
        info.append(json.loads(path.read_text()))
    ia, ib = info
    head = f"A {ra}: {stamp(ia)}\nB {rb}: {stamp(ib)}"
    if ia["fingerprint"] != ib["fingerprint"]:
        return False, [head, "different inputs: the results are not expected to match", *diff_inputs(ia, ib)]
    if ia.get("code") != ib.get("code"):  # before and after a code change: the same bytes unless a version moved
        head += (f"\nsame inputs, different code (A {ia.get('code')} / B {ib.get('code')}): a file differs only where a "
                 "task's or a detector kind's version moved (CHANGELOG.md)")
    names = sorted({str(f.relative_to(r)) for r in (ra, rb) for pattern in COMPARED for f in r.glob(pattern)
                    if f.is_file()})
    bad = []
    for name in names:
        fa, fb = ra / name, rb / name
        if not fa.is_file() or not fb.is_file():
            bad.append(f"only in {'A' if fa.is_file() else 'B'}: {name}")
        elif fa.read_bytes() != fb.read_bytes():
            bad.append(f"differs: {name}")
    skipped = f"not compared: {SKIPPED}"
    if bad:
        return False, [head, f"same inputs, but {len(bad)} of {len(names)} tables, score files, figures and reports "
                             "differ:", *bad, skipped]
    return True, [head, f"identical: {len(names)} tables, score files, figures and reports byte for byte", skipped]


def release_inputs(release: dict[str, dict]) -> dict[str, dict]:
    """{key: record} of release tasks read straight from local files or the Hub ({task: release spec})."""
    out = {}
    for task, spec in sorted(release.items()):
        files = spec.get("files")
        if files:
            groups = files.items() if isinstance(files, dict) else [(None, files)]
            for split, paths in groups:
                for path in sorted([paths] if isinstance(paths, str) else paths):
                    key, record = file_input(path)
                    out[f"task:{task}/{split + '/' if split else ''}{key}"] = record
        elif spec.get("hub"):
            key, record = hub_input(spec)
            out[f"task:{task}/{key}"] = record
    return out


def main(argv=None) -> None:
    """python -m aicd.records.fingerprint: results/inputs.json (what the rule `input_fingerprint` runs)."""
    import argparse

    from ..common.io import read_json, write_json
    from ..common.stagecli import json_arg

    parser = argparse.ArgumentParser(prog="python -m aicd.records.fingerprint", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sources", nargs="*", default=[], help=SHOWN.source_report())
    parser.add_argument("--release", type=json_arg, default={}, help="JSON {task: release spec} of release tasks")
    parser.add_argument("--generations", nargs="*", default=[], help="generator tables in the pool")
    parser.add_argument("--code", default="unknown", help="the code version (git describe)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    sources = {}
    for path in sorted(args.sources):
        report = read_json(path)
        sources[report.get("source") or wildcards_of(path, "source_report").source] = report
    extra = release_inputs(args.release)
    for path in sorted(args.generations):
        _, record = file_input(path)
        extra[f"generation:{wildcards_of(path, 'generations').model}"] = record
    info = collect(sources, extra, args.code)
    write_json(info, args.out)
    for line in info["warnings"]:
        print(f"warning: {line}", file=__import__("sys").stderr)


if __name__ == "__main__":
    import sys

    from ..common.stagecli import run

    sys.exit(run(main))
