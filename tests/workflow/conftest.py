"""The demo slices that several workflow test modules read: each run once per session."""

import pytest
from components import require

from workflow.test_demo_workflow import CODEAID, run, write_override


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory, repo, trial_path):
    """The real snakemake over a 500-row slice of the demo in a temporary directory."""
    require(CODEAID.is_file(), f"demo test: the CodeAid interview answers at {CODEAID}",
            "they ship in ../shared/data beside the repository (CI has them), or set AICD_CODEAID_DATA")
    workdir = tmp_path_factory.mktemp("demo")
    write_override(workdir, trial_path)
    return workdir, run(repo, workdir)


@pytest.fixture(scope="session")
def slice_run(tmp_path_factory, repo, trial_path):
    """The classical-detector slice (slice_config) run locally once: the reproducibility test's
    first machine and the SLURM test's local reference. Returns (workdir, the run, config)."""
    from aicd.sources import pinned
    from workflow.test_reproducible_inputs import slice_config, snakemake

    manifest = pinned.load_manifest()
    missing = [e["file"] for e in manifest.values() if not (pinned.cache_dir() / e["file"]).is_file()]
    require(not missing, f"pinned inputs {missing} in {pinned.cache_dir()}", "make pinned-inputs (make test does it)")
    config = slice_config(repo, trial_path)
    workdir = tmp_path_factory.mktemp("slice")
    return workdir, snakemake(repo, workdir, config, {}), config
