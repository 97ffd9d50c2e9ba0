"""`aicd site-profile DIR`: your cluster's Snakemake profile, made from the repository's
profiles/site-template in a folder outside the repository (where `git pull` never touches it).
Then edit DIR/config.yaml (account, jobs) and DIR/partitions.yaml (partition names and limits,
GPUs), and run

  snakemake --workflow-profile profiles/slurm --profile DIR"""

from __future__ import annotations

import shutil
from pathlib import Path

from .common.errors import AicdError

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "profiles" / "site-template"
RUN = "snakemake --workflow-profile profiles/slurm --profile {dest}"


def make(dest: str | Path, force: bool = False) -> list[Path]:
    """Copy the template's files into `dest`; the files written."""
    dest = Path(dest).expanduser().resolve()
    if not TEMPLATE.is_dir():
        raise AicdError(f"the site template {TEMPLATE} is missing: run from a checkout of the repository")
    if dest == REPO or REPO in dest.parents:
        raise AicdError(f"{dest} is inside the repository: a site profile lives outside it (e.g. "
                        "~/.config/snakemake/aicd-site), so that updating the repository never changes it")
    files = sorted(p for p in TEMPLATE.iterdir() if p.is_file())
    existing = [dest / p.name for p in files if (dest / p.name).exists()]
    if existing and not force:
        raise AicdError(f"{existing[0]} exists: edit it, or pass --force to replace the site profile's files")
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for p in files:
        shutil.copyfile(p, dest / p.name)
        written.append(dest / p.name)
    return written


def main(args) -> None:
    written = make(args.dir, args.force)
    print(f"wrote {', '.join(str(p) for p in written)}")
    print("edit them for your cluster (account, partitions, GPUs), then run:")
    print("  " + RUN.format(dest=args.dir))


# ---------------------------------------------------------------- where GPU jobs go (dry runs)


def _option(argv, *names):
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                return argv[i + 1]
            if arg.startswith(name + "="):
                return arg[len(name) + 1:]
    return None


def _profile_dir(value: str) -> Path | None:
    path = Path(value).expanduser()
    for candidate in (path, Path("~/.config/snakemake").expanduser() / value, Path("/etc/xdg/snakemake") / value):
        if (candidate / "config.yaml").is_file():
            return candidate
    return None


def slurm_partitions(argv, environ) -> tuple[bool, Path | None]:
    """(whether the run goes to SLURM, the partitions file the SLURM plugin will read), from the
    command line and the profiles it names, as the plugin finds them: --slurm-partition-config,
    else a profile's slurm-partition-config (relative to the profile), else
    $SNAKEMAKE_SLURM_PARTITIONS."""
    import yaml

    profiles = [p for p in (_option(argv, "--profile") or environ.get("SNAKEMAKE_PROFILE"),
                            _option(argv, "--workflow-profile")) if p and p != "none"]
    executor, partitions = _option(argv, "--executor", "-e"), _option(argv, "--slurm-partition-config")
    for value in profiles:
        folder = _profile_dir(value)
        if folder is None:
            continue
        settings = yaml.safe_load((folder / "config.yaml").read_text()) or {}
        executor = executor or settings.get("executor")
        if partitions is None and settings.get("slurm-partition-config"):
            partitions = str(folder / settings["slurm-partition-config"])
    partitions = partitions or environ.get("SNAKEMAKE_SLURM_PARTITIONS")
    return executor == "slurm", Path(partitions).expanduser() if partitions else None


def gpu_partition_note(jobs: list[dict], partitions: Path | None) -> str:
    """One line: the partition each GPU job goes to, by the SLURM plugin's own selection
    (its partition file and fit score) for the job's resources. jobs: rule, detector, count,
    gpu, mem_mb, runtime, threads."""
    from types import SimpleNamespace

    if not jobs:
        return ""
    if partitions is None:
        return ("SLURM: no partitions file (slurm-partition-config in the site profile), so the GPU jobs ("
                + ", ".join(f"{j['rule']} {j['detector']}" for j in jobs)
                + ") go where the cluster's default partition sends them; docs/cluster.md")
    try:
        from snakemake_executor_plugin_slurm.partitions import read_partition_file
    except ImportError:
        return "SLURM: the executor plugin is not installed (pip install -e '.[cluster]')"
    try:
        candidates = read_partition_file(partitions)
    except Exception as err:  # the plugin's own refusal of the file, in one line
        return f"SLURM: {partitions} cannot be read as a partitions file: {err}"
    said = []
    for j in jobs:
        job = SimpleNamespace(name=j["rule"], threads=j["threads"], is_group=lambda: False,
                              resources={k: j[k] for k in ("gpu", "mem_mb", "runtime")})
        scored = [(p.score_job_fit(job), p.name) for p in candidates]
        scored = [(s, n) for s, n in scored if s is not None]
        where = f"'{max(scored)[1]}'" if scored else "no partition that fits (the plugin falls back to the default)"
        said.append(f"{j['rule']} {j['detector']} ({j['count']} job{'s' if j['count'] != 1 else ''}, "
                    f"gpu={j['gpu']}) -> {where}")
    return f"SLURM: GPU jobs by {partitions}: " + "; ".join(said) + "; every other job to a CPU partition."
