# Everything the rules share: config validation (schema defaults applied), the plan (which
# tasks, detectors, generators, judges and executions exist), per-wildcard config slices,
# input functions and resource functions. The rule files hold rules only.
#
# The plan is a function of the config alone, never of the machine that parses it: a
# compute node without Docker or without an API key plans the same jobs as the submitting
# machine. Where the config says `auto` (the demo), the answer is resolved once, on the
# submitting machine, and recorded in results/resolved.json, which jobs re-read.

import json
import re
import shlex
import sys

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

from aicd.config import validate_config
from aicd.errors import AicdError
from aicd.fingerprint import code_version as _code_version
from aicd.io import write_text
from aicd.generate.protocols import NEEDS_INSTRUCTION
from aicd.generate.registry import endpoint_hint, enabled_models, has_endpoint, load_registry
from aicd.report.ood_table import split_name as ood_split_name
from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag
from aicd.sources import pinned as _pinned

min_version("9.0")

try:
    validate_config(config, os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml"))
except AicdError as err:
    raise WorkflowError(str(err)) from None

R = "results"
SPLITS = ["train", "validation", "test"]
RESOLVED = f"{R}/resolved.json"
# Files that aggregate rules read, named here rather than through rules.X.output: an input
# given as a rule reference makes snakemake hash every list-valued input of that rule once per
# file in it (quadratic in the number of scores; BENCHMARKS.md, planning).
INPUTS_JSON = f"{R}/inputs.json"
SUBSET_TABLE_FILES = [f"{R}/tables/table{n}.{ext}" for n in (5, 6, 7) for ext in ("tex", "md")]
PAPER_FIGURES_INDEX = f"{R}/figures/paper_figures.json"


# The stages run `python -m aicd.<stage>`. Without --sdm conda/apptainer, `python` is the
# interpreter running snakemake (the project's virtualenv, where aicd is pip-installed):
# its folder goes first on PATH, which jobs inherit (sbatch exports the environment too).
envvars:
    "PATH",


# envs/*.post-deploy.sh install this checkout's aicd into each conda environment. (Set here,
# never read from the user: not an `envvars:` entry.)
os.environ.update(AICD_REPO=workflow.basedir)

if not workflow.deployment_settings.deployment_method:
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")


wildcard_constraints:
    source=r"[A-Za-z0-9_-]+",
    task=r"[A-Za-z0-9_-]+",
    featureset=r"[A-Za-z0-9_-]+",
    detector=r"[A-Za-z0-9_-]+",
    test_set=r"[A-Za-z0-9_-]+",
    model=r"[A-Za-z0-9._-]+",
    judge=r"[A-Za-z0-9-]+",
    mode=r"zs|cot",
    kind=r"sources|generations",


def env(name):
    """The conda environment of a rule group (envs/{name}.yaml)."""
    return os.path.join(workflow.basedir, "envs", f"{name}.yaml")


def repo_path(path):
    """Config paths to shipped files (registry, prompts) are relative to the repository."""
    return path if os.path.isabs(path) else os.path.join(workflow.basedir, path)


def as_arg(obj):
    """A config slice as one shell-quoted JSON argument (sorted keys: stable across runs)."""
    return shlex.quote(json.dumps(obj, sort_keys=True))


def config_slice(entry, keys):
    """The part of a config entry a job's output depends on (titles and the like excluded,
    so renaming a table row reruns the report, not the detector)."""
    return {k: entry[k] for k in keys if k in entry}


def one_of(names):
    """A wildcard constraint matching exactly these names (an empty list matches nothing)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def none_of(names):
    """A wildcard constraint matching any name but these (a short list: a regex alternation is
    tried name by name, so a constraint listing every detector would cost O(detectors) per
    file when 1,000 detectors are planned)."""
    if not names:
        return r"[A-Za-z0-9_-]+"
    return r"(?!(?:" + "|".join(re.escape(n) for n in names) + r")(?![A-Za-z0-9_-]))[A-Za-z0-9_-]+"


def seed():
    return int(config["seed"])


def parent(path):
    """The folder of a declared output, for stages that write several files beside it."""
    return os.path.dirname(str(path))


# ---------------------------------------------------------------- resources
#
# mem_mb grows with the job's input (input.size_mb is known when the job is scheduled) and
# with the attempt: a job killed for memory (SLURM's OUT_OF_MEMORY) is retried with
# `retries:` from the profile at 2x, 3x... Threads are the rule's own; snakemake lowers them
# to --cores locally, and --set-threads / --max-threads in a profile change them per site.


# Every heavy rule's command starts with this: the job's memory is watched against its
# mem_mb (aicd.memguard), and past it the job stops with a line naming the resource to raise.
GUARD = "AICD_MEM_MB={resources.mem_mb} AICD_JOB='{rule} {wildcards}' "


def mem_mb(base, per_input_mb=0):
    def _mem_mb(wildcards, input, attempt):
        return int((base + per_input_mb * input.size_mb) * attempt)

    return _mem_mb


# threads a detector kind can use (CatBoost's trees, torch, BLAS in the linear models, the
# per-row stylometry of robust); the rest are single-threaded
DETECTOR_THREADS = {"catboost": 8, "encoder": 8, "fast_detectgpt": 8, "robust": 8, "linear_svm": 4,
                    "logistic_regression": 4}
# threads of a feature kind's per-row work (tree-sitter parses, n-gram passes); concat copies
FEATURE_THREADS = {"tfidf": 8, "ast": 8}


def feature_threads(w):
    return FEATURE_THREADS.get(config["features"][w.featureset]["kind"], 1)


def detector_threads(w):
    return DETECTOR_THREADS.get(config["detectors"][w.detector]["kind"], 1)


def detector_resource(name, default):
    """A per-detector scheduler resource from its config entry (`resources:`), else a
    default; nothing is read from the machine that submits the job."""
    return lambda w: config["detectors"][w.detector].get("resources", {}).get(name, default)


def detector_mem_mb(default):
    """The detector's `resources: mem_mb`, else a default; times the attempt. Not from the
    input size: there is one such job per (task, detector), and input.size_mb costs a few ms
    per job when 20,000 are planned (BENCHMARKS.md, planning)."""

    def _mem_mb(wildcards, attempt):
        return int(config["detectors"][wildcards.detector].get("resources", {}).get("mem_mb", default) * attempt)

    return _mem_mb


# ---------------------------------------------------------------- optional sources


def resolved_once(path, probe, what):
    """`probe()` on the submitting machine, recorded in `path` (rewritten only when the answer
    changes); a job on a compute node (snakemake --mode remote) reads the record and probes
    nothing, so every node plans the same jobs."""
    if workflow.remote_exec:
        try:
            with open(path) as fh:
                return json.load(fh)
        except (OSError, ValueError):
            raise WorkflowError(
                f"{path} is missing: {what} are resolved on the machine that runs "
                "snakemake and read from there by jobs; run snakemake from a directory the compute nodes share"
            ) from None
    answer = probe()
    try:
        with open(path) as fh:
            recorded = json.load(fh)
    except (OSError, ValueError):
        recorded = None
    if recorded != answer:
        write_text(json.dumps(answer, indent=1, sort_keys=True) + "\n", path)  # atomic
    return answer


def _leave_out_absent_optional_sources():
    """A source marked `optional: true` whose local files are not there (e.g. ../shared data
    on a machine without it) is left out of the dataset with one line, not a failed job.
    Decided once, on the submitting machine, and recorded in results/resolved_sources.json."""
    dataset = config.get("dataset") or {}
    optional = [n for n in dataset.get("sources", []) if config.get("sources", {}).get(n, {}).get("optional")]
    if not optional:
        return

    def probe():
        absent = {}
        for name in optional:
            files = config["sources"][name].get("files")
            paths = [files] if isinstance(files, str) else list(files or [])
            missing = [p for p in paths if not os.path.isfile(os.path.expanduser(p))]
            if missing:
                absent[name] = missing[0]
        return {"absent": absent}

    absent = resolved_once(f"{R}/resolved_sources.json", probe, "optional sources")["absent"]
    for name, path in absent.items():
        if not workflow.remote_exec:
            print(
                f"Optional source {name}: {path} is not there (working directory {os.getcwd()}), so it is left out "
                f"of the dataset; set sources.{name}.files to its path to include it.",
                file=sys.stderr,
            )
        if name in dataset["sources"]:
            dataset["sources"].remove(name)


_leave_out_absent_optional_sources()


# ---------------------------------------------------------------- tasks and detectors


def tasks():
    return list(config["tasks"])


def detectors():
    return list(config["detectors"])


def runs_on(detector, task):
    only = config["detectors"][detector].get("tasks")
    return not only or task in only


def plan():
    """Every (task, detector) pair that Table 4 needs."""
    return [(t, d) for t in tasks() for d in detectors() if runs_on(d, t)]


def mode_of(task):
    """How a task's tables are made. A task may name both a release and a build recipe;
    `tasks_from` (release by default) picks one: release evaluation or the full build."""
    spec = config["tasks"][task]
    if "ood" in spec:
        return "ood"
    if "derive" in spec:
        return "derive"
    if "build" in spec and ("release" not in spec or config["tasks_from"] == "pool"):
        return "build"
    return "release"


def built_tasks():
    """Tasks cut from the dataset pool (the full build and the demo)."""
    return [t for t in tasks() if mode_of(t) == "build"]


# ---------------------------------------------------------------- sources


def source_spec(name):
    """The source's config entry; a gathered source also gets the pinned entries (version,
    sha256) its `pinned:NAME` roots name, so changing a pin reruns it."""
    spec = config["sources"][name]
    if "gather" not in spec:
        return spec
    try:
        pins = _pinned.pins_for(spec["gather"].get("roots") or {})
    except AicdError as err:
        raise WorkflowError(str(err)) from None
    return {**spec, "gather": {**spec["gather"], "pinned": pins}}


def _check_pinned_inputs():
    """Stop before any job, in one line, when a pinned input is not in the cache."""
    used = set((config.get("dataset") or {}).get("sources", []))
    used |= {s["derive"]["source"] for s in config.get("tasks", {}).values() if "derive" in s}
    for name in sorted(used & set(config.get("sources", {}))):
        for pin, entry in source_spec(name).get("gather", {}).get("pinned", {}).items():
            path = _pinned.cache_dir() / entry["file"]
            if not path.is_file():
                raise WorkflowError(
                    f"source {name}: pinned input {_pinned.describe(pin, entry)} is not in "
                    f"{_pinned.cache_dir()}: run `{_pinned.FETCH_COMMAND}` (it downloads {entry['url']})"
                )


_check_pinned_inputs()


# ---------------------------------------------------------------- `auto`: resolved once


def _probe_machine(registry, gen, judging, execution):
    """What `auto` means on this machine: a Docker daemon, and the models with an endpoint."""
    from aicd.sandbox.pool import docker_available

    out = {}
    if execution and execution["enabled"] == "auto":
        out["execution"] = docker_available()
    if gen and gen["enabled"] == "auto":
        out["generators"] = enabled_models(registry, gen["models"])
        out["instructor"] = bool(gen.get("instructor") and has_endpoint(registry[gen["instructor"]]))
    if judging and judging["enabled"] == "auto":
        out["judges"] = [j for j, s in judging["judges"].items() if has_endpoint(registry[s["model"]])]
    return out


def resolve_auto(registry, gen, judging, execution):
    """The `auto` settings, probed here when this is the submitting machine (and recorded,
    rewritten only when the answer changes), read back from the record in a job on a compute
    node (snakemake --mode remote), where nothing is probed."""
    wanted = bool(
        (execution and execution["enabled"] == "auto")
        or (gen and gen["enabled"] == "auto")
        or (judging and judging["enabled"] == "auto")
    )
    if not wanted:
        return {}
    return resolved_once(RESOLVED, lambda: _probe_machine(registry, gen, judging, execution), "`auto` settings")


# ---------------------------------------------------------------- LLM stages

try:
    REGISTRY = load_registry(
        repo_path(config["registry"]),
        os.path.join(workflow.basedir, "workflow", "schemas", "models.schema.yaml"),
    )
except AicdError as err:
    raise WorkflowError(str(err)) from None

LLM = config["llm"]
GEN = config.get("generation")
JUDGING = config.get("judging") or {}
EXEC = config.get("execution")
MODES = JUDGING.get("modes", [])

for _name in [GEN.get("instructor")] if GEN and GEN.get("instructor") else []:
    if _name not in REGISTRY:
        raise WorkflowError(f"config.generation.instructor: '{_name}' is not in the model registry")
for _j, _spec in JUDGING.get("judges", {}).items():
    if _spec["model"] not in REGISTRY:
        raise WorkflowError(f"config.judging.judges.{_j}.model: '{_spec['model']}' is not in the model registry")

AUTO = resolve_auto(REGISTRY, GEN, JUDGING, EXEC)


def _generators():
    if not GEN or GEN["enabled"] is False:
        return []
    if GEN["enabled"] == "auto":
        return AUTO["generators"]
    try:
        enabled_models(REGISTRY, GEN["models"], environ={})  # names only: unknown models are errors
    except AicdError as err:
        raise WorkflowError(f"config.generation.models: {err}") from None
    return list(REGISTRY) if GEN["models"] == "all" else list(GEN["models"])


GENERATORS = _generators()
INSTRUCTOR_OK = bool(
    GEN and GEN.get("instructor") and (AUTO["instructor"] if GEN["enabled"] == "auto" else GEN["enabled"] is True)
)


def protocol_sources(protocol, spec):
    """The sources a protocol prompts from: its own `sources`, else generation.source."""
    names = spec.get("sources") or ([GEN["source"]] if GEN.get("source") else [])
    if not names:
        raise WorkflowError(
            f"config.generation.protocols.{protocol}: name its sources (sources: [...]) or set generation.source"
        )
    for name in names:
        if name not in config.get("sources", {}):
            raise WorkflowError(
                f"config.generation.protocols.{protocol}: no source named '{name}' "
                f"(sources: {', '.join(config.get('sources', {})) or 'none'})"
            )
    return names


# Every protocol with its sources spelled out, so a job's params say exactly what it reads.
GEN_PROTOCOLS = {
    p: {**spec, "sources": protocol_sources(p, spec)}
    for p, spec in (GEN or {}).get("protocols", {}).items()
    if p not in NEEDS_INSTRUCTION or INSTRUCTOR_OK
}
INSTRUCTION_PROTOCOLS = {p: s for p, s in GEN_PROTOCOLS.items() if p in NEEDS_INSTRUCTION}


def _judges():
    judges = JUDGING.get("judges", {})
    if not judges or JUDGING["enabled"] is False:
        return {}
    if JUDGING["enabled"] == "auto":
        return {j: s for j, s in judges.items() if j in AUTO["judges"]}
    return dict(judges)


JUDGES = _judges()
JUDGE_TASKS = tasks() if JUDGING.get("tasks", "all") == "all" else JUDGING["tasks"]
# The detector names of the LLM judges: they label a sample of the test split (scored with
# --sample), which the plan knows, so no name prefix has to say it.
JUDGE_DETECTORS = {f"judge_{j}_{m}" for j in JUDGES for m in MODES}

_off = []
if GEN and GEN["enabled"] == "auto" and not GENERATORS:
    _off.append("generation")
if GEN and GENERATORS and len(GEN_PROTOCOLS) < len(GEN["protocols"]):
    _off.append("the instruction-based protocols (the instructor has no endpoint)")
if JUDGING.get("judges") and JUDGING["enabled"] == "auto" and not JUDGES:
    _off.append("judging (Table 8 will say 'not run')")
if _off and not workflow.remote_exec:
    print(
        f"LLM stages: no endpoint, so {' and '.join(_off)} left out; to enable, {endpoint_hint(REGISTRY)}.",
        file=sys.stderr,
    )


def model_arg(name):
    return as_arg(REGISTRY[name])


def generation_sources(protocols):
    """--source NAME=PATH arguments and input paths for the sources the protocols read."""
    names = sorted({s for spec in protocols.values() for s in spec["sources"]})
    return {name: f"{R}/sources/{name}.parquet" for name in names}


def source_args(paths):
    return " ".join(f"--source {shlex.quote(f'{name}={path}')}" for name, path in paths.items())


def generate_inputs(w):
    inputs = {f"source_{name}": path for name, path in generation_sources(GEN_PROTOCOLS).items()}
    if any(p in NEEDS_INSTRUCTION for p in GEN_PROTOCOLS):
        inputs["instructions"] = f"{R}/instructions/instructions.parquet"
    return inputs


def table8_layout():
    return {
        "tasks": [[t, config["tasks"][t]["title"]] for t in JUDGE_TASKS],
        "judges": [[j, s["title"]] for j, s in JUDGING.get("judges", {}).items()],
        "modes": MODES,
        "hint": endpoint_hint(REGISTRY),
    }


def generation_needed():
    """Generation (and executing what it generates) feeds the full build; a release evaluation
    (the default) reads the released splits and needs neither."""
    return bool(built_tasks()) or not any("release" in config["tasks"][t] for t in tasks())


def llm_targets():
    targets = [f"{R}/tables/table8.tex"] if JUDGING.get("judges") else []
    if GEN and generation_needed():
        targets.append(f"{R}/generations/report.json")
    return targets


# ---------------------------------------------------------------- execution


def _execution_on():
    if not EXEC or EXEC["enabled"] is False:
        return False
    if EXEC["enabled"] == "auto":
        if not AUTO["execution"] and not workflow.remote_exec:
            print(
                "Sandbox: no Docker daemon answers, so execution is left out (execution.enabled: auto); "
                "to enable, install docker.io and start dockerd (see README, Sandbox).",
                file=sys.stderr,
            )
        return AUTO["execution"]
    return True


def _execution_names():
    """The tables whose programs are executed; the daemon is asked about only when there are any."""
    if not EXEC:
        return []
    names = list(EXEC["sources"]) + (GENERATORS if EXEC["generations"] and generation_needed() else [])
    return names if names and _execution_on() else []


EXEC_NAMES = _execution_names()


def sandbox_base():
    return LOCAL_BASE if EXEC["base"] == "debootstrap" else EXEC["base_image"]


def execution_input(w):
    if w.name in GENERATORS:
        return f"{R}/generations/{w.name}.parquet"
    return f"{R}/sources/{w.name}.parquet"


def execution_targets():
    return [f"{R}/execution/report.md"] if EXEC_NAMES else []


# ---------------------------------------------------------------- task splits


def task_mode(w):
    return mode_of(w.task)


def task_source(w):
    spec = config["tasks"][w.task]
    mode = mode_of(w.task)
    if mode == "build":
        return {"source": f"{R}/dataset/pool.parquet"}
    return {"source": f"{R}/sources/{spec['derive']['source']}.parquet"} if mode == "derive" else {}


def task_spec(w):
    spec = config["tasks"][w.task]
    if mode_of(w.task) == "build":
        dedup = {
            k: v
            for k, v in {**config["dataset"].get("minhash", {}), **config["dataset"].get("dedup", {})}.items()
            if k in ("threshold", "num_perm", "false_negative_weight")
        }
        return as_arg({**spec["build"], "dedup": dedup})
    if mode_of(w.task) == "derive":
        return as_arg(spec["derive"])
    release = config_slice(spec, ["release", "columns", "label_map", "target", "label_audit", "defaults", "unmapped"])
    if "build" in spec:  # the paper's task: which test subsets the release can be given (see release_language)
        release["paper"] = config_slice(spec["build"], ["kind", "seen_languages", "seen_domains"])
    return as_arg(release)


def task_threads(w):
    """Language identification of release rows runs in parallel (capped by --cores)."""
    return 16 if task_mode(w) == "release" else 1


def task_mem_mb(w, input, attempt):
    """Release tasks have no snakemake input (the release is read inside the job), so their
    memory cannot follow the input size: 32 GB for a whole release table and 16 language-ID
    workers (an estimate: the release cannot be downloaded on the development machine)."""
    if task_mode(w) == "release":
        return 32000 * attempt
    return mem_mb(2000, 6)(w, input, attempt)


def task_source_arg(w, input):
    if "source" not in input.keys():
        return ""
    return f"--{'pool' if task_mode(w) == 'build' else 'source'} {input.source}"


# ---------------------------------------------------------------- features and detectors

FOLDER_KINDS = {"encoder"}  # detector kinds stored as a folder (aicd.detectors: model_suffix "")
OWN_RULE_KINDS = {"fast_detectgpt"}  # detector kinds with their own rule (detect_fast_detectgpt)
FDG_KIND = "fast_detectgpt"


def feature_inputs(w):
    spec = config["features"][w.featureset]
    if spec["kind"] == "concat":
        # the parts' matrices, then their fitted featurizers (the concat one holds them)
        return [
            f"{R}/features/{w.task}/{part}/{name}"
            for name in ("features.npz", "featurizer.pkl")
            for part in spec["parts"]
        ]
    return expand(f"{R}/tasks/{w.task}/{{split}}.parquet", split=SPLITS)


def feature_args(w, input):
    if config["features"][w.featureset]["kind"] == "concat":
        half = len(input) // 2
        return "--parts " + " ".join(input[:half]) + " --part-models " + " ".join(input[half:])
    return f"--tasks-dir {parent(input[0])}"


def folder_detectors():
    return [d for d in detectors() if config["detectors"][d]["kind"] in FOLDER_KINDS]


def file_detectors():
    return [d for d in detectors() if config["detectors"][d]["kind"] not in FOLDER_KINDS | OWN_RULE_KINDS]


def not_file_detectors():
    """Prediction names written elsewhere (folder and own-rule detectors, the LLM judges)."""
    others = [d for d in detectors() if config["detectors"][d]["kind"] in FOLDER_KINDS | OWN_RULE_KINDS]
    return others + sorted(JUDGE_DETECTORS)


def detector_inputs(w):
    inputs = {"tables": expand(f"{R}/tasks/{w.task}/{{split}}.parquet", split=SPLITS)}
    featureset = config["detectors"][w.detector].get("features")
    if featureset:
        inputs["features"] = f"{R}/features/{w.task}/{featureset}/features.npz"
        # stored in the fitted model, so it applies to raw code (aicd detect, extra test sets)
        inputs["featurizer"] = f"{R}/features/{w.task}/{featureset}/featurizer.pkl"
    return inputs


def ood_tasks():
    """Tasks that are splits of the out-of-distribution protocol (config/ood.yaml)."""
    return [t for t in tasks() if mode_of(t) == "ood"]


def ood_sources(w):
    spec = config["tasks"][w.task]["ood"]
    inputs = {"train": f"{R}/sources/{spec['train']}.parquet"}
    if spec.get("test"):
        inputs["test"] = f"{R}/sources/{spec['test']}.parquet"
    return inputs


def ood_targets():
    return [f"{R}/tables/ood.md", f"{R}/tables/ood.tex"] if ood_tasks() else []


def test_set_spec(w):
    return config["tasks"][w.task]["test_sets"][w.test_set]


def test_set_plan():
    """(task, test set, detector) for every extra test set: detectors whose fitted model
    applies to new rows (pickled and folder models; not Fast-DetectGPT or the LLM judges)."""
    appliable = set(file_detectors()) | set(folder_detectors())
    return [
        (t, s, d)
        for t in tasks()
        for s in config["tasks"][t].get("test_sets") or {}
        for d in detectors()
        if runs_on(d, t) and d in appliable
    ]


def fdg_detectors():
    return [d for d in detectors() if config["detectors"][d]["kind"] == FDG_KIND]


def fdg_models():
    """The Fast-DetectGPT model summaries the paper section reads, one per (task, detector)."""
    fdg = set(fdg_detectors())
    return [f"{R}/models/{t}/{d}.json" for t, d in plan() if d in fdg]


def lm_spec(detector):
    """The causal LM to train for a Fast-DetectGPT detector (params.train_lm), or None when
    params.model names one (Hub id or folder)."""
    return (config["detectors"][detector].get("params") or {}).get("train_lm")


def trained_detectors(task):
    """Detectors of `task` that learn from its train split (no dummies, no zero-shot)."""
    return [
        d
        for t, d in plan()
        if t == task and not config["detectors"][d].get("dummy") and config["detectors"][d]["kind"] != FDG_KIND
    ]


def subset_table_detectors(task):
    """Detectors averaged in Tables 5-7: trained ones, plus Fast-DetectGPT on a two-class task
    (on more classes it is scored on binarised labels: another task)."""
    two_class = len(config["tasks"][task].get("labels", [])) == 2
    return [
        d
        for t, d in plan()
        if t == task
        and not config["detectors"][d].get("dummy")
        and (config["detectors"][d]["kind"] != FDG_KIND or two_class)
    ]


def task_kind(task):
    return (config["tasks"][task].get("build") or {}).get("kind")


def score_sample_flag(w):
    # LLM judges label a stratified sample of the test split, not all of it.
    return "--sample" if w.detector in JUDGE_DETECTORS else ""


# ---------------------------------------------------------------- dataset

DATASET = config.get("dataset")


def dataset_inputs():
    """results/dataset/normalized/{kind}/{name}.parquet for every table in the pool."""
    if not DATASET:
        return []
    names = [("sources", s) for s in DATASET["sources"]]
    if DATASET.get("generations") and GEN:
        names += [("generations", m) for m in GENERATORS]
    return [f"{R}/dataset/normalized/{kind}/{name}.parquet" for kind, name in names]


def dataset_spec():
    return {
        k: DATASET[k] for k in ("filters", "minhash", "dedup", "langid_min_margin", "execution_filter") if k in DATASET
    }


def normalize_inputs(w):
    """The table, and its sandbox results when an execution filter is asked for and they exist."""
    inputs = {"table": f"{R}/{w.kind}/{w.name}.parquet"}
    if DATASET and DATASET["execution_filter"] != "none" and w.name in EXEC_NAMES:
        inputs["execution"] = f"{R}/execution/{w.name}.parquet"
    return inputs


def card_sources():
    """What the card says about each source: where it came from, at which revision."""
    out = {}
    for name in DATASET["sources"]:
        spec = config["sources"][name]
        out[name] = {k: spec[k] for k in ("hub", "revision", "name", "data_dir", "files") if k in spec}
        if "gather" in spec:
            out[name]["gathered_from"] = spec["gather"]["roots"]
    return out


def dataset_targets():
    return [f"{R}/dataset/README.md"] if DATASET and built_tasks() else []


# ---------------------------------------------------------------- report and paper tables

# git describe of this checkout: a new commit rewrites inputs.json and the tables that name it.
CODE_VERSION = _code_version(workflow.basedir)


def report_layout():
    return {
        "tasks": [[t, config["tasks"][t]["title"]] for t in tasks()],
        "detectors": [
            [d, config["detectors"][d]["title"], bool(config["detectors"][d].get("dummy", False))] for d in detectors()
        ],
        # label maps the release does not publish, with the evidence they rest on
        "provisional": {
            t: config["tasks"][t]["label_map_provisional"]
            for t in tasks()
            if "label_map_provisional" in config["tasks"][t]
        },
        # extra test sets: one Table 4 column each, after the tasks' own test splits
        "test_sets": [
            [t, s, spec.get("title", s)]
            for t in tasks()
            for s, spec in (config["tasks"][t].get("test_sets") or {}).items()
        ],
    }


def report_sources():
    """Sources whose reports the summary shows: those tasks derive from, and the pool's."""
    names = {config["tasks"][t]["derive"]["source"] for t in tasks() if mode_of(t) == "derive"}
    if built_tasks():
        names |= set(config["dataset"]["sources"])
    return sorted(names)


