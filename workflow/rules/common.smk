# What the rules share: validation (defaults filled in), the plan (aicd.plan: which jobs exist,
# a pure function of the config, the model registry and the one recorded resolution of the
# machine, aicd.resolve), the run's results root RESULTS (config `results`, aicd.records.runs), wildcard
# constraints, the input functions that turn the plan into paths under RESULTS, and resource
# helpers. Rule files hold rules only.

from snakemake.utils import min_version

from aicd.common.errors import AicdError
from aicd.config import apply_defaults, explain_error, stage_on, validate_config
from aicd.generate.registry import check_config_models, endpoint_hint, job_entry, load_registry, with_max_tokens
from aicd.llm.engines import server_mem_mb
from aicd.outputs import Outputs
from aicd.plan import SPLITS, Plan
from aicd.plan import resources as job_resources
from aicd.published import SUBSET_TABLES, judge_detector
from aicd.records import baserun, runs
from aicd.records.fingerprint import code_version
from aicd.report import layouts
from aicd.resolve import check_pinned_inputs, endpoint_notes, resolve
from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag
from aicd.sources import pinned

min_version("9.0")

DRY_RUN = workflow.output_settings.dryrun
try:
    # a run built on another (`base:`): the base's recorded config under this one (aicd.records.baserun)
    BASE = baserun.load(config["base"]) if config.get("base") else None
    if BASE:
        # a default added since the base ran is the base's too (it ran with that value)
        apply_defaults(BASE.config)
        config.update(baserun.merged(BASE.config, config))
    validate_config(config, os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml"))
    RESULTS = config["results"].rstrip("/")  # this run's results root (aicd.records.runs: one run per root)
    if BASE:
        baserun.check_sections(config, BASE)
    RUN = runs.identity(workflow.configfiles, workflow.basedir)
    RUN_NOTES = (
        []
        if workflow.remote_exec
        else [n for n in [runs.check(RESULTS, RUN, dry_run=DRY_RUN, drop_layers=config["drop_layers"])] if n]
    )
    if BASE and not workflow.remote_exec:
        baserun.check_unchanged(runs.recorded(RESULTS), BASE, config["rebase"])
    REGISTRY = config["registry"] if isinstance(config["registry"], list) else [config["registry"]]
    MODELS = load_registry([repo_path(p) for p in REGISTRY])
    check_config_models(config, MODELS)
    if not BASE:  # a run on a base makes no source: the base's are read
        check_pinned_inputs(config, pinned.pins_for)
    RESOLVED = (
        BASE.resolved
        if BASE
        else resolve(config, MODELS, RESULTS, remote=workflow.remote_exec, notes=RUN_NOTES, record=not DRY_RUN)
    )
    PLAN = Plan.from_config(config, MODELS, RESOLVED)
    REUSE = baserun.reuse(PLAN, Plan.from_config(BASE.config, MODELS, BASE.resolved), config, BASE) if BASE else None
    if REUSE:
        baserun.check_finished(PLAN, REUSE)
except AicdError as err:
    # a mistake in the config or the machine's state: the message alone, naming the config file
    # that holds it, without snakemake's framing of a workflow error
    raise SystemExit(explain_error(err, workflow.configfiles, config.get("base"), workflow.config_settings.config))

# Where this run's data is: the base's root for a run built on another (sources, dataset, task
# splits, test sets, LLM and sandbox stages are read from there), else its own.
DATA = BASE.root if BASE else RESULTS
NOTES = RUN_NOTES + ([baserun.note(PLAN, REUSE, BASE, RESULTS)] if BASE else list(PLAN.notes))
if not workflow.remote_exec and not BASE:
    NOTES += endpoint_notes(config, MODELS, PLAN)


# Every file a rule reads or writes is named by aicd.outputs.Outputs under one root (no rule
# spells a path): OUT, this run's; DATA_OUT, the data it reads (a run on a base: the base's);
# made(), features_made(), analysed() and calibrated(), where a run on a base reuses what the
# base made.
OUT = Outputs(RESULTS)
DATA_OUT = Outputs(DATA)


def made_by(task, detector):
    """The root holding a (task, detector)'s fit, predictions and scores: the base's where it made them."""
    return REUSE.of_pair(task, detector, RESULTS) if REUSE else RESULTS


def made(task, detector):
    """The files of a (task, detector)'s fit, predictions and scores (made_by's root)."""
    return Outputs(made_by(task, detector))


def features_made(task, featureset):
    """The files of a feature set on a task: the base's where it made them."""
    return Outputs(REUSE.of_features(task, featureset, RESULTS) if REUSE else RESULTS)


def analysed(task):
    """The files of a task's analyses: the base's where it made them."""
    return Outputs(REUSE.of_analyses(task, RESULTS) if REUSE else RESULTS)


# Files that aggregate rules read, named here rather than through rules.X.output: an input
# given as a rule reference makes snakemake hash every list-valued input of that rule once per
# file in it (quadratic in the number of scores; BENCHMARKS.md, planning).
INPUTS_JSON = DATA_OUT.inputs()  # a run on a base: the base's (its rows come from those inputs)
SUBSET_TABLE_FILES = [OUT.tab(f"table{n}", ext) for n in SUBSET_TABLES for ext in ("tex", "md")]
PAPER_FIGURES_INDEX = OUT.figure("paper_figures", "json")
CODE_VERSION = code_version(workflow.basedir)  # a new commit rewrites inputs.json and what names it


def guard(rule):
    """The start of every heavy rule's command: the job's memory is watched against its mem_mb
    (aicd.common.memguard), and past it the job stops with a line naming the resource to raise."""
    return lambda w, resources: f"AICD_MEM_MB={resources.mem_mb} AICD_JOB={shlex.quote(f'{rule} {w}')} "


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


SEED = int(config["seed"])


# ---------------------------------------------------------------- resources
#
# Every rule's threads and resources come from the one table, aicd.plan.resources (`res()`,
# `rule_threads()`); a detector's and a feature set's jobs from what the plan decided of them
# (the table's rows, their kinds' needs, their config entries' `resources:`); a job that serves a
# local LLM adds its server's memory. Memory grows with the attempt: a job killed for memory
# (SLURM's OUT_OF_MEMORY) is retried with `retries:` from the profile at 2x, 3x...


def _memory(row):
    """mem_mb for a table row: with its inputs' share (input.size_mb: known when the job is
    scheduled) or its threads' where the row has one (reading sizes costs time at planning, so
    only those rows ask)."""
    if row.per_input_mb:
        return lambda w, input, attempt: job_resources.mem_mb(row, input.size_mb, attempt=attempt)
    if row.per_thread_mb:
        return lambda w, threads, attempt: job_resources.mem_mb(row, threads=threads, attempt=attempt)
    return lambda w, attempt: job_resources.mem_mb(row, attempt=attempt)


def res(rule):
    """A rule's resources from its row of the table: memory, runtime (times the attempt) and the
    container-engine slot (`docker`) where it uses one."""
    row = job_resources.for_rule(rule)
    out = {"mem_mb": _memory(row), "runtime": lambda w, attempt: row.runtime * attempt}
    if row.engine_slots:
        out["docker"] = row.engine_slots
    return out


def rule_threads(rule):
    return job_resources.for_rule(rule).threads


def normalize_threads(w):
    """The table's threads, fewer where dataset.resources.threads says so."""
    most = rule_threads("normalize")
    return min(most, int((dataset_spec().get("resources") or {}).get("threads", most)))


def task_split_row(w):
    return job_resources.for_rule("task_split_release" if task(w).mode == "release" else "task_split")


def task_split_threads(w):
    return task_split_row(w).threads


def task_split_res():
    """A release task has no snakemake input (the release is read inside the job): its own row."""
    return {
        "mem_mb": lambda w, input, attempt: job_resources.mem_mb(task_split_row(w), input.size_mb, attempt=attempt),
        "runtime": lambda w, attempt: task_split_row(w).runtime * attempt,
    }


def detector(w):
    return PLAN.detectors[w.detector]


def detector_threads(w):
    return detector(w).threads


def detector_res():
    """Every job that runs a detector (fit, calibration, extra test sets, its causal LM) asks the
    same: the plan's memory, runtime and GPUs for it. Memory is not scaled by the input: reading
    input.size_mb costs milliseconds per job at planning (BENCHMARKS.md, planning); at the paper's
    scale the config's resources.mem_mb states it (BENCHMARKS.md, paper scale)."""
    return {
        "mem_mb": lambda w, attempt: int(detector(w).mem_mb * attempt),
        "runtime": lambda w, attempt: detector(w).runtime * attempt,
        "gpu": lambda w: detector(w).gpu,
    }


def feature_res():
    return {
        "mem_mb": lambda w, input, attempt: feature(w).job_mem_mb(input.size_mb, attempt),
        "runtime": lambda w, attempt: feature(w).runtime * attempt,
        "gpu": lambda w: feature(w).gpu,
    }


def multiclass_first(w):
    """A job's priority: 1 on a task of more than two classes, whose fits and figures take
    several times a two-class task's, so that they start before the short jobs, not after."""
    return 1 if len(PLAN.tasks[w.task].labels) > 2 else 0


def detector_env(w):
    return env(detector(w).environment)


def feature(w):
    """The feature set's job as the plan has it (aicd.plan.FeaturePlan: threads, environment,
    GPUs, memory, runtime, parts)."""
    return PLAN.features[w.featureset]


def feature_spec(w):
    return as_arg(config_slice(feature(w).spec, baserun.FEATURE_JOB_KEYS))


def feature_env(w):
    return env(feature(w).environment)


# ---------------------------------------------------------------- sources and tasks


def source_spec(name):
    """The source's config entry, with the pinned entries (version, sha256) of its gathered
    `pinned:NAME` roots, so changing a pin reruns it."""
    return pinned.with_pins(config["sources"][name])


def task(w):
    return PLAN.tasks[w.task]


def task_source(w):
    if task(w).mode == "build":
        return {"source": OUT.pool()}
    return {"source": OUT.source(task(w).source)} if task(w).mode == "derive" else {}


def task_spec(w):
    return as_arg(PLAN.split_spec(w.task))


def task_source_arg(w, input):
    if "source" not in input.keys():
        return ""
    return f"--{'pool' if task(w).mode == 'build' else 'source'} {input.source}"


def split_tables(w):
    """The task's split tables by split name (train, validation, test), in one folder."""
    return {split: DATA_OUT.split(w.task, split) for split in SPLITS}


# ---------------------------------------------------------------- features and detectors


def feature_inputs(w):
    """A concat set reads its parts' matrices and fitted featurizers (each list in the order of
    its `parts`); any other set reads the task's split tables."""
    parts = feature(w).parts
    if parts:
        return {
            "parts": [features_made(w.task, p).features(w.task, p) for p in parts],
            "part_models": [features_made(w.task, p).featurizer(w.task, p) for p in parts],
        }
    return split_tables(w)


def feature_args(w, input):
    if "parts" in input.keys():
        return f"--parts {' '.join(input.parts)} --part-models {' '.join(input.part_models)}"
    return f"--tasks-dir {parent(input.train)}"


def detect_inputs(w):
    inputs = split_tables(w)
    featureset = detector(w).features
    if featureset:
        inputs["features"] = features_made(w.task, featureset).features(w.task, featureset)
        # stored in the fitted model, so it applies to raw code (aicd detect, extra test sets)
        inputs["featurizer"] = features_made(w.task, featureset).featurizer(w.task, featureset)
    for name, path in detector(w).prepared.items():
        inputs[f"prepared_{name}"] = OUT.under(path)
    return inputs


def detect_args(w, input):
    args = [f"--features {input.features} --featurizer {input.featurizer}"] if "features" in input.keys() else []
    if detector(w).storage == "folder":  # checkpoints kept across a killed job; tokenised splits shared
        args.append(f"--work-dir {OUT.checkpoints(w.task, w.detector)} --cache-dir {OUT.token_cache(w.task)}")
    else:  # per-text feature values the run's jobs share (robust's stylometry; aicd.common.text_cache)
        args.append(f"--cache-dir {OUT.features_cache()}")
    prepared = [f"{k[len('prepared_'):]}={v}" for k, v in input.items() if k.startswith("prepared_")]
    if prepared:
        args.append("--prepared " + " ".join(prepared))
    return " ".join(args)


def fitted_model(w):
    """A (task, detector)'s fitted model: a skops file or a folder, as its kind stores it."""
    files = made(w.task, w.detector)
    return (
        files.model_folder(w.task, w.detector) if detector(w).storage == "folder" else files.model(w.task, w.detector)
    )


def detector_spec(w):
    return as_arg(baserun.job_spec(config["detectors"][w.detector]))


def lm_spec(w):
    return {k: v for k, v in PLAN.lms[w.detector].items() if k != "task"}


# ---------------------------------------------------------------- LLM stages and the sandbox


def model_arg(name):
    """A model's entry for a job that runs it (without the keys only a report reads)."""
    return as_arg(job_entry(MODELS[name]))


def judge_model_arg(name):
    return as_arg(judge_entry(name))


def judge_entry(name):
    """A judge's model entry as its job runs it: one server for a model served here (its
    requests go out at once; a second server's start-up would cost more than it saves)."""
    entry = MODELS[name]
    return {**entry, "serve": {**entry["serve"], "replicas": 1}} if entry.get("serve") else entry


def served_here(entry):
    """A registry entry this machine serves for its jobs (serve:, no api_base): they run the server."""
    return bool(entry.get("serve")) and not entry.get("api_base")


def llm_threads(entry):
    """A job that serves its model runs its servers' threads (each replica's)."""
    if not served_here(entry):
        return 1
    return int(entry["serve"].get("threads", 1)) * int(entry["serve"].get("replicas", 1))


def llm_gpu(entry):
    """A job that serves its model on a GPU (serve.device cuda...) asks for one (config/llm_gpu.yaml)."""
    return 1 if served_here(entry) and str(entry["serve"].get("device", "cpu")).startswith("cuda") else 0


def llm_res(rule, entry_of):
    """An LLM job's resources: its row of the table, plus, where it serves its model here, the
    server's memory (aicd.llm.engines, per server) and a GPU where it serves on one. `entry_of`:
    the job's model entry, as the job runs it."""
    row = job_resources.for_rule(rule)

    def server_mb(w):
        entry = entry_of(w)
        return server_mem_mb(entry) * int(entry["serve"].get("replicas", 1)) if served_here(entry) else 0

    return {
        "mem_mb": lambda w, input, attempt: job_resources.mem_mb(row, input.size_mb, attempt=attempt)
        + server_mb(w) * attempt,
        "runtime": lambda w, attempt: row.runtime * attempt,
        "gpu": lambda w: llm_gpu(entry_of(w)),
    }


def generator_card_scored(model):
    """{where: {detector: {predictions, test[, human_predictions, human_test]}}}: each fitted
    detector on the model's rows of a pool task's test split (its code entered the pool), and on
    each test set of its generations, whose AUROC and TPR read the human rows of the task's own
    test split (a test set of generations holds none)."""
    out = {}
    if model in PLAN.pool_generators and PLAN.dataset and PLAN.dataset.get("generations"):
        for t, d in PLAN.pairs:
            if PLAN.tasks[t].mode == "build":
                where = f"{PLAN.tasks[t].title}: its rows of the test split"
                out.setdefault(where, {})[d] = {
                    "predictions": OUT.predictions(t, d),
                    "test": OUT.split(t, "test"),
                }
    for t, s, d in PLAN.test_set_plan():
        if PLAN.tasks[t].test_sets[s].get("generation") == model:
            out.setdefault(f"{PLAN.tasks[t].title}: test set {s}", {})[d] = {
                "predictions": OUT.test_set_predictions(t, s, d),
                "test": OUT.test_set(t, s),
                "human_predictions": made(t, d).predictions(t, d),
                "human_test": DATA_OUT.split(t, "test"),
            }
    return out


def generator_card_inputs(w):
    inputs = {
        "generations": OUT.generations(w.model),
        "report": OUT.generations_report(w.model),
        "scored": sorted(
            {p for per in generator_card_scored(w.model).values() for c in per.values() for p in c.values()}
        ),
    }
    if w.model in PLAN.executions:
        inputs["execution"] = OUT.execution_report(w.model)
    in_pool = w.model in PLAN.pool_generators and PLAN.dataset and PLAN.dataset.get("generations")
    as_test_set = any(PLAN.tasks[t].test_sets[s].get("generation") == w.model for t, s, _ in PLAN.test_set_plan())
    if in_pool or as_test_set:
        inputs["normalized"] = OUT.normalized_report("generations", w.model)
    if as_test_set:  # what each test set of its generations removed (e.g. classes outside the task's labels)
        inputs["test_sets"] = sorted(
            {
                OUT.test_set_report(t, s)
                for t, s, _ in PLAN.test_set_plan()
                if PLAN.tasks[t].test_sets[s].get("generation") == w.model
            }
        )
    return inputs


def generator_card_args(w, input):
    args = [f"--execution {input.execution}"] if "execution" in input.keys() else []
    args += [f"--normalized {input.normalized}"] if "normalized" in input.keys() else []
    args += [f"--test-set-reports {' '.join(input.test_sets)}"] if "test_sets" in input.keys() else []
    return " ".join(args)


def judge_sample_args(judge):
    judging = config["judging"]
    args = [f"--max-rows {judging['max_rows']}"] if judging.get("max_rows") else []
    args += [f"--max-code-chars {judging['max_code_chars']}"] if judging.get("max_code_chars") else []
    args += ["--constrained"] if PLAN.judges[judge].get("constrained") else []
    return " ".join(args)


def judge_tests(w):
    """The test split of every task the judges label, by task."""
    return {task: DATA_OUT.split(task=task, split="test") for task in PLAN.judge_tasks}


def judge_runs_arg(judge, input, output):
    """The judge job's (task, mode) runs, in the order of its outputs."""
    runs, i = [], 0
    for t in PLAN.judge_tasks:
        target = (config["tasks"][t].get("derive") or config["tasks"][t]).get("target", "label")
        params = PLAN.judges[judge].get("params") or {}
        for m in PLAN.modes:
            runs.append(
                {
                    "task": t,
                    "mode": m,
                    "test": input[t],
                    "labels": list(PLAN.tasks[t].labels),
                    "target": target,
                    "params": params.get(m, {}),
                    "out": output.predictions[i],
                    "report": output.reports[i],
                }
            )
            i += 1
    return as_arg(runs)


def generation_sources(protocols):
    """The source tables the protocols prompt from, by name."""
    return {name: OUT.source(name) for name in sorted({s for p in protocols.values() for s in p["sources"]})}


def source_args(paths):
    return " ".join(f"--source {shlex.quote(f'{name}={path}')}" for name, path in paths.items())


def execution_input(w):
    kind = "generations" if w.name in PLAN.generators else "sources"
    return OUT.table(kind, w.name)


def sandbox_base():
    return LOCAL_BASE if config["execution"]["base"] == "debootstrap" else config["execution"]["base_image"]


# ---------------------------------------------------------------- scores, reports and the paper


def all_scores():
    return [made(t, d).scores(t, d) for t, d in PLAN.pairs]


def judge_scores():
    """Every judge's score file on every task it judges, in each mode (Table 8)."""
    return [DATA_OUT.scores(t, d) for t in PLAN.judge_tasks for d in PLAN.judge_detectors]


def score_sample_flag(w):
    # LLM judges label a stratified sample of the test split, not all of it; so do zero-shot
    # detectors over a feature set that scored a sample (lm_stats rows)
    sampled = w.detector in PLAN.detectors and PLAN.detectors[w.detector].samples_test
    return "--sample" if w.detector in PLAN.judge_detectors or sampled else ""


def reference_predictions(w):
    # a perturbed test set is scored against the unperturbed predictions too: the labels that flip
    perturbed = "perturbation" in task(w).test_sets[w.test_set]
    return [OUT.predictions(w.task, w.detector)] if perturbed else []


def validation_scores(w):
    # what thresholds at a fixed FPR are set on; LLM judges give labels only
    return [] if w.detector in PLAN.judge_detectors else [OUT.validation_scores(w.task, w.detector)]


def zero_shot_reports():
    return [made(t, d).model_report(t, d) for t, d in PLAN.pairs if PLAN.detectors[d].zero_shot]


def analyses_inputs(w):
    """The test split, the averaged detectors' predictions, and by name the fitted files the
    analyses explain: svm_model and svm_featurizer (the n-gram back-projection), and for each
    SHAP detector D shap_model_D and shap_features_D."""
    chosen = PLAN.analyses(w.task)
    feats = lambda d: features_made(w.task, PLAN.detectors[d].features)  # noqa: E731
    model = lambda d: made(w.task, d).model(w.task, d)  # noqa: E731
    inputs = {
        "test": DATA_OUT.split(w.task, "test"),
        "predictions": [made(w.task, d).predictions(w.task, d) for d in chosen["trained"]],
    }
    for d in chosen["coefficients"]:  # one at most
        inputs.update(svm_model=model(d), svm_featurizer=feats(d).featurizer(w.task, PLAN.detectors[d].features))
    for d in chosen["shap"]:
        inputs.update(
            {f"shap_model_{d}": model(d), f"shap_features_{d}": feats(d).features(w.task, PLAN.detectors[d].features)}
        )
    return inputs


def analyses_titles(w):
    # the titles of the detectors the analyses name (SHAP), not every row's: a new row's title
    # leaves the analyses as they are
    return {d: PLAN.detectors[d].title for d in PLAN.analyses(w.task)["shap"]}


def analyses_args(w, input):
    args = [f"--svm {input.svm_model} {input.svm_featurizer}"] if "svm_model" in input.keys() else []
    for d in PLAN.analyses(w.task)["shap"]:
        args.append(f"--shap {d} {input[f'shap_model_{d}']} {input[f'shap_features_{d}']}")
    if input.predictions:
        args.append(f"--predictions {' '.join(input.predictions)}")
    return " ".join(args)


def test_set_source(w):
    """A test set's rows: a source's table, or a registry model's generations through the
    dataset stage's code checks and Table 3 filters (rows they reject are left out, counted)."""
    spec = task(w).test_sets[w.test_set]
    if "generation" in spec:
        return OUT.normalized("generations", spec["generation"])
    return OUT.source(spec["source"])


def dataset_spec():
    """The dataset stage's settings: the plan's where it builds a pool, else the config's (a
    test set of a model's generations goes through the same filters in a release evaluation)."""
    return PLAN.dataset or config.get("dataset") or {}


def generation_tables(w):
    """Generator tables the pool reads: inputs of the build, fingerprinted like the sources."""
    if PLAN.dataset and PLAN.dataset.get("generations"):
        return [OUT.generations(m) for m in PLAN.pool_generators]
    return []


def dataset_inputs():
    """results/dataset/normalized/{kind}/{name}.parquet for every table in the pool."""
    if not PLAN.dataset:
        return []
    names = [("sources", s) for s in PLAN.dataset_sources]
    names += [("generations", m) for m in (PLAN.pool_generators if PLAN.dataset.get("generations") else [])]
    return [DATA_OUT.normalized(kind, name) for kind, name in names]


# ---------------------------------------------------------------- calibration on human reference code


def calibration_spec():
    return config["calibration"]


# A run on a base has the base's calibration settings (it may change detectors and feature sets
# only): the base's reference tables and the calibrations of the pairs it made are read from there,
# where the base calibrated them.
BASE_CALIBRATED = set(Plan.from_config(BASE.config, MODELS, BASE.resolved).calibration_pairs()) if BASE else set()


def calibrated_by(task, detector=None):
    """The root holding a task's reference table (detector None) or a pair's calibration."""
    if detector is None:
        return DATA if any(t == task for t, _ in BASE_CALIBRATED) else RESULTS
    return made_by(task, detector) if (task, detector) in BASE_CALIBRATED else RESULTS


def calibrated(task, detector=None):
    """The files of calibrated_by's root."""
    return Outputs(calibrated_by(task, detector))


def calibration_reference_inputs(w):
    """The task's splits, the pool (a built task: signatures and rows in no split), the library
    source's table (its files the source read are passed over) and other reference sources'
    normalized tables."""
    ref = calibration_spec()["reference"]
    out = {s: DATA_OUT.split(w.task, s) for s in ("train", "validation", "test")}
    if task(w).mode == "build":
        out["pool"] = DATA_OUT.pool()
    if ref["library"]:
        out["library"] = DATA_OUT.source(ref["library"])
    for name in ref["sources"]:
        out[f"source_{name}"] = OUT.normalized("sources", name)
    return out


def calibration_reference_spec(w):
    """What the reference job reads of the config: calibration.reference, the dataset's dedup,
    minhash and filter settings, and the library source's own entry (its pins: a changed pin
    reruns it)."""
    ref = dict(calibration_spec()["reference"])
    data = dataset_spec()
    ref["dedup"] = {**data.get("minhash", {}), **data.get("dedup", {})}
    ref["minhash"] = data.get("minhash", {})
    ref["normalize"] = config_slice(data, ["filters", "minhash", "langid_min_margin"])
    if ref["library"]:
        ref["library_spec"] = source_spec(ref["library"])
    return as_arg(ref)


def calibration_reference_args(w, input):
    keys = input.keys()
    args = [f"--pool {input.pool}"] if "pool" in keys else []
    args += [f"--library {calibration_spec()['reference']['library']} {input.library}"] if "library" in keys else []
    args += [f"--source {k[len('source_'):]} {input[k]}" for k in keys if k.startswith("source_")]
    return " ".join(args)


def calibration_settings(w):
    spec = calibration_spec()
    settings = {**config_slice(spec, ["fprs", "held_out", "floor", "view_fpr", "adapted"]), "seed": SEED}
    if spec.get("fpr_confidence") is not None:  # only where set: a run calibrated on average reruns nothing
        settings["fpr_confidence"] = spec["fpr_confidence"]
    return as_arg(settings)


def calibration_views():
    """Each calibrated (task, detector)'s view on its test split, which the report shows."""
    return [calibrated(t, d).calibration_view(t, d) for t, d in PLAN.calibration_pairs()]


def calibration_reports():
    return [calibrated(t).reference_report(t) for t in PLAN.calibrated_tasks()]


def targets():
    """Everything `snakemake` with no target makes, as the plan has it."""
    out = [OUT.tab("table4", "tex"), OUT.report(), OUT.paper_results()]
    if config.get("judging", {}).get("judges"):
        out.append(OUT.tab("table8", "tex"))
    if not BASE:  # a run on a base reads these stages' outputs from the base
        out += [OUT.generation_summary("json")] if PLAN.generation else []
        out += [OUT.generator_card("md", m) for m in PLAN.generators]
        out += [OUT.execution_summary()] if PLAN.executions else []
        out += [OUT.dataset_card()] if PLAN.dataset else []
    if set(PLAN.ood_tasks()) - set(PLAN.loco_tasks()):
        out += [OUT.tab("ood", "md"), OUT.tab("ood", "tex")]
    out += [OUT.tab("loco", x) for x in ("md", "tex", "json")] if PLAN.loco_tasks() else []
    return out


def loco_pairs():
    """(fold, detector) of the leave-one-collection-out table: the detectors that give scores."""
    return [(t, d) for t, d in PLAN.pairs if t in PLAN.loco_tasks() and d not in PLAN.judge_detectors]


# A dry run for SLURM says where each GPU job goes (the plugin picks partitions when it submits)
# and whether the jobs can read the release (and the Hub or local sources) from the nodes.
if DRY_RUN and not workflow.remote_exec:
    from aicd.site_profile import gpu_partition_note, input_access_note, input_locations, slurm_partitions
    from aicd.sources.loader import source_parts

    _on_slurm, _partitions = slurm_partitions(sys.argv, os.environ)
    if _on_slurm and PLAN.gpu_jobs():
        NOTES.append(gpu_partition_note(PLAN.gpu_jobs(), _partitions))
    if _on_slurm and not BASE:
        NOTES.extend(input_access_note(input_locations(config, PLAN, source_parts), os.environ))
