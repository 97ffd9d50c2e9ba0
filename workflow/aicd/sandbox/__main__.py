"""python -m aicd.sandbox: the execution sandbox.

  images    build (if missing) the base and sandbox images; prints the sandbox image tag
  execute   compile and run every program of a sample table; one result row per input row"""

from __future__ import annotations

import argparse
import sys

from ..common.errors import AicdError
from ..common.io import write_json, write_parquet, write_text
from ..common.stagecli import json_arg, run
from .engine import CHOICES, ENGINES, shared
from .execute import execute_file, resolve_image
from .images import ensure_images


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
    img.add_argument("--copy-from", choices=ENGINES, default=None,
                     help="take the image from this other engine on the machine when it has it (Podman loads "
                          "what Docker built) instead of building it again")
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
    for sub_parser in (img, ex):
        sub_parser.add_argument("--engine", choices=CHOICES, default="auto",
                                help="execution.engine: docker, podman, or auto (Docker where its daemon answers, "
                                     "else Podman)")
    args = parser.parse_args(argv)
    engine = shared(args.engine)  # one line naming what to install or start when none answers
    if args.cmd == "images":
        if args.copy_from == engine.name:
            raise AicdError(f"--copy-from {args.copy_from}: that is the engine the image is for")
        source = shared(args.copy_from) if args.copy_from else None
        tag = ensure_images(engine, args.base, args.base_image, args.mirror, prune_old=args.prune_old,
                            copy_from=source)
        print(tag)
        if args.out:
            write_text(tag + "\n", args.out)
        return
    spec = {**args.spec, "workers": args.workers} if args.workers else args.spec
    results, report = execute_file(args.input, args.name, resolve_image(args.image, engine), spec, engine)
    write_parquet(results, args.out)
    write_json(report, args.report)


if __name__ == "__main__":
    sys.exit(run(main))