def generation_tables(w):
    """Generator tables the pool reads: inputs of the build, fingerprinted like the sources."""
    dataset = config.get("dataset") or {}
    if built_tasks() and dataset.get("generations") and GEN:
        return [f"{R}/generations/{m}.parquet" for m in GENERATORS]
    return []


def subset_tables_layout():
    tables = {}
    for number, kind in ((5, "binary"), (6, "family"), (7, "fine_grained")):
        task = next((t for t in tasks() if task_kind(t) == kind), None)
        tables[str(number)] = {
            "task": task,
            "labels": config["tasks"][task].get("labels", []) if task else [],
            "detectors": subset_table_detectors(task) if task else [],
        }
    return {"tables": tables, "titles": {d: config["detectors"][d]["title"] for d in detectors()}}


def figures_layout():
    return {
        "tasks": [[t, config["tasks"][t]["title"], config["tasks"][t].get("labels", [])] for t in tasks()],
        "detectors": [
            [d, config["detectors"][d]["title"], bool(config["detectors"][d].get("dummy", False))] for d in detectors()
        ],
    }


def paper_layout():
    return {
        "detectors": {
            d: config_slice(config["detectors"][d], ["kind", "title", "features", "params"]) for d in detectors()
        },
        "tasks": {t: config["tasks"][t]["title"] for t in tasks()},
    }


