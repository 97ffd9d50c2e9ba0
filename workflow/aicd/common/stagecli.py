"""Command-line plumbing every stage's `python -m aicd.<stage>` shares (ground floor): logging
to stderr, a rule's JSON config slice as an argument, and user errors as one line, exit 2."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Sequence

from .errors import AicdError

log = logging.getLogger("aicd")


def setup_logging(verbose: bool = False) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def _json_of(text: str, kind: type, what: str):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise AicdError(f"expected a JSON {what}, got {text[:80]!r}: {err}") from None
    if not isinstance(value, kind):
        raise AicdError(f"expected a JSON {what}, got {type(value).__name__}")
    return value


def json_list_arg(text: str) -> list:
    """argparse type for a JSON list passed by a rule."""
    return _json_of(text, list, "list")


def json_arg(text: str) -> dict:
    """argparse type for a JSON object passed by a rule (its slice of the config)."""
    return _json_of(text, dict, "object")


def run(main: Callable[[Sequence[str] | None], None], argv: Sequence[str] | None = None) -> int:
    """Run a stage's main(); a user error prints one clear line and exits 2. Under snakemake
    the job's memory is watched (aicd.common.memguard): past its mem_mb it stops with a line saying so."""
    setup_logging()
    from .memguard import from_environment

    meter = from_environment()
    try:
        main(argv)
    except AicdError as err:
        if meter is not None:
            meter.report()  # before the error, which stays the log's last line
        print(f"error: {err}", file=sys.stderr)  # once: the console shows it from the job's log
        return 2
    return 0
