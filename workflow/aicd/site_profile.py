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


# ---------------------------------------------------------------- where the jobs read their inputs (dry runs)


def hub_cached(repo: str, revision: str | None, environ) -> bool:
    """Is the dataset `repo` at `revision` in this machine's Hugging Face Hub cache (a snapshot
    folder for it: what an offline job, HF_HUB_OFFLINE=1, can read)?"""
    import re

    cache = Path(environ.get("HF_HUB_CACHE") or Path(environ.get("HF_HOME") or "~/.cache/huggingface") / "hub")
    folder = cache.expanduser() / f"datasets--{repo.replace('/', '--')}"
    revision = revision or "main"
    if not re.fullmatch(r"[0-9a-f]{40}", revision):
        ref = folder / "refs" / revision
        revision = ref.read_text().strip() if ref.is_file() else ""
    return bool(revision) and (folder / "snapshots" / revision).is_dir()


def input_locations(config: dict, plan, source_parts) -> list[tuple[str, dict]]:
    """(what, location) of every input a job reads from the Hub or from local files: each release
    task's splits (rule task_split) and each source a job loads (rule source), its parts as
    `source_parts` (aicd.sources.loader's, a stage this ground-floor module does not import) lists them."""
    out = [(f"task {t} (the release)", config["tasks"][t]["release"]) for t, task in plan.tasks.items()
           if task.mode == "release"]
    for name in plan.report_sources():
        spec = config["sources"][name]
        if "files" in spec or "hub" in spec:
            out += [(f"source {name}", part["location"]) for part in source_parts(spec)]
    return out


def input_access_note(locations: list[tuple[str, dict]], environ, cwd: Path | None = None) -> list[str]:
    """Lines for a SLURM dry run: can the jobs read the release (and the Hub or local sources)
    from the compute nodes? What can be seen from here: which inputs come from the Hub and
    whether this machine's cache holds them (with HF_HUB_OFFLINE=1 a job reads only the cache,
    which the nodes must share), which come from local files and whether each exists here (the
    nodes must see the same paths; /tmp is a node's own). Whether the nodes reach the Hub
    cannot be seen from here, and the line says so."""
    hub: dict[tuple, list[str]] = {}
    files: dict[str, list[str]] = {}
    for what, loc in locations:
        if "files" in loc:
            paths = loc["files"] if isinstance(loc["files"], list) else [loc["files"]]
            for p in paths:
                files.setdefault(str(p), []).append(what)
        elif "hub" in loc:
            hub.setdefault((loc["hub"], loc.get("revision")), [])
            if what not in hub[(loc["hub"], loc.get("revision"))]:
                hub[(loc["hub"], loc.get("revision"))].append(what)
    lines = []
    if hub:
        offline = environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
        cached = {key: hub_cached(key[0], key[1], environ) for key in hub}
        said = "; ".join(f"{repo}{'@' + str(rev)[:12] if rev else ''} for {', '.join(whats)}: "
                         + ("in" if cached[(repo, rev)] else "not in") + " this machine's Hub cache"
                         for (repo, rev), whats in hub.items())
        advice = ("download them where the Hub answers and point tasks.<T>.release.files (or the source's files:) at "
                  "copies on a shared filesystem (docs/tasks_and_sources.md)")
        if offline and all(cached.values()):
            how = ("HF_HUB_OFFLINE=1 here: the jobs read only the Hub cache, which holds them here; the nodes must "
                   "share it (HF_HOME on a shared filesystem), or " + advice)
        elif offline:
            how = ("HF_HUB_OFFLINE=1 here, and the cache lacks some of them: those jobs cannot read them; fill the "
                   "cache where the Hub answers (HF_HOME on a shared filesystem), or " + advice)
        else:
            how = ("the nodes must reach huggingface.co (not checked from here), or run with HF_HUB_OFFLINE=1 and a "
                   "Hub cache the nodes share (HF_HOME on a shared filesystem) that holds them; else " + advice)
        lines.append(f"SLURM: read from the Hugging Face Hub by jobs on the compute nodes ({said}): {how}.")
    if files:
        base = cwd or Path.cwd()
        missing = [p for p in files if not (base / Path(p).expanduser()).exists()]
        local = [p for p in files if str((base / Path(p).expanduser()).resolve()).startswith(("/tmp/", "/var/tmp/"))]
        parts = [f"SLURM: {len(files)} local input file{'s' if len(files) > 1 else ''} read by jobs on the compute "
                 f"nodes ({', '.join(sorted({w for ws in files.values() for w in ws}))}): the nodes must see the same "
                 "paths (a shared filesystem)"]
        if missing:
            parts.append(f"{len(missing)} not found here (e.g. {missing[0]}): no node will find {'them' if len(missing) > 1 else 'it'} either")
        if local:
            parts.append(f"{len(local)} under /tmp (e.g. {local[0]}), which is each node's own")
        if not missing and not local:
            parts.append("all exist here")
        lines.append("; ".join(parts) + ".")
    return lines
