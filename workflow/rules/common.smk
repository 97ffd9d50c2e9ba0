# The run's setup, shared by the other rule files. Validation (defaults filled in), the plan
# (aicd.plan: which jobs exist, a pure function of the config, the model registry and the one
# recorded resolution of the machine, aicd.resolve), the run's results root RESULTS (config
# `results`, aicd.records.runs), the files its jobs read and write (FILES, aicd.plan.files), the
# wildcard constraints and the seed. Resources: resources.smk; input functions: inputs.smk. Rule
# files hold rules only.

from snakemake.utils import min_version

from aicd.common.defaults import schema_default
from aicd.common.errors import AicdError
from aicd.config import apply_defaults, explain_error, stage_on, validate_config
from aicd.generate.registry import (
    check_config_models,
    endpoint_hint,
    job_entry,
    load_registry,
    with_max_tokens,
    with_serving,
)
from aicd.llm.engines import server_mem_mb
from aicd.outputs import Outputs
from aicd.plan import SPLITS, Plan
from aicd.plan.files import RunFiles
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
# FILES (aicd.plan.files.RunFiles) builds every rule's inputs from the plan, with the base's root
# where a run on a base reuses what the base made (a pair's fit, a feature set, analyses and
# calibrations).
OUT = Outputs(RESULTS)
DATA_OUT = Outputs(DATA)
# A run on a base has the base's calibration settings (it may change detectors and feature sets
# only): the base's reference tables and the calibrations of the pairs it made are read from there.
BASE_CALIBRATED = set(Plan.from_config(BASE.config, MODELS, BASE.resolved).calibration_pairs()) if BASE else set()
FILES = RunFiles(PLAN, config, RESULTS, DATA, REUSE, BASE_CALIBRATED)


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
