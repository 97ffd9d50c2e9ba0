"""`aicd site-profile DIR`: your cluster's Snakemake profile, made from the repository's
profiles/site-template in a folder outside the repository (where `git pull` never touches it).
Then edit DIR/config.yaml (account, jobs) and DIR/partitions.yaml (partition names and limits,
GPUs), and run

  snakemake --workflow-profile profiles/slurm --profile DIR"""

from __future__ import annotations

import shutil
from pathlib import Path

from .errors import AicdError

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
