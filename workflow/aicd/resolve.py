"""What the plan needs to know of the machine, probed once per run and recorded: the one place
where planning does I/O.

Probed only where the config asks (`enabled: auto`, `optional: true` sources): whether a Docker
daemon answers, which registry models (generators, the instructor, the judges) have an endpoint,
which optional sources' files are absent; and, always, that the pinned inputs a source needs are
in the cache (else it stops, naming the command that fetches them). The answers are recorded in
RESULTS/resolved.json the first time and kept: a later run plans the same jobs even if the
machine changed (a Docker daemon that now answers, a key now set), and says so in one line
with how to take the change in (--config reprobe=true). A question the record lacks (the config
asks something new) is probed and added. A job on a compute node (snakemake --mode remote)
reads the record and probes nothing, so every node plans the same jobs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .common.defaults import schema_default
from .common.errors import AicdError
from .common.io import write_text
from .config import stage_on
from .outputs import Outputs


def probe(config: dict, models: dict) -> dict:
    """The answers for this config on this machine."""
    out: dict = {}
    execution = config.get("execution")
    if stage_on(config, "execution") and execution["enabled"] == "auto":
        from .sandbox.pool import docker_available

        out["execution"] = docker_available(execution.get("engine", schema_default("execution.engine")))  # the engine the jobs will use
    if stage_on(config, "generation") and config["generation"]["enabled"] == "auto":
        from .generate.registry import enabled_models, has_endpoint

        gen = config["generation"]
        out["generators"] = enabled_models(models, gen.get("models", schema_default("generation.models")))
        out["instructor"] = bool(gen.get("instructor") and has_endpoint(models[gen["instructor"]]))
    if stage_on(config, "judging") and config["judging"]["enabled"] == "auto":
        from .generate.registry import has_endpoint

        out["judges"] = [j for j, s in (config["judging"].get("judges") or {}).items()
                         if has_endpoint(models[s["model"]])]
    absent, optional = {}, False
    for name in (config.get("dataset") or {}).get("sources", []):
        spec = (config.get("sources") or {}).get(name, {})
        if not spec.get("optional"):
            continue
        optional = True
        files = spec.get("files")
        paths = [files] if isinstance(files, str) else list(files or [])
        missing = [p for p in paths if not os.path.isfile(os.path.expanduser(p))]
        if missing:
            absent[name] = missing[0]
    if optional:  # asked, so recorded even when every file is there
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


WHAT = {"execution": "the sandbox stage (a Docker daemon answers)", "generators": "generators with an endpoint",
        "instructor": "the instructor model's endpoint", "judges": "LLM judges with an endpoint",
        "absent_sources": "optional sources whose files are absent"}


# Answers whose change the plan itself reports, in the line of the stage it decides (aicd.plan's
# notes): one line per stage, from the same decision the jobs come from.
PLANNED = ("execution", "generators", "instructor", "judges")


def changed(recorded: dict, fresh: dict) -> dict:
    """The answers this machine would now give differently from the record."""
    return {key: fresh[key] for key, before in recorded.items() if key in fresh and fresh[key] != before}


def changes(recorded: dict, fresh: dict) -> list[str]:
    """One line per recorded answer this machine would now give differently (those the plan
    does not report itself)."""
    return [f"Recorded: {WHAT.get(key, key)} = {short_answer(recorded[key])}; this machine now says "
            f"{short_answer(now)}. "
            "The run keeps its record, and its plan follows the record; to take the change in, run with "
            "--config reprobe=true" for key, now in changed(recorded, fresh).items() if key not in PLANNED]


def short_answer(value) -> str:
    if isinstance(value, list):
        return f"{len(value)} ({', '.join(map(str, value[:3]))}{', ...' if len(value) > 3 else ''})" if value else "none"
    if isinstance(value, dict):
        return ", ".join(value) or "none"
    return {True: "yes", False: "no"}.get(value, str(value))


def resolve(config: dict, models: dict, results: str | Path = "results", remote: bool = False,
            notes: list | None = None, record: bool = True) -> dict:
    """The recorded answers: read, or probed and recorded here (the first time, for questions
    the record lacks, or with `reprobe: true`); in a job on a compute node, only read. Where the
    machine would now answer differently, the result's `now` holds those answers (never
    recorded), for the plan's notes; `notes` receives a line for any other such answer.
    record=False (a dry run) writes only a first record, never a change. A config that leaves
    nothing to the machine needs no record."""
    path = Path(Outputs(results).resolved())
    if not asks(config):
        return {}
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError):
        recorded = None
    if remote:
        if recorded is None:
            raise AicdError(f"{path} is missing: `auto` settings and optional sources are resolved on the machine "
                            "that runs snakemake and read from there by jobs; run snakemake from a directory the "
                            "compute nodes share")
        return recorded
    fresh = probe(config, models)
    now = {}
    if recorded is None or config.get("reprobe"):
        answers = fresh
    else:
        answers = {k: recorded.get(k, v) for k, v in fresh.items()}  # a new question is answered now
        now = {k: v for k, v in changed(recorded, fresh).items() if k in PLANNED}
        if notes is not None:
            notes.extend(changes(recorded, fresh))
    if recorded != answers and (record or recorded is None):  # a dry run records only a first answer
        write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n", path)  # atomic
    return {**answers, "now": now} if now else answers


def endpoint_notes(config: dict, models: dict, plan) -> list[str]:
    """Where the config plans LLM jobs outright (`enabled: true`), one line per stage naming the
    planned models that have no endpoint on this machine, at plan time rather than when their
    jobs fail. (`auto` plans only models with one: the plan's own notes say what it left out.)"""
    from .generate.registry import endpoint_hint, has_endpoint

    lines = []
    judging = config.get("judging") or {}
    if plan.judges and judging.get("enabled") is True:
        without = [j for j, s in plan.judges.items() if not has_endpoint(models[s["model"]])]
        if without:
            jobs = len(without)  # one job per judge, every task and mode in it
            lines.append(f"LLM judges: {len(without)} of {len(plan.judges)} ({', '.join(without)}) have no endpoint on "
                         f"this machine, and their judge job{'' if jobs == 1 else 's'} {'is' if jobs == 1 else 'are'} "
                         "planned (judging.enabled: true): they fail "
                         f"where they run unless it has one ({endpoint_hint(models)}); `enabled: auto` plans only "
                         "judges with one, and config/no_llm.yaml leaves the LLM stages out")
    generation = config.get("generation") or {}
    if plan.pool_generators and generation.get("enabled") is True:
        without = [m for m in plan.pool_generators if not has_endpoint(models[m])]
        if without:
            lines.append(f"LLM generators: {len(without)} of {len(plan.pool_generators)} planned models "
                         f"({', '.join(without[:3])}{', ...' if len(without) > 3 else ''}) have no endpoint on this "
                         f"machine (generation.enabled: true): their generate jobs fail where they run unless it has "
                         f"one ({endpoint_hint(models)}); `enabled: auto` plans only models with one")
    return lines
