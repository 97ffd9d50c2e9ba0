# AICD Bench reproduction: entry point.
#
#   snakemake --cores 16                                   full reproduction (config/config.yaml)
#   snakemake --cores 2 --configfile config/demo.yaml      demo on the shared trial data
#
# Rules are thin: each names its inputs/outputs and calls one `python -m aicd.<stage>`.

import os

# The default config applies only when no --configfile is given (snakemake would
# otherwise merge the two and the demo would inherit the full run's tasks).
if not workflow.overwrite_configfiles:
    configfile: os.path.join(workflow.basedir, "config", "config.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/sources.smk"
include: "workflow/rules/splits.smk"
include: "workflow/rules/features.smk"
include: "workflow/rules/detectors.smk"
include: "workflow/rules/scoring.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/llm.smk"
include: "workflow/rules/execution.smk"
include: "workflow/rules/dataset.smk"


rule all:
    input:
        rules.report.output,
        llm_targets(),
        execution_targets(),
        dataset_targets(),
    default_target: True
