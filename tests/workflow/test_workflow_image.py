"""The workflow image (containers/workflow/Dockerfile, what `--sdm apptainer` runs on a
cluster) built with the real Docker daemon, and a small slice of the demo run inside it with
`docker run`: the image alone (package, dependencies, Snakefile, config) runs the workflow.

Opt-in (AICD_WORKFLOW_IMAGE_TEST=1): the first build installs the core dependencies from
PyPI into the image, about 10-20 minutes on this 2-core vfs machine (DEVELOPERS.md). The image
is removed afterwards: on vfs it holds ~2 GB of disk."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from components import require

from workflow.test_reproducible_inputs import slice_config

pytestmark = pytest.mark.workflow
TAG = "aicd-workflow:test"


def docker(*args: str, timeout: int = 60, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, **kw)


@pytest.fixture(scope="module")
def image(repo):
    from aicd.sandbox.images import LOCAL_BASE
    from aicd.sandbox.pool import docker_available

    if os.environ.get("AICD_WORKFLOW_IMAGE_TEST") != "1":
        pytest.skip("workflow image test: opt-in (AICD_WORKFLOW_IMAGE_TEST=1; a build takes 3.5-20 min here)")
    require(docker_available(), "a Docker daemon", "apt-get install docker.io and start dockerd")
    require(docker("image", "inspect", LOCAL_BASE).returncode == 0, f"the base image {LOCAL_BASE}",
            "python -m aicd.sandbox images (make test does)")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=repo, capture_output=True,
                            check=True).stdout.split(b"\0")
    files = b"\0".join(f for f in listed if f and (repo / f.decode()).exists())  # not files deleted but not committed
    tar = subprocess.run(["tar", "--null", "-cf", "-", "-T", "-"], cwd=repo, input=files, capture_output=True,
                         check=True).stdout
    # the certificates of a TLS-inspecting proxy on the way to PyPI, where this host has one
    cas = "".join(p.read_text() for p in sorted(Path("/usr/local/share/ca-certificates").glob("*.crt")))
    # The image is ~2 GB on vfs: none is left behind, from this run or an earlier one.
    docker("rmi", "-f", TAG, timeout=600)
    try:
        proc = subprocess.run(["docker", "build", "--force-rm", "-q", "-t", TAG, "-f", "containers/workflow/Dockerfile",
                               "--build-arg", f"EXTRA_CA_CERTS={cas}", "-"], input=tar, capture_output=True,
                              timeout=1800)
        assert proc.returncode == 0, proc.stderr.decode()[-3000:]
        yield TAG
    finally:
        docker("rmi", "-f", TAG, timeout=600)


def test_a_demo_slice_runs_inside_the_image(image, repo, trial_path, tmp_path):
    from aicd.sources import pinned

    config = slice_config(repo, trial_path)
    config["sources"]["trial"]["files"] = "/data/trial.parquet"
    config["detectors"] = {"majority": config["detectors"]["majority"]}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    mounts = ["-v", f"{tmp_path}:/work", "-v", f"{trial_path}:/data/trial.parquet:ro",
              "-v", f"{pinned.cache_dir()}:/root/.cache/aicd/pinned:ro"]
    target = "results/scores/binary/majority.json"
    proc = docker("run", "--rm", *mounts, image, "snakemake", "-s", "/opt/aicd-src/Snakefile", "--cores", "2",
                  target, "--configfile", "/work/config.yaml", timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    scores = yaml.safe_load((tmp_path / target).read_text())
    assert scores["n"] > 0 and 0 <= scores["macro_f1"] <= 100
