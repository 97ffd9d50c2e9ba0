"""The demo slice that several workflow test modules read: run once per session."""

import pytest

from workflow.test_demo_workflow import CODEAID, run, write_override


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory, repo, trial_path):
    """The real snakemake over a 500-row slice of the demo in a temporary directory."""
    if not CODEAID.is_file():
        pytest.skip(f"demo test: the CodeAid interview answers are not at {CODEAID}; they ship in ../shared/data "
                    "beside the repository (CI has them), or set AICD_CODEAID_DATA")
    workdir = tmp_path_factory.mktemp("demo")
    write_override(workdir, trial_path)
    return workdir, run(repo, workdir)
