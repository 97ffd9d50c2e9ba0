"""Which run a results root belongs to, so that one experiment never rewrites another's files.

A run is the ordered list of config files snakemake was started with (`--configfile A B`, or
config/config.yaml by default); `--config KEY=VALUE` edits do not make another run. The first
run that writes into a root claims it (RESULTS/run.json). Later:

- the same files: an ordinary rerun (an edited setting reruns what it changes);
- the recorded files plus more after them (a layer: demo.yaml, then demo.yaml + mine.yaml):
  the run grows, said in one line; from then on it is the layered run;
- anything else (another config, or dropping a layer, which would rewrite the tables without
  its rows): refused before any job, with the command that gives the run a root of its own
  (`results:` in the config, or --config results=DIR).

Checked where snakemake starts (never in a job on a compute node); recorded only when jobs run
(not on a dry run)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .errors import AicdError
from .io import write_text

RECORD = "run.json"


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
        return json.loads((Path(results) / RECORD).read_text())
    except (OSError, ValueError):
        return None


def check(results: str | Path, files: list[str]) -> str | None:
    """None when the root is this run's (or nobody's), a note when this run adds layers to the
    recorded one; raises when another run owns the root."""
    record = recorded(results)
    if record is None or record.get("configfiles") == files:
        return None
    mine = record.get("configfiles") or []
    root = str(results).rstrip("/") + "/"
    if files[:len(mine)] == mine:
        return (f"{root}: the run of {_named(mine)} now also has {_named(files[len(mine):])} (a layer added); "
                f"run it with all of them from now on")
    dropped = [f for f in mine if f not in files]
    if files == [f for f in mine if f in files] and dropped:
        why = f"would rewrite its tables without the rows of {_named(dropped)}"
    else:
        why = "would overwrite its files"
    raise AicdError(f"{root} holds the run of {_named(mine)} ({root}{RECORD}); this run ({_named(files)}) {why}. "
                    f"Give this run a root of its own: set `results: {Path(str(results)) / 'NAME'}` in its config, or "
                    f"pass --config results=DIR; or run with the files the root was made with")


def claim(results: str | Path, files: list[str]) -> None:
    """Record the run as the root's owner (atomic)."""
    record = recorded(results) or {}
    if record.get("configfiles") == files:
        return
    write_text(json.dumps({"configfiles": files, "claimed": time.strftime("%Y-%m-%dT%H:%M:%S"),
                           "host": os.uname().nodename}, indent=1) + "\n", Path(results) / RECORD)
