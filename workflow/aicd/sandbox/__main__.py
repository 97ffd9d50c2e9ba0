"""python -m aicd.sandbox: the execution sandbox.

  images    build (if missing) the base and sandbox images; prints the sandbox image tag
  execute   compile and run every program of a sample table; one result row per input row"""

from __future__ import annotations

import argparse
import sys

from ..errors import AicdError
from ..io import write_json, write_parquet, write_text
from ..stagecli import json_arg, run
from .execute import execute_file, resolve_image
from .images import ensure_images
from .pool import docker_available


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.sandbox", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    img = sub.add_parser("images", help="build the base and sandbox images if missing")
    img.add_argument("--base", choices=["debootstrap", "registry"], default="debootstrap")
    img.add_argument("--base-image", default="debian:bookworm-slim", help="registry base (with --base registry)")
    img.add_argument("--mirror", default=None, help="Debian mirror for debootstrap")
    img.add_argument("--out", help="write the tag to this file")
    img.add_argument("--prune-old", action="store_true",
                     help="remove aicd-sandbox images of other build contexts on the same base (~5 GB of disk "
                          "each on Docker's vfs driver); `make images` passes it")
    ex = sub.add_parser("execute", help="run every program of a table")
    ex.add_argument("--input", required=True, help="sample table (parquet): id, code, language[, generator, tests]")
    ex.add_argument("--name", required=True)
    ex.add_argument("--image", required=True, help="sandbox image tag, or a file holding it")
    ex.add_argument("--spec", type=json_arg, default={}, help='{"workers", "recycle_after", "sample", "limits": {...}}')
    ex.add_argument("--workers", type=int, default=None,
                    help="containers in the pool: the job's threads (the workflow passes {threads}, which "
                         "--cores, --max-threads and set-threads may lower); default: the spec's workers")
    ex.add_argument("--out", required=True)
    ex.add_argument("--report", required=True)
    args = parser.parse_args(argv)
    if not docker_available():
        raise AicdError("no Docker daemon answers: install docker.io and start dockerd (see README, Sandbox)")
    if args.cmd == "images":
        tag = ensure_images(args.base, args.base_image, args.mirror, prune_old=args.prune_old)
        print(tag)
        if args.out:
            write_text(tag + "\n", args.out)
        return
    spec = {**args.spec, "workers": args.workers} if args.workers else args.spec
    results, report = execute_file(args.input, args.name, resolve_image(args.image), spec)
    write_parquet(results, args.out)
    write_json(report, args.report)


if __name__ == "__main__":
    sys.exit(run(main))
