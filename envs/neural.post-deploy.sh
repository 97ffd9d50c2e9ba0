#!/usr/bin/env bash
# Runs once in the new environment after snakemake creates it (--sdm conda): installs this
# package (aicd) from the checkout whose Snakefile is running. AICD_REPO is set by
# workflow/rules/common.smk; the dependencies are the environment's own (--no-deps).
set -euo pipefail
: "${AICD_REPO:?AICD_REPO is not set: run snakemake on this repository's Snakefile}"
python -m pip install --no-deps --no-build-isolation "$AICD_REPO"
