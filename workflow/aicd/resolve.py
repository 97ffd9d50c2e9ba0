"""What the plan needs to know of the machine, probed once and recorded: the one place where
planning does I/O.

Probed only where the config asks (`enabled: auto`, `optional: true` sources): whether a Docker
daemon answers, which registry models (generators, the instructor, the judges) have an endpoint,
which optional sources' files are absent; and, always, that the pinned inputs a source needs are
in the cache (else it stops, naming the command that fetches them). On the submitting machine
the answers are written to results/resolved.json (rewritten only when they change); a job on a
compute node (snakemake --mode remote) reads that record and probes nothing, so every node
plans the same jobs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .config import stage_on
from .errors import AicdError
from .io import write_text

RECORD = "resolved.json"


def probe(config: dict, models: dict) -> dict:
    """The answers for this config on this machine."""
    out: dict = {}
    execution = config.get("execution")
    if stage_on(config, "execution") and execution["enabled"] == "auto":
        from .sandbox.pool import docker_available

        out["execution"] = docker_available()
    if stage_on(config, "generation") and config["generation"]["enabled"] == "auto":
        from .generate.registry import enabled_models, has_endpoint

        gen = config["generation"]
        out["generators"] = enabled_models(models, gen.get("models", "all"))
        out["instructor"] = bool(gen.get("instructor") and has_endpoint(models[gen["instructor"]]))
    if stage_on(config, "judging") and config["judging"]["enabled"] == "auto":
        from .generate.registry import has_endpoint

        out["judges"] = [j for j, s in (config["judging"].get("judges") or {}).items()
                         if has_endpoint(models[s["model"]])]
    absent = {}
    for name in (config.get("dataset") or {}).get("sources", []):
        spec = (config.get("sources") or {}).get(name, {})
        if not spec.get("optional"):
            continue
        files = spec.get("files")
        paths = [files] if isinstance(files, str) else list(files or [])
        missing = [p for p in paths if not os.path.isfile(os.path.expanduser(p))]
        if missing:
            absent[name] = missing[0]
    if absent:
        out["absent_sources"] = absent
    return out


def check_pinned_inputs(config: dict, pins_for) -> None:
    """Stop before any job, in one line, when a pinned input a source needs is not in the cache.
    pins_for(roots) -> {name: entry}: aicd.sources.pinned.pins_for."""
    from .sources import pinned

    used = set((config.get("dataset") or {}).get("sources", []))
    used |= {s["derive"]["source"] for s in config.get("tasks", {}).values() if "derive" in s}
    for name in sorted(used & set(config.get("sources") or {})):
        gather = config["sources"][name].get("gather")
        if not gather:
            continue
        for pin, entry in pins_for(gather.get("roots") or {}).items():
            if not (pinned.cache_dir() / entry["file"]).is_file():
                raise AicdError(f"source {name}: pinned input {pinned.describe(pin, entry)} is not in "
                                f"{pinned.cache_dir()}: run `{pinned.FETCH_COMMAND}` (it downloads {entry['url']})")


def asks(config: dict) -> bool:
    """Whether the config leaves anything to the machine (`enabled: auto`, optional sources)."""
    auto = any(stage_on(config, s) and config[s]["enabled"] == "auto" for s in ("execution", "generation", "judging"))
    sources = config.get("sources") or {}
    return auto or any((sources.get(n) or {}).get("optional") for n in (config.get("dataset") or {}).get("sources", []))


def resolve(config: dict, models: dict, results: str | Path = "results", remote: bool = False) -> dict:
    """The recorded answers: probed and recorded here, or, in a job on a compute node, read.
    A config that leaves nothing to the machine needs no record."""
    path = Path(results) / RECORD
    if not asks(config):
        return {}
    if remote:
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            raise AicdError(f"{path} is missing: `auto` settings and optional sources are resolved on the machine "
                            "that runs snakemake and read from there by jobs; run snakemake from a directory the "
                            "compute nodes share") from None
    answers = probe(config, models)
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError):
        recorded = None
    if recorded != answers:
        write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n", path)  # atomic
    return answers
