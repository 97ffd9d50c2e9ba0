"""The generator registry (config/models.yaml): loading, validation, and which models have
an endpoint (an api_base, or their key in the environment)."""

from __future__ import annotations

import os
from pathlib import Path

import jsonschema
import yaml

from .. import published
from ..common.defaults import schema_default
from ..common.errors import AicdError
from ..data.families import FAMILIES, OTHER, family_of

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "models.schema.yaml"


def load_registry(path: str | Path | list, schema_path: str | Path = SCHEMA) -> dict[str, dict]:
    """name -> entry, with defaults.params merged under each model's params. A list of files
    layers them: each later file adds its models (with its own defaults); a name given twice is
    an error naming both files."""
    if isinstance(path, (list, tuple)):
        models, where = {}, {}
        for one in path:
            for name, entry in load_registry(one, schema_path).items():
                if name in models:
                    raise AicdError(f"model {name} is in both {where[name]} and {one}: a layered models file adds "
                                    "models; rename it, or change the entry in one file")
                models[name], where[name] = entry, one
        return models
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise AicdError(f"cannot read the model registry {path}: {err}") from None
    outside = {n: e.get("family") for n, e in ((data or {}).get("models") or {}).items()
               if isinstance(e, dict) and "family" in e and e["family"] not in (*FAMILIES, OTHER)}
    if outside:
        name, family = next(iter(outside.items()))
        by_family, others = published.family_tasks()
        raise AicdError(f"model registry {path}: {name} has family {family!r}, not one of the paper's 11 "
                        f"({', '.join(FAMILIES)}). {by_family}'s classes are these 11 and human, so a model of another "
                        "family would have no class there: list it under the family it belongs to, or as family "
                        f"{OTHER!r} (its code then enters {others}, never {by_family}); a new family "
                        "means a new class: add it to FAMILIES in workflow/aicd/data/families.py, to the models schema "
                        "and to your T2 task's labels")
    schema = yaml.safe_load(Path(schema_path).read_text())
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(data), key=lambda e: list(map(str, e.path)))
    if errors:
        lines = [f"  {'.'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}" for e in errors[:10]]
        raise AicdError(f"invalid model registry {path}:\n" + "\n".join(lines))
    defaults = (data.get("defaults") or {}).get("params") or {}
    models = {}
    for name, entry in data["models"].items():
        guessed = family_of(name)
        if guessed is not None and guessed != entry["family"]:
            raise AicdError(f"model registry {path}: {name} is listed under {entry['family']} but the family "
                            f"table (aicd/data/families.py) maps its name to {guessed}")
        models[name] = {**entry, "name": name, "params": {**defaults, **(entry.get("params") or {})}}
    return models


def with_serving(entry: dict, over: dict | None) -> dict:
    """An entry as a stage's jobs serve it: the stage's `serve:` settings (how many servers per
    job, threads each: the machine's business, not the model's) over the entry's own. An entry
    reached at an endpoint of its own is left as it is."""
    if not over or not entry.get("serve") or entry.get("api_base"):
        return entry
    return {**entry, "serve": {**entry["serve"], **over}}


def has_endpoint(entry: dict, environ=os.environ) -> bool:
    """An api_base, its key in the environment, or a model this machine serves itself (`serve`:
    its pinned file fetched, or its folder there, and the server's packages installed)."""
    if entry.get("api_base"):
        return True
    key = entry.get("api_key_env")
    if key and environ.get(key):
        return True
    return bool(entry.get("serve")) and servable(entry) is None


def servable(entry: dict) -> str | None:
    """None when this machine can serve the entry's `serve.model`, else what is missing."""
    from ..llm.engines import engine_for, settings
    from ..models.local_models import pinned_models
    from ..records.pinned_files import FETCH_COMMAND, cache_dir, describe

    model = str((entry.get("serve") or {}).get("model") or "")
    missing = engine_for(settings(entry)).missing()
    if missing:
        return missing
    if model.startswith("package:"):
        name = model.split(":", 1)[1]
        pins = pinned_models()
        if name in pins and not (cache_dir() / pins[name]["file"]).is_file():
            return f"the pinned model {describe(name, pins[name])} is not in {cache_dir()}: run `{FETCH_COMMAND}`"
    elif model.startswith(("/", ".", "~")) and not os.path.isdir(os.path.expanduser(model)):
        return f"the model folder {model} does not exist"
    return None


def enabled_models(models: dict[str, dict], wanted="all", environ=os.environ) -> list[str]:
    names = list(models) if wanted in (None, "all") else list(wanted)
    unknown = [n for n in names if n not in models]
    if unknown:
        raise AicdError(f"unknown model(s) {unknown}: not in the registry")
    return [n for n in names if has_endpoint(models[n], environ)]


def check_config_models(config: dict, models: dict[str, dict]) -> None:
    """Every registry name the enabled LLM stages give exists (generation.models and
    instructor, judging.judges.*.model), else one error naming the key."""
    def on(stage):
        return (config.get(stage) or {}).get("enabled", False) is not False

    problems = []
    if on("generation"):
        gen = config["generation"]
        try:
            enabled_models(models, gen.get("models", schema_default("generation.models")), environ={})
        except AicdError as err:
            problems.append(f"config.generation.models: {err}")
        if gen.get("instructor") and gen["instructor"] not in models:
            problems.append(f"config.generation.instructor: '{gen['instructor']}' is not in the model registry")
    if on("judging"):
        for judge, spec in (config["judging"].get("judges") or {}).items():
            if spec["model"] not in models:
                problems.append(f"config.judging.judges.{judge}.model: '{spec['model']}' is not in the model registry")
    if problems:
        raise AicdError("; ".join(problems))


def endpoint_hint(models: dict[str, dict]) -> str:
    keys = sorted({m["api_key_env"] for m in models.values() if m.get("api_key_env")})
    return (f"set {' or '.join(keys)} in the environment, give open-weight models an api_base "
            "(a vLLM or Ollama server) in the model registry, or use the packaged local model "
            "(make demo-llm; docs/llm.md, \"The local model\")")


def with_max_tokens(entry: dict, max_tokens: int | None) -> dict:
    """A registry entry whose requests ask for at most `max_tokens` (generation.instruction_max_tokens:
    a task statement needs fewer tokens than a program); the entry as it is when none is given."""
    if not max_tokens:
        return entry
    return {**entry, "params": {**entry.get("params", {}), "max_tokens": int(max_tokens)}}


# Keys of an entry that only a report reads (the generator card's "made by"): kept out of the entry
# a generating or judging job is given, so that adding or changing them reruns the card alone, not
# the model's generation and everything built on its code (snakemake reruns a job whose params
# changed).
REPORT_ONLY = ("maker",)


def job_entry(entry: dict) -> dict:
    """The entry as a generate, instructions or judge job is given it: without REPORT_ONLY keys."""
    return {k: v for k, v in entry.items() if k not in REPORT_ONLY}
