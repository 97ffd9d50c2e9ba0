# What the rules share: validation (defaults filled in), the plan (aicd.plan: which jobs exist,
# a pure function of the config, the model registry and the one recorded resolution of the
# machine, aicd.resolve), the run's results root R (config `results`, aicd.runs), wildcard
# constraints, the input functions that turn the plan into paths under R, and resource
# helpers. Rule files hold rules only.

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

from aicd.config import stage_on, validate_config
from aicd.errors import AicdError
from aicd.fingerprint import code_version
from aicd.generate.registry import check_config_models, endpoint_hint, load_registry
from aicd import runs
from aicd.plan import SPLITS, Plan
from aicd.resolve import check_pinned_inputs, resolve
from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag
from aicd.sources import pinned

min_version("9.0")

try:
    validate_config(config, os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml"))
    R = config["results"].rstrip("/")  # this run's results root (aicd.runs: one run per root)
    RUN = runs.identity(workflow.configfiles, workflow.basedir)
    RUN_NOTES = [] if workflow.remote_exec else [n for n in [runs.check(R, RUN)] if n]
    REGISTRY = config["registry"] if isinstance(config["registry"], list) else [config["registry"]]
    MODELS = load_registry([repo_path(p) for p in REGISTRY])
    check_config_models(config, MODELS)
    check_pinned_inputs(config, pinned.pins_for)
    RESOLVED = resolve(
        config, MODELS, R, remote=workflow.remote_exec, notes=RUN_NOTES, record=not workflow.output_settings.dryrun
    )
    PLAN = Plan.from_config(config, MODELS, RESOLVED)
except AicdError as err:
    raise WorkflowError(str(err)) from None

# Files that aggregate rules read, named here rather than through rules.X.output: an input
# given as a rule reference makes snakemake hash every list-valued input of that rule once per
# file in it (quadratic in the number of scores; BENCHMARKS.md, planning).
INPUTS_JSON = f"{R}/inputs.json"
SUBSET_TABLE_FILES = [f"{R}/tables/table{n}.{ext}" for n in (5, 6, 7) for ext in ("tex", "md")]
PAPER_FIGURES_INDEX = f"{R}/figures/paper_figures.json"
CODE_VERSION = code_version(workflow.basedir)  # a new commit rewrites inputs.json and what names it


def guard(rule):
    """The start of every heavy rule's command: the job's memory is watched against its mem_mb
    (aicd.memguard), and past it the job stops with a line naming the resource to raise."""
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
# mem_mb grows with the job's input (input.size_mb is known when the job is scheduled) and
# with the attempt: a job killed for memory (SLURM's OUT_OF_MEMORY) is retried with
# `retries:` from the profile at 2x, 3x... Threads are the rule's own; snakemake lowers them
# to --cores locally, and --set-threads / --max-threads in a profile change them per site.


def mem_mb(base, per_input_mb=0):
    def _mem_mb(wildcards, input, attempt):
        return int((base + per_input_mb * input.size_mb) * attempt)

    return _mem_mb


def detector(w):
    return PLAN.detectors[w.detector]


def detector_threads(w):
    return detector(w).threads


def detector_mem_mb():
    """The kind's (or the config entry's) mem_mb, times the attempt. Not scaled by the input:
    reading input.size_mb costs milliseconds per job at planning (BENCHMARKS.md, planning);
    at the paper's scale the config's resources.mem_mb states it (BENCHMARKS.md, paper scale)."""
    return lambda w, attempt: int(detector(w).mem_mb * attempt)


def detector_runtime(default):
    """The config entry's runtime (minutes), else `default`, times the attempt."""
    return lambda w, attempt: (detector(w).runtime or default) * attempt


def detector_env(w):
    return env(detector(w).environment)


def feature_threads(w):
    from aicd.features.registry import FEATURIZERS

    return FEATURIZERS[config["features"][w.featureset]["kind"]].max_threads


def feature_env(w):
    from aicd.features.registry import FEATURIZERS
    from aicd.plan import feature_environment

    return env(feature_environment(PLAN.features, w.featureset, FEATURIZERS))


# ---------------------------------------------------------------- sources and tasks


def source_spec(name):
    """The source's config entry, with the pinned entries (version, sha256) of its gathered
    `pinned:NAME` roots, so changing a pin reruns it."""
    return pinned.with_pins(config["sources"][name])


def task(w):
    return PLAN.tasks[w.task]


def task_source(w):
    if task(w).mode == "build":
        return {"source": f"{R}/dataset/pool.parquet"}
    return {"source": f"{R}/sources/{task(w).source}.parquet"} if task(w).mode == "derive" else {}


def task_spec(w):
    return as_arg(PLAN.split_spec(w.task))


def task_source_arg(w, input):
    if "source" not in input.keys():
        return ""
    return f"--{'pool' if task(w).mode == 'build' else 'source'} {input.source}"


def tables(w):
    return expand(f"{R}/tasks/{w.task}/{{split}}.parquet", split=SPLITS)


# ---------------------------------------------------------------- features and detectors


def feature_inputs(w):
    spec = config["features"][w.featureset]
    if spec["kind"] == "concat":  # the parts' matrices, then their fitted featurizers
        return [
            f"{R}/features/{w.task}/{p}/{name}" for name in ("features.npz", "featurizer.skops") for p in spec["parts"]
        ]
    return tables(w)


def feature_args(w, input):
    if config["features"][w.featureset]["kind"] == "concat":
        half = len(input) // 2
        return "--parts " + " ".join(input[:half]) + " --part-models " + " ".join(input[half:])
    return f"--tasks-dir {parent(input[0])}"


def detect_inputs(w):
    inputs = {"tables": tables(w)}
    featureset = detector(w).features
    if featureset:
        inputs["features"] = f"{R}/features/{w.task}/{featureset}/features.npz"
        # stored in the fitted model, so it applies to raw code (aicd detect, extra test sets)
        inputs["featurizer"] = f"{R}/features/{w.task}/{featureset}/featurizer.skops"
    for name, path in detector(w).prepared.items():
        inputs[f"prepared_{name}"] = f"{R}/{path}"
    return inputs


def detect_args(w, input):
    args = [f"--features {input.features} --featurizer {input.featurizer}"] if "features" in input.keys() else []
    prepared = [f"{k[len('prepared_'):]}={v}" for k, v in input.items() if k.startswith("prepared_")]
    if prepared:
        args.append("--prepared " + " ".join(prepared))
    return " ".join(args)


def detector_spec(w):
    return as_arg(config_slice(config["detectors"][w.detector], ["kind", "features", "params", "training"]))


def lm_spec(w):
    return {k: v for k, v in PLAN.lms[w.detector].items() if k != "task"}


# ---------------------------------------------------------------- LLM stages and the sandbox


def model_arg(name):
    return as_arg(MODELS[name])


def served_here(name):
    """A registry model this machine serves for its jobs (serve:, no api_base): they run the server."""
    return bool(MODELS[name].get("serve")) and not MODELS[name].get("api_base")


def llm_threads(name):
    return int(MODELS[name]["serve"].get("threads", 1)) if served_here(name) else 1


def llm_mem_mb(name, base):
    """A job that serves its model holds the model and the server too (~2 GB for SmolLM2)."""
    extra = 3000 if served_here(name) else 0
    return lambda w, attempt: (base + extra) * attempt


def generator_card_scored(model):
    """{where: {detector: {predictions, test}}}: each fitted detector on the model's rows of a
    pool task's test split (its code entered the pool), and on each test set of its generations."""
    out = {}
    if model in PLAN.pool_generators and PLAN.dataset and PLAN.dataset.get("generations"):
        for t, d in PLAN.pairs:
            if PLAN.tasks[t].mode == "build":
                where = f"{PLAN.tasks[t].title}: its rows of the test split"
                out.setdefault(where, {})[d] = {
                    "predictions": f"{R}/predictions/{t}/{d}.parquet",
                    "test": f"{R}/tasks/{t}/test.parquet",
                }
    for t, s, d in PLAN.test_set_plan():
        if PLAN.tasks[t].test_sets[s].get("generation") == model:
            out.setdefault(f"{PLAN.tasks[t].title}: test set {s}", {})[d] = {
                "predictions": f"{R}/predictions/{t}/test_sets/{s}/{d}.parquet",
                "test": f"{R}/tasks/{t}/test_sets/{s}.parquet",
            }
    return out


def generator_card_inputs(w):
    inputs = {
        "generations": f"{R}/generations/{w.model}.parquet",
        "report": f"{R}/generations/{w.model}.report.json",
        "scored": sorted(
            {p for per in generator_card_scored(w.model).values() for c in per.values() for p in c.values()}
        ),
    }
    if w.model in PLAN.executions:
        inputs["execution"] = f"{R}/execution/{w.model}.report.json"
    if w.model in PLAN.pool_generators and PLAN.dataset and PLAN.dataset.get("generations"):
        inputs["normalized"] = f"{R}/dataset/normalized/generations/{w.model}.report.json"
    return inputs


def generator_card_args(w, input):
    args = [f"--execution {input.execution}"] if "execution" in input.keys() else []
    args += [f"--normalized {input.normalized}"] if "normalized" in input.keys() else []
    return " ".join(args)


def judge_sample_args():
    judging = config["judging"]
    args = [f"--max-rows {judging['max_rows']}"] if judging.get("max_rows") else []
    args += [f"--max-code-chars {judging['max_code_chars']}"] if judging.get("max_code_chars") else []
    return " ".join(args)


def generation_sources(protocols):
    """The source tables the protocols prompt from, by name."""
    return {
        name: f"{R}/sources/{name}.parquet" for name in sorted({s for p in protocols.values() for s in p["sources"]})
    }


def source_args(paths):
    return " ".join(f"--source {shlex.quote(f'{name}={path}')}" for name, path in paths.items())


def execution_input(w):
    kind = "generations" if w.name in PLAN.generators else "sources"
    return f"{R}/{kind}/{w.name}.parquet"


def sandbox_base():
    return LOCAL_BASE if config["execution"]["base"] == "debootstrap" else config["execution"]["base_image"]


# ---------------------------------------------------------------- scores, reports and the paper


def all_scores():
    return [f"{R}/scores/{t}/{d}.json" for t, d in PLAN.pairs]


def score_sample_flag(w):
    # LLM judges label a stratified sample of the test split, not all of it; so do zero-shot
    # detectors over a feature set that scored a sample (lm_stats rows)
    sampled = w.detector in PLAN.detectors and PLAN.detectors[w.detector].samples_test
    return "--sample" if w.detector in PLAN.judge_detectors or sampled else ""


def reference_predictions(w):
    # a perturbed test set is scored against the unperturbed predictions too: the labels that flip
    perturbed = "perturbation" in task(w).test_sets[w.test_set]
    return [f"{R}/predictions/{w.task}/{w.detector}.parquet"] if perturbed else []


def validation_scores(w):
    # what thresholds at a fixed FPR are set on; LLM judges give labels only
    return [] if w.detector in PLAN.judge_detectors else [f"{R}/validation_scores/{w.task}/{w.detector}.parquet"]


def zero_shot_reports():
    return [f"{R}/models/{t}/{d}.json" for t, d in PLAN.pairs if PLAN.detectors[d].zero_shot]


def analyses_inputs(w):
    chosen = PLAN.analyses(w.task)
    feats = lambda d: f"{R}/features/{w.task}/{PLAN.detectors[d].features}"  # noqa: E731
    return {
        "test": f"{R}/tasks/{w.task}/test.parquet",
        "predictions": [f"{R}/predictions/{w.task}/{d}.parquet" for d in chosen["trained"]],
        "coefficients": [
            p
            for d in chosen["coefficients"]
            for p in (f"{R}/models/{w.task}/{d}.skops", f"{feats(d)}/featurizer.skops")
        ],
        "shap": [p for d in chosen["shap"] for p in (f"{R}/models/{w.task}/{d}.skops", f"{feats(d)}/features.npz")],
    }


def analyses_args(w, input):
    args = [f"--svm {input.coefficients[0]} {input.coefficients[1]}"] if input.coefficients else []
    shap = list(input.shap)
    for i in range(0, len(shap), 2):
        args.append(f"--shap {os.path.splitext(os.path.basename(shap[i]))[0]} {shap[i]} {shap[i + 1]}")
    if input.predictions:
        args.append(f"--predictions {' '.join(input.predictions)}")
    return " ".join(args)


def test_set_source(w):
    """A test set's rows: a source's table, or a registry model's generations."""
    spec = task(w).test_sets[w.test_set]
    if "generation" in spec:
        return f"{R}/generations/{spec['generation']}.parquet"
    return f"{R}/sources/{spec['source']}.parquet"


def generation_tables(w):
    """Generator tables the pool reads: inputs of the build, fingerprinted like the sources."""
    if PLAN.dataset and PLAN.dataset.get("generations"):
        return [f"{R}/generations/{m}.parquet" for m in PLAN.pool_generators]
    return []


def dataset_inputs():
    """results/dataset/normalized/{kind}/{name}.parquet for every table in the pool."""
    if not PLAN.dataset:
        return []
    names = [("sources", s) for s in PLAN.dataset_sources]
    names += [("generations", m) for m in (PLAN.pool_generators if PLAN.dataset.get("generations") else [])]
    return [f"{R}/dataset/normalized/{kind}/{name}.parquet" for kind, name in names]


def targets():
    """Everything `snakemake` with no target makes, as the plan has it."""
    out = [f"{R}/tables/table4.tex", f"{R}/report.md", f"{R}/paper_results.md"]
    if config.get("judging", {}).get("judges"):
        out.append(f"{R}/tables/table8.tex")
    if PLAN.generation:
        out.append(f"{R}/generations/report.json")
    out += [f"{R}/generators/{m}.md" for m in PLAN.generators]
    out += [f"{R}/execution/report.md"] if PLAN.executions else []
    out += [f"{R}/dataset/README.md"] if PLAN.dataset else []
    out += [f"{R}/tables/ood.md", f"{R}/tables/ood.tex"] if PLAN.ood_tasks() else []
    return out
