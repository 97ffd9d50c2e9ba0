# AICD Bench reproduction: entry point.
#
#   snakemake --cores 16                                   full reproduction (config/config.yaml)
#   snakemake --cores 2 --configfile config/demo.yaml      demo on the shared trial data
#   snakemake --workflow-profile profiles/slurm --profile SITE   on a SLURM cluster (SITE: made by
#                                                          `aicd site-profile DIR`; docs/cluster.md)
#
# Rules are thin: each names its inputs/outputs, threads, resources, log and benchmark and
# calls one `python -m aicd.<stage>`. Which jobs exist is aicd.plan's (workflow/rules/common.smk).
# Local settings: profiles/default, which snakemake finds beside this file by itself.

import os
import sys
import warnings

# Resources that grow with input.size_mb make snakemake 9 leave a coroutine unawaited while it
# builds the DAG; harmless (the size is taken when the job is scheduled), reported upstream as
# snakemake/snakemake#4280. Silenced by its exact text, so that a clean run prints no warning.
warnings.filterwarnings(
    "ignore", message=r"coroutine 'InputFiles\._predicated_size_files\.<locals>\.sizes' was never awaited"
)

# The default config applies only when no --configfile is given (snakemake would
# otherwise merge the two and the demo would inherit the full run's tasks).
if not workflow.overwrite_configfiles:

    configfile: os.path.join(workflow.basedir, "config", "config.yaml")


# The stages run `python -m aicd.<stage>`. Without --sdm conda/apptainer, `python` is the
# interpreter running snakemake (the project's virtualenv, where aicd is pip-installed): its
# folder goes first on PATH, which jobs inherit (sbatch exports the environment too).
# envs/*.post-deploy.sh install this checkout's aicd into each conda environment (AICD_REPO).
envvars:
    "PATH",


os.environ.update(AICD_REPO=workflow.basedir)
if not workflow.deployment_settings.deployment_method:
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")


include: "workflow/rules/utils.smk"
include: "workflow/rules/common.smk"
include: "workflow/rules/resources.smk"
include: "workflow/rules/inputs.smk"


# What the plan leaves out on this machine, and what the run's root and record say, once where
# snakemake is started.
if not workflow.remote_exec:
    for _note in NOTES:
        print(_note, file=sys.stderr)


onstart:
    # The root belongs to this run from its first job on (a dry run claims nothing); its config
    # is recorded for runs built on it, and a run on a base records the base's fingerprint.
    if not workflow.remote_exec:
        runs.claim(RESULTS, RUN, config, {"root": BASE.root, **BASE.fingerprint} if BASE else None)


# `snakemake --report report.html`: Table 4 and the figures, with captions (workflow/report/).
report: "workflow/report/workflow.rst"


# With --sdm apptainer every job runs in the workflow image (containers/workflow/Dockerfile).
container: config["container"]


# The stages in pipeline order: a stage's jobs read what the stages above it make (a summary
# such as the dataset card may also count a later stage's files).
include: "workflow/rules/sources.smk"
include: "workflow/rules/generation.smk"
include: "workflow/rules/fingerprint.smk"
include: "workflow/rules/execution.smk"
include: "workflow/rules/dataset.smk"
include: "workflow/rules/splits.smk"
include: "workflow/rules/lm.smk"
include: "workflow/rules/features.smk"
include: "workflow/rules/detectors.smk"
include: "workflow/rules/scoring.smk"
include: "workflow/rules/test_sets.smk"
include: "workflow/rules/judging.smk"
include: "workflow/rules/ood.smk"
include: "workflow/rules/paper.smk"
include: "workflow/rules/report.smk"


localrules:
    all,


rule all:
    default_target: True
    input:
        targets(),


onsuccess:
    # Shortfalls a source reported (a language with fewer rows than asked for, inputs read
    # from this machine rather than pinned) are repeated here, where they are seen.
    _inputs = INPUTS_JSON
    print(f"Results: {OUT.report()}", file=sys.stderr)
    if os.path.isfile(_inputs):
        import json as _json

        with open(_inputs) as _fh:
            _info = _json.load(_fh)
        for _line in _info.get("warnings", []):
            print(f"warning: {_line}", file=sys.stderr)
        print(
            f"Inputs {_info['fingerprint']}, code {_info.get('code')} ({INPUTS_JSON}; "
            "compare two runs with `aicd verify RESULTS_A RESULTS_B`)",
            file=sys.stderr,
        )
