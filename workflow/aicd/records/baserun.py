"""A run built on another run: a config that names `base: ROOT` (the results root of a finished
run, the demo's `results` say) adds its own detectors beside the base's rows without touching
the base.

The base's config as it ran is recorded in ROOT/run_config.yaml (validated, defaults filled;
written when its jobs start, aicd.records.runs.claim). A run on it starts from that config, with the
user's file on top (`merged`). It may add or change detectors and feature sets only; any other
section that differs from the base's is refused, naming the key. Everything the base made that
this run would make the same way is read from the base's root as it is, never rewritten: the
sources, dataset, task splits and extra test sets, the LLM and sandbox stages, the feature sets
and every (task, detector) whose job spec and feature set are unchanged (`Reuse`). The run
computes the rest (its own rows, and an analysis whose inputs changed) and writes every table
under its own root, the base's rows beside its own.

The run records the base's fingerprint (inputs.json's input fingerprint and a digest of its
recorded config) when its jobs first start; a base whose inputs or config changed since is
refused with what changed (`--config rebase=true` builds on the base as it is now). Planning
here is pure; `load` and `fingerprint` are the reads, done where snakemake starts."""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..common.errors import AicdError
from ..outputs import Outputs, relative

# Top-level booleans a user gives as --config KEY=true: they steer one run, they are not its
# config (never recorded, never taken from a base).
COMMAND_LINE_FLAGS = ("reprobe", "rebase", "drop_layers")
# The sections a run on a base may change; every other one must be the base's.
OPEN = ("detectors", "features", "results", "base", *COMMAND_LINE_FLAGS)
DETECTOR_JOB_KEYS = ("kind", "features", "params", "training")  # what a detector's fit reads of its entry
FEATURE_JOB_KEYS = ("kind", "params", "parts")  # what a feature set's job reads of its entry


def job_spec(entry: dict) -> dict:
    """The part of a detector's config entry its fit depends on (titles and resources excluded)."""
    return {k: entry[k] for k in DETECTOR_JOB_KEYS if k in entry}


def config_text(config: dict) -> str:
    """The validated config as YAML: integer keys of label maps kept, and the order of every
    section (Table 4's rows are the detectors' order)."""
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=False, allow_unicode=True)


def record(results: str | Path, config: dict) -> None:
    """Write the run's validated config beside its run.json (atomic; kept when unchanged)."""
    from ..common.io import write_text

    path = Path(Outputs(results).run_config())
    text = config_text({k: v for k, v in config.items() if k not in COMMAND_LINE_FLAGS})
    try:
        if path.read_text() == text:
            return
    except OSError:
        pass
    write_text(text, path)


@dataclass(frozen=True)
class Base:
    root: str                # the base's results root, as the config names it
    config: dict             # its validated config, as recorded
    configfiles: tuple       # the config files it ran with (run.json)
    resolved: dict           # its record of the machine (resolved.json; {} when it needs none)
    fingerprint: dict        # {"inputs": ..., "config": ...}


def load(root: str) -> Base:
    """The base run at `root`, refused with what to do when it is not a finished run of its own."""
    base = Outputs(root)
    run = _read_json(base.run_record())
    text = None
    try:
        text = Path(base.run_config()).read_text()
    except OSError:
        pass
    if run is None or text is None:
        what = "no run" if run is None else f"no recorded config (its run predates {relative('run_config')})"
        raise AicdError(f"base {root}: {what} ({base.run_config()} is missing); run its config there first "
                        "(for the demo's results: make demo), then this run")
    config = yaml.safe_load(text)
    if config.get("base"):
        raise AicdError(f"base {root} is itself built on {config['base']}: name that one as the base")
    if not Path(base.inputs()).is_file():
        raise AicdError(f"base {root}: its run has not finished ({base.inputs()} is missing); finish it "
                        f"first: snakemake --configfile {' '.join(run.get('configfiles') or ['...'])}")
    return Base(root=str(root).rstrip("/"), config=config, configfiles=tuple(run.get("configfiles") or ()),
                resolved=_read_json(base.resolved()) or {}, fingerprint=fingerprint(root, text))


def fingerprint(root: str, text: str | None = None) -> dict:
    """What a run on the base records of it: its input fingerprint and a digest of its config."""
    inputs = _read_json(Outputs(root).inputs()) or {}
    if text is None:
        text = Path(Outputs(root).run_config()).read_text()
    return {"inputs": inputs.get("fingerprint"), "config": hashlib.sha256(text.encode()).hexdigest()[:12]}


