"""The workflow on a real single-node SLURM cluster (munged, slurmctld, slurmd; see
slurm_cluster.py and DEVELOPERS.md) through snakemake-executor-plugin-slurm, the workflow's
profiles/slurm and a site profile made as docs/cluster.md says (`aicd site-profile DIR`, its
partitions file edited for this cluster), on a small classical-detector slice of the demo, run
from the reproducibility tests' second machine (tests/workflow/conftest.py: slice_run_b).

Checks: every job that is not a localrule went through sbatch (a SLURM job id per job in
snakemake's log, and the same ids in squeue); the job of a detector that asks a GPU went to the
GPU partition by itself and every other job to the CPU one; Table 4 is byte-identical to a local
run of the same slice; a job over its mem_mb is killed by SLURM and resubmitted with more memory
(attempt 2); a second run submits nothing. The cluster is stopped afterwards."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from components import require

from workflow.slurm_cluster import GPU_PARTITION, PARTITION, Cluster

pytestmark = pytest.mark.workflow
SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+)")
# attempt 1 of every `source` job gets 150 MB: the job step (snakemake --mode remote and the
# stage it starts) needs more, so slurmstepd kills it; attempt 2 gets 3000 MB and completes.
MEM_TEST = "source:mem_mb=150 if attempt == 1 else 3000"
GPU_DETECTOR = "majority"  # asks one GPU on the cluster run (a dummy: it runs on the CPU all the same)


def snakemake(repo: Path, workdir: Path, env_extra: dict, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"), "--directory", str(workdir),
           *args, "--configfile", str(workdir / "config.yaml")]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **env_extra})
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)


def squeue_all() -> dict[str, tuple[str, str, str, str]]:
    """SLURM job id -> (state, comment (rule and wildcards), memory asked, partition), finished
    jobs included."""
    out = subprocess.run(["squeue", "--states=all", "-h", "-o", "%i|%T|%k|%m|%P"], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    jobs = {}
    for line in out.splitlines():
        jobid, state, comment, mem, partition = line.split("|", 4)
        jobs[jobid] = (state, comment, mem, partition)
    return jobs


def site_profile(workdir: Path) -> Path:
    """The site profile docs/cluster.md has one make (`aicd site-profile DIR`), edited for this
    cluster: its two partitions, and job states from squeue (no accounting here)."""
    site = workdir / "site"
    made = subprocess.run([sys.executable, "-c", "import sys; from aicd.cli import main; sys.exit(main())",
                           "site-profile", str(site)], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    (site / "partitions.yaml").write_text(yaml.safe_dump({"partitions": {
        PARTITION: {"max_threads": 2, "max_mem_mb": 8000},
        GPU_PARTITION: {"max_threads": 2, "max_mem_mb": 8000, "max_gpu": 1}}}))
    config = yaml.safe_load((site / "config.yaml").read_text())
    config.update({"slurm-status-command": "squeue", "slurm-init-seconds-before-status-checks": 3})
    (site / "config.yaml").write_text(yaml.safe_dump(config))
    return site


def run_on_slurm(repo: Path, workdir: Path, config: dict, env: dict, cluster: Cluster) -> dict:
    """The slice run twice through profiles/slurm and a site profile on `cluster` (tests/workflow/conftest.py's
    slice_run_b, which is also the reproducibility tests' second machine): the runs and the squeue
    snapshots before, after the first and after the second."""
    config = {**config, "detectors": {**config["detectors"], GPU_DETECTOR: {
        **config["detectors"][GPU_DETECTOR], "resources": {"gpu": 1}}}}
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    slurm_args = ("--workflow-profile", str(repo / "profiles" / "slurm"), "--profile", str(site_profile(workdir)),
                  "--jobs", "2", "--max-threads", "2", "--set-resources", MEM_TEST)
    plan = snakemake(repo, workdir, env, *slurm_args, "-n")
    before = set(squeue_all())
    proc = snakemake(repo, workdir, env, *slurm_args)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}\n" + \
        (Path(cluster.state) / "slurmctld.log").read_text()[-2000:]
    after_first = squeue_all()
    proc_again = snakemake(repo, workdir, env, *slurm_args)
    return {"proc": proc, "proc_again": proc_again, "before": before, "after_first": after_first,
                "after_second": squeue_all(), "slurm_args": slurm_args, "plan": plan}


@pytest.fixture(scope="module")
def runs(slice_run, slice_run_b):
    require(slice_run_b["on_slurm"], f"SLURM ({slice_run_b.get('why')})",
            "apt-get install slurm-wlm munge (Debian); the test starts the daemons")
    return {"local": slice_run[0], "remote": slice_run_b["workdir"], **slice_run_b}


@pytest.fixture(scope="module")
def cluster(runs):
    return runs["cluster"]


def test_every_non_local_job_went_through_sbatch(runs, repo):
    log = runs["proc"].stderr
    submitted = SUBMITTED.findall(log)
    assert submitted, log[-3000:]
    ids = {slurm_id for _, slurm_id in submitted}
    jobs = {j: v for j, v in runs["after_first"].items() if j not in runs["before"]}
    assert ids == set(jobs), (ids, jobs)  # the ids snakemake logged are the jobs SLURM ran
    rules_on_slurm = {re.match(r"rule_(\w+?)_wildcards|rule_(\w+)$", c).group(1) or c[5:]
                      for _, c, _, _ in jobs.values()}
    # the compute rules of the slice ran on SLURM; the localrules did not
    assert {"source", "normalize", "dataset_pool", "task_split", "features", "detect", "score"} <= rules_on_slurm
    assert not rules_on_slurm & {"all", "report", "input_fingerprint", "subset_tables", "paper_section",
                                 "paper_figures", "dataset_card"}
    # every job snakemake ran as a `rule` (not a `localrule`) got a SLURM job id, and no localrule did
    blocks = re.findall(r"^(rule|localrule) (\w+):\n(?:    .*\n)*?    jobid: (\d+)$", log, flags=re.M)
    remote_jobs = {jid for kind, _, jid in blocks if kind == "rule"}
    local_jobs = {jid for kind, _, jid in blocks if kind == "localrule"}
    assert remote_jobs and local_jobs
    assert {jid for jid, _ in submitted} == remote_jobs
    assert all(state == "COMPLETED" for state, c, _, _ in jobs.values() if not c.startswith("rule_source"))


def test_a_gpu_job_goes_to_the_gpu_partition_by_its_detectors_declaration(runs):
    """No partition is named anywhere: the site profile's partitions file and each job's gpu
    resource (the detector's `resources: {gpu: 1}`) place it."""
    jobs = {j: v for j, v in runs["after_first"].items() if j not in runs["before"]}
    partitions = {c: p for _, c, _, p in jobs.values()}
    gpu_job = next(c for c in partitions if c.startswith("rule_detect") and GPU_DETECTOR in c)
    assert partitions.pop(gpu_job) == GPU_PARTITION
    assert set(partitions.values()) == {PARTITION}, partitions
    assert re.search(rf"Auto-selected partition '{GPU_PARTITION}' for job detect", runs["proc"].stderr)


def test_table4_is_the_same_as_a_local_run(runs):
    for name in ("table4.md", "table4.tex"):
        local = (runs["local"] / "results" / "tables" / name).read_bytes()
        remote = (runs["remote"] / "results" / "tables" / name).read_bytes()
        assert local == remote, name


def test_a_job_over_its_memory_is_killed_and_retried_with_more(runs, cluster):
    jobs = {j: v for j, v in runs["after_first"].items() if j not in runs["before"]}
    source_jobs = {j: v for j, v in jobs.items() if v[1].startswith("rule_source")}
    killed = {j: v for j, v in source_jobs.items() if v[0] in ("OUT_OF_MEMORY", "FAILED", "CANCELLED")}
    done = {j: v for j, v in source_jobs.items() if v[0] == "COMPLETED"}
    assert killed and done, source_jobs
    assert all(v[2] == "150M" for v in killed.values()), killed
    assert all(v[2] in ("3000M", "2.93G") for v in done.values()), done
    # the same wildcards were submitted again after the kill
    assert {v[1] for v in killed.values()} == {v[1] for v in done.values()}
    slurmd_log = (Path(cluster.state) / "slurmd.log").read_text()
    assert re.search(r"exceeded memory limit \(\d+ > 157286400\), being killed", slurmd_log)
    assert len(re.findall(r"Trying to restart job \d+\.", runs["proc"].stderr)) == len(killed)


def test_second_run_submits_nothing(runs):
    proc = runs["proc_again"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Nothing to be done" in proc.stdout + proc.stderr
    assert not SUBMITTED.findall(proc.stderr)
    assert set(runs["after_second"]) == set(runs["after_first"])


def test_a_dry_run_says_which_partition_each_gpu_job_goes_to(runs):
    """-n names the partition the SLURM plugin's own selection gives each GPU job, from the site
    profile's partitions file; the real run then sends it there (the test above)."""
    plan = runs["plan"]
    assert plan.returncode == 0, plan.stderr[-2000:]
    line = next((ln for ln in plan.stderr.splitlines() if ln.startswith("SLURM: GPU jobs by ")), None)
    assert line is not None, plan.stderr[-3000:]
    assert f"detect {GPU_DETECTOR} (1 job, gpu=1) -> '{GPU_PARTITION}'" in line, line
    assert "partitions.yaml" in line


def test_a_gpu_detector_predicts_its_extra_test_sets_on_the_gpu_partition(runs, repo, tmp_path, cluster):
    """A perturbed test set layered on a copy of the cluster run: the GPU detector's fit is reused
    and its test-set prediction, a job of the one predict_test_set rule, asks the GPU too and goes
    to the GPU partition; every other detector's to the CPU one."""
    import shutil

    work = tmp_path / "copy"
    shutil.copytree(runs["remote"], work, symlinks=True, ignore=shutil.ignore_patterns("site"))
    shutil.copytree(runs["remote"] / "site", work / "site")
    (work / "layer.yaml").write_text(yaml.safe_dump(
        {"tasks": {"binary": {"test_sets": {"renamed": {"perturbation": "rename"}}}}}))
    args = [a if a != str(runs["remote"] / "site") else str(work / "site") for a in runs["slurm_args"]]
    before = set(squeue_all())
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"), "--directory", str(work), *args,
           "--configfile", str(work / "config.yaml"), str(work / "layer.yaml")]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore", **runs["env"]})
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    jobs = {j: v for j, v in squeue_all().items() if j not in before}
    predicted = {c: p for _, c, _, p in jobs.values() if c.startswith("rule_predict_test_set")}
    assert predicted, jobs
    gpu = [c for c in predicted if GPU_DETECTOR in c]
    assert len(gpu) == 1 and predicted.pop(gpu[0]) == GPU_PARTITION, (gpu, predicted)
    assert set(predicted.values()) == {PARTITION}, predicted
    assert not any(c.startswith("rule_detect") for _, c, _, _ in jobs.values())  # the fits are reused
