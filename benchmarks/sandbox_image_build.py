"""Where the sandbox image's build time goes: each Dockerfile step's wall time, timed as the
engine's builder prints it, for the checkout's build context or a git revision's.

  python benchmarks/sandbox_image_build.py                     # this checkout's context
  python benchmarks/sandbox_image_build.py --rev 1e5f981       # containers/sandbox at a revision
  python benchmarks/sandbox_image_build.py --base              # also: the debootstrap base, made and imported

Builds without the layer cache (--no-cache: every step runs) on the debootstrap base
(aicd-base:bookworm, made when missing), under a throwaway tag that is removed afterwards
(--keep: tag it as the context's own tag, as `python -m aicd.sandbox images` would). Needs
Docker (or --engine podman) and the base; prints one Markdown table."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))

STEP = re.compile(r"^(?:Step (\d+)/\d+ : |STEP (\d+)/\d+: )(.*)$")


def timed_build(cli: str, context: Path, tag: str, base: str) -> tuple[list[tuple[str, float]], float]:
    """[(step, seconds)] of one uncached build and its total: a step lasts from its line to the
    next step's line (the last one to the end of the build)."""
    cmd = [cli, "build", "--no-cache", "--force-rm", "--build-arg", f"BASE_IMAGE={base}", "-t", tag, str(context)]
    started = time.perf_counter()
    marks: list[tuple[str, float]] = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env={**os.environ, "DOCKER_BUILDKIT": "0"}) as proc:
        for line in proc.stdout:
            found = STEP.match(line.strip())
            if found:
                marks.append((found.group(3)[:70], time.perf_counter()))
        if proc.wait() != 0:
            raise SystemExit(f"the build failed ({cmd})")
    ended = time.perf_counter()
    steps = [(name, (marks[i + 1][1] if i + 1 < len(marks) else ended) - at) for i, (name, at) in enumerate(marks)]
    return steps, ended - started


def context_at(rev: str, into: Path) -> Path:
    """containers/sandbox as it was at `rev`, extracted into `into`."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "containers/sandbox"], capture_output=True,
                             check=True).stdout
    with tempfile.NamedTemporaryFile(suffix=".tar") as fh:
        fh.write(archive)
        fh.flush()
        with tarfile.open(fh.name) as tar:
            tar.extractall(into, filter="data")
    return into / "containers" / "sandbox"


def time_base(engine) -> list[tuple[str, float]]:
    """The debootstrap base made afresh (debootstrap and its tar file, into a cache of its own)
    and imported from that file, under a throwaway tag: the engine's own base stays untouched
    (other images are built on it)."""
    from aicd.sandbox.images import _cli, debootstrap_root

    rows = []
    with tempfile.TemporaryDirectory(prefix="aicd-bench-base-") as tmp:
        tarball = Path(tmp) / "base-bookworm.tar"
        started = time.perf_counter()
        debootstrap_root(tarball, "http://deb.debian.org/debian", "bookworm")
        rows.append(("debootstrap and its tar file (no cache)", time.perf_counter() - started))
        tag = f"aicd-bench-base:{os.getpid()}"
        started = time.perf_counter()
        with open(tarball, "rb") as fh:
            imported = _cli(engine, "import", "-", tag, stdin=fh)
        rows.append(("import from the cached tar file", time.perf_counter() - started))
        if imported.returncode != 0:
            raise SystemExit(f"import failed: {imported.stderr[:300]}")
        engine.client.images.remove(tag, force=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", help="build containers/sandbox as it was at this git revision")
    parser.add_argument("--engine", choices=["docker", "podman"], default="docker")
    parser.add_argument("--base", action="store_true", help="also time making the debootstrap base and importing "
                        "it from its tar file (needs root)")
    parser.add_argument("--keep", action="store_true", help="keep the image under the context's own tag")
    args = parser.parse_args()
    from aicd.sandbox.engine import connect
    from aicd.sandbox.images import CONTEXT, LOCAL_BASE, build_debootstrap_base, context_tag

    load = os.getloadavg()[0]
    engine = connect(args.engine)
    cli = engine.cli()
    rows = time_base(engine) if args.base else []
    build_debootstrap_base(engine)
    with tempfile.TemporaryDirectory(prefix="aicd-bench-context-") as tmp:
        context = context_at(args.rev, Path(tmp)) if args.rev else CONTEXT
        tag = context_tag(context, LOCAL_BASE) if args.keep else f"aicd-bench-build:{os.getpid()}"
        steps, total = timed_build(cli, context, tag, LOCAL_BASE)
        size = engine.client.images.get(tag).attrs.get("Size", 0)
        if not args.keep:
            engine.client.images.remove(tag, force=True)
    print(f"{engine.describe()}, context {args.rev or 'this checkout'}, image {size / 1e9:.2f} GB, "
          f"load average at the start {load:.1f}\n")
    print("| step | seconds |\n|---|---:|")
    for name, seconds in rows + steps:
        print(f"| `{name.replace('|', '/')}` | {seconds:.0f} |")
    print(f"| **build in all** | **{total:.0f}** |")


if __name__ == "__main__":
    main()
