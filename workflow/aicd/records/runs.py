"""Which run a results root belongs to, so that one experiment never rewrites another's files.

A run is the ordered list of config files snakemake was started with (`--configfile A B`, or
config/config.yaml by default); `--config KEY=VALUE` edits do not make another run. The first
run that writes into a root claims it (RESULTS/run.json). Later:

- the same files: an ordinary rerun (an edited setting reruns what it changes);
- the recorded files plus more after them (a layer: demo.yaml, then demo.yaml + mine.yaml):
  the run grows, said in one line; from then on it is the layered run;
- the recorded files less their last layers, with `--config drop_layers=true`: the layers come
  off (their rows leave the tables), said in one line;
- anything else (another config, or dropping a layer without that flag, which would rewrite
  the tables without its rows): refused before any job, with the command that gives the run a
  root of its own (`results:` in the config, or --config results=DIR).

A run that only adds detectors beside a finished run's rows is better built on it (`base:`,
aicd.records.baserun) than layered on it: it reads the base's files and writes under its own root.

Checked where snakemake starts (never in a job on a compute node); recorded only when jobs run
(not on a dry run). The record also keeps the run's validated config (RESULTS/run_config.yaml)
and, for a run built on another (aicd.records.baserun), the base's fingerprint."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..common.errors import AicdError
from ..common.io import write_text
from ..outputs import Outputs
from .baserun import record as record_config


def identity(configfiles, repo: str | Path, workdir: str | Path | None = None) -> list[str]:
    """The run's config files: relative to the repository where they lie inside it, else to the
    working directory (so a run's folder copied or moved with its config stays the same run),
    else absolute."""
    bases = [Path(repo).resolve(), Path(workdir or os.getcwd()).resolve()]
    out = []
    for f in configfiles:
        path = Path(f).resolve()
        for base in bases:
            if base == path.parent or base in path.parents:
                out.append(str(path.relative_to(base)))
                break
        else:
            out.append(str(path))
    return out


def _named(files: list[str]) -> str:
    return " + ".join(files) or "(no config file)"


def recorded(results: str | Path) -> dict | None:
    try:
        return json.loads(Path(Outputs(results).run_record()).read_text())
    except (OSError, ValueError):
        return None


def check(results: str | Path, files: list[str], dry_run: bool = False, drop_layers: bool = False) -> str | None:
    """None when the root is this run's (or nobody's), a note when this run adds layers to the
    recorded one (a dry run says it would) or, with drop_layers, takes layers off; raises when
    another run owns the root."""
    record = recorded(results)
    if record is None or record.get("configfiles") == files:
        return None
    mine = record.get("configfiles") or []
    root = str(results).rstrip("/") + "/"
    if files[:len(mine)] == mine:
        if dry_run:  # a dry run records nothing
            return (f"{root}: the run of {_named(mine)}; this run would add {_named(files[len(mine):])} as a layer "
                    f"(recorded when its jobs start; a dry run records nothing). To leave the run as it is, give "
                    f"your file `base: {str(results).rstrip('/')}` and a `results:` of its own instead "
                    "(docs/own_detector.md)")
        return (f"{root}: the run of {_named(mine)} now also has {_named(files[len(mine):])} (a layer added); "
                f"run it with all of them from now on, or drop it as docs/own_detector.md says")
    dropped = [f for f in mine if f not in files]
    if files == mine[:len(files)] and dropped and drop_layers:
        will = "would take" if dry_run else "takes"
        return (f"{root}: this run {will} the layer {_named(dropped)} off the run of {_named(mine)} "
                f"(--config drop_layers=true): its rows leave the tables; their files stay under {root}, unused")
    if files == [f for f in mine if f in files] and dropped:
        why = f"would rewrite its tables without the rows of {_named(dropped)}"
        if files == mine[:len(files)]:
            why += " (to do that on purpose, pass --config drop_layers=true)"
    else:
        why = "would overwrite its files"
    raise AicdError(f"{root} holds the run of {_named(mine)} ({Outputs(results).run_record()}); this run ({_named(files)}) {why}. "
                    f"Give this run a root of its own: set `results: {Path(str(results)) / 'NAME'}` in its config, or "
                    f"pass --config results=DIR; or run with the files the root was made with")


def claim(results: str | Path, files: list[str], config: dict | None = None, base: dict | None = None) -> None:
    """Record the run as the root's owner (atomic), with its validated config (aicd.records.baserun.record)
    and, for a run on a base, the base's root and fingerprint."""
    if config is not None:
        record_config(results, config)
    record = recorded(results) or {}
    if record.get("configfiles") == files and record.get("base") == base:
        return
    entry = {"configfiles": files, "claimed": time.strftime("%Y-%m-%dT%H:%M:%S"), "host": os.uname().nodename}
    if base:
        entry["base"] = base
    write_text(json.dumps(entry, indent=1) + "\n", Outputs(results).run_record())
