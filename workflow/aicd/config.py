"""Config validation with messages that name the offending key, and the schema's defaults.

The schema is workflow/schemas/config.schema.yaml, completed by the parameter specs that the
code owns (aicd.common.params): each detector kind's `params`, each feature kind's, and the sandbox's
`execution.limits`. `schema()` returns the whole; `validate_config` checks a config against
it, fills in every default (in place), and checks cross-references (a task's source, a
detector's feature set and kind, parameter types), skipping the sections of a stage that is
absent or disabled: a minimal config of tasks and detectors is complete."""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import yaml

from . import published
from .common.defaults import SCHEMA_PATH, schema_default
from .common.errors import AicdError
from .common.registry import did_you_mean
from .outputs import Outputs
from .published import JUDGE_PREFIX
from .records.baserun import COMMAND_LINE_FLAGS  # top-level booleans a user gives as --config KEY=true


def _where(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _problems(err) -> list[tuple[str, str]]:
    """(key path, message) of a schema error: one per unknown key, with a did-you-mean for it
    and for an unknown value."""
    path = list(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = list(err.schema.get("properties") or {})
        here = ", ".join(allowed) or "none (nothing may be set here)"
        return [(_where(path + [k]), f"unknown key{did_you_mean(k, allowed)}; allowed here: {here}")
                for k in err.instance if k not in allowed]
    detail = err.message
    if err.validator == "enum":
        detail += did_you_mean(err.instance, err.validator_value)
    if err.context:  # for oneOf failures the useful detail is in the sub-errors
        detail += " (" + "; ".join(sorted({c.message for c in err.context}))[:300] + ")"
    return [(_where(path), detail)]


def schema(schema_path: str | Path = SCHEMA_PATH) -> dict:
    """The config schema with the code's parameter specs in place."""
    from .detectors import REGISTRY
    from .features.registry import FEATURIZERS
    from .sandbox.pool import LIMITS
    from .scoring.thresholds import FPRS

    full = yaml.safe_load(Path(schema_path).read_text())
    defs = full["definitions"]
    defs["detector"]["allOf"] = [
        {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
         "then": {"properties": {"params": cls.PARAMS.schema()}}}
        for kind, cls in sorted(REGISTRY.items())]
    defs["featureset"]["properties"]["kind"]["enum"] = sorted(FEATURIZERS)
    defs["featureset"]["allOf"] = [
        {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
         "then": {"properties": {"params": cls.PARAMS.schema()}}}
        for kind, cls in sorted(FEATURIZERS.items())] + [
        {"if": {"properties": {"kind": {"const": "concat"}}, "required": ["kind"]}, "then": {"required": ["parts"]}}]
    full["properties"]["execution"]["properties"]["limits"] = LIMITS.schema()
    defs["task"]["properties"]["build"]["properties"]["kind"]["enum"] = list(published.TASK_KINDS)
    full["properties"]["scoring"]["properties"]["fprs"]["default"] = list(FPRS)
    full["properties"]["calibration"]["properties"]["fprs"]["default"] = list(FPRS)
    return full


def _with_defaults(validator_class):
    """A validator that fills in `default:` values as it walks the config (the jsonschema
    FAQ's recipe): what snakemake.utils.validate(set_default=True) does, for our dict schema."""
    properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, props, instance, schema):
        if isinstance(instance, dict):
            for name, sub in props.items():
                if isinstance(sub, dict) and "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from properties(validator, props, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def register_named_kinds(config: dict) -> None:
    """Import the outside classes a config names as `kind: package.module:Class` (detectors and
    feature sets), so that the schema knows their parameters; one line per kind that does not
    import or is not a kind."""
    from .detectors import REGISTRY
    from .features.registry import FEATURIZERS

    problems = []
    for section, registry in (("detectors", REGISTRY), ("features", FEATURIZERS)):
        for name, entry in (config.get(section) or {}).items():
            kind = entry.get("kind") if isinstance(entry, dict) else None
            if isinstance(kind, str) and ":" in kind:
                try:
                    registry[kind]
                except AicdError as err:
                    problems.append(f"  config.{section}.{name}.kind: {err}")
    if problems:
        raise AicdError("invalid configuration:\n" + "\n".join(problems))


def validate_config(config: dict, schema_path: str | Path = SCHEMA_PATH) -> None:
    for key in COMMAND_LINE_FLAGS:  # snakemake's --config reads only True/False as booleans
        if str(config.get(key)).lower() in ("true", "false"):
            config[key] = str(config[key]).lower() == "true"
    register_named_kinds(config)
    full = schema(schema_path)
    validator = jsonschema.Draft202012Validator(full)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = [f"  config.{where}: {detail}" for err in errors[:10] for where, detail in _problems(err)]
        raise AicdError("invalid configuration:\n" + "\n".join(lines))
    apply_defaults(config, full)
    check_references(config)


def apply_defaults(config: dict, full: dict | None = None) -> None:
    """Fill in the schema's `default:` values, in place. Runs after the check above, so a bad
    key is reported by its name first; the defaults live in the schema and the specs, never
    in the rules."""
    _with_defaults(jsonschema.Draft202012Validator)(full or schema()).validate(config)


def stage_on(config: dict, name: str) -> bool:
    """An LLM or sandbox stage is planned unless its section is absent or says enabled: false."""
    section = config.get(name)
    return bool(section) and section.get("enabled", schema_default(f"{name}.enabled")) is not False


def _generation_problems(generation: dict, sources, names: str) -> list[str]:
    """The generation section's references: its sources exist, each protocol has some, one has rows."""
    problems = []
    if generation.get("source") and generation["source"] not in sources:
        problems.append(f"generation.source: no source named '{generation['source']}'")
    for protocol, spec in generation["protocols"].items():
        for src in spec.get("sources") or []:
            if src not in sources:
                problems.append(f"generation.protocols.{protocol}.sources: no source named '{src}' (sources: {names})")
        if not spec.get("sources") and not generation.get("source"):
            problems.append(f"generation.protocols.{protocol}: name its sources (sources: [...]) or set "
                            "generation.source")
    if not any(int(spec["n"]) for spec in generation["protocols"].values()):
        problems.append("generation.protocols: every protocol has n: 0; give one rows, or turn generation off "
                        "(generation.enabled: false)")
    return problems


def ood_problems(name: str, ood: dict, sources: dict) -> list[str]:
    """An OOD task's train and test name sources; a leave_one_collection_out fold's collections
    name sources, and its hold_out a collection."""
    known = ", ".join(sources) or "none"
    out = [f"tasks.{name}.ood.{key}: no source named '{ood[key]}' (sources: {known})"
           for key in ("train", "test") if ood.get(key) is not None and ood[key] not in sources]
    collections = ood.get("collections") or {}
    out += [f"tasks.{name}.ood.collections.{c}: no source named '{s}' (sources: {known})"
            for c, names in collections.items() for s in names if s not in sources]
    if ood.get("protocol") == "leave_one_collection_out" and ood.get("hold_out") not in collections:
        out.append(f"tasks.{name}.ood.hold_out: no collection named '{ood.get('hold_out')}' "
                   f"(collections: {', '.join(collections) or 'none'})")
    return out


def check_references(config: dict) -> None:
    from .detectors import REGISTRY, build  # the registry names the valid detector kinds

    problems = []
    sources = config.get("sources") or {}
    features = config.get("features") or {}
    names = ", ".join(sources) or "none"
    for name, task in config["tasks"].items():
        src = (task.get("derive") or {}).get("source")
        if src is not None and src not in sources:
            problems.append(f"tasks.{name}.derive.source: no source named '{src}' (sources: {names})")
        problems += ood_problems(name, task.get("ood") or {}, sources)
        for set_name, spec in (task.get("test_sets") or {}).items():
            if "source" in spec and spec["source"] not in sources:
                problems.append(f"tasks.{name}.test_sets.{set_name}.source: no source named '{spec['source']}'")
    # a set's name picks its rule (from a source, or the task's rows perturbed) in every task
    kinds: dict[str, set] = {}
    for task in (config.get("tasks") or {}).values():
        for set_name, spec in (task.get("test_sets") or {}).items():
            kinds.setdefault(set_name, set()).add("perturbation" if "perturbation" in spec else "source")
    for set_name, found in sorted(kinds.items()):
        if len(found) > 1:
            problems.append(f"test set name {set_name!r} is a perturbation in one task and a source in another: "
                            "give them different names")
    dataset = config.get("dataset")
    for src in (dataset or {}).get("sources", []):
        if src not in sources:
            problems.append(f"dataset.sources: no source named '{src}'{did_you_mean(src, sources)} (sources: {names})")
    for name, task in config["tasks"].items():
        if "build" in task and not dataset and ("release" not in task or config.get("tasks_from") == "pool"):
            problems.append(f"tasks.{name}.build: needs a 'dataset:' section (the pool it is cut from)")
    for name, fs in features.items():
        for part in fs.get("parts") or []:
            if part not in features or features[part]["kind"] == "concat":
                problems.append(f"features.{name}.parts: '{part}' is not a tfidf or ast feature set")
    for name, det in config["detectors"].items():
        if name.startswith(JUDGE_PREFIX):
            problems.append(f"detectors.{name}: names starting with '{JUDGE_PREFIX}' are reserved for LLM judges")
        if det["kind"] not in REGISTRY:
            problems.append(f"detectors.{name}.kind: unknown kind '{det['kind']}'{did_you_mean(det['kind'], REGISTRY)} "
                            f"(registered: {', '.join(sorted(REGISTRY))})")
        else:  # parameter types, checked by the detector itself, before any job runs
            try:
                build(det["kind"], det.get("params") or {}, seed=0)
            except AicdError as err:
                problems.append(f"detectors.{name}.params: {err}")
            if REGISTRY[det["kind"]].inputs == "features" and not det.get("features"):
                problems.append(f"detectors.{name}.features: kind {det['kind']} needs a feature set (features: NAME)")
        fs = det.get("features")
        if fs is not None and fs not in features:
            problems.append(f"detectors.{name}.features: no feature set named '{fs}'{did_you_mean(fs, features)} "
                            f"(features: {', '.join(features) or 'none'})")
        for task in det.get("tasks") or []:
            if task not in config["tasks"]:
                problems.append(f"detectors.{name}.tasks: no task named '{task}'{did_you_mean(task, config['tasks'])}")
    if stage_on(config, "generation"):
        problems += _generation_problems(config["generation"], sources, names)
    if stage_on(config, "execution"):
        for src in config["execution"].get("sources", []):
            if src not in sources:
                problems.append(f"execution.sources: no source named '{src}'")
    if stage_on(config, "judging"):
        judging = config["judging"]
        for task in judging.get("tasks") if isinstance(judging.get("tasks"), list) else []:
            if task not in config["tasks"]:
                problems.append(f"judging.tasks: no task named '{task}'")
    if problems := problems + calibration_problems(config):
        raise AicdError("invalid configuration:\n" + "\n".join(f"  config.{p}" for p in problems))


def calibration_problems(config: dict) -> list[str]:
    """The calibration section's names: its tasks, detectors, library source (a gathered one) and
    reference sources (configured, and outside the pool, whose rows are in the splits)."""
    spec, sources = config["calibration"], config.get("sources") or {}
    if not spec["enabled"]:
        return []
    problems = []
    # exclude is not checked: it only subtracts, and a config that replaces the detectors (a copy of
    # the demo's with detectors of one's own) keeps the demo's exclude without naming them
    for key, known in (("tasks", config["tasks"]), ("detectors", config["detectors"])):
        for name in spec.get(key) if isinstance(spec.get(key), list) else []:
            if name not in known:
                what = "task" if key == "tasks" else "detector"
                problems.append(f"calibration.{key}: no {what} named '{name}'{did_you_mean(name, known)}")
    if spec["view_fpr"] not in spec["fprs"]:
        problems.append(f"calibration.view_fpr: {spec['view_fpr']} is not one of calibration.fprs {spec['fprs']}")
    reference = spec["reference"]
    library = reference.get("library")
    if library is not None and "gather" not in sources.get(library, {}):
        problems.append(f"calibration.reference.library: '{library}' is not a source that gathers code (a sources "
                        f"entry with gather:){did_you_mean(library, sources)}")
    pooled = set((config.get("dataset") or {}).get("sources", []))
    for name in reference.get("sources") or []:
        if name not in sources:
            problems.append(f"calibration.reference.sources: no source named '{name}'{did_you_mean(name, sources)}")
        elif name in pooled:
            problems.append(f"calibration.reference.sources: '{name}' is in dataset.sources, so its rows are in the "
                            "task's splits; name a source outside the pool (its files that the pool did not read: "
                            "calibration.reference.library)")
    return problems


def _key_path(text: str, layers: list) -> list:
    """The keys of a dotted config path as some config holds them (a key may contain dots)."""
    for layer in layers:
        keys, node, rest = [], layer, text
        while isinstance(node, dict) and rest:
            key = next((k for k in sorted(node, key=lambda k: -len(str(k)))
                        if rest == str(k) or rest.startswith(f"{k}.")), None)
            if key is None:
                break
            keys.append(key)
            node, rest = node[key], rest[len(str(key)) + 1:]
        if keys:
            return keys
    return []


def _depth(layer, keys) -> int:
    depth, node = 0, layer
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            break
        depth, node = depth + 1, node[key]
    return depth


COMMAND_LINE = "the command line (--config)"


# snakemake's --config gives a value nested in a mapping as text ('calibration={fpr_confidence: 0.95}'
# holds the string '0.95'): a type the schema refuses there is that, not a wrong number
TEXT_FROM_THE_COMMAND_LINE = (" (snakemake's --config passes a value inside a mapping as text: give it in a config "
                              "file of yours, --configfile mine.yaml, or as a top-level key)")


def explain_error(err: Exception, configfiles, base: str | None = None, command_line=None) -> str:
    """A refusal as the user reads it: each `config.KEY: ...` line of the message names where KEY
    is set: the command line where `--config` gives it (`command_line`: snakemake's
    workflow.config_settings.config, applied after every file), else the last config file that
    holds it (as snakemake merges them); a key only a run's base holds names the base's recorded
    config. Other messages are left as they are."""
    import re

    layers = []
    if base:
        recorded = Outputs(base).run_config()
        layers.append((f"{recorded} (the base run's config)", Path(recorded)))
    layers += [(str(f), Path(f)) for f in configfiles]
    loaded = []
    for name, path in layers:
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError):
            data = None
        loaded.append((name, data if isinstance(data, dict) else {}))
    if command_line:  # last, as snakemake applies it: on a tie with a file, the command line set it
        loaded.append((COMMAND_LINE, dict(command_line)))
    lines = []
    for line in str(err).splitlines():
        m = re.match(r"^(\s*)config\.(.+?): (.*)$", line)
        if m:
            keys = _key_path(m.group(2), [d for _, d in reversed(loaded)])
            depths = [(_depth(d, keys), i) for i, (_, d) in enumerate(loaded)]
            best, at = max(depths) if depths else (0, -1)
            if best:
                line = f"{m.group(1)}{loaded[at][0]}: {m.group(2)}: {m.group(3)}"
                if loaded[at][0] == COMMAND_LINE and re.search(r"^'.*' is not of type", m.group(3)):
                    line += TEXT_FROM_THE_COMMAND_LINE
            elif m.group(2) == "(top level)" and loaded:
                line = f"{m.group(1)}{loaded[-1][0]}: {m.group(2)}: {m.group(3)}"
            else:  # a default (or --config where the caller did not say what it gave)
                line = f"{m.group(1)}{m.group(2)} (from --config or a default, in no config file): {m.group(3)}"
        lines.append(line)
    return "\n".join(lines)


def load_config(path: str | Path) -> dict:
    try:
        config = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise AicdError(f"cannot read config {path}: {err}") from None
    validate_config(config)
    return config
