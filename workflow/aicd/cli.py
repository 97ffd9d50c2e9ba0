"""Shared command-line plumbing (logging to stderr, user errors without tracebacks) and the
`aicd` command:

    aicd verify RESULTS_A RESULTS_B   same inputs: are all tables and scores byte-identical?
    aicd fetch-inputs                 download and verify the pinned inputs (make pinned-inputs)"""

from __future__ import annotations

import json
import logging
import sys
from typing import Callable, Sequence

from .errors import AicdError

log = logging.getLogger("aicd")


def setup_logging(verbose: bool = False) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def json_arg(text: str) -> dict:
    """argparse type for a JSON object passed by a rule (its slice of the config)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise AicdError(f"expected a JSON object, got {text[:80]!r}: {err}") from None
    if not isinstance(value, dict):
        raise AicdError(f"expected a JSON object, got {type(value).__name__}")
    return value


def run(main: Callable[[Sequence[str] | None], None], argv: Sequence[str] | None = None) -> int:
    """Run a stage's main(); a user error prints one clear line and exits 2."""
    setup_logging()
    try:
        main(argv)
    except AicdError as err:
        log.error("%s", err)
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The `aicd` console script."""
    import argparse

    parser = argparse.ArgumentParser(prog="aicd", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="compare two result trees (exit 0: identical, 1: not)")
    v.add_argument("a", help="a results folder (or the working directory holding results/)")
    v.add_argument("b")
    sub.add_parser("fetch-inputs", help="download the pinned inputs into the cache and verify them")
    args = parser.parse_args(argv)
    outcome = {"ok": True}

    def command(_argv=None) -> None:
        if args.command == "verify":
            from .fingerprint import verify

            outcome["ok"], lines = verify(args.a, args.b)
            print("\n".join(lines))
        else:
            from .sources.pinned import main as pinned_main

            pinned_main(["fetch"])

    rc = run(command, None)
    return rc if rc else (0 if outcome["ok"] else 1)
