"""python -m aicd.sandbox: the execution sandbox.

  images    build (if missing) the base and sandbox images; prints the sandbox image tag
  execute   compile and run every program of a sample table; one result row per input row"""

from __future__ import annotations

import argparse
import logging
import signal
import sys

import pandas as pd
from tqdm import tqdm

from ..errors import AicdError
from ..io import write_json, write_parquet, write_text
from ..stagecli import json_arg, run
from .execute import RESULT_COLUMNS, execute_table, summary
from .images import ensure_images, image_exists
from .pool import Limits, SandboxPool, docker_available

log = logging.getLogger("aicd.sandbox")


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
    image = args.image
    if image.endswith(".txt"):
        image = open(image).read().strip()
    if not image_exists(image):  # e.g. removed by `images --prune-old` from another checkout
        hint = f"delete {args.image} so the workflow builds it again, or " if args.image.endswith(".txt") else ""
        raise AicdError(f"the sandbox image {image} does not exist on this Docker daemon: {hint}"
                        "run python -m aicd.sandbox images")
    rows = pd.read_parquet(args.input)
    rows_in_table = len(rows)
    missing = {"id", "code", "language"} - set(rows.columns)
    if missing:
        raise AicdError(f"{args.input}: no {', '.join(sorted(missing))} column; execute needs id, code and language "
                        f"(columns found: {', '.join(map(str, rows.columns))})")
    sample = args.spec.get("sample")
    if sample and len(rows) > sample:
        rows = rows.sort_values("id").head(int(sample))  # ids are content hashes: a fixed sample
    try:
        limits = Limits(**(args.spec.get("limits") or {}))
    except TypeError as err:
        raise AicdError(f"execution.limits: {err}") from None
    if rows.empty:  # nothing to run is a legitimate, empty result: no container is started
        log.warning("%s: the table has no rows; writing an empty execution table", args.name)
        results = pd.DataFrame(columns=RESULT_COLUMNS)
        write_parquet(results, args.out)
        write_json({**summary(results, args.name), "containers_started": 0, "containers_recycled": 0,
                    "rows_in_table": rows_in_table}, args.report)
        return
    with SandboxPool(image, size=int(args.spec.get("workers", 1)), recycle_after=int(args.spec.get("recycle_after", 200)),
                     limits=limits, job=f"execute:{args.name}") as pool, \
            tqdm(total=len(rows), desc=f"execute {args.name}", unit="prog", mininterval=5, file=sys.stderr) as bar:
        stop_on_sigterm(pool)
        if pool.stale_removed:
            log.warning("removed %d sandbox container(s) left by a killed job", len(pool.stale_removed))
        results = execute_table(rows, pool, bar)
        started, recycled = pool.started, pool.recycled
    assert len(results) == len(rows), "a program lost its row"
    write_parquet(results, args.out)
    write_json({**summary(results, args.name), "containers_started": started, "containers_recycled": recycled,
                "rows_in_table": rows_in_table}, args.report)


def stop_on_sigterm(pool: SandboxPool) -> None:
    """SIGTERM (snakemake stopping, a cluster pre-empting the job) removes the pool's
    containers first, then exits; nothing is written, so the job reruns from scratch."""
    def handler(signum, _frame):
        log.warning("stopping on signal %d: removing the sandbox containers", signum)
        pool.close()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


if __name__ == "__main__":
    sys.exit(run(main))