def _read_json(path: str | Path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def merged(base_config: dict, own: dict) -> dict:
    """The base's config with the user's on top (nested sections merged key by key, as
    snakemake merges --configfile files)."""
    out = copy.deepcopy(base_config)
    out.pop("results", None)
    for key in COMMAND_LINE_FLAGS:  # the run's own
        out.pop(key, None)

    def into(target: dict, layer: dict) -> None:
        for key, value in layer.items():
            if isinstance(value, dict) and isinstance(target.get(key), dict):
                into(target[key], value)
            else:
                target[key] = copy.deepcopy(value)

    into(out, own)
    return out


def first_difference(a, b, path=()) -> tuple | None:
    """The key path of the first place where two config values differ (None: equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return path + (key,)
            found = first_difference(a[key], b[key], path + (key,))
            if found is not None:
                return found
        return None
    return None if a == b else path


def check_sections(config: dict, base: Base) -> None:
    """Refuse a run on a base that changes anything but detectors and feature sets."""
    for key in sorted(set(config) | set(base.config)):
        if key in OPEN:
            continue
        where = first_difference(base.config.get(key), config.get(key), (key,))
        if where is not None:
            raise AicdError(f"config.{'.'.join(map(str, where))}: differs from the base run's ({Outputs(base.root).run_config()}). "
                            f"A run on a base adds or changes detectors and feature sets only ({', '.join(OPEN[:2])}); "
                            f"to change {key}, make a run of its own without `base:` (its own `results:`), or "
                            f"layer your file on the base's config there (docs/own_detector.md)")
    own = Path(str(config.get("results", ""))).resolve()
    if own == Path(base.root).resolve() or own in Path(base.root).resolve().parents:
        raise AicdError(f"config.results: a run on the base {base.root} writes under a root of its own, not the "
                        f"base's or one holding it: set `results: {base.root}/NAME` in your file (the base's files "
                        "are only read)")


def check_unchanged(recorded: dict | None, base: Base, rebase: bool) -> None:
    """Refuse when the base changed since this run was built on it (its run.json's `base`)."""
    before = (recorded or {}).get("base")
    if not before or rebase or before.get("root") != base.root:
        return
    changed = [f"its {what} {before.get(key)} -> {base.fingerprint.get(key)}"
               for key, what in (("inputs", "input fingerprint"), ("config", "config digest"))
               if before.get(key) != base.fingerprint.get(key)]
    if changed:
        raise AicdError(f"base {base.root} changed since this run was built on it ({'; '.join(changed)}: "
                        f"{Outputs(base.root).inputs()}, {Outputs(base.root).run_config()}), so your rows and the base's would come from "
                        "different inputs. To build on the base as it is now (your rows' jobs rerun), pass "
                        "--config rebase=true; to keep this run as it is, give the new base a root of its own")


@dataclass(frozen=True)
class Reuse:
    """Which of this run's files are the base's, read from its root."""
    root: str
    pairs: frozenset         # (task, detector) whose fit, predictions, scores and test-set files are the base's
    features: frozenset      # (task, feature set)
    analyses: frozenset      # tasks whose analyses are the base's

    def of_pair(self, task: str, detector: str, own: str) -> str:
        return self.root if (task, detector) in self.pairs else own

    def of_features(self, task: str, featureset: str, own: str) -> str:
        return self.root if (task, featureset) in self.features else own

    def of_analyses(self, task: str, own: str) -> str:
        return self.root if task in self.analyses else own


def reuse(plan, base_plan, config: dict, base: Base) -> Reuse:
    """What this run reads from the base: a plan item is the base's when the base made it and
    this run would make it the same way."""
    base_features = base.config.get("features") or {}
    own_features = config.get("features") or {}

    def job(entry) -> dict:
        return {k: entry[k] for k in FEATURE_JOB_KEYS if k in (entry or {})}

    def same_features(fs) -> bool:
        parts = (own_features.get(fs) or {}).get("parts") or []
        return all(f in base_features and job(own_features.get(f)) == job(base_features.get(f)) for f in [fs, *parts])

    features = frozenset(j for j in plan.feature_jobs() & base_plan.feature_jobs() if same_features(j[1]))
    base_entries = base.config["detectors"]
    pairs = frozenset(
        (t, d) for t, d in plan.pairs
        if (t, d) in set(base_plan.pairs) and job_spec(config["detectors"][d]) == job_spec(base_entries[d])
        and (not plan.detectors[d].features or (t, plan.detectors[d].features) in features))

    def analyses_of(p, t):
        chosen = p.analyses(t)
        return chosen, {d: p.detectors[d].title for d in chosen["shap"]}, p.tasks[t].title

    analyses = frozenset(
        t for t in plan.tasks if t in base_plan.tasks and analyses_of(plan, t) == analyses_of(base_plan, t)
        and all((t, d) in pairs for names in plan.analyses(t).values() for d in names))
    return Reuse(root=base.root, pairs=pairs, features=features, analyses=analyses)


def note(plan, reuse_: Reuse, base: Base, results: str) -> str:
    """The one line a run on a base prints: what it reads and what it computes."""
    own = sorted({d for t, d in plan.pairs if (t, d) not in reuse_.pairs})
    files = " + ".join(base.configfiles) or "its config"
    return (f"Built on {base.root}/ (the run of {files}): its splits, feature sets and {len(reuse_.pairs)} fitted "
            f"(task, detector) pairs are read from there, never rewritten; this run computes "
            f"{', '.join(own) if own else 'no detector'} and the tables, under {results}/.")


def check_finished(plan, reuse_: Reuse) -> None:
    """Refuse before any job when the base lacks files this run reads (its run stopped part way)."""
    root, out = Path(reuse_.root), Outputs(reuse_.root)
    wanted = [Path(out.task_report(t)) for t in plan.tasks]
    wanted += [Path(out.scores(t, d)) for t, d in sorted(reuse_.pairs)]
    missing = [str(p.relative_to(root)) for p in wanted if not p.is_file()]
    if missing:
        raise AicdError(f"base {reuse_.root}: {len(missing)} of the files this run reads are missing "
                        f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}): its run has not finished; "
                        "finish it first, then this run")
