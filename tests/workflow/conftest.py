"""The demo slices that several workflow test modules read: each run once per session.

The classical slice runs twice: locally (machine A) and on a real single-node SLURM cluster
from another folder with another cache holding extra files (machine B). The SLURM tests read
B as the cluster run, the reproducibility tests as the second machine; without SLURM (outside
CI) B runs locally and the SLURM tests skip."""

import os
import shutil

import pytest
from components import in_ci, require

from workflow.test_demo_workflow import CODEAID, run, write_override


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory, repo, trial_path):
    """The real snakemake over a 500-row slice of the demo in a temporary directory."""
    require(CODEAID.is_file(), f"demo test: the CodeAid interview answers at {CODEAID}",
            "they ship in ../shared/data beside the repository (CI has them), or set AICD_CODEAID_DATA")
    workdir = tmp_path_factory.mktemp("demo")
    write_override(workdir, trial_path)
    return workdir, run(repo, workdir)


def check_pinned_inputs() -> None:
    from aicd.sources import pinned

    manifest = pinned.load_manifest()
    missing = [e["file"] for e in manifest.values() if not (pinned.cache_dir() / e["file"]).is_file()]
    require(not missing, f"pinned inputs {missing} in {pinned.cache_dir()}", "make pinned-inputs (make test does it)")


@pytest.fixture(scope="session")
def slice_run(tmp_path_factory, repo, trial_path):
    """The classical-detector slice (slice_config) run locally once: the reproducibility test's
    first machine and the SLURM test's local reference. Returns (workdir, the run, config)."""
    from workflow.test_reproducible_inputs import slice_config, snakemake

    check_pinned_inputs()
    config = slice_config(repo, trial_path)
    workdir = tmp_path_factory.mktemp("slice")
    return workdir, snakemake(repo, workdir, config, {}), config


def machine_b(workdir) -> dict:
    """A second machine in `workdir`: its own cache (the pinned files plus extra archives),
    installed-looking source trees where an older config looked (a Go standard library, sdists)
    and its own temporary folder (on the cluster run, the SLURM test's jobs killed for memory
    leave their snakemake's temporary folder behind: in the test's folder, not the machine's
    /tmp). Returns the environment its runs need."""
    from aicd.sources import pinned

    cache = workdir / "cache"
    (cache / "pinned").mkdir(parents=True)
    for entry in pinned.load_manifest().values():
        shutil.copy(pinned.cache_dir() / entry["file"], cache / "pinned" / entry["file"])
    go = "package extra\n\nfunc Extra() int {\n" + "\n".join(f"\tx{i} := {i}\n\t_ = x{i}" for i in range(8)) + "\n\treturn 1\n}\n"
    for root in (cache / "sdists" / "extra-1.0" / "src", workdir / "usr" / "lib" / "go" / "src" / "extra"):
        root.mkdir(parents=True)
        (root / "extra.go").write_text(go)
    shutil.make_archive(str(cache / "pinned" / "cobra-extra"), "gztar", cache / "sdists")
    (workdir / "tmp").mkdir()
    return {"AICD_CACHE": str(cache), "TMPDIR": str(workdir / "tmp")}


@pytest.fixture(scope="session")
def slice_run_b(slice_run, tmp_path_factory, repo):
    """The same slice on machine B (machine_b), run on a real SLURM cluster where one can run
    here (always under CI), else locally. Returns a dict: workdir, env, on_slurm, and for a
    cluster run the runs and the squeue snapshots the SLURM tests read."""
    from workflow.slurm_cluster import Cluster, missing
    from workflow.test_reproducible_inputs import snakemake
    from workflow.test_slurm import run_on_slurm

    _, _, config = slice_run
    workdir = tmp_path_factory.mktemp("machine_b")
    env = machine_b(workdir)
    why = missing()
    if why and not in_ci():
        yield {"workdir": workdir, "env": env, "on_slurm": False, "why": why,
               "proc": snakemake(repo, workdir, config, env)}
        return
    require(not why, f"SLURM ({why})", "apt-get install slurm-wlm munge (Debian); the test starts the daemons")
    cluster = Cluster(tmp_path_factory.mktemp("slurm"), memory_mb=8000, cpus=os.cpu_count() or 2)
    cluster.start()
    try:
        yield {"workdir": workdir, "env": env, "on_slurm": True, "cluster": cluster,
               **run_on_slurm(repo, workdir, config, env, cluster)}
    finally:
        cluster.stop()
