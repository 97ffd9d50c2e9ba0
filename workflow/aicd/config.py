"""Config validation with messages that name the offending key.

The schema is workflow/schemas/config.schema.yaml; on top of it, cross-references are
checked (a task's source, a detector's feature set, kind and parameter types)."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml

from .errors import AicdError

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "config.schema.yaml"


def _where(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def validate_config(config: dict, schema_path: str | Path = SCHEMA_PATH) -> None:
    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = []
        for err in errors[:10]:
            # For oneOf failures the useful detail is in the sub-errors.
            detail = err.message
            if err.context:
                detail += " (" + "; ".join(sorted({c.message for c in err.context}))[:300] + ")"
            lines.append(f"  config.{_where(err.absolute_path)}: {detail}")
        raise AicdError("invalid configuration:\n" + "\n".join(lines))
    apply_defaults(config, schema_path)
    check_references(config)


def apply_defaults(config: dict, schema_path: str | Path = SCHEMA_PATH) -> None:
    """Fill in the schema's `default:` values, in place (snakemake.utils.validate with
    set_default=True, the snakemake-workflows way). Runs after the check above, so a bad
    key is reported by its name first; the defaults live in the schema, not in the rules."""
    from snakemake.utils import validate

    validate(config, str(schema_path), set_default=True)


def check_references(config: dict) -> None:
    from .detectors import REGISTRY, build  # the registry names the valid detector kinds

    problems = []
    sources = config.get("sources") or {}
    features = config.get("features") or {}
    for name, task in config["tasks"].items():
        src = (task.get("derive") or {}).get("source")
        if src is not None and src not in sources:
            problems.append(f"tasks.{name}.derive.source: no source named '{src}' (sources: {', '.join(sources) or 'none'})")
    dataset = config.get("dataset")
    for src in (dataset or {}).get("sources", []):
        if src not in sources:
            problems.append(f"dataset.sources: no source named '{src}' (sources: {', '.join(sources) or 'none'})")
    for name, task in config["tasks"].items():
        if "build" in task and not dataset and ("release" not in task or config.get("tasks_from") == "pool"):
            problems.append(f"tasks.{name}.build: needs a 'dataset:' section (the pool it is cut from)")
    for name, fs in features.items():
        for part in fs.get("parts") or []:
            if part not in features or features[part]["kind"] == "concat":
                problems.append(f"features.{name}.parts: '{part}' is not a tfidf or ast feature set")
    for name, det in config["detectors"].items():
        if name.startswith("judge_"):
            problems.append(f"detectors.{name}: names starting with 'judge_' are reserved for LLM judges")
        if det["kind"] not in REGISTRY:
            problems.append(f"detectors.{name}.kind: unknown kind '{det['kind']}' (registered: {', '.join(sorted(REGISTRY))})")
        else:  # parameter types, checked by the detector itself, before any job runs
            try:
                build(det["kind"], det.get("params") or {}, seed=0)
            except AicdError as err:
                problems.append(f"detectors.{name}.params: {err}")
        fs = det.get("features")
        if fs is not None and fs not in features:
            problems.append(f"detectors.{name}.features: no feature set named '{fs}' (features: {', '.join(features)})")
        for task in det.get("tasks") or []:
            if task not in config["tasks"]:
                problems.append(f"detectors.{name}.tasks: no task named '{task}'")
    generation = config.get("generation")
    if generation and generation["source"] not in sources:
        problems.append(f"generation.source: no source named '{generation['source']}'")
    for src in (config.get("execution") or {}).get("sources", []):
        if src not in sources:
            problems.append(f"execution.sources: no source named '{src}'")
    judging = config.get("judging") or {}
    for task in judging.get("tasks") if isinstance(judging.get("tasks"), list) else []:
        if task not in config["tasks"]:
            problems.append(f"judging.tasks: no task named '{task}'")
    if problems:
        raise AicdError("invalid configuration:\n" + "\n".join(f"  config.{p}" for p in problems))


def load_config(path: str | Path) -> dict:
    try:
        config = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise AicdError(f"cannot read config {path}: {err}") from None
    validate_config(config)
    return config