def _on_task(task, kind, features):
    return [
        d
        for d in trained_detectors(task)
        if config["detectors"][d]["kind"] == kind and config["detectors"][d].get("features") in features
    ]


def analyses_inputs(w):
    inputs = {
        "test": f"{R}/tasks/{w.task}/test.parquet",
        "predictions": [f"{R}/predictions/{w.task}/{d}.parquet" for d in trained_detectors(w.task)],
    }
    svm = _on_task(w.task, "linear_svm", ["tfidf"])
    if svm:
        inputs["svm"] = [f"{R}/models/{w.task}/{svm[0]}.pkl", f"{R}/features/{w.task}/tfidf/featurizer.pkl"]
    shap = _on_task(w.task, "catboost", ["ast", "ast_tfidf"])
    inputs["shap"] = [
        p
        for d in shap
        for p in (
            f"{R}/models/{w.task}/{d}.pkl",
            f"{R}/features/{w.task}/{config['detectors'][d]['features']}/features.npz",
        )
    ]
    return inputs


def analyses_args(w, input):
    args = []
    if "svm" in input.keys():
        args.append(f"--svm {input.svm[0]} {input.svm[1]}")
    shap = list(input.shap)
    for i in range(0, len(shap), 2):
        args.append(f"--shap {os.path.splitext(os.path.basename(shap[i]))[0]} {shap[i]} {shap[i + 1]}")
    if input.predictions:
        args.append(f"--predictions {' '.join(input.predictions)}")
    return " ".join(args)


def all_scores():
    return [f"{R}/scores/{t}/{d}.json" for t, d in plan()]


def paper_targets():
    return [f"{R}/paper_results.md"]
